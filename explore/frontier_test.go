package explore_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/recov"
	"lfccheck/protocols/ucast"
)

// TestFrontierSearch compares frontier searches with full ones: on layered
// state graphs the same states, transitions, statistics and counterexample,
// and no state found stored twice (also when the check sorts in several
// runs); on a graph that is not layered (C=4 with credit refreshes) the
// same verdict with more states, which the check finds stored twice.
func TestFrontierSearch(t *testing.T) {
	cases := []struct {
		name      string
		cfg       model.Config
		chunk     int
		noSleep   bool
		nonLayerd bool
	}{
		{"mcast-binary-3-k2", mcast.Config("binary", 3, 1, 2), 1 << 26, false, false},
		{"mcast-binary-3-k2/merge", mcast.Config("binary", 3, 1, 2), 10000, false, false},
		{"mcast-chain-4-deadlock", mcast.Config("chain", 4, 1, 1), 1 << 26, false, false},
		{"ucast-3-k2/no-sleep", ucast.Config(3, 1, 2), 1 << 26, true, false},
		{"recov-chain-3/merge", recov.Config("chain", 3, 1, 1), 500, false, false},
		{"mcast-binary-2-c4-k6", mcast.Config("binary", 2, 4, 6), 5000, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if testing.Short() && (strings.HasPrefix(c.name, "mcast-binary-3") || strings.HasPrefix(c.name, "ucast-3")) {
				t.Skip("a full and a frontier search of over 100,000 states")
			}
			defer explore.SetSortChunk(c.chunk)()
			ck := build(t, c.cfg)
			r, err := explore.BFS(ck, explore.Options{Workers: 2, NoSleep: c.noSleep})
			want := outcomeOf(t, ck, r, err)
			ck = build(t, c.cfg)
			r, err = explore.BFS(ck, explore.Options{Workers: 2, NoSleep: c.noSleep, Frontier: true})
			got := outcomeOf(t, ck, r, err)
			f := r.Frontier
			if f == nil || f.Checked != (r.Verdict == explore.Pass) {
				t.Fatalf("frontier info %+v for %v", f, r.Verdict)
			}
			if !c.nonLayerd {
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("frontier search differs (-full +frontier):\n%s", diff)
				}
				if f.Duplicates != 0 {
					t.Errorf("%d states stored twice in a layered graph", f.Duplicates)
				}
				return
			}
			if got.Verdict != want.Verdict || got.States <= want.States || f.Duplicates != got.States-want.States {
				t.Errorf("not layered: full %v %d states, frontier %v %d states with %d stored twice",
					want.Verdict, want.States, got.Verdict, got.States, f.Duplicates)
			}
		})
	}
}

// A frontier search needs a protocol whose runs all end, the exact store
// and no state graph.
func TestFrontierRefused(t *testing.T) {
	var oe *explore.OptionError
	ck := build(t, mcast.Config("binary", 3, 1, 1))
	if _, err := explore.BFS(ck, explore.Options{Frontier: true, Fingerprint: true}); !errors.As(err, &oe) {
		t.Errorf("fingerprints: %v", err)
	}
	cfg := mcast.Config("chain", 2, 1, 2)
	cfg.Variant = "credit-bounce"
	if _, err := explore.BFS(build(t, cfg), explore.Options{Frontier: true}); !errors.As(err, &oe) {
		t.Errorf("a variant with cycles: %v", err)
	}
}
