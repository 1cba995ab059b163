package protocols_test

import (
	"testing"

	"lfccheck/model"
	"lfccheck/protocols"
)

// eachClaim runs check as a subtest on every claim and broken-variant
// example of every protocol, and fails t unless at least atLeast of them
// ran to the end (check skips a configuration it cannot compare).
func eachClaim(t *testing.T, atLeast int, check func(t *testing.T, cfg model.Config)) {
	t.Helper()
	compared := 0
	for _, d := range protocols.All() {
		for _, cl := range d.AllClaims() {
			cfg := cl.Config.Clone()
			cfg.Protocol = d.Name
			t.Run(d.Name+" "+cl.Name, func(t *testing.T) {
				check(t, cfg)
				compared++
			})
		}
	}
	if compared < atLeast {
		t.Fatalf("compared only %d configurations", compared)
	}
}
