package ucast_test

import (
	"fmt"
	"testing"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols"
	"lfccheck/protocols/ucast"
	"lfccheck/traces"
)

func search(t *testing.T, cfg model.Config, reduce, fp bool) explore.Result {
	r, _ := searchCk(t, cfg, reduce, fp)
	return r
}

func searchCk(t *testing.T, cfg model.Config, reduce, fp bool) (explore.Result, *properties.Checker) {
	t.Helper()
	ck, err := protocols.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ck.Reduce = reduce
	r, err := explore.BFS(ck, explore.Options{Fingerprint: fp})
	if err != nil {
		t.Fatal(err)
	}
	return r, ck
}

// Pinned unique-state counts: a change here means the model changed.
func TestPinnedStateCounts(t *testing.T) {
	cases := []struct {
		cfg                 model.Config
		reduced, full       int64
		fullTrans, maxDepth int64
	}{
		{model.Config{Nodes: 2, Credits: 1, Packets: 1}, 37, 53, 100, 10},
		{model.Config{Nodes: 2, Credits: 1, Packets: 2}, 234, 409, 1090, 20},
		{model.Config{Nodes: 2, Credits: 2, Packets: 4}, 7489, 14348, 53420, 40},
		{model.Config{Nodes: 2, Credits: 2, Packets: 3, Refresh: 2}, 3040, 6473, 19156, 25},
		{model.Config{Nodes: 3, Credits: 1, Packets: 1}, 28885, 81502, 397353, 30},
	}
	for _, c := range cases {
		c.cfg.Protocol = "ucast"
		name := fmt.Sprintf("P%d-C%d-K%d-R%d", c.cfg.Nodes, c.cfg.Credits, c.cfg.Packets, c.cfg.Refresh)
		t.Run(name, func(t *testing.T) {
			for _, fp := range []bool{false, true} {
				red := search(t, c.cfg, true, fp)
				full := search(t, c.cfg, false, fp)
				if red.Verdict != explore.Pass || full.Verdict != explore.Pass {
					t.Fatalf("fingerprint=%v: verdicts %v / %v", fp, red.Verdict, full.Verdict)
				}
				if red.Stats.States != c.reduced || full.Stats.States != c.full ||
					full.Stats.Transitions != c.fullTrans || int64(full.Stats.Depth) != c.maxDepth {
					t.Fatalf("fingerprint=%v: reduced %d states, full %d states %d transitions depth %d; pinned %d, %d, %d, %d",
						fp, red.Stats.States, full.Stats.States, full.Stats.Transitions, full.Stats.Depth,
						c.reduced, c.full, c.fullTrans, c.maxDepth)
				}
			}
		})
	}
}

// Every broken variant must be caught by the property it breaks, with a
// counterexample that replays through the model, with and without the
// reduction and in both storage modes.
func TestVariantsAreCaught(t *testing.T) {
	for _, v := range ucast.Variants() {
		if v.Catches == "" {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			for _, reduce := range []bool{true, false} {
				for _, fp := range []bool{false, true} {
					cfg := v.Example
					cfg.Protocol, cfg.Variant = "ucast", v.Name
					cfg.Properties = []string{v.Catches}
					r, ck := searchCk(t, cfg, reduce, fp)
					if r.Verdict != explore.Fail || r.Violation.PropertyName() != v.Catches {
						t.Fatalf("reduce=%v fp=%v: want fail %s, got %v %v", reduce, fp, v.Catches, r.Verdict, r.Violation)
					}
					if len(r.Trace) == 0 || len(r.Trace) > 20 {
						t.Fatalf("counterexample of %d steps, want a short one", len(r.Trace))
					}
					o, err := traces.Run(ck, traces.FromCodes(r.Trace))
					if err != nil {
						t.Fatalf("counterexample does not replay: %v", err)
					}
					if o.Violation == nil || o.Violation.Property != v.Catches {
						t.Fatalf("replay shows %v, want %s", o.Violation, v.Catches)
					}
				}
			}
			// The same configuration with the correct protocol passes: the
			// variant, not the configuration, is what fails.
			cfg := v.Example
			cfg.Protocol = "ucast"
			if r := search(t, cfg, true, false); r.Verdict != explore.Pass {
				t.Fatalf("correct protocol on the variant's example: %v %v", r.Verdict, r.Violation)
			}
		})
	}
}

// A refresh threshold above C leaves credits owed forever: deadlock.
func TestRefreshAboveCreditsDeadlocks(t *testing.T) {
	r := search(t, model.Config{Protocol: "ucast", Nodes: 2, Credits: 1, Packets: 2, Refresh: 2}, true, false)
	if r.Verdict != explore.Fail || r.Violation.PropertyName() != "deadlock" {
		t.Fatalf("got %v %v", r.Verdict, r.Violation)
	}
}

// Explicit flows: one-way traffic needs explicit CREDIT packets.
func TestOneWayFlowUsesCreditPackets(t *testing.T) {
	cfg := model.Config{Protocol: "ucast", Nodes: 2, Credits: 2, Flows: []model.Flow{{Src: 0, Dst: 1, Count: 6}}}
	if r := search(t, cfg, true, false); r.Verdict != explore.Pass {
		t.Fatalf("got %v %v", r.Verdict, r.Violation)
	}
}

// The configuration named in the foundation issue: exhaustive pass with the
// same state count in exact and fingerprint mode.
func TestThreeNodesTwoPacketsExactEqualsFingerprint(t *testing.T) {
	if testing.Short() {
		t.Skip("about 30s; skipped with -short")
	}
	cfg := model.Config{Protocol: "ucast", Nodes: 3, Credits: 1, Packets: 2}
	exact := search(t, cfg, true, false)
	fp := search(t, cfg, true, true)
	if exact.Verdict != explore.Pass || fp.Verdict != explore.Pass {
		t.Fatalf("verdicts %v / %v", exact.Verdict, fp.Verdict)
	}
	if exact.Stats.States != 3826632 || fp.Stats.States != exact.Stats.States || fp.Stats.Transitions != exact.Stats.Transitions {
		t.Fatalf("exact %d/%d, fingerprint %d/%d states/transitions; pinned 3826632", exact.Stats.States,
			exact.Stats.Transitions, fp.Stats.States, fp.Stats.Transitions)
	}
}
