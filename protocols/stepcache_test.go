package protocols_test

import (
	"fmt"
	"slices"
	"testing"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/protocols"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/ucast"
)

// stepCacheRun is everything a search with the step cache must give as
// it does without it.
type stepCacheRun struct {
	verdict, reason, property, message string
	states, trans                      int64
	depth, loop                        int
	levels                             []int64
	trace                              []uint32
	stats                              string
	reached                            []string
	hits, misses                       int64
}

func stepCacheSearch(t *testing.T, cfg model.Config, on bool, workers int, limit int64) stepCacheRun {
	t.Helper()
	ck, err := protocols.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if ck.StepCache {
		t.Fatal("the step cache is on by default")
	}
	ck.StepCache = on && ck.StepCacheOff() == ""
	if on && !ck.StepCache {
		t.Logf("step cache off: %s", ck.StepCacheOff())
	}
	r, err := explore.BFS(ck, explore.Options{MaxStates: limit, Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	res := stepCacheRun{verdict: string(r.Verdict), reason: r.Reason, states: r.Stats.States, trans: r.Stats.Transitions,
		depth: r.Stats.Depth, loop: r.Loop, levels: r.Stats.Levels, trace: r.Trace,
		stats: fmt.Sprint(ck.Statistics()), reached: ck.Reached()}
	if r.Violation != nil {
		res.property, res.message = r.Violation.PropertyName(), r.Violation.Error()
	}
	res.hits, res.misses, _ = ck.StepCacheCounts()
	if !on && res.hits+res.misses != 0 {
		t.Fatalf("the step cache is off but counted %d hits and %d misses", res.hits, res.misses)
	}
	return res
}

// compareStepCache checks cfg with the step cache on and off: the same
// verdict, reason, states, transitions, depth, levels, violated property
// and message, counterexample (action codes and loop), statistics and
// reached goals. With one worker a search cut by the state limit is
// compared too (it stops at the same state). It returns the cache's hits.
func compareStepCache(t *testing.T, cfg model.Config, workers int, limit int64) int64 {
	t.Helper()
	on := stepCacheSearch(t, cfg, true, workers, limit)
	off := stepCacheSearch(t, cfg, false, workers, limit)
	if workers > 1 && (on.verdict == string(explore.Incomplete) || off.verdict == string(explore.Incomplete)) {
		t.Skipf("over %d states (with %d workers, where the search stops differs from run to run)", limit, workers)
	}
	hits, misses := on.hits, on.misses
	on.hits, on.misses = 0, 0
	if fmt.Sprintf("%+v", on) != fmt.Sprintf("%+v", off) {
		t.Fatalf("with the step cache:\n%+v\nwithout:\n%+v", on, off)
	}
	if !slices.Equal(on.trace, off.trace) {
		t.Fatal("counterexamples differ")
	}
	t.Logf("%s %s, %d states, %d transitions; step cache %d hits, %d misses", on.verdict, on.property, on.states, on.trans, hits, misses)
	return hits
}

// TestStepCacheKeepsResults compares searches with the step cache on and
// off on every claim and broken-variant example of every protocol, up to
// a state limit (a search cut by it is compared as far as it went), and
// MCAST and UCAST configurations with two workers. Under the race
// detector: a sixth of the claims, with a smaller limit.
func TestStepCacheKeepsResults(t *testing.T) {
	limit := int64(10_000)
	if testing.Short() {
		limit = 5_000
	}
	s := raceSample(4)
	if s.every > 1 {
		limit = 2_000
	}
	var hits int64
	used := 0
	eachClaimOf(t, s, 10, func(t *testing.T, cfg model.Config) {
		h := compareStepCache(t, cfg, 1, limit)
		hits += h
		if h > 0 {
			used++
		}
	})
	if used < s.atLeast(10) || hits == 0 {
		t.Errorf("the step cache hit in only %d searches (%d hits)", used, hits)
	}
	for _, cfg := range []model.Config{mcast.Config("binary", 3, 1, 1), ucast.Config(3, 1, 1)} {
		t.Run(cfg.Describe()+" workers=2", func(t *testing.T) {
			if compareStepCache(t, cfg, 2, 100_000) == 0 {
				t.Error("no hit")
			}
		})
	}
}
