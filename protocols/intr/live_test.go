package intr_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"lfccheck/model"
	"lfccheck/model/live"
	"lfccheck/properties"
	"lfccheck/protocols/intr"
	"lfccheck/protocols/ucast"
	"lfccheck/traces"
)

// load is a workload for a live INTR run: node 0 sends packets to node 1,
// one every gap (0: as fast as credits allow); host 1 computes for
// compute between rounds of polling everything there is.
type load struct {
	name         string
	packets      int
	gap, compute time.Duration
}

// counts is what a live run did at host 1.
type counts struct {
	interrupts int // interrupts raised by NI 1's watchdog
	byPoll     int // packets the client's own polls processed
	bySignal   int // packets the signal handler's poll processed
}

const watchdog = 100 * time.Microsecond

func client(l load) func(ctx context.Context, c *live.Client) {
	return func(ctx context.Context, c *live.Client) {
		pause := func(d time.Duration) bool {
			select {
			case <-ctx.Done():
				return false
			case <-time.After(d):
				return true
			}
		}
		switch c.Node() {
		case 0:
			for sent := 0; sent < l.packets; {
				if c.Do("launch") {
					sent++
					if l.gap == 0 || pause(l.gap) {
						continue
					}
					return
				}
				if !pause(5 * time.Microsecond) { // no send buffer free yet
					return
				}
			}
		case 1:
			for {
				var done bool
				if !c.View(func(n model.Node) { done = int(n.(*intr.Node).Processed) == l.packets }) || done {
					return
				}
				for c.Do("poll") {
				}
				if !pause(l.compute) {
					return
				}
			}
		}
	}
}

// runLoad runs a load live with a real (fake-clock) watchdog, checks the
// recording against the model and counts what happened at host 1.
func runLoad(t *testing.T, l load) counts {
	cfg := intr.Config(2, 2, ucast.Flow{Src: 0, Dst: 1, Count: l.packets})
	cfg.Params.(*intr.Params).HostBuffers = 2
	ck, err := properties.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var res *live.Result
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		res, err = live.RunWith(ctx, ck.Sys, live.Options{Timers: map[string]time.Duration{"timeout": watchdog}, Client: client(l)})
		if err != nil {
			t.Fatal(err)
		}
	})
	// The model accepts every recorded step, with every property checked.
	o, err := traces.Run(ck, res.Actions)
	if err != nil || o.Violation != nil {
		t.Fatalf("%s: the model rejects the live run: %v %v", l.name, err, o.Violation)
	}
	if len(res.Delivered[1]) != l.packets {
		t.Fatalf("%s: host 1 got %d packets, want %d", l.name, len(res.Delivered[1]), l.packets)
	}
	// Count by replaying the recording.
	var c counts
	w := ck.Sys.Initial()
	var out model.Outbox
	for _, a := range res.Actions {
		before := *w.Nodes[1].(*intr.Node)
		if err := w.Apply(a, &out); err != nil {
			t.Fatal(err)
		}
		after := w.Nodes[1].(*intr.Node)
		if a.Node != 1 {
			continue
		}
		switch ck.Sys.Kinds[a.Kind].Name {
		case "timeout":
			if after.Signal && !before.Signal {
				c.interrupts++
			}
		case "poll":
			c.byPoll++
		case "signal":
			if after.Processed != before.Processed {
				c.bySignal++
			}
		}
	}
	return c
}

// TestLiveINTRUnderLoad runs INTR in-process with a watchdog timer of 100
// µs on the time package's clock (a synctest bubble): under a light load,
// where the host computes for 10 ms between polls and packets come 2 ms
// apart, the watchdog interrupts for most packets; under a heavy load,
// where the host polls every 5 µs and packets come back to back, polling
// delivers them and the watchdog (almost) never interrupts.
func TestLiveINTRUnderLoad(t *testing.T) {
	light := runLoad(t, load{name: "light", packets: 20, gap: 2 * time.Millisecond, compute: 10 * time.Millisecond})
	heavy := runLoad(t, load{name: "heavy", packets: 60, gap: 0, compute: 5 * time.Microsecond})
	t.Logf("light load: %d packets, %d interrupts, %d processed by polling, %d by the signal handler", 20, light.interrupts, light.byPoll, light.bySignal)
	t.Logf("heavy load: %d packets, %d interrupts, %d processed by polling, %d by the signal handler", 60, heavy.interrupts, heavy.byPoll, heavy.bySignal)
	if light.interrupts < 10 || light.bySignal < 10 {
		t.Errorf("light load: want interrupts to deliver most packets, got %+v", light)
	}
	if heavy.interrupts > 3 || heavy.byPoll < 57 {
		t.Errorf("heavy load: want polling to deliver (almost) every packet, got %+v", heavy)
	}
}
