package irx_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"lfccheck/model/live"
	"lfccheck/protocols/irx"
)

// TestLiveLossy runs a live I_rx cluster over links that lose 1% of the
// packets and duplicate and corrupt some: every packet reaches its host
// exactly once and in order (checked at the receivers as packets arrive),
// and the run ends with every packet acknowledged.
func TestLiveLossy(t *testing.T) {
	nodes, packets := 4, 8334 // 12 streams: 100,008 packets
	if testing.Short() {
		nodes, packets = 3, 500
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := irx.RunLive(ctx, irx.LiveOptions{Nodes: nodes, Packets: packets,
		Faults: &live.Faults{Seed: 1, All: live.LinkFaults{Loss: 0.01, Dup: 0.002, Corrupt: 0.002}}})
	if err != nil {
		t.Fatal(err)
	}
	want := nodes * (nodes - 1) * packets
	if rep.Delivered != want {
		t.Fatalf("delivered %d packets, want %d", rep.Delivered, want)
	}
	if rep.Faults.Lost == 0 || rep.Faults.Duplicated == 0 || rep.Faults.Corrupted == 0 {
		t.Fatalf("faults %+v: want some of each kind", rep.Faults)
	}
	t.Logf("%d packets in %v, %d steps, faults %+v", rep.Delivered, rep.Elapsed, rep.Steps, rep.Faults)
}

// TestLiveReliable: over reliable links nothing is injected and every
// packet arrives.
func TestLiveReliable(t *testing.T) {
	rep, err := irx.RunLive(context.Background(), irx.LiveOptions{Nodes: 3, Packets: 200})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Delivered != 3*2*200 || rep.Faults != (live.FaultCounts{}) {
		t.Fatalf("report %+v", rep)
	}
}

// TestLiveMisuse: bad options are errors, and a cancelled run stops.
func TestLiveMisuse(t *testing.T) {
	for _, opt := range []irx.LiveOptions{
		{Nodes: 1, Packets: 1},
		{Nodes: 2, Packets: 70000},
		{Nodes: 2, Packets: 1, Faults: &live.Faults{All: live.LinkFaults{Loss: 0.7, Dup: 0.7}}},
		{Nodes: 2, Packets: 1, Faults: &live.Faults{All: live.LinkFaults{Loss: -1}}},
	} {
		if _, err := irx.RunLive(context.Background(), opt); err == nil {
			t.Errorf("%+v: no error", opt)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Every packet lost: the run cannot finish, and ends with ctx.
	_, err := irx.RunLive(ctx, irx.LiveOptions{Nodes: 2, Packets: 10, Faults: &live.Faults{All: live.LinkFaults{Loss: 1}}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}
