package protocols_test

import (
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"lfccheck/model"
	"lfccheck/protocols"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/topology"
	"lfccheck/traces"
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

// eachScenario runs check as a subtest on the configuration of every
// step-by-step scenario file (traces/testdata).
func eachScenario(t *testing.T, check func(t *testing.T, cfg model.Config)) {
	t.Helper()
	files, _ := filepath.Glob("../traces/testdata/*.scenario")
	if len(files) < 10 {
		t.Fatalf("found %d scenario files", len(files))
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := traces.ParseScenario(path, string(data))
			if err != nil {
				t.Fatal(err)
			}
			check(t, sc.Config)
		})
	}
}

// randomMCAST returns a random small MCAST configuration: P 3 or 4, a
// tree family, 1 or 2 credits, one packet per node, or, half the time,
// casts of 1 or 2 packets from about two thirds of the roots.
func randomMCAST(rng *rand.Rand) (model.Config, *mcast.Params) {
	fams := []string{"binary", "binomial", "chain", "star", "kary:3"}
	P := 3 + rng.Intn(2)
	cfg := mcast.Config(fams[rng.Intn(len(fams))], P, 1+rng.Intn(2), 1)
	p := cfg.Params.(*mcast.Params)
	if rng.Intn(2) == 0 {
		for r := 0; r < P; r++ {
			if rng.Intn(3) > 0 {
				p.Casts = append(p.Casts, topology.Cast{Root: r, Count: 1 + rng.Intn(2)})
			}
		}
	}
	return cfg, p
}
