package irx_test

import (
	"strings"
	"testing"

	"lfccheck/explore"
	"lfccheck/model"
	_ "lfccheck/protocols" // registers the protocols
	"lfccheck/protocols/internal/checktest"
	"lfccheck/protocols/irx"
	"lfccheck/protocols/ucast"
	"lfccheck/traces"
)

// I_rx passes over reliable links and over links that lose, duplicate
// and corrupt packets, at P=2 and P=3, with sequence numbers that wrap.
func TestIRXPasses(t *testing.T) {
	for _, cfg := range []model.Config{
		irx.Config(2, 2, 2, ""),
		irx.FlowConfig(2, 2, 1, "loss:1,dup:1", ucast.Flow{Src: 0, Dst: 1, Count: 4}),
		irx.FlowConfig(2, 1, 1, "loss:2", ucast.Flow{Src: 0, Dst: 1, Count: 2}),
		irx.FlowConfig(2, 2, 2, "corrupt@0->1:1,loss@1->0:1", ucast.Flow{Src: 0, Dst: 1, Count: 3}),
		irx.FlowConfig(3, 2, 1, "loss:1,dup:1", ucast.Flow{Src: 0, Dst: 2, Count: 2}, ucast.Flow{Src: 1, Dst: 2, Count: 1}),
	} {
		r, _ := checktest.Search(t, cfg)
		if r.Verdict != explore.Pass {
			t.Errorf("%s: %s %v", cfg.Describe(), r.Verdict, r.Violation)
		}
	}
}

// Every broken variant fails by the property that catches it, with a
// counterexample that replays and shows what went wrong.
func TestVariantsAreCaught(t *testing.T) {
	shows := map[string]func(o traces.Outcome) bool{
		// The NACK is lost and no timer makes good for it.
		"no-retransmit-timer": func(o traces.Outcome) bool {
			return stepWith(o, "lose 1->0", "[nack") && o.Live
		},
		// A packet arrives twice at the host: the second time after
		// the receiver's expected number wrapped round to it.
		"seq-mod-window": func(o traces.Outcome) bool {
			return strings.Contains(o.Violation.Message, "twice")
		},
		// Packet 2 overtakes the lost packet 1.
		"accept-out-of-order": func(o traces.Outcome) bool {
			return stepWith(o, "lose 0->1", "") && strings.Contains(o.Violation.Message, "after")
		},
		"window-off-by-one": func(o traces.Outcome) bool {
			return strings.Contains(o.Violation.Message, "3 packets to 1 unacknowledged, window 2")
		},
		"no-buffer-check": func(o traces.Outcome) bool {
			return strings.Contains(o.Violation.Message, "2 received packets in 1 buffers")
		},
		"blocked-sends-forgotten": func(o traces.Outcome) bool {
			return strings.Contains(o.Violation.Message, "1 streams not delivered in full") && o.Terminal
		},
	}
	for _, v := range irx.Def.Variants {
		if v.Catches == "" {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			r, ck := checktest.Search(t, irx.Def.VariantClaim(v).Config)
			if r.Verdict != explore.Fail || r.Violation.PropertyName() != v.Catches {
				t.Fatalf("want fail %s, got %s %v", v.Catches, r.Verdict, r.Violation)
			}
			o, _, err := traces.RunCodes(ck, r.Trace, r.Loop)
			if err != nil || o.Violation == nil || o.Violation.Property != v.Catches {
				t.Fatalf("replay: %+v, %v", o.Violation, err)
			}
			if show := shows[v.Name]; show == nil || !show(o) {
				var steps []string
				for _, s := range o.Steps {
					steps = append(steps, s.Action+" "+strings.Join(s.Changes, "; "))
				}
				t.Fatalf("the counterexample does not show the bug: %s\n%s", o.Violation, strings.Join(steps, "\n"))
			}
		})
	}
}

// stepWith reports whether some step of o is action with a change
// mentioning what.
func stepWith(o traces.Outcome, action, what string) bool {
	for _, s := range o.Steps {
		if s.Action == action && strings.Contains(strings.Join(s.Changes, "\n"), what) {
			return true
		}
	}
	return false
}

// A seq-mod not above the window is refused: go-back-N needs W+1 numbers.
func TestSeqModMustExceedWindow(t *testing.T) {
	cfg := irx.Config(2, 2, 2, "")
	if err := cfg.Params.Set("seq-mod", "2"); err != nil {
		t.Fatal(err)
	}
	if _, err := irx.Def.Resolve(cfg); err == nil || !strings.Contains(err.Error(), "must exceed the window") {
		t.Fatalf("seq-mod=2 window=2: %v", err)
	}
}
