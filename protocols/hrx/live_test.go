package hrx_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"lfccheck/internal/racebuild"
	"lfccheck/model"
	"lfccheck/model/live"
	"lfccheck/protocols"
	"lfccheck/protocols/hrx"
	"lfccheck/protocols/irx"
	"lfccheck/traces"
)

// TestLiveLossy runs a live H_rx cluster over links that lose 1% of the
// packets and duplicate and corrupt some: every packet reaches its host
// exactly once and in order (checked at the receivers as packets
// arrive), and the run ends with every packet acknowledged, nothing in a
// receive buffer or on a link. The retransmission timer follows the
// model's round-trip rule (model.Holder), and then --timer links's.
func TestLiveLossy(t *testing.T) {
	for _, timer := range []string{irx.TimerRoundTrip, irx.TimerLinks} {
		// The default rule at full size; --timer links's at the size
		// of -short and the race stage.
		nodes, packets := 4, 8334 // 12 streams: 100,008 packets
		if testing.Short() || racebuild.Enabled || timer == irx.TimerLinks {
			nodes, packets = 3, 500
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		rep, err := hrx.RunLive(ctx, irx.LiveOptions{Nodes: nodes, Packets: packets, Timer: timer,
			Faults: &live.Faults{Seed: 1, All: live.LinkFaults{Loss: 0.01, Dup: 0.002, Corrupt: 0.002}}})
		cancel()
		if err != nil {
			t.Fatalf("timer %s: %v", timer, err)
		}
		if want := nodes * (nodes - 1) * packets; rep.Delivered != want {
			t.Fatalf("timer %s: delivered %d packets, want %d", timer, rep.Delivered, want)
		}
		if rep.Faults.Lost == 0 || rep.Faults.Duplicated == 0 || rep.Faults.Corrupted == 0 {
			t.Fatalf("timer %s: faults %+v: want some of each kind", timer, rep.Faults)
		}
		t.Logf("timer %s: %d packets in %v, %d steps, faults %+v", timer, rep.Delivered, rep.Elapsed, rep.Steps, rep.Faults)
	}
}

// TestLiveReplay runs H_rx live on configurations with fault budgets,
// among them the three whose fair livelocks the model finds
// (TestLivelocks), and replays each recording through the model: every
// step, the retransmission timeouts included, must be enabled there (the
// live runtime honours model.Holder as World.Quiet does), no property
// may be violated, and the run must reach a proper end in the live
// run's node states. The livelocks need schedules that stay in step with
// the timers; the live runs, timed by the runtime's clock, end. (A host
// holds a packet for a few microseconds here, so a runtime that ignored
// model.Holder would rarely be caught by these runs: model/live's
// TestQuietHonoursHolder catches it every time.)
func TestLiveReplay(t *testing.T) {
	links := hrx.FlowConfig(2, 2, 1, "", flow(0, 1, 4))
	links.Params.(*irx.Params).Timer = irx.TimerLinks
	cfgs := []struct {
		cfg   model.Config
		rates live.Faults
	}{
		{hrx.FlowConfig(3, 2, 2, "loss:16,dup:16,corrupt:16", flow(0, 1, 12), flow(1, 0, 10), flow(2, 1, 8)),
			live.Faults{All: live.LinkFaults{Loss: 0.04, Dup: 0.02, Corrupt: 0.02}, Links: map[[2]model.NodeID]live.LinkFaults{{2, 1}: {}}}},
		{hrx.FlowConfig(3, 2, 1, "", flow(0, 1, 1), flow(1, 2, 1), flow(2, 0, 1)), live.Faults{}},
		{hrx.FlowConfig(3, 2, 1, "loss@0->2:16", flow(0, 2, 2), flow(1, 2, 2)),
			live.Faults{Links: map[[2]model.NodeID]live.LinkFaults{{0, 2}: {Loss: 0.2}}}},
		{links, live.Faults{}},
	}
	seeds := uint64(4)
	if racebuild.Enabled {
		seeds = 1
	}
	for _, c := range cfgs {
		ck, err := protocols.Build(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		name := c.cfg.Describe()
		for seed := uint64(1); seed <= seeds; seed++ {
			f := c.rates
			f.Seed = seed
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			res, err := live.RunWith(ctx, ck.Sys, live.Options{
				Timers: map[string]time.Duration{"ack-timer": 20 * time.Microsecond, "timeout": 300 * time.Microsecond},
				Client: func(ctx context.Context, c *live.Client) {
					for c.Do("send") {
					}
				},
				Faults: &f,
			})
			cancel()
			if err != nil {
				t.Fatalf("%s seed %d: %v", name, seed, err)
			}
			if fc := res.Faults; fc.Lost > 16 || fc.Duplicated > 16 || fc.Corrupted > 16 {
				t.Fatalf("%s seed %d: %+v: more faults than the budgets allow; lower the rates", name, seed, fc)
			}
			o, err := traces.Run(ck, res.Actions)
			if err != nil {
				t.Fatalf("%s seed %d: the model rejects the live recording: %v", name, seed, err)
			}
			if o.Violation != nil || !o.Terminal {
				t.Fatalf("%s seed %d: replay: violation %v, terminal %v", name, seed, o.Violation, o.Terminal)
			}
			for i := range o.Final.Nodes {
				if !bytes.Equal(o.Final.Nodes[i].Encode(nil), res.Final.Nodes[i].Encode(nil)) {
					t.Fatalf("%s seed %d: node %d differs:\n--- model\n%s--- live\n%s", name, seed, i, o.Final.Format(), res.Final.Format())
				}
			}
		}
	}
}

// TestLiveMisuse: H_rx's timer rule is checked, I_rx has none, and a
// cancelled run stops.
func TestLiveMisuse(t *testing.T) {
	for _, opt := range []irx.LiveOptions{
		{Nodes: 2, Packets: 1, Timer: "sometimes"},
		{Nodes: 2, Packets: 1, Level: irx.NI, Timer: irx.TimerLinks},
		{Nodes: 2, Packets: 1, Level: 7},
	} {
		if _, err := irx.RunLive(context.Background(), opt); err == nil {
			t.Errorf("%+v: no error", opt)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := hrx.RunLive(ctx, irx.LiveOptions{Nodes: 2, Packets: 10, Faults: &live.Faults{All: live.LinkFaults{Loss: 1}}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}
