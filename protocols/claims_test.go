package protocols_test

import (
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"lfccheck/internal/racebuild"
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
	eachClaimOf(t, sample{}, atLeast, check)
}

// eachClaimOf is eachClaim on the claims s takes: under the race detector
// a part of them, and then atLeast is s's part of it.
func eachClaimOf(t *testing.T, s sample, atLeast int, check func(t *testing.T, cfg model.Config)) {
	t.Helper()
	compared, i := 0, 0
	for _, d := range protocols.All() {
		for _, cl := range d.AllClaims() {
			if i++; !s.takes(i - 1) {
				continue
			}
			cfg := cl.Config.Clone()
			cfg.Protocol = d.Name
			t.Run(d.Name+" "+cl.Name, func(t *testing.T) {
				check(t, cfg)
				compared++
			})
		}
	}
	s.log(t, i, "claims")
	if compared < s.atLeast(atLeast) {
		t.Fatalf("compared only %d configurations", compared)
	}
}

// sample is the part of a test's cases the test checks: all of them
// (every 0 or 1), or one in every: the cases numbered offset,
// offset+every, ... (from 0).
type sample struct{ every, offset int }

// raceSample is the sample of a long comparison of single-threaded
// searches (logic, not concurrency): all its cases, or one in six under
// the race detector (CI runs the short tests under it, where each search
// is many times slower; the tests without it run them all). Tests give
// different offsets (0 to 5) so that the race run still takes every
// claim in one test or another.
func raceSample(offset int) sample {
	if !racebuild.Enabled {
		return sample{}
	}
	return sample{every: raceEvery, offset: offset % raceEvery}
}

// raceEvery is the part of a long comparison's cases that raceSample
// takes under the race detector: one in raceEvery.
const raceEvery = 6

func (s sample) takes(i int) bool { return s.every <= 1 || i%s.every == s.offset }

// atLeast is n, or, for a part, that part of n (at least 1).
func (s sample) atLeast(n int) int {
	if s.every <= 1 {
		return n
	}
	return max(1, n/s.every)
}

// log says, for a part, how many of the n cases (what) were taken.
func (s sample) log(t *testing.T, n int, what string) {
	t.Helper()
	if s.every > 1 {
		t.Logf("race detector: %d of the %d %s (numbers %d, %d, %d, ...); the test without -race checks them all",
			(n-s.offset+s.every-1)/s.every, n, what, s.offset, s.offset+s.every, s.offset+2*s.every)
	}
}

// eachScenario runs check as a subtest on the configuration of every
// step-by-step scenario file (traces/testdata).
func eachScenario(t *testing.T, check func(t *testing.T, cfg model.Config)) {
	t.Helper()
	eachScenarioOf(t, sample{}, check)
}

// eachScenarioOf is eachScenario on the files s takes.
func eachScenarioOf(t *testing.T, s sample, check func(t *testing.T, cfg model.Config)) {
	t.Helper()
	files, _ := filepath.Glob("../traces/testdata/*.scenario")
	if len(files) < 10 {
		t.Fatalf("found %d scenario files", len(files))
	}
	for i, path := range files {
		if !s.takes(i) {
			continue
		}
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
	s.log(t, len(files), "scenario files")
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
