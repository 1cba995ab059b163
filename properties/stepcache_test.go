package properties_test

import (
	"testing"

	"lfccheck/explore"
	"lfccheck/internal/racebuild"
	"lfccheck/properties"
	"lfccheck/protocols"
	"lfccheck/protocols/mcast"
)

// TestStepCacheHitsAreTheHandlers searches every claim and broken-variant
// example of every protocol up to a state limit with the step cache
// checking itself: every key against the node's state, every hit against
// the handler's result run again (node, sends, deliveries, the encoding
// the canonical form takes). protocols.TestStepCacheKeepsResults compares
// whole searches with and without the cache. Under the race detector,
// one claim in four.
func TestStepCacheHitsAreTheHandlers(t *testing.T) {
	limit := int64(5_000)
	if testing.Short() {
		limit = 2_000
	}
	every := 1
	if racebuild.Enabled {
		every, limit = 4, 1_000
	}
	var verified, checks int64
	i := 0
	check := func(t *testing.T, ck *properties.Checker, workers int) {
		ck.StepCache = true
		done := properties.VerifyStepCache(ck)
		if _, err := explore.BFS(ck, explore.Options{MaxStates: limit, Workers: workers}); err != nil {
			t.Fatal(err)
		}
		n, bad := done()
		if bad != "" {
			t.Fatal(bad)
		}
		verified += n
		checks += ck.StepCacheCheckHits()
	}
	for _, d := range protocols.All() {
		for _, cl := range d.AllClaims() {
			if i++; (i-1)%every != 0 {
				continue
			}
			cfg := cl.Config.Clone()
			cfg.Protocol = d.Name
			t.Run(d.Name+" "+cl.Name, func(t *testing.T) {
				ck, err := protocols.Build(cfg)
				if err != nil {
					t.Fatal(err)
				}
				check(t, ck, 1)
			})
		}
	}
	t.Run("mcast binary P=3 workers=2", func(t *testing.T) {
		ck, err := protocols.Build(mcast.Config("binary", 3, 1, 1))
		if err != nil {
			t.Fatal(err)
		}
		check(t, ck, 2)
	})
	if verified < 1000 || checks < 1000 {
		t.Errorf("only %d hits checked, of which %d memoized checks of one node", verified, checks)
	}
	t.Logf("%d hits checked against the handlers and properties, of which %d memoized checks of one node", verified, checks)
}
