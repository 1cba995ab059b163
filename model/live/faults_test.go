package live_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"lfccheck/model"
	"lfccheck/model/live"
	"lfccheck/protocols"
	"lfccheck/protocols/irx"
	"lfccheck/protocols/ucast"
	"lfccheck/traces"
)

// TestFaultsReplay runs I_rx live with the fault injector on a system
// whose configuration has fault budgets: every injected fault is recorded
// as the model's lose, duplicate or corrupt action, and the retransmission
// timer (a Quiet kind) fires only while no packet is on its node's links,
// so the model replays the recording step by step, with every property
// holding, to a proper end in the live run's node states.
func TestFaultsReplay(t *testing.T) {
	cfg := irx.FlowConfig(3, 2, 2, "loss:16,dup:16,corrupt:16",
		ucast.Flow{Src: 0, Dst: 1, Count: 12}, ucast.Flow{Src: 1, Dst: 0, Count: 10}, ucast.Flow{Src: 2, Dst: 1, Count: 8})
	ck, err := protocols.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var total live.FaultCounts
	for seed := uint64(1); seed <= 4; seed++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		res, err := live.RunWith(ctx, ck.Sys, live.Options{
			Timers: map[string]time.Duration{"ack-timer": 50 * time.Microsecond, "timeout": 500 * time.Microsecond},
			Client: func(ctx context.Context, c *live.Client) {
				for c.Do("send") {
				}
			},
			Faults: &live.Faults{Seed: seed, All: live.LinkFaults{Loss: 0.04, Dup: 0.02, Corrupt: 0.02},
				Links: map[[2]model.NodeID]live.LinkFaults{{2, 1}: {}}},
		})
		cancel()
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		f := res.Faults
		if f.Lost > 16 || f.Duplicated > 16 || f.Corrupted > 16 {
			t.Fatalf("seed %d: %+v: more faults than the budgets allow; lower the rates", seed, f)
		}
		total.Lost += f.Lost
		total.Duplicated += f.Duplicated
		total.Corrupted += f.Corrupted
		o, err := traces.Run(ck, res.Actions)
		if err != nil {
			t.Fatalf("seed %d: the model rejects the live recording: %v", seed, err)
		}
		if o.Violation != nil || !o.Terminal {
			t.Fatalf("seed %d: replay: violation %v, terminal %v", seed, o.Violation, o.Terminal)
		}
		for i := range o.Final.Nodes {
			if !bytes.Equal(o.Final.Nodes[i].Encode(nil), res.Final.Nodes[i].Encode(nil)) {
				t.Fatalf("seed %d: node %d differs:\n--- model\n%s--- live\n%s", seed, i, o.Final.Format(), res.Final.Format())
			}
		}
	}
	if total.Lost == 0 || total.Duplicated == 0 || total.Corrupted == 0 {
		t.Fatalf("faults %+v: want some of each kind", total)
	}
}

// TestFaultsMisuse: bad rates or links are errors, not panics.
func TestFaultsMisuse(t *testing.T) {
	ck, err := protocols.Build(irx.Config(2, 2, 2, ""))
	if err != nil {
		t.Fatal(err)
	}
	timers := map[string]time.Duration{"ack-timer": time.Microsecond, "timeout": time.Millisecond}
	for _, f := range []*live.Faults{
		{All: live.LinkFaults{Loss: 1.5}},
		{All: live.LinkFaults{Loss: 0.5, Corrupt: 0.6}},
		{Links: map[[2]model.NodeID]live.LinkFaults{{0, 5}: {Loss: 0.1}}},
		{Links: map[[2]model.NodeID]live.LinkFaults{{1, 1}: {Loss: 0.1}}},
	} {
		if _, err := live.RunWith(context.Background(), ck.Sys, live.Options{Timers: timers, Faults: f}); err == nil {
			t.Errorf("%+v: no error", f)
		}
	}
}
