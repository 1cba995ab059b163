package ucast_test

import (
	"fmt"
	"strings"
	"testing"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols"
	"lfccheck/protocols/internal/checktest"
	"lfccheck/protocols/ucast"
	"lfccheck/traces"
)

// cfg is a UCAST configuration; refresh 0 means the default.
func cfg(nodes, credits, packets, refresh int) model.Config {
	c := ucast.Config(nodes, credits, packets)
	c.Params.(*ucast.Params).Refresh = refresh
	return c
}

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
	ck.Symmetry = false // the pins are of the ample-set reduction; symmetry has its own
	ck.Stubborn = false // and so have stubborn sets
	// Without the reduction, without sleep sets either: the full graph.
	r, err := explore.BFS(ck, explore.Options{Fingerprint: fp, NoSleep: !reduce})
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
		{cfg(2, 1, 1, 0), 27, 53, 100, 10},
		{cfg(2, 1, 2, 0), 162, 409, 1090, 20},
		{cfg(2, 2, 4, 0), 4485, 14348, 53420, 40},
		{cfg(2, 2, 3, 2), 1287, 3953, 12066, 25},
		{cfg(3, 1, 1, 0), 13468, 81502, 397353, 30},
	}
	for _, c := range cases {
		p := c.cfg.Params.(*ucast.Params)
		name := fmt.Sprintf("P%d-C%d-K%d-R%d", c.cfg.Nodes, p.Credits, p.Packets, p.Refresh)
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
	for _, v := range ucast.Def.Variants {
		if v.Catches == "" {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			for _, reduce := range []bool{true, false} {
				for _, fp := range []bool{false, true} {
					r, ck := searchCk(t, ucast.Def.VariantClaim(v).Config, reduce, fp)
					if r.Verdict != explore.Fail || r.Violation.PropertyName() != v.Catches {
						t.Fatalf("reduce=%v fp=%v: want fail %s, got %v %v", reduce, fp, v.Catches, r.Verdict, r.Violation)
					}
					if len(r.Trace) == 0 || len(r.Trace) > 20 {
						t.Fatalf("counterexample of %d steps, want a short one", len(r.Trace))
					}
					o, _, err := traces.RunCodes(ck, r.Trace, r.Loop)
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
			if r := search(t, v.Example, true, false); r.Verdict != explore.Pass {
				t.Fatalf("correct protocol on the variant's example: %v %v", r.Verdict, r.Violation)
			}
		})
	}
}

// A refresh threshold above C leaves credits owed forever: deadlock.
func TestRefreshAboveCreditsDeadlocks(t *testing.T) {
	r := search(t, cfg(2, 1, 2, 2), true, false)
	if r.Verdict != explore.Fail || r.Violation.PropertyName() != "deadlock" {
		t.Fatalf("got %v %v", r.Verdict, r.Violation)
	}
}

// Explicit flows: one-way traffic needs explicit CREDIT packets.
func TestOneWayFlowUsesCreditPackets(t *testing.T) {
	c := cfg(2, 2, 1, 0)
	c.Params.(*ucast.Params).Flows = []ucast.Flow{{Src: 0, Dst: 1, Count: 6}}
	if r := search(t, c, true, false); r.Verdict != explore.Pass {
		t.Fatalf("got %v %v", r.Verdict, r.Violation)
	}
}

// The configuration named in the foundation issue: exhaustive pass with the
// same state count in exact and fingerprint mode.
func TestThreeNodesTwoPacketsExactEqualsFingerprint(t *testing.T) {
	if testing.Short() {
		t.Skip("about 30s; skipped with -short")
	}
	c := cfg(3, 1, 2, 0)
	exact := search(t, c, true, false)
	fp := search(t, c, true, true)
	if exact.Verdict != explore.Pass || fp.Verdict != explore.Pass {
		t.Fatalf("verdicts %v / %v", exact.Verdict, fp.Verdict)
	}
	if exact.Stats.States != 1638252 || fp.Stats.States != exact.Stats.States || fp.Stats.Transitions != exact.Stats.Transitions {
		t.Fatalf("exact %d/%d, fingerprint %d/%d states/transitions; pinned 1638252", exact.Stats.States,
			exact.Stats.Transitions, fp.Stats.States, fp.Stats.Transitions)
	}
}

// A property that reads what "host H process" changes (the host queue)
// switches the reduction off: the ample kind is no longer invisible.
func TestReductionRespectsWhatPropertiesSee(t *testing.T) {
	ck, err := properties.Build(ucast.Config(2, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	if !ck.CanReduce() || ck.SeenAmple() != "" {
		t.Fatalf("UCAST's own properties see no ample kind: %q", ck.SeenAmple())
	}
	queueEmpty := model.Property{Name: "queue-empty", Doc: "host queues are empty", Sees: []string{"process"},
		State: func(w *model.World) error { return nil }}
	ck2 := properties.NewChecker(ck.Sys, append(ucast.Properties(), queueEmpty))
	ck2.Def = ucast.Def
	if ck2.CanReduce() || !strings.Contains(ck2.SeenAmple(), "queue-empty") {
		t.Fatalf("a property that sees process must rule the reduction out: %q", ck2.SeenAmple())
	}
}

// Request/reply between every pair at P=3 (ucast.ReplyConfig(3, 1, 1):
// every node sends a request to each other node, and every upcall
// replies), complete and violation-free, with draining and nested upcalls
// exercised. Outside -short: 649,409 states (about 3 s; 50 s under the
// race detector, which is why it is not a suite row).
func TestReplyEveryPairP3(t *testing.T) {
	if testing.Short() {
		t.Skip("a 650k-state search")
	}
	r, ck := checktest.Search(t, ucast.ReplyConfig(3, 1, 1))
	stats := checktest.Stats(ck)
	if r.Verdict != explore.Pass || stats["drained-buffers"] == 0 || stats["upcalls-aside"] < 2 {
		t.Fatalf("%v %v after %d states; statistics %v", r.Verdict, r.Violation, r.Stats.States, stats)
	}
}
