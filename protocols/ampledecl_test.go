package protocols_test

import (
	"strings"
	"testing"

	"lfccheck/explore"
	"lfccheck/internal/racebuild"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols"
	"lfccheck/protocols/intr"
	"lfccheck/protocols/ucast"
	"lfccheck/traces"
)

// TestAmpleDeclarations checks every ample kind a protocol declares
// against what the ample-set reduction assumes of it (commutes with every
// action, disables none, invisible to every checked property, enables
// only actions of persistent fairness classes), on the full state graph
// of every claim and broken variant that declares one, up to a few
// thousand states each (Checker.CheckAmpleDeclaration).
func TestAmpleDeclarations(t *testing.T) {
	limit := 500
	if testing.Short() || racebuild.Enabled {
		limit = 200
	}
	checked := 0
	for _, d := range protocols.All() {
		for _, cl := range d.AllClaims() {
			cfg := cl.Config.Clone()
			cfg.Protocol = d.Name
			ck, err := properties.Build(cfg)
			if err != nil {
				t.Fatalf("%s %s: %v", d.Name, cl.Name, err)
			}
			if len(ck.AmpleKinds()) == 0 || len(ck.Sys.Faults()) > 0 {
				continue
			}
			n, err := ck.CheckAmpleDeclaration(limit)
			if err != nil {
				t.Errorf("%s %s (%d states): %v", d.Name, cl.Name, n, err)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Fatalf("only %d configurations declare an ample kind", checked)
	}
	t.Logf("%d configurations with ample kinds checked", checked)
}

// withAmple returns the checker of cfg with the kind named kind declared
// ample (a wrong declaration, for the tests below), and the reduction on
// when the checker allows it.
func withAmple(t *testing.T, cfg model.Config, kind string) *properties.Checker {
	t.Helper()
	ck, err := properties.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for i, k := range ck.Sys.Kinds {
		if k.Name == kind {
			k2 := *k
			k2.Ample = true
			ck.Sys.Kinds[i] = &k2
			found = true
		}
	}
	if !found {
		t.Fatalf("no kind %q", kind)
	}
	ck.Reduce = ck.CanReduce()
	return ck
}

// TestWrongAmpleDeclarationsCaught declares ample, in INTR, kinds that are
// not: each is refused by the reduction's conditions, stops the search
// with an internal error at a fused step (a visible kind, or one that
// disables another action), or fails the full-graph check of the
// declaration (a kind that does not commute with others).
func TestWrongAmpleDeclarationsCaught(t *testing.T) {
	cfg := intr.Config(2, 1)
	// The liveness property alone: the safety properties name the kinds
	// they see (model.Property.Sees), which switches the reduction off.
	cfg.Properties = []string{"no-lost-interrupt"}
	// Unfair kinds: a fair run may leave them enabled for ever.
	for _, kind := range []string{"poll", "enable", "launch"} {
		ck := withAmple(t, cfg, kind)
		if ck.Reduce || !strings.Contains(ck.ReduceOff(), "has no fairness") {
			t.Errorf("%s declared ample: the reduction must be off for want of fairness, got %q", kind, ck.ReduceOff())
		}
	}
	// Visible kinds, caught by the run-time checks of a fused step.
	for _, kind := range []string{"signal", "timeout"} {
		ck := withAmple(t, cfg, kind)
		if !ck.Reduce {
			t.Fatalf("%s declared ample: reduction off: %s", kind, ck.ReduceOff())
		}
		_, err := explore.BFS(ck, explore.Options{MaxStates: 100_000})
		if err == nil || !strings.Contains(err.Error(), "is declared ample") {
			t.Errorf("%s declared ample: the search must end with an internal error, got %v", kind, err)
		} else {
			t.Logf("%s declared ample: %v", kind, err)
		}
		if _, err := ck.CheckAmpleDeclaration(2000); err == nil {
			t.Errorf("%s declared ample: the declaration check finds nothing", kind)
		}
	}
	// NI N copy is invisible to INTR's properties and disables nothing,
	// but does not commute with the NI's sends (the credit it returns and
	// a data packet to the same peer go out in either order).
	cfg = intr.Config(2, 1, ucast.Flow{Src: 0, Dst: 1, Count: 2}, ucast.Flow{Src: 1, Dst: 0, Count: 2})
	cfg.Properties = []string{"no-lost-interrupt"}
	ck := withAmple(t, cfg, "copy")
	if _, err := ck.CheckAmpleDeclaration(20_000); err == nil || !strings.Contains(err.Error(), "does not commute") {
		t.Errorf("copy declared ample: want a commutation failure, got %v", err)
	} else {
		t.Logf("copy declared ample: %v", err)
	}
}

// TestAmpleWithCycles checks the reduction on a state graph with cycles:
// UCAST's credit-bounce variant (declared Cyclic: a credit travels back
// and forth for ever) with "host H process" ample, and every property
// but credit-conservation (which the bounce breaks first): the
// same verdict with the reduction on and off, fewer states, and the lasso
// found replays as a fair lasso.
func TestAmpleWithCycles(t *testing.T) {
	failed := 0
	for _, cfg := range []model.Config{ucast.Config(2, 1, 2), ucast.Config(3, 1, 1)} {
		cfg.Variant = ucast.CreditBounce
		cfg.Properties = []string{"deadlock", "pool-bound", "fifo", "exactly-once", "eventual-delivery"}
		var verdicts [2]string
		var states [2]int64
		for i, reduce := range []bool{true, false} {
			ck, err := properties.Build(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !ck.ReducesCycles() {
				t.Fatalf("credit-bounce: the reduction with cycles is off: %s", ck.ReduceOff())
			}
			ck.Reduce = reduce
			r, err := explore.BFS(ck, explore.Options{MaxStates: 200_000})
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict == explore.Incomplete {
				t.Fatalf("incomplete: %s", r.Reason)
			}
			verdicts[i], states[i] = string(r.Verdict), r.Stats.States
			if r.Violation != nil {
				verdicts[i] += " " + r.Violation.PropertyName()
				o, _, err := traces.RunCodes(ck, r.Trace, r.Loop)
				if err != nil || o.Violation == nil || o.Violation.Property != r.Violation.PropertyName() {
					t.Fatalf("reduce=%v: the counterexample does not replay: %v %v", reduce, o.Violation, err)
				}
				if r.Loop == 0 {
					t.Errorf("reduce=%v: a lasso was expected", reduce)
				}
			}
		}
		if verdicts[0] != verdicts[1] {
			t.Errorf("P=%d: verdicts with and without the reduction: %q, %q", cfg.Nodes, verdicts[0], verdicts[1])
		}
		if strings.HasPrefix(verdicts[0], "fail") {
			failed++
		}
		if states[0] >= states[1] {
			t.Errorf("the reduced search stored %d states, the full one %d", states[0], states[1])
		}
		t.Logf("P=%d: %s, %d states reduced, %d full", cfg.Nodes, verdicts[0], states[0], states[1])
	}
	if failed == 0 {
		t.Error("no lasso compared: credit-bounce P=2 must fail eventual-delivery")
	}
}
