package traces_test

import (
	"strings"
	"testing"

	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols/ucast"
	"lfccheck/traces"
)

// bounce builds the checker of UCAST's credit-bounce livelock with node 0
// sending n packets to node 1 and eventual-delivery checked on the graph.
func bounce(t *testing.T, n int) *properties.Checker {
	t.Helper()
	cfg := ucast.Flows(2, 1, ucast.Flow{Src: 0, Dst: 1, Count: n})
	cfg.Variant = ucast.CreditBounce
	cfg.Properties = []string{"eventual-delivery"}
	ck, err := properties.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ck
}

func acts(t *testing.T, ck *properties.Checker, names ...string) []model.Action {
	t.Helper()
	a, err := traces.ParseActions(ck.Sys, names)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestLassoReplayChecksTheLoop(t *testing.T) {
	ck := bounce(t, 2)
	prefix := []string{"host 0 launch", "host 0 launch", "deliver 0->1", "ni 1 copy"}
	loop := []string{"deliver 1->0", "deliver 0->1"}

	// Host 1 never processes its packet although it could all along: the
	// loop starves a weakly fair class, so it is no counterexample.
	_, err := traces.RunLasso(ck, acts(t, ck, append(prefix, loop...)...), 2)
	if err == nil || !strings.Contains(err.Error(), "the loop is not fair: it never takes host 1 (weak fairness), which is enabled throughout") {
		t.Fatalf("unfair loop: got %v", err)
	}

	// Processing first makes the same loop fair: a counterexample.
	o, err := traces.RunLasso(ck, acts(t, ck, append(append(prefix, "host 1 process"), loop...)...), 2)
	if err != nil || o.Violation == nil || o.Violation.Property != "eventual-delivery" || !o.Live || o.Loop != 2 {
		t.Fatalf("fair loop: %+v, %v", o.Violation, err)
	}
	if o.Explanation == nil || o.Explanation.Field != "fairness" || len(o.Explanation.Lines) == 0 {
		t.Fatalf("no fairness explanation: %+v", o.Explanation)
	}

	// A loop that does not return to its first state.
	if _, err := traces.RunLasso(ck, acts(t, ck, append(prefix, "host 1 process", "deliver 1->0")...), 1); err == nil ||
		!strings.Contains(err.Error(), "does not return") {
		t.Fatalf("open loop: got %v", err)
	}

	// A prefix without a loop that does not end says nothing.
	o, err = traces.RunLasso(ck, acts(t, ck, prefix...), 0)
	if err != nil || o.Violation != nil {
		t.Fatalf("finite prefix: %+v, %v", o.Violation, err)
	}
}

// With every packet delivered the goal holds in the loop: no violation.
func TestLassoWhereTheGoalHolds(t *testing.T) {
	ck := bounce(t, 1)
	o, err := traces.RunLasso(ck, acts(t, ck, "host 0 launch", "deliver 0->1", "ni 1 copy", "host 1 process",
		"deliver 1->0", "deliver 0->1"), 2)
	if err != nil || o.Violation != nil {
		t.Fatalf("got %+v, %v", o.Violation, err)
	}
}
