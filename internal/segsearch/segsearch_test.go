package segsearch

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"lfccheck/explore"
	"lfccheck/internal/racebuild"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/ucast"
	"lfccheck/traces"
)

// build returns the checker of cfg, stubborn sets off.
func build(t testing.TB, cfg model.Config) *properties.Checker {
	t.Helper()
	ck, err := protocols.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ck.Stubborn = false
	return ck
}

// checkerNoPOR is the checker's search of the experiment's space: one
// worker, stubborn and sleep sets off (check --workers 1 --por off
// --sleep-sets off), up to limit states (0: no limit).
func checkerNoPOR(cfg model.Config, limit int64) (explore.Result, *properties.Checker, error) {
	return checkerSpace(cfg, limit, false)
}

// checkerSpace is checkerNoPOR, with the symmetry reduction off where
// abs is set (the space of the search's absolute form).
func checkerSpace(cfg model.Config, limit int64, abs bool) (explore.Result, *properties.Checker, error) {
	ck, err := protocols.Build(cfg)
	if err != nil {
		return explore.Result{}, nil, err
	}
	ck.Stubborn = false
	if abs {
		ck.Symmetry = false
	}
	r, err := explore.BFS(ck, explore.Options{Workers: 1, NoSleep: true, MaxStates: limit})
	return r, ck, err
}

// TestSegmentIDSearch checks that the experiment's search over segment
// ids, with its checks, finds the states, transitions, levels and
// statistics of the checker's search on the same space, where both pass.
func TestSegmentIDSearch(t *testing.T) {
	// (chain P=3 C=2 forwards: its statistic is not zero.)
	cfgs := []model.Config{mcast.Config("binary", 3, 1, 1), mcast.Config("chain", 3, 2, 1), ucast.Config(3, 1, 1)}
	if !racebuild.Enabled {
		// 171,461 states: about 4 s here, ten times that under -race
		// (which watches nothing here but one goroutine).
		cfgs = append(cfgs, mcast.Config("binomial", 3, 1, 2))
	}
	// The absolute form too: binary P=3 and UCAST P=3 with the symmetry
	// reduction off.
	type run struct {
		cfg model.Config
		abs bool
	}
	var runs []run
	for _, cfg := range cfgs {
		runs = append(runs, run{cfg, false})
	}
	runs = append(runs, run{cfgs[0], true}, run{cfgs[2], true})
	for _, c := range runs {
		cfg := c.cfg
		t.Run(fmt.Sprintf("%s abs=%v", cfg.Describe(), c.abs), func(t *testing.T) {
			ck := build(t, cfg)
			ck.Symmetry = !c.abs
			s, err := newSegSearch(ck, true)
			if err != nil || s.abs != c.abs {
				t.Fatalf("%v, absolute form %v", err, s.abs)
			}
			s.verify = true // every delivery run whole too, and compared
			states, trans, levels, err := s.search(explore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			r, rck, err := checkerSpace(cfg, 0, c.abs)
			if err != nil || r.Verdict != explore.Pass {
				t.Fatalf("checker: %v %v", r.Verdict, err)
			}
			if states != r.Stats.States || trans != r.Stats.Transitions || !slices.Equal(levels, r.Stats.Levels) {
				t.Fatalf("segment ids: %d states, %d transitions, levels %v; checker: %d, %d, %v", states, trans, levels, r.Stats.States, r.Stats.Transitions, r.Stats.Levels)
			}
			if s.miss == 0 || s.miss == trans {
				t.Fatalf("%d misses of %d transitions", s.miss, trans)
			}
			if got, want := s.ck.Statistics(), rck.Statistics(); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("statistics %v; checker %v", got, want)
			}
			t.Logf("statistics %v", s.ck.Statistics())
			t.Logf("%d states, %d transitions, %d segments, %d misses", states, trans, len(s.real), s.miss)
		})
	}
}

// failed names the property a search found violated ("" if none).
func failed(r explore.Result) string {
	if r.Violation == nil {
		return ""
	}
	return r.Violation.PropertyName()
}

// TestSegmentIDVerdicts runs the experiment's search, with its checks, on
// every claim and broken-variant example it can take (up to a state
// limit), and compares its verdict and violated property with the
// checker's on the same space; a counterexample must replay through the
// checker (traces.RunCodes) to the same property, in as many steps as
// the checker's. It must take some that fail, of several properties.
func TestSegmentIDVerdicts(t *testing.T) {
	limit := int64(300_000)
	if testing.Short() {
		limit = 20_000
	}
	if racebuild.Enabled {
		limit = 5_000
	}
	taken, traced, goals, absolute, failing := 0, 0, 0, 0, map[string]bool{}
	for _, d := range protocols.All() {
		for _, cl := range d.AllClaims() {
			cfg := cl.Config.Clone()
			cfg.Protocol = d.Name
			s, err := newSegSearch(build(t, cfg), true)
			if err != nil {
				continue
			}
			t.Run(d.Name+" "+cl.Name, func(t *testing.T) {
				r, rck, err := checkerSpace(cfg, limit, s.abs)
				if err != nil {
					t.Fatal(err)
				}
				if r.Verdict == explore.Incomplete {
					t.Skipf("over %d states", limit)
				}
				taken++
				if s.abs {
					absolute++
				}
				s.verify = true // every delivery run whole too, and compared
				states, _, _, err := s.search(explore.Options{})
				var v *properties.Violation
				switch {
				case r.Verdict == explore.Pass && err != nil:
					t.Fatalf("checker: pass; segment ids: %v", err)
				case r.Verdict == explore.Pass:
					if states != r.Stats.States {
						t.Fatalf("%d states; checker %d", states, r.Stats.States)
					}
					// The reachability goals: the same unreached.
					if got, want := fmt.Sprint(s.ck.Unreached()), fmt.Sprint(rck.Unreached()); got != want {
						t.Fatalf("unreached goals %s; checker %s", got, want)
					}
					if len(s.ck.Reached()) > 0 {
						goals++
					}
				case !errors.As(err, &v):
					t.Fatalf("checker: %s %s; segment ids: %v", r.Verdict, failed(r), err)
				case v.Property != failed(r):
					t.Fatalf("checker: %s %s; segment ids: %v", r.Verdict, failed(r), v)
				default:
					failing[v.Property] = true
					// The counterexample replays to the same violation,
					// and is as short as the checker's.
					codes := s.trace()
					if s.err != nil {
						t.Fatal(s.err)
					}
					ck, err := protocols.Build(cfg)
					if err != nil {
						t.Fatal(err)
					}
					o, acts, err := traces.RunCodes(ck, codes, 0)
					if err != nil || o.Violation == nil || o.Violation.Property != v.Property {
						t.Fatalf("the trace of %d steps replays to %+v, %v; the search found %v", len(codes), o.Violation, err, v)
					}
					if len(codes) != len(r.Trace) {
						t.Fatalf("a trace of %d steps; the checker's has %d", len(codes), len(r.Trace))
					}
					traced++
					t.Logf("%d steps (%d with the fused ones): %s", len(codes), len(acts), o.Violation)
				}
				t.Logf("%s %s (%d states)", r.Verdict, failed(r), states)
			})
		}
	}
	if taken < 10 || len(failing) < 5 || traced < len(failing) || absolute < 5 || goals < 2 {
		t.Errorf("%d searches compared (%d in the absolute form, %d reaching goals), failing properties %v, %d traces replayed", taken, absolute, goals, failing, traced)
	}
	t.Logf("%d searches compared (%d in the absolute form, %d reaching goals), failing properties %v, %d traces replayed", taken, absolute, goals, failing, traced)
}

// BenchmarkSegmentIDSearch compares the experiment's search over segment
// ids with the checker's search of the same space (one worker, no
// stubborn or sleep sets): states/s of each, the former with its checks
// and without. MCAST binary P=4 C=1 K=1; with -short (CI), P=3.
func BenchmarkSegmentIDSearch(b *testing.B) {
	cfg := mcast.Config("binary", 4, 1, 1)
	if testing.Short() {
		cfg = mcast.Config("binary", 3, 1, 1)
	}
	for _, check := range []bool{true, false} {
		b.Run(fmt.Sprintf("segment-ids/checks=%v", check), func(b *testing.B) {
			var states int64
			var secs float64
			for i := 0; i < b.N; i++ {
				s, err := newSegSearch(build(b, cfg), check)
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				n, _, _, err := s.search(explore.Options{})
				if err != nil {
					b.Fatal(err)
				}
				secs += time.Since(start).Seconds()
				states += n
			}
			b.ReportMetric(float64(states)/secs, "states/s")
		})
	}
	b.Run("checker", func(b *testing.B) {
		var states int64
		var secs float64
		for i := 0; i < b.N; i++ {
			r, _, err := checkerNoPOR(cfg, 0)
			if err != nil || r.Verdict != explore.Pass {
				b.Fatalf("%v %v", r.Verdict, err)
			}
			states += r.Stats.States
			secs += r.Stats.Elapsed.Seconds()
		}
		b.ReportMetric(float64(states)/secs, "states/s")
	})
}

// TestSegmentIDWide checks the packing of more than 4 nodes (ids of
// 64/P bits): up to a depth, the levels, states and transitions of the
// checker's search of the same space (MCAST binary, UCAST, P=5 and 6),
// and the chain P=5's deadlock, by a counterexample as long as the
// checker's that replays to it.
func TestSegmentIDWide(t *testing.T) {
	for _, c := range []struct {
		cfg   model.Config
		depth int
	}{
		{mcast.Config("binary", 5, 1, 1), 11},
		{ucast.Config(5, 1, 1), 9},
		{mcast.Config("binary", 6, 1, 1), 8},
		{ucast.Config(6, 1, 1), 6},
	} {
		if racebuild.Enabled {
			c.depth -= 4 // fewer states: the race detector watches one goroutine here
		}
		t.Run(c.cfg.Describe(), func(t *testing.T) {
			s, err := newSegSearch(build(t, c.cfg), true)
			if err != nil {
				t.Fatal(err)
			}
			s.verify = true
			states, trans, levels, err := s.search(explore.Options{MaxDepth: c.depth})
			if err != nil || s.err != nil || s.overflow {
				t.Fatalf("%v %v, overflow %v", err, s.err, s.overflow)
			}
			ck, err := protocols.Build(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			ck.Stubborn = false
			r, err := explore.BFS(ck, explore.Options{Workers: 1, NoSleep: true, MaxDepth: c.depth})
			if err != nil || r.Verdict != explore.Incomplete {
				t.Fatalf("checker: %v %v", r.Verdict, err)
			}
			if states != r.Stats.States || trans != r.Stats.Transitions || !slices.Equal(levels, r.Stats.Levels) {
				t.Fatalf("segment ids: %d states, %d transitions, levels %v; checker: %d, %d, %v", states, trans, levels, r.Stats.States, r.Stats.Transitions, r.Stats.Levels)
			}
			t.Logf("%d states to depth %d, %d segments of %d bits", states, c.depth, len(s.real), s.lane)
		})
	}
	cfg := mcast.Config("chain", 5, 1, 1)
	s, err := newSegSearch(build(t, cfg), true)
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, err = s.search(explore.Options{})
	r, _, cerr := checkerNoPOR(cfg, 0)
	var v *properties.Violation
	if cerr != nil || r.Verdict != explore.Fail || !errors.As(err, &v) || v.Property != failed(r) || v.Property != "deadlock" {
		t.Fatalf("chain P=5: %v; checker %v %s %v", err, r.Verdict, failed(r), cerr)
	}
	codes := s.trace()
	o, _, err := traces.RunCodes(build(t, cfg), codes, 0)
	if err != nil || o.Violation == nil || o.Violation.Property != "deadlock" || len(codes) != len(r.Trace) {
		t.Fatalf("chain P=5: a trace of %d steps (the checker's %d) replays to %+v, %v", len(codes), len(r.Trace), o.Violation, err)
	}
}

// TestTooManySegments: a search that makes more segment ids than fit
// (here a bound of 100 instead of 65,535) stops, incomplete, whatever it
// found in its last expansion.
func TestTooManySegments(t *testing.T) {
	s, err := newSegSearch(build(t, mcast.Config("binary", 3, 1, 1)), true)
	if err != nil {
		t.Fatal(err)
	}
	s.maxIDs = 100
	states, _, levels, err := s.search(explore.Options{})
	if err != nil || !s.overflow || !s.partial || !strings.Contains(s.reason, "more than 100 distinct segments (the search over segment ids packs 3 ids of 16 bits") || states >= 2576 {
		t.Fatalf("%d states, levels %v, err %v, overflow %v, partial %v, reason %q", states, levels, err, s.overflow, s.partial, s.reason)
	}
}
