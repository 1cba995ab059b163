package live_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"lfccheck/model"
	"lfccheck/model/live"
	"lfccheck/protocols"
	"lfccheck/traces"
)

// TestLive runs UCAST and MCAST with one goroutine per NI and host, checks FIFO
// exactly-once delivery, and replays the recorded run through the model step
// by step: every step must be enabled, no property may be violated, and the
// model must end with exactly the NI states the goroutines ended with.
func TestLive(t *testing.T) {
	for _, cfg := range []model.Config{
		{Protocol: "ucast", Nodes: 2, Credits: 1, Packets: 20},
		{Protocol: "ucast", Nodes: 4, Credits: 2, Packets: 10, HostBuffers: 2, SendBuffers: 3},
		{Protocol: "ucast", Nodes: 3, Credits: 3, Packets: 10, Refresh: 3},
		{Protocol: "mcast", Nodes: 5, Credits: 1, Packets: 6, Tree: "binary"},
		{Protocol: "mcast", Nodes: 4, Credits: 2, Tree: "binomial",
			Casts: []model.Cast{{Root: 0, Count: 8}, {Root: 3, Count: 5}},
			Flows: []model.Flow{{Src: 1, Dst: 2, Count: 7}, {Src: 2, Dst: 0, Count: 4}}},
	} {
		ck, err := protocols.Build(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		res, err := live.Run(ctx, ck.Sys)
		cancel()
		if err != nil {
			t.Fatalf("%+v: %v", cfg, err)
		}
		for h, pkts := range res.Delivered {
			next := make([]uint16, ck.Sys.Streams())
			for _, p := range pkts {
				st := ck.Sys.Stream(p)
				if p.Seq != next[st]+1 {
					t.Fatalf("host %d: got %s after #%d of its stream", h, p, next[st])
				}
				next[st] = p.Seq
			}
			for st := range next {
				if want := ck.Sys.Expect[h][st]; next[st] != want {
					t.Fatalf("host %d: got %d packets of stream %d, want %d", h, next[st], st, want)
				}
			}
		}
		o, err := traces.Run(ck, res.Actions)
		if err != nil {
			t.Fatalf("%+v: the model rejects the live recording: %v", cfg, err)
		}
		if o.Violation != nil {
			t.Fatalf("%+v: replay of the live run violates %v", cfg, o.Violation)
		}
		if diff := cmp.Diff(o.Final.NIs, res.NIs, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("%+v: model and live NI states differ after %d steps (-model +live):\n%s", cfg, len(res.Actions), diff)
		}
		if len(res.Actions) < ck.Sys.TotalPackets()*4 {
			t.Fatalf("recorded only %d steps for %d packets", len(res.Actions), ck.Sys.TotalPackets())
		}
	}
}
