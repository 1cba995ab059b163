package protocols_test

import (
	"testing"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols"
	"lfccheck/traces"
)

// TestLivenessVerdictsWithAndWithoutReduction checks every liveness
// property of every protocol on every claim and broken-variant example,
// with each reduction the checker would use on and off, on end states and
// on the recorded graph (which also checks that a graph declared acyclic
// is), and in both storage modes: the verdicts must agree, and every
// counterexample must replay. A reduction that hid a fair cycle would show
// up here as a pass against a fail. Under the race detector: a quarter
// of the configurations, with a smaller state limit (raceSample).
func TestLivenessVerdictsWithAndWithoutReduction(t *testing.T) {
	limit := int64(400_000)
	if testing.Short() {
		limit = 60_000
	}
	s := raceSample(0)
	if s.every > 1 {
		limit = 20_000
	}
	checked, failed, n := 0, 0, 0
	for _, d := range protocols.All() {
		var live []string
		for _, p := range d.Properties {
			if p.Live != model.NotLive {
				live = append(live, p.Name)
			}
		}
		if len(live) == 0 {
			continue
		}
		for _, cl := range d.AllClaims() {
			if n++; !s.takes(n - 1) {
				continue
			}
			cfg := cl.Config.Clone()
			cfg.Protocol = d.Name
			cfg.Properties = live
			t.Run(d.Name+" "+cl.Name, func(t *testing.T) {
				var verdicts []string
				type mode struct{ reduce, graph, fp bool }
				tooBig := map[bool]bool{} // per reduce setting: the state limit was hit
				for _, mode := range []mode{{true, false, false}, {false, false, false}, {true, true, false}, {false, true, false}, {false, true, true}} {
					ck, err := properties.Build(cfg)
					if err != nil {
						t.Fatal(err)
					}
					if (mode.reduce && !ck.CanReduce()) || tooBig[mode.reduce] {
						continue
					}
					ck.Reduce, ck.LivenessGraph = mode.reduce, mode.graph
					opt := explore.Options{Fingerprint: mode.fp, MaxStates: limit}
					r, err := explore.BFS(ck, opt)
					if err != nil {
						t.Fatal(err)
					}
					if r.Verdict == explore.Incomplete {
						t.Logf("%+v: %s; not compared", mode, r.Reason)
						tooBig[mode.reduce] = true
						continue
					}
					v := string(r.Verdict)
					if r.Verdict == explore.Fail {
						v += " " + r.Violation.PropertyName()
						o, _, err := traces.RunCodes(ck, r.Trace, r.Loop)
						if err != nil {
							t.Fatalf("%+v: the counterexample does not replay: %v", mode, err)
						}
						if o.Violation == nil || o.Violation.Property != r.Violation.PropertyName() {
							t.Fatalf("%+v: replay shows %v, want %s", mode, o.Violation, r.Violation.PropertyName())
						}
					}
					verdicts = append(verdicts, v)
				}
				for _, v := range verdicts {
					if v != verdicts[0] {
						t.Fatalf("liveness verdicts differ between modes: %v", verdicts)
					}
				}
				if len(verdicts) < 2 {
					t.Logf("only %d mode finished", len(verdicts))
					return
				}
				checked++
				if verdicts[0] != "pass" {
					failed++
				}
			})
		}
	}
	s.log(t, n, "configurations with liveness properties")
	if checked < s.atLeast(10) || failed < s.atLeast(2) {
		t.Fatalf("compared %d configurations (%d failing): too few to mean anything", checked, failed)
	}
}
