package live_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"lfccheck/model"
	"lfccheck/model/live"
	"lfccheck/protocols"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/topology"
	"lfccheck/protocols/ucast"
	"lfccheck/traces"
)

// TestLive runs UCAST and MCAST with one goroutine per node and replays the
// recorded run through the model step by step: every step must be enabled,
// no property may be violated (fifo and exactly-once included), the model
// must end in a terminal state that is a proper end, with exactly the state
// the goroutines ended with, and every host must have been handed every
// packet the workload sends it.
func TestLive(t *testing.T) {
	u1 := ucast.Config(2, 1, 20)
	u2 := ucast.Config(4, 2, 10)
	u2.Params.(*ucast.Params).HostBuffers, u2.Params.(*ucast.Params).SendBuffers = 2, 3
	u3 := ucast.Config(3, 3, 10)
	u3.Params.(*ucast.Params).Refresh = 3
	m1 := mcast.Config("binary", 5, 1, 6)
	m2 := mcast.Config("binomial", 4, 2, 1)
	mp := m2.Params.(*mcast.Params)
	mp.Casts = []topology.Cast{{Root: 0, Count: 8}, {Root: 3, Count: 5}}
	mp.Flows = []ucast.Flow{{Src: 1, Dst: 2, Count: 7}, {Src: 2, Dst: 0, Count: 4}}
	for _, cfg := range []model.Config{u1, u2, u3, m1, m2} {
		ck, err := protocols.Build(cfg)
		if err != nil {
			t.Fatal(err)
		}
		name := ck.Sys.Cfg.Describe()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		res, err := live.Run(ctx, ck.Sys)
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		o, err := traces.Run(ck, res.Actions)
		if err != nil {
			t.Fatalf("%s: the model rejects the live recording: %v", name, err)
		}
		if o.Violation != nil || !o.Terminal {
			t.Fatalf("%s: replay of the live run: violation %v, terminal %v", name, o.Violation, o.Terminal)
		}
		if !bytes.Equal(o.Final.Encode(nil), res.Final.Encode(nil)) {
			t.Fatalf("%s: model and live states differ after %d steps:\n--- model\n%s--- live\n%s", name, len(res.Actions), o.Final.Format(), res.Final.Format())
		}
		for h, pkts := range res.Delivered {
			want := 0
			for _, n := range ucast.NodeAt(o.Final, 0).M.Expect[h] {
				want += int(n)
			}
			if len(pkts) != want {
				t.Fatalf("%s: host %d was handed %d packets, want %d", name, h, len(pkts), want)
			}
		}
	}
}

// The synchronous stepper runs every protocol's RawNodes in one goroutine
// under a seeded random schedule; its recording replays through the
// model to the same state, with every property holding and a proper end.
func TestStepper(t *testing.T) {
	cfgs := []model.Config{ucast.Config(3, 2, 5), mcast.Config("binary", 5, 1, 3)}
	for _, name := range []string{"recov", "fa", "intr", "gsb"} {
		def, err := model.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		cfgs = append(cfgs, def.Claims[0].Config)
	}
	ck, err := protocols.Build(cfgs[0])
	if err != nil {
		t.Fatal(err)
	}
	s := live.NewStepper(ck.Sys)
	a, err := ck.Sys.ParseAction("deliver 0->1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Step(a); err == nil {
		t.Fatal("a delivery from an empty link was performed")
	}
	for _, cfg := range cfgs {
		for seed := int64(1); seed <= 3; seed++ {
			ck, err := protocols.Build(cfg)
			if err != nil {
				t.Fatal(err)
			}
			name := ck.Sys.Cfg.Describe()
			s := live.NewStepper(ck.Sys)
			rng := rand.New(rand.NewPCG(uint64(seed), 0))
			// INTR's clients may toggle interrupts for ever: its runs are
			// cut at a bound and need not end.
			endless := ck.Def.Stutter
			n, err := s.Run(20_000, func(en []model.Action) model.Action { return en[rng.IntN(len(en))] })
			if err != nil || !endless && len(s.Enabled()) != 0 {
				t.Fatalf("%s: after %d steps: %v (still enabled: %d)", name, n, err, len(s.Enabled()))
			}
			o, err := traces.Run(ck, s.Actions)
			if err != nil {
				t.Fatalf("%s seed %d: the model rejects the stepper's run: %v", name, seed, err)
			}
			if o.Violation != nil || !endless && !o.Terminal {
				t.Fatalf("%s seed %d: violation %v, terminal %v", name, seed, o.Violation, o.Terminal)
			}
			if !bytes.Equal(o.Final.Encode(nil), s.World().Encode(nil)) {
				t.Fatalf("%s seed %d: model and stepper states differ", name, seed)
			}
		}
	}
}
