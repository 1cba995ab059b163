package recov_test

import (
	"testing"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/protocols"
	"lfccheck/protocols/internal/checktest"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/recov"
	"lfccheck/protocols/topology"
	"lfccheck/traces"
)

// Every broken variant is caught, on its example, by the property it
// names (checked alone, as 'lfccheck list' prints), with a counterexample
// that replays to the same violation.
func TestVariantsCaught(t *testing.T) {
	for _, v := range recov.Def.Variants {
		if v.Catches == "" {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			cfg := recov.Def.VariantClaim(v).Config
			r, ck := checktest.Search(t, cfg)
			if r.Verdict != explore.Fail || r.Violation.PropertyName() != v.Catches {
				t.Fatalf("got %v %v, want %s violated", r.Verdict, r.Violation, v.Catches)
			}
			o, _, err := traces.RunCodes(ck, r.Trace, r.Loop)
			if err != nil || o.Violation == nil || o.Violation.Property != v.Catches {
				t.Errorf("replay: %v %v", o.Violation, err)
			}
		})
	}
}

// A chain of three: every property holds, recoveries grow beyond their
// first hop (recovers is reached), and plain MCAST deadlocks on the same
// configuration at P=4 (the suite's MCAST claim).
func TestChainPasses(t *testing.T) {
	r, ck := checktest.Search(t, recov.Config("chain", 3, 1, 1))
	if r.Verdict != explore.Pass || len(ck.Unreached()) > 0 {
		t.Fatalf("%v %v, unreached %v", r.Verdict, r.Violation, ck.Unreached())
	}
	if testing.Short() {
		return
	}
	m, _ := checktest.Search(t, mcast.Config("chain", 4, 1, 1))
	if m.Verdict != explore.Fail || m.Violation.PropertyName() != "deadlock" {
		t.Errorf("MCAST chain P=4: %v %v, want a deadlock", m.Verdict, m.Violation)
	}
}

// Without the rotation symmetry the counts are larger by about P, and
// the verdicts are the same.
func TestSymmetryOnChain(t *testing.T) {
	on, _ := checktest.Search(t, recov.Config("chain", 3, 1, 1))
	cfg := recov.Config("chain", 3, 1, 1)
	ck, err := protocols.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ck.Symmetry = false
	off, err := explore.BFS(ck, explore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if on.Verdict != explore.Pass || off.Verdict != explore.Pass || off.Stats.States < 2*on.Stats.States {
		t.Errorf("on: %v %d states; off: %v %d states", on.Verdict, on.Stats.States, off.Verdict, off.Stats.States)
	}
}

// Variant no-save behaves differently (more states: the header is state)
// but breaks no property on a chain of three, where every NI has at most
// one child and the stale header is never read; ForkConfig, where NI 1
// has two, catches it (the variant's claim).
func TestNoSavePassesSmallChain(t *testing.T) {
	cfg := recov.CastChain()
	cfg.Variant = recov.NoSave
	r, _ := checktest.Search(t, cfg)
	c, _ := checktest.Search(t, recov.CastChain())
	if r.Verdict != explore.Pass || r.Stats.States == c.Stats.States {
		t.Errorf("no-save: %v %v, %d states (correct: %d)", r.Verdict, r.Violation, r.Stats.States, c.Stats.States)
	}
}

// The search's statistics: recoveries happen on a chain of three and the
// largest recovery tree spans the chain; binary trees of three (stars)
// never run out of credits with one packet per tree.
func TestSearchStatistics(t *testing.T) {
	stat := func(cfg model.Config) map[string]int64 {
		_, ck := checktest.Search(t, cfg)
		m := map[string]int64{}
		for _, s := range ck.Statistics() {
			m[s.Name] = s.Value
		}
		return m
	}
	chain := stat(recov.Config("chain", 3, 1, 1))
	if chain["recoveries"] == 0 || chain["channel-packets"] <= chain["recoveries"] || chain["largest-recovery-tree"] != 3 {
		t.Errorf("chain: %v", chain)
	}
	if star := stat(recov.Config("binary", 3, 1, 1)); star["recoveries"] != 0 || star["largest-recovery-tree"] != 0 {
		t.Errorf("binary P=3: %v", star)
	}
}

// A forked checker (scenario replays use one) shares the statistics
// rather than having none to add to.
func TestForkKeepsStatistics(t *testing.T) {
	_, ck := checktest.Search(t, recov.Config("chain", 3, 1, 1))
	f := ck.Fork()
	if err := f.CheckState(f.Sys.Initial()); err != nil {
		t.Fatal(err)
	}
	if got := f.Statistics(); len(got) != 3 || got[0].Value == 0 {
		t.Errorf("forked statistics: %v", got)
	}
}

// channel-forward checks that a send off the channel consumed a credit
// (model.Transmit.Paid): thesis-literal, whose next_in_tree descriptor
// goes out unmarked and unpaid, fails it alone, on the variant's example,
// in 6 steps (before any state property could see the harm).
func TestThesisLiteralFailsChannelForward(t *testing.T) {
	cfg := recov.Config("chain", 3, 1, 2)
	cfg.Variant, cfg.Properties = recov.ThesisLiteral, []string{"channel-forward"}
	r, _ := checktest.Search(t, cfg)
	if r.Verdict != explore.Fail || r.Violation.PropertyName() != "channel-forward" || len(r.Trace) != 6 {
		t.Fatalf("%v %v after %d steps, want channel-forward violated after 6", r.Verdict, r.Violation, len(r.Trace))
	}
}

// Variant stale-header needs a send packet used for a recovery and then
// again: with node 0 multicasting two packets instead of three, every
// property but the goal recovers (a chain of two has no second hop)
// holds, and the reused headers are state (more states than correct).
func TestStaleHeaderNeedsThreePackets(t *testing.T) {
	var props []string
	for _, p := range recov.Def.Properties {
		if p.Name != recov.Recovers.Name {
			props = append(props, p.Name)
		}
	}
	two := func(variant string) explore.Result {
		cfg := recov.StaleHeaderConfig()
		cfg.Params.(*mcast.Params).Casts[0].Count = 2
		cfg.Variant, cfg.Properties = variant, props
		r, _ := checktest.Search(t, cfg)
		return r
	}
	stale, correct := two(recov.StaleHeader), two(recov.Correct)
	if stale.Verdict != explore.Pass || correct.Verdict != explore.Pass || stale.Stats.States <= correct.Stats.States {
		t.Errorf("two packets: stale-header %v %v (%d states), correct %v (%d states)",
			stale.Verdict, stale.Violation, stale.Stats.States, correct.Verdict, correct.Stats.States)
	}
}

// Variant shared-escape needs three packets on a chain of three: with two
// in all, no two recoveries meet at one NI and channel-bound holds.
func TestSharedEscapeNeedsThreePackets(t *testing.T) {
	for _, casts := range [][]topology.Cast{{{Root: 0, Count: 2}}, {{Root: 0, Count: 1}, {Root: 1, Count: 1}}} {
		cfg := recov.SharedEscapeConfig()
		cfg.Params.(*mcast.Params).Casts = casts
		cfg.Variant, cfg.Properties = recov.SharedEscape, []string{"channel-bound"}
		if r, _ := checktest.Search(t, cfg); r.Verdict != explore.Pass {
			t.Errorf("casts %v: %v %v", casts, r.Verdict, r.Violation)
		}
	}
}
