package irx_test

import (
	"strings"
	"testing"

	"lfccheck/model"
	_ "lfccheck/protocols" // registers the protocols
	"lfccheck/protocols/hrx"
	"lfccheck/protocols/internal/checktest"
	"lfccheck/protocols/irx"
	"lfccheck/protocols/ucast"
	"lfccheck/traces"
)

// I_rx passes over reliable links and over links that lose, duplicate
// and corrupt packets, at P=2 and P=3, with sequence numbers that wrap.
func TestIRXPasses(t *testing.T) {
	checktest.Passes(t,
		irx.Config(2, 2, 2, ""),
		irx.FlowConfig(2, 2, 1, "loss:1,dup:1", ucast.Flow{Src: 0, Dst: 1, Count: 4}),
		irx.FlowConfig(2, 1, 1, "loss:2", ucast.Flow{Src: 0, Dst: 1, Count: 2}),
		irx.FlowConfig(2, 2, 2, "corrupt@0->1:1,loss@1->0:1", ucast.Flow{Src: 0, Dst: 1, Count: 3}),
		irx.FlowConfig(3, 2, 1, "loss:1,dup:1", ucast.Flow{Src: 0, Dst: 2, Count: 2}, ucast.Flow{Src: 1, Dst: 2, Count: 1}),
	)
}

// Every broken variant, of I_rx and of H_rx, fails by the property
// that catches it, with a counterexample that replays and shows what
// went wrong.
func TestVariantsAreCaught(t *testing.T) {
	for _, def := range []*model.Def{irx.Def, hrx.Def} {
		shows := map[string]func(o traces.Outcome) bool{
			// A packet arrives twice at the host: the second time
			// after the receiver's expected number wrapped round to it.
			"seq-mod-window": func(o traces.Outcome) bool {
				return strings.Contains(o.Violation.Message, "twice")
			},
			// Packet 2 overtakes the lost packet 1.
			"accept-out-of-order": func(o traces.Outcome) bool {
				return checktest.StepWith(o.Steps, "lose 0->1", "") && strings.Contains(o.Violation.Message, "after")
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
			// I_rx: the NACK is lost and no timer makes good for it.
			"no-retransmit-timer": func(o traces.Outcome) bool {
				return checktest.StepWith(o.Steps, "lose 1->0", "[nack") && o.Live
			},
		}
		if def == hrx.Def {
			// H_rx has no NACKs: packet 2 finds the one buffer taken,
			// the NI drops it and nothing sends it again.
			shows["no-retransmit-timer"] = func(o traces.Outcome) bool {
				return checktest.Dropped(o.Steps, "d0#2") && o.Live && o.Terminal
			}
		}
		t.Run(def.Name, func(t *testing.T) { checktest.CatchVariants(t, def, shows) })
	}
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
