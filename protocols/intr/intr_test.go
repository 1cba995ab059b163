package intr_test

import (
	"testing"

	"lfccheck/explore"
	"lfccheck/model"
	_ "lfccheck/protocols" // registers the protocols
	"lfccheck/protocols/internal/checktest"
	"lfccheck/protocols/intr"
	"lfccheck/protocols/topology"
	"lfccheck/protocols/ucast"
	"lfccheck/traces"
)

// The faithful protocol passes at P=2 and P=3 with several packets, with
// hosts that may stop polling; the races of §3.7 are reachable (race-1 and
// race-2 are reachability goals, so a pass means both were reached).
func TestFaithfulINTRPasses(t *testing.T) {
	for _, cfg := range []model.Config{
		intr.Config(2, 1, ucast.Flow{Src: 0, Dst: 1, Count: 3}),
		intr.Config(2, 1, ucast.Flow{Src: 0, Dst: 1, Count: 2}, ucast.Flow{Src: 1, Dst: 0, Count: 2}),
		intr.Config(3, 1, ucast.Flow{Src: 0, Dst: 2, Count: 2}, ucast.Flow{Src: 1, Dst: 2, Count: 1}),
	} {
		r, _ := checktest.Search(t, cfg)
		if r.Verdict != explore.Pass {
			t.Fatalf("%s: %s %v", cfg.Describe(), r.Verdict, r.Violation)
		}
	}
}

// Every broken variant fails by the property that catches it, with a
// counterexample that replays; the liveness one is a run that stays for
// ever where only the client could act.
func TestVariantsAreCaught(t *testing.T) {
	for _, v := range intr.Def.Variants {
		if v.Catches == "" {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			r, ck := checktest.Search(t, intr.Def.VariantClaim(v).Config)
			if r.Verdict != explore.Fail || r.Violation.PropertyName() != v.Catches {
				t.Fatalf("want fail %s, got %s %v", v.Catches, r.Verdict, r.Violation)
			}
			o, _, err := traces.RunCodes(ck, r.Trace, r.Loop)
			if err != nil || o.Violation == nil || o.Violation.Property != v.Catches {
				t.Fatalf("replay: %+v, %v", o.Violation, err)
			}
			if v.Catches == "no-lost-interrupt" && !o.Live {
				t.Fatalf("the lost interrupt is not reported as a liveness violation: %+v", o)
			}
		})
	}
}

// Fetching the counter and the flag in two DMA transfers is harmless
// (issue 33): every property holds, late-interrupt included; INTR under
// MCAST (multicast packets counted as Fig. 4.7 does) and INTR with Panda
// (§6.2.1, §6.2.2) pass too.
func TestHarmlessAndExtendedConfigsPass(t *testing.T) {
	two := intr.Config(2, 1)
	two.Variant = intr.TwoDMA
	for _, cfg := range []model.Config{
		two,
		intr.CastConfig("chain", 3, []topology.Cast{{Root: 0, Count: 1}}),
		intr.CastConfig("binary", 3, []topology.Cast{{Root: 1, Count: 1}}, ucast.Flow{Src: 0, Dst: 2, Count: 1}),
		intr.PandaConfig(2, 1),
		intr.PandaConfig(2, 1, ucast.Flow{Src: 0, Dst: 1, Count: 1}, ucast.Flow{Src: 1, Dst: 0, Count: 1}),
	} {
		r, _ := checktest.Search(t, cfg)
		if r.Verdict != explore.Pass {
			t.Fatalf("%s %s: %s %v", cfg.Variant, cfg.Describe(), r.Verdict, r.Violation)
		}
	}
}
