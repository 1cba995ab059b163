package protocols_test

import (
	"testing"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/traces"
)

// TestReductionKeepsVerdicts checks every claim and broken-variant example
// of every protocol with all its properties, with the ample-set reduction
// and its fusion of ample steps on and off: verdicts and violated
// properties must agree, the reduced search must store fewer states where
// it applies, and every counterexample must replay (the fused steps
// rebuilt) and reproduce its property. Under the race detector: a
// sixth of the configurations, with a smaller state limit (raceSample).
func TestReductionKeepsVerdicts(t *testing.T) {
	limit := int64(150_000)
	if testing.Short() {
		limit = 60_000
	}
	s := raceSample(1)
	if s.every > 1 {
		limit = 20_000
	}
	compare := func(t *testing.T, cfg model.Config) {
		var got [2]string
		var states [2]int64
		for i, reduce := range []bool{true, false} {
			ck, err := properties.Build(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if reduce && !ck.CanReduce() {
				t.Skip("no reduction applies")
			}
			ck.Reduce = reduce
			r, err := explore.BFS(ck, explore.Options{MaxStates: limit})
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict == explore.Incomplete {
				t.Skipf("reduce=%v: %s", reduce, r.Reason)
			}
			got[i], states[i] = string(r.Verdict), r.Stats.States
			if r.Verdict == explore.Fail && r.Violation != nil {
				got[i] += " " + r.Violation.PropertyName()
				o, _, err := traces.RunCodes(ck, r.Trace, r.Loop)
				if err != nil || o.Violation == nil || o.Violation.Property != r.Violation.PropertyName() {
					t.Fatalf("reduce=%v: the counterexample does not reproduce %s: %v %v", reduce, r.Violation.PropertyName(), o.Violation, err)
				}
			}
		}
		if got[0] != got[1] {
			t.Fatalf("verdicts differ: reduced %q, full %q", got[0], got[1])
		}
		if got[0] == "pass" && states[0] >= states[1] {
			t.Errorf("the reduced search stored %d states, the full one %d", states[0], states[1])
		}
	}
	eachClaimOf(t, s, 10, compare)
	// The configurations of the step-by-step scenarios too.
	eachScenarioOf(t, s, compare)
}
