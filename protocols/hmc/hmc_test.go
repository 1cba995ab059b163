package hmc_test

import (
	"strings"
	"testing"

	"lfccheck/explore"
	"lfccheck/internal/racebuild"
	"lfccheck/model"
	_ "lfccheck/protocols" // registers the protocols
	"lfccheck/protocols/hmc"
	"lfccheck/protocols/imc"
	"lfccheck/protocols/internal/checktest"
	"lfccheck/protocols/topology"
	"lfccheck/traces"
)

func cast(r, k int) topology.Cast { return topology.Cast{Root: r, Count: k} }

// H_mc passes on a chain over reliable links and with a corruption or a
// loss and a duplicate, with two buffers, and on the crossing groups
// with two buffers; the suite's claims add a binary tree at P=4.
func TestHMCPasses(t *testing.T) {
	crossing := "nodes 4\ngroup a 0 1 3\ngroup b 1 2 3\ntree a * chain\ntree b * chain\n"
	cfgs := []model.Config{
		hmc.Config(3, "chain", 1, 2, "", cast(0, 2)),
		hmc.Config(3, "chain", 1, 2, "corrupt:1", cast(0, 1)),
		hmc.Config(3, "chain", 1, 2, "loss:1,dup:1", cast(0, 2)),
		hmc.TopologyConfig(crossing, 1, 2, "", topology.Cast{Group: "a", Root: 0, Count: 1}, topology.Cast{Group: "b", Root: 2, Count: 1}),
	}
	if racebuild.Enabled {
		cfgs = cfgs[:2]
	}
	checktest.Passes(t, cfgs...)
}

// Every broken variant fails its property with a counterexample that
// shows the bug.
func TestVariantsAreCaught(t *testing.T) {
	checktest.CatchVariants(t, hmc.Def, map[string]func(o traces.Outcome) bool{
		// A second copy of packet 1 reaches host 1, which queues it for
		// host 2 again as a new send.
		"forward-duplicates": func(o traces.Outcome) bool {
			return checktest.StepWith(o.Steps, "host 1 poll", "queue [d0#1(s0) d0#1(s0)]") && strings.Contains(o.Violation.Error(), "twice")
		},
		// Packet 1 is lost; host 1 drops packet 2 for itself (it
		// delivers nothing) but queues it for host 2 first.
		"forward-out-of-order": func(o traces.Outcome) bool {
			return checktest.StepWith(o.Steps, "lose 0->1", "") && checktest.StepWith(o.Steps, "host 1 poll", "-> [to 2: acked 0 sent 1 queue [d0#2(s0)]]") &&
				strings.Contains(o.Violation.Error(), "after #2")
		},
		"window-off-by-one": func(o traces.Outcome) bool {
			return strings.Contains(o.Violation.Error(), "host 0 has 2 packets to 1 unacknowledged")
		},
		// An acknowledgement joins a packet in host 1's one buffer.
		"no-buffer-check": func(o traces.Outcome) bool {
			return checktest.StepWith(o.Steps, "deliver 2->1", "host 1 buffers: [d0#1(s0)] -> [d0#1(s0) ack1]")
		},
		// Packet 2 finds the one buffer taken and is dropped; nothing
		// sends it again.
		"no-retransmit-timer": func(o traces.Outcome) bool {
			return checktest.Dropped(o.Steps, "d0#2") && o.Loop == 0
		},
	})
}

// The claims expected to fail show the mechanism each names in its fair
// loop; the crossing groups pass where I_mc's claim fails.
func TestClaims(t *testing.T) {
	if racebuild.Enabled {
		t.Skip("up to 100,000 states each: not under the race detector")
	}
	shows := map[string]func(loop []traces.Step) bool{
		// Host 0 retransmits packet 2, whose acknowledgement host 1
		// holds back, and host 2's acknowledgement finds host 1's
		// buffer taken.
		"P=3 chain W=1 recv-buffers=1 cast=0:2": func(loop []traces.Step) bool {
			return checktest.StepWith(loop, "host 0 timeout", "d0#2") && checktest.Dropped(loop, "ack")
		},
		// No buffer waits to forward: the loop drops acknowledgements
		// behind stale retransmitted copies.
		"no-piggyback": func(loop []traces.Step) bool {
			return checktest.Dropped(loop, "ack") && checktest.StepWith(loop, "host 1 timeout", "")
		},
	}
	if fails := checktest.CatchLoops(t, hmc.Def.Claims, "eventual-delivery", shows, nil); fails != 2 {
		t.Errorf("%d claims expected to fail, want 2", fails)
	}
	// The crossing groups with one buffer: I_mc fails, H_mc passes.
	var ni, host model.Claim
	for _, c := range imc.Def.Claims {
		if strings.HasPrefix(c.Name, "P=4 crossing groups W=1 recv-buffers=1") {
			ni = c
		}
	}
	for _, c := range hmc.Def.Claims {
		if c.Name == ni.Name {
			host = c
		}
	}
	if ni.Expect != "fail eventual-delivery" || host.Expect != "pass" {
		t.Fatalf("crossing groups: imc %q, hmc %q", ni.Expect, host.Expect)
	}
	if r, _ := checktest.Search(t, host.Config); r.Verdict != explore.Pass {
		t.Errorf("hmc %s: %s %v", host.Name, r.Verdict, r.Violation)
	}
}

// Bad parameters are refused with an error that names hmc; --timer is
// H_mc's, not I_mc's.
func TestParams(t *testing.T) {
	for _, c := range []struct {
		proto    string
		settings [][2]string
		want     string
	}{
		{"hmc", [][2]string{{"timer", "never"}}, "timer \"never\""},
		{"hmc", [][2]string{{"flow", "0:1:1"}}, "hmc has no parameter"},
		{"hmc", [][2]string{{"cast", "0:1"}, {"cast", "0:2"}}, "a second cast from root 0"},
		{"hmc", [][2]string{{"window", "2"}, {"seq-mod", "2"}}, "must exceed the window"},
		{"imc", [][2]string{{"timer", "links"}}, "imc has no parameter"},
	} {
		if err := checktest.Apply(imc.DefaultsFor(c.proto), c.settings, 4); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: got %v, want an error with %q", c.proto, c.settings, err, c.want)
		}
	}
	// --timer links survives Settings and Set, and the timer may then
	// expire while a packet waits in a pool: the chain still livelocks.
	cfg := hmc.Config(3, "chain", 1, 1, "", cast(0, 2))
	if err := cfg.Params.Set("timer", "links"); err != nil {
		t.Fatal(err)
	}
	if d := checktest.Resettle(t, cfg.Params, imc.DefaultsFor("hmc")); !strings.HasSuffix(d, "timer=links") {
		t.Fatalf("no timer=links: %s", d)
	}
	if racebuild.Enabled {
		return // 27,000 states: not under the race detector
	}
	checktest.Caught(t, cfg, "eventual-delivery")
}
