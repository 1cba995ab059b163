package protocols_test

import (
	"fmt"
	"lfccheck/internal/racebuild"
	"testing"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols/ucast"
)

// TestWorkersKeepResults checks every claim and broken-variant example of
// every protocol with one worker and with three, in the exact and the
// fingerprint store: the verdict, the violated property, the counts of
// states and transitions (explored and left out by sleep sets), the
// counterexample, the protocol's statistics
// and the unreached goals must be identical (the parallel search numbers
// states in sequential breadth-first order, and counts up to a violation
// in that order).
func TestWorkersKeepResults(t *testing.T) {
	limit := int64(150_000)
	stores := []bool{false, true}
	if testing.Short() {
		// CI runs the short tests under the race detector, where every
		// synchronisation of three workers is slow: a smaller bound, the
		// exact store only.
		limit, stores = 20_000, []bool{false}
	}
	if racebuild.Enabled {
		// Every claim still runs on three workers; the largest are
		// left out sooner.
		limit = 8_000
	}
	claim := 0
	eachClaim(t, 10, func(t *testing.T, cfg model.Config) {
		claim++
		for _, fp := range stores {
			if fp && claim%2 == 0 {
				// The fingerprint store on every other claim: the
				// workers share its code with the exact store's but for
				// the table (about a quarter of this test's time).
				continue
			}
			var want string
			for _, workers := range []int{1, 3} {
				ck, err := properties.Build(cfg)
				if err != nil {
					t.Fatal(err)
				}
				r, err := explore.BFS(ck, explore.Options{MaxStates: limit, Workers: workers, Fingerprint: fp})
				if err != nil {
					t.Fatal(err)
				}
				if r.Verdict == explore.Incomplete {
					t.Skipf("%s", r.Reason)
				}
				got := fmt.Sprintf("%s %d states %d transitions depth %d trace %v loop %d sleep sets %+v", r.Verdict, r.Stats.States, r.Stats.Transitions, r.Stats.Depth, r.Trace, r.Loop, r.Sleep)
				if r.Violation != nil {
					got += " " + r.Violation.PropertyName()
				}
				got += fmt.Sprint(" statistics ", ck.Statistics(), " unreached ", ck.Unreached())
				if workers == 1 {
					want = got
				} else if got != want {
					t.Fatalf("fingerprint=%v: 3 workers: %s\n1 worker: %s", fp, got, want)
				}
			}
		}
	})
}

// TestWorkersKeepResultsAtANonLayeredLevel: no-drain with nested upcalls
// has its deadlock in the level where the search also meets a transition
// into an expanded state (which sleep sets cannot handle). Which of the
// two comes first in sequential order decides the result, never the
// workers' schedule: the same result with 1, 2 and 3 workers, run after
// run.
func TestWorkersKeepResultsAtANonLayeredLevel(t *testing.T) {
	cfg := ucast.ReplyConfig(2, 1, 3)
	cfg.Variant = "no-drain"
	var want string
	for run := 0; run < 4; run++ {
		for _, workers := range []int{1, 2, 3} {
			ck, err := properties.Build(cfg)
			if err != nil {
				t.Fatal(err)
			}
			r, err := explore.BFS(ck, explore.Options{Workers: workers})
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("%s %d states %d transitions depth %d trace %v sleep sets %+v", r.Verdict, r.Stats.States, r.Stats.Transitions, r.Stats.Depth, r.Trace, r.Sleep)
			if want == "" {
				want = got
				if r.Verdict != explore.Fail {
					t.Fatalf("no-drain with nested upcalls: %s, want a deadlock", got)
				}
			} else if got != want {
				t.Fatalf("run %d, %d workers: %s\nfirst run: %s", run, workers, got, want)
			}
		}
	}
}
