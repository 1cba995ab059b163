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

// TestLiveUCAST runs UCAST with one goroutine per NI and host, checks FIFO
// exactly-once delivery, and replays the recorded run through the model step
// by step: every step must be enabled, no property may be violated, and the
// model must end with exactly the NI states the goroutines ended with.
func TestLiveUCAST(t *testing.T) {
	for _, cfg := range []model.Config{
		{Protocol: "ucast", Nodes: 2, Credits: 1, Packets: 20},
		{Protocol: "ucast", Nodes: 4, Credits: 2, Packets: 10, HostBuffers: 2, SendBuffers: 3},
		{Protocol: "ucast", Nodes: 3, Credits: 3, Packets: 10, Refresh: 3},
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
			next := make([]uint16, ck.Sys.P)
			for _, p := range pkts {
				if p.Seq != next[p.Origin]+1 {
					t.Fatalf("host %d: got %s after #%d from %d", h, p, next[p.Origin], p.Origin)
				}
				next[p.Origin] = p.Seq
			}
			for o := range next {
				if want := ck.Sys.Expect[h][o]; next[o] != want {
					t.Fatalf("host %d: got %d packets from %d, want %d", h, next[o], o, want)
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
