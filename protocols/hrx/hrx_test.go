package hrx_test

import (
	"strings"
	"testing"

	"lfccheck/explore"
	"lfccheck/internal/racebuild"
	"lfccheck/model"
	_ "lfccheck/protocols" // registers the protocols
	"lfccheck/protocols/hrx"
	"lfccheck/protocols/internal/checktest"
	"lfccheck/protocols/irx"
	"lfccheck/protocols/ucast"
	"lfccheck/traces"
)

func flow(s, d, k int) ucast.Flow { return ucast.Flow{Src: s, Dst: d, Count: k} }

// H_rx passes over reliable links and over links that lose, duplicate
// and corrupt packets, at P=2 and P=3, with sequence numbers that wrap,
// when the receive buffers let every packet's turn come.
func TestHRXPasses(t *testing.T) {
	cfgs := []model.Config{
		hrx.Config(2, 2, 2, ""),
		hrx.Config(2, 2, 2, "loss:1,dup:1"),
		hrx.FlowConfig(2, 2, 1, "loss:1,dup:1", flow(0, 1, 4)),
		hrx.FlowConfig(2, 1, 1, "loss:2", flow(0, 1, 2)),
		hrx.FlowConfig(2, 2, 2, "corrupt@0->1:1,loss@1->0:1", flow(0, 1, 3)),
		hrx.FlowConfig(3, 2, 1, "loss:1,dup:1", flow(0, 2, 2), flow(1, 2, 1)),
		// The ring and the two senders that livelock with one buffer
		// (TestLivelocks) pass with two.
		hrx.FlowConfig(3, 2, 2, "", flow(0, 1, 1), flow(1, 2, 1), flow(2, 0, 1)),
		hrx.FlowConfig(3, 2, 2, "loss@0->2:1", flow(0, 2, 2), flow(1, 2, 2)),
	}
	if racebuild.Enabled {
		cfgs = cfgs[2:4] // the race stage: two small ones
	}
	checktest.Passes(t, cfgs...)
}

// The broken variants are caught as I_rx's are: irx's
// TestVariantsAreCaught runs both.

// The claims that H_rx livelocks fail eventual-delivery with a fair loop
// that shows the mechanism each claim names.
func TestLivelocks(t *testing.T) {
	shows := map[string]func(loop []traces.Step) bool{
		// An acknowledgement finds its sender's one buffer taken.
		"ring": func(loop []traces.Step) bool { return checktest.Dropped(loop, "ack") },
		// Each sender's awaited first packet is dropped in turn.
		"flows=0:2:2,1:2:2": func(loop []traces.Step) bool {
			return checktest.Dropped(loop, "d0#1") && checktest.Dropped(loop, "d1#1")
		},
		// The awaited packet 2 is dropped: the buffer holds a copy of 3.
		"timer=links": func(loop []traces.Step) bool {
			return checktest.Dropped(loop, "d0#2") && checktest.StepWith(loop, "host 0 timeout", "")
		},
	}
	skip := func(c model.Claim) string {
		if racebuild.Enabled && strings.Contains(c.Name, "flows=0:2:2,1:2:2") {
			return "about 76,000 states: not under the race detector"
		}
		return ""
	}
	if n := checktest.CatchLoops(t, hrx.Def.Claims, "eventual-delivery", shows, skip); n != len(shows) {
		t.Errorf("%d failing claims, %d checked for what they show", n, len(shows))
	}
}

// The same configuration as the timer=links claim passes with the
// default timer: the livelock needs a timer that expires while a copy
// waits in a receive buffer.
func TestRoundTripTimerPassesWhereLinksTimerLivelocks(t *testing.T) {
	cfg := hrx.FlowConfig(2, 2, 1, "", flow(0, 1, 4))
	if r, _ := checktest.Search(t, cfg); r.Verdict != explore.Pass {
		t.Fatalf("timer=round-trip: %s %v", r.Verdict, r.Violation)
	}
	if err := cfg.Params.Set("timer", "links"); err != nil {
		t.Fatal(err)
	}
	if r, _ := checktest.Search(t, cfg); r.Verdict != explore.Fail || r.Violation.PropertyName() != "eventual-delivery" {
		t.Fatalf("timer=links: %s %v", r.Verdict, r.Violation)
	}
}

// I_rx, whose NI handles an acknowledgement without a buffer and drops a
// packet after a gap before it takes one, passes the configurations on
// which H_rx livelocks.
func TestIRXPassesWhereHRXLivelocks(t *testing.T) {
	if racebuild.Enabled {
		t.Skip("about 80,000 states: not under the race detector")
	}
	for _, c := range hrx.Def.Claims {
		if c.Expect == "pass" || strings.Contains(c.Name, "timer=") {
			continue
		}
		cfg := c.Config.Clone()
		cfg.Protocol = "irx"
		p := *cfg.Params.(*irx.Params)
		q := irx.Defaults()
		q.Window, q.RecvBuffers, q.Flows = p.Window, p.RecvBuffers, p.Flows
		cfg.Params = q
		if r, _ := checktest.Search(t, cfg); r.Verdict != explore.Pass {
			t.Errorf("irx %s: %s %v", c.Name, r.Verdict, r.Violation)
		}
	}
}

// timer is H_rx's parameter: I_rx refuses it, and only its two values
// are taken.
func TestTimerParameter(t *testing.T) {
	if err := irx.Defaults().Set("timer", "links"); err == nil || !strings.Contains(err.Error(), "irx has no parameter") {
		t.Errorf("irx timer: %v", err)
	}
	p := irx.DefaultsFor("hrx")
	if err := p.Set("timer", "soon"); err == nil {
		t.Errorf("timer soon accepted")
	}
	if err := p.Set("timer", "round-trip"); err != nil || len(p.Settings()) != 0 {
		t.Errorf("timer round-trip: %v, settings %v", err, p.Settings())
	}
	if err := p.Set("timer", "links"); err != nil || !strings.Contains(p.Describe(), "timer=links") {
		t.Errorf("timer links: %v, %s", err, p.Describe())
	}
}
