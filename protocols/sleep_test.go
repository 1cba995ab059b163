package protocols_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"lfccheck/explore"
	"lfccheck/internal/racebuild"
	"lfccheck/model"
	"lfccheck/protocols"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/topology"
	"lfccheck/protocols/ucast"
	"lfccheck/traces"
)

// sleepResult is what a search with or without sleep sets must agree on.
type sleepResult struct {
	verdict string
	states  int64 // of a pass
	depth   int   // of a pass; of a fail, the counterexample's length
	trans   int64
	skipped int64
	on      bool
	note    string
}

// sleepSearch checks cfg breadth first, without stubborn sets, with sleep sets on or off (and the
// symmetry reduction as Build sets it, or off); ok is false when the
// search hit the state limit. A counterexample must replay and reproduce
// its property.
func sleepSearch(t *testing.T, cfg model.Config, sleep, symmetry bool, limit int64) (sleepResult, bool) {
	t.Helper()
	ck, err := protocols.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ck.Symmetry = ck.Symmetry && symmetry
	ck.Stubborn = false // sleep sets are off while stubborn sets are on
	r, err := explore.BFS(ck, explore.Options{MaxStates: limit, NoSleep: !sleep, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict == explore.Incomplete {
		return sleepResult{}, false
	}
	res := sleepResult{verdict: string(r.Verdict), trans: r.Stats.Transitions, skipped: r.Sleep.Skipped, on: r.Sleep.On, note: r.Sleep.Note}
	switch {
	case r.Verdict == explore.Pass:
		res.states, res.depth = r.Stats.States, r.Stats.Depth
	case r.Violation != nil:
		res.verdict += " " + r.Violation.PropertyName()
		res.depth = len(r.Trace)
		if r.Loop == 0 {
			o, _, err := traces.RunCodes(ck, r.Trace, r.Loop)
			if err != nil || o.Violation == nil || o.Violation.Property != r.Violation.PropertyName() {
				t.Fatalf("sleep=%v: the counterexample does not reproduce %s: %v %v", sleep, r.Violation.PropertyName(), o.Violation, err)
			}
		}
	}
	if pass := ck.Unreached(); r.Verdict == explore.Pass && len(pass) > 0 {
		res.verdict += " unreached " + pass[0].Property
	}
	return res, true
}

// compareSleep checks cfg with sleep sets on and off: a pass must visit
// exactly the same states to the same depth (sleep sets leave out
// transitions, never states), each expanded once, so that the transitions
// explored and left out add up to the full search's, and a failure
// must find the same property with a counterexample as short. It
// reports whether sleep sets were used.
func compareSleep(t *testing.T, cfg model.Config, symmetry bool, limit int64) bool {
	t.Helper()
	// Sleep sets leave out transitions, never states: a configuration
	// over the limit with them is over it without them too.
	on, ok := sleepSearch(t, cfg, true, symmetry, limit)
	if !ok {
		t.Skipf("over %d states", limit)
	}
	off, ok := sleepSearch(t, cfg, false, symmetry, limit)
	if !ok {
		t.Fatalf("%d states with sleep sets, over %d without", on.states, limit)
	}
	if on.verdict != off.verdict || on.states != off.states || on.depth != off.depth {
		t.Fatalf("with sleep sets %s, %d states, depth %d; without %s, %d states, depth %d",
			on.verdict, on.states, on.depth, off.verdict, off.states, off.depth)
	}
	if on.verdict == "pass" && on.trans+on.skipped != off.trans {
		t.Errorf("sleep sets explored %d transitions and left out %d, the full search explored %d", on.trans, on.skipped, off.trans)
	}
	if !on.on && on.note == "" {
		t.Errorf("sleep sets off with no reason given")
	}
	if !on.on {
		t.Logf("sleep sets off: %s", on.note)
	}
	return on.on
}

// TestSleepSetsKeepStates compares searches with and without sleep sets
// on every claim and broken-variant example of every protocol and on the
// scenario files' configurations, with the symmetry reduction on (where
// the configuration has one) and off (on every other claim; on only, in
// short mode). Under the race detector: a sixth of the configurations,
// with a smaller state limit (raceSample); the searches run on two
// workers.
func TestSleepSetsKeepStates(t *testing.T) {
	// Parallel with the other long comparisons of this package: each
	// builds its own checkers, and CI's final stage then uses both cores.
	t.Parallel()
	limit, syms := int64(150_000), []bool{true, false}
	if testing.Short() {
		limit, syms = 40_000, []bool{true}
	}
	s := raceSample(2)
	if s.every > 1 {
		limit = 20_000
	}
	used, k := 0, 0
	eachClaimOf(t, s, 10, func(t *testing.T, cfg model.Config) {
		k++
		for _, sym := range syms {
			if !sym && k%2 == 0 {
				continue // symmetry off: on every other claim
			}
			if compareSleep(t, cfg, sym, limit) {
				used++
			}
		}
	})
	if used < s.atLeast(10) {
		t.Errorf("sleep sets were used in only %d searches", used)
	}
	eachScenarioOf(t, s, func(t *testing.T, cfg model.Config) { compareSleep(t, cfg, true, limit) })
}

// Random small MCAST configurations (tree families, credits, packets,
// casts from some roots) keep their states with sleep sets. Under the
// race detector, a smaller state limit leaves out the largest.
func TestSleepSetsOnRandomConfigurations(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	n, limit := 24, int64(100_000)
	if testing.Short() {
		n = 8
	}
	if racebuild.Enabled {
		limit = 30_000
		t.Logf("race detector: configurations over %d states are not compared; the test without -race compares them", limit)
	}
	for i := 0; i < n; i++ {
		cfg, p := randomMCAST(rng)
		t.Run(fmt.Sprintf("%d %s", i, p.Describe()), func(t *testing.T) {
			compareSleep(t, cfg, rng.Intn(2) == 0, limit)
		})
	}
}

// Configurations whose actions have more than 64 names (nodes x (kinds
// other than deliver + links into a node)) track 64 of them and keep
// their states: 8 and 9 nodes with casts that make trees forward (App.
// A.2's groups with two of its casts), a ring of 8 whose rotations map it
// onto itself, and a broken variant. (TestSleepTabRenames checks the
// renamings that drop names, on A.2 with all three casts.) Under the race
// detector, the ring (over 300,000 transitions) is searched with sleep
// sets only, not compared with a search without them.
func TestSleepSetsTrackSomeActions(t *testing.T) {
	// UCAST on a ring of 8, every node sending one packet to the next:
	// the 8 rotations map it onto itself.
	var next []ucast.Flow
	for i := range 8 {
		next = append(next, ucast.Flow{Src: i, Dst: (i + 1) % 8, Count: 1})
	}
	ring := ucast.Flows(8, 1, next...)
	cfgs := []model.Config{
		mcast.Casts("binary", 8, 1, topology.Cast{Root: 0, Count: 1}),
		mcast.Casts("chain", 8, 1, topology.Cast{Root: 0, Count: 1}),
		mcast.OverlapA2Config(topology.Cast{Group: "g1", Root: 0, Count: 1}, topology.Cast{Group: "g2", Root: 3, Count: 1}),
		ring,
	}
	early := mcast.Casts("chain", 8, 1, topology.Cast{Root: 0, Count: 2})
	early.Variant = mcast.EarlyRelease
	cfgs = append(cfgs, early)
	for _, cfg := range cfgs {
		t.Run(cfg.Describe(), func(t *testing.T) {
			on, ok := sleepSearch(t, cfg, true, true, 300_000)
			if !ok {
				t.Fatal("over 300000 states")
			}
			if !on.on || !strings.Contains(on.note, "64 of the") {
				t.Fatalf("sleep sets on: %v, note %q", on.on, on.note)
			}
			if on.skipped == 0 {
				t.Errorf("no transition left out")
			}
			if racebuild.Enabled && on.trans > 100_000 {
				t.Logf("race detector: not compared with a search without sleep sets; the test without -race compares it")
			} else {
				compareSleep(t, cfg, true, 300_000)
			}
			t.Logf("%s, %d states, %d transitions, %d left out", on.verdict, on.states, on.trans, on.skipped)
		})
	}
}
