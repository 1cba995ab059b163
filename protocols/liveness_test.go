package protocols_test

import (
	"fmt"
	"strings"
	"testing"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols"
	"lfccheck/traces"
)

// liveProperties names the liveness properties of protocol d.
func liveProperties(d *model.Def) []string {
	var live []string
	for _, p := range d.Properties {
		if p.Live != model.NotLive {
			live = append(live, p.Name)
		}
	}
	return live
}

// TestLivenessVerdictsWithAndWithoutReduction checks every liveness
// property of every protocol on every claim and broken-variant example,
// with each reduction the checker would use on and off (the ample sets,
// and on the graph the symmetry reduction), on end states and on the
// recorded graph (which also checks that a graph declared acyclic is),
// and in both storage modes: the verdicts must agree, and every
// counterexample must replay (each unreduced mode on two fifths of the
// configurations, in turn). A reduction that hid a fair cycle would show
// up here as a pass against a fail. Under the race detector: a sixth
// of the configurations, with a smaller state limit (raceSample).
func TestLivenessVerdictsWithAndWithoutReduction(t *testing.T) {
	// Parallel with the other long comparisons of this package: each
	// builds its own checkers, and CI's final stage then uses both cores.
	t.Parallel()
	limit := int64(200_000)
	if testing.Short() {
		limit = 60_000
	}
	s := raceSample(0)
	if s.every > 1 {
		limit = 20_000
	}
	checked, failed, n, onTheFly, taken := 0, 0, 0, 0, 0
	for _, d := range protocols.All() {
		live := liveProperties(d)
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
			rot := taken % 5
			taken++
			t.Run(d.Name+" "+cl.Name, func(t *testing.T) {
				var verdicts []string
				// nosym: the symmetry reduction off (on the graph, it runs on
				// the cover of representatives and renamings).
				// scc: the on-the-fly search (explore.LiveDFS), which keeps
				// no graph and runs without symmetry.
				type mode struct{ reduce, graph, fp, nosym, scc bool }
				tooBig := map[bool]bool{} // per reduce setting: the state limit was hit
				modes := []mode{{true, false, false, false, false}, {false, false, false, false, false}, {true, true, false, false, false}, {false, true, false, false, false}, {false, true, true, false, false}, {false, true, false, true, false},
					{true, true, false, true, true}, {false, true, false, true, true}}
				// The reduced modes (the cheap ones) on every
				// configuration; of the five unreduced ones, two,
				// rotating between configurations (about half the test's
				// time): each is compared on two fifths of them.
				unreduced := 0
				for _, mode := range modes {
					if !mode.reduce {
						if unreduced++; (unreduced-1-rot+5)%5 >= 2 {
							continue
						}
					}
					ck, err := properties.Build(cfg)
					if err != nil {
						t.Fatal(err)
					}
					if (mode.reduce && !ck.CanReduce()) || tooBig[mode.reduce] {
						continue
					}
					ck.Reduce, ck.LivenessGraph = mode.reduce, mode.graph
					ck.Symmetry = !mode.nosym && ck.SymmetryOff() == ""
					ck.OnTheFly = mode.scc
					// The unreduced searches stop at half the limit: most
					// of this test's time went to unreduced searches that
					// hit the limit, for few configurations compared. The
					// reduced modes, with the full limit, still compare
					// the larger configurations among themselves.
					most := limit
					if !mode.reduce {
						most = limit / 2
					}
					opt := explore.Options{Fingerprint: mode.fp, MaxStates: most}
					search := explore.BFS
					if mode.scc {
						search = explore.LiveDFS
					}
					r, err := search(ck, opt)
					if err != nil {
						t.Fatal(err)
					}
					if r.Verdict == explore.Incomplete {
						t.Logf("%+v: %s; not compared", mode, r.Reason)
						tooBig[mode.reduce] = true
						if mode.reduce && !mode.scc {
							// The reduced graph's states are some of the
							// full graph's: the full one is over the limit
							// too.
							tooBig[false] = true
						}
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
					if mode.scc {
						onTheFly++
					}
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
	t.Logf("%d configurations compared (%d failing), %d searches on the fly compared", checked, failed, onTheFly)
	if checked < s.atLeast(10) || failed < s.atLeast(2) || onTheFly < s.atLeast(10) {
		t.Fatalf("compared %d configurations (%d failing, %d searches on the fly): too few to mean anything", checked, failed, onTheFly)
	}
}

// symmetricLiveConfigs are rotation-symmetric configurations of the
// protocols with liveness properties: every variant of each is checked by
// TestSymmetryUnderFairness.
var symmetricLiveConfigs = map[string][][]string{
	"ucast": {{"nodes=3", "credits=1", "flow=0:1:2", "flow=1:2:2", "flow=2:0:2"}, {"nodes=3", "credits=1", "packets=1"}},
	"mcast": {{"nodes=3", "credits=1", "packets=2", "tree=chain"}, {"nodes=3", "credits=1", "packets=1"}},
	"recov": {{"nodes=3", "credits=1", "packets=1"}},
	"intr": {{"nodes=3", "credits=1", "flow=0:1:1", "flow=1:2:1", "flow=2:0:1"}, {"nodes=2", "credits=1", "flow=0:1:2", "flow=1:0:2"},
		{"nodes=2", "credits=1", "flow=0:1:1", "flow=1:0:1", "panda=on"}},
}

// TestSymmetryUnderFairness checks the liveness properties on the state
// graph with the symmetry reduction on (the analysis on the cover of
// representatives and renamings, explore.Cover) and off, for every
// variant of every protocol with liveness properties on rotation-symmetric
// configurations: the verdicts and violated properties must agree, every
// lasso found on the cover must replay from the real initial state as a
// fair lasso with the same violation, and a pass must store fewer states
// with the reduction. Under the race detector: one in six, with a
// smaller state limit.
func TestSymmetryUnderFairness(t *testing.T) {
	limit := int64(300_000)
	if testing.Short() {
		limit = 60_000
	}
	s := raceSample(1)
	if s.every > 1 {
		limit = 20_000
	}
	compared, failed, n := 0, 0, 0 // configurations compared, failing, seen
	for _, d := range protocols.All() {
		live := liveProperties(d)
		if len(live) == 0 {
			continue
		}
		for ci, settings := range symmetricLiveConfigs[d.Name] {
			for _, v := range d.Variants {
				if n++; !s.takes(n - 1) {
					continue
				}
				set := []model.Setting{{Key: "protocol", Value: d.Name}, {Key: "variant", Value: v.Name}}
				for _, kv := range settings {
					k, val, _ := strings.Cut(kv, "=")
					set = append(set, model.Setting{Key: k, Value: val})
				}
				for _, p := range live {
					set = append(set, model.Setting{Key: "property", Value: p})
				}
				cfg, err := model.ParseSettings(set)
				if err != nil {
					t.Fatalf("%s %v: %v", d.Name, settings, err)
				}
				t.Run(fmt.Sprintf("%s %d %s", d.Name, ci, v.Name), func(t *testing.T) {
					var got [2]string
					var states [2]int64
					for i, sym := range []bool{true, false} {
						ck, err := properties.Build(cfg)
						if err != nil {
							t.Skipf("not buildable: %v", err)
						}
						ck.LivenessGraph = true
						ck.Symmetry = sym && ck.SymmetryOff() == ""
						if sym && !ck.Symmetry {
							t.Skipf("no symmetry: %s", ck.SymmetryOff())
						}
						r, err := explore.BFS(ck, explore.Options{MaxStates: limit, Workers: 1 + i%2})
						if err != nil {
							t.Fatal(err)
						}
						if sym && !ck.Symmetry {
							t.Fatalf("the symmetry reduction turned itself off for the graph analysis")
						}
						if r.Verdict == explore.Incomplete {
							t.Skipf("symmetry=%v: %s", sym, r.Reason)
						}
						got[i], states[i] = string(r.Verdict), r.Stats.States
						if r.Verdict == explore.Fail {
							got[i] += " " + r.Violation.PropertyName()
							o, _, err := traces.RunCodes(ck, r.Trace, r.Loop)
							if err != nil {
								t.Fatalf("symmetry=%v: the counterexample does not replay: %v", sym, err)
							}
							if o.Violation == nil || o.Violation.Property != r.Violation.PropertyName() {
								t.Fatalf("symmetry=%v: replay shows %v, want %s", sym, o.Violation, r.Violation.PropertyName())
							}
						}
					}
					if got[0] != got[1] {
						t.Fatalf("verdicts differ: with symmetry %q, without %q", got[0], got[1])
					}
					if got[0] == "pass" && states[0] >= states[1] {
						t.Errorf("the symmetric search stored %d states, the full one %d", states[0], states[1])
					}
					compared++
					if got[0] != "pass" {
						failed++
					}
				})
			}
		}
	}
	s.log(t, n, "variants on symmetric configurations")
	t.Logf("compared %d (%d failing)", compared, failed)
	if compared < s.atLeast(12) || failed < s.atLeast(3) {
		t.Fatalf("compared %d configurations (%d failing): too few to mean anything", compared, failed)
	}
}
