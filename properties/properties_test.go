package properties_test

import (
	"strings"
	"testing"

	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols"
)

func world(t *testing.T, cfg model.Config) *model.World {
	t.Helper()
	ck, err := protocols.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ck.Sys.Initial()
}

// Every state property holds initially and fails on a state tampered to
// break exactly it.
func TestStatePropertiesCatchTampering(t *testing.T) {
	cases := []struct {
		p      properties.Property
		tamper func(w *model.World)
		want   string
	}{
		{properties.CreditConservation, func(w *model.World) { w.NIs[0].PCB[1].SendCredits++ }, "pair 0->1"},
		{properties.CreditConservation, func(w *model.World) { w.NIs[1].PCB[0].FreeCredits = -1 }, "owes -1"},
		{properties.PoolBound, func(w *model.World) {
			p := model.Packet{Tag: model.TagUnicast, Src: 2, Origin: 2, Seq: 1}
			w.NIs[0].Recv = append(w.NIs[0].Recv, model.RecvBuf{Pkt: p, From: 2}, model.RecvBuf{Pkt: p, From: 2})
		}, "ni 0 holds 2 packets from 2"},
		{properties.BufferHeld, func(w *model.World) {
			p := model.Packet{Tag: model.TagMulticast, Src: 1, Origin: 1, Tree: 1, Seq: 1}
			w.NIs[2].PCB[0].Blocked = append(w.NIs[2].PCB[0].Blocked, model.Desc{Dest: 0, Fwd: true, Pkt: p})
		}, "receive buffer was released"},
	}
	for _, c := range cases {
		w := world(t, model.Config{Protocol: "mcast", Nodes: 3, Credits: 1, Packets: 1})
		if err := c.p.State(w); err != nil {
			t.Fatalf("%s fails initially: %v", c.p.Name, err)
		}
		c.tamper(w)
		if err := c.p.State(w); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.p.Name, err, c.want)
		}
	}
}

func TestStepAndFinalProperties(t *testing.T) {
	w := world(t, model.Config{Protocol: "ucast", Nodes: 2, Credits: 1, Packets: 2})
	p := model.Packet{Tag: model.TagUnicast, Origin: 0, Seq: 1}
	// Seq 1 after seq 2: FIFO violation; seq 2 again: duplicate.
	late := &model.StepInfo{Delivered: true, Host: 1, Pkt: p, Prev: model.StreamLog{Last: 2, Mask: 0b10}}
	if err := properties.FIFO.Step(w, late); err == nil {
		t.Error("fifo accepted an out-of-order delivery")
	}
	dup := &model.StepInfo{Delivered: true, Host: 1, Pkt: p, Prev: model.StreamLog{Last: 1, Mask: 0b1}}
	if err := properties.ExactlyOnce.Step(w, dup); err == nil {
		t.Error("exactly-once accepted a duplicate")
	}
	inOrder := &model.StepInfo{Delivered: true, Host: 1, Pkt: model.Packet{Tag: model.TagUnicast, Seq: 2}, Prev: model.StreamLog{Last: 1, Mask: 0b1}}
	if properties.FIFO.Step(w, inOrder) != nil || properties.ExactlyOnce.Step(w, inOrder) != nil {
		t.Error("an in-order delivery was rejected")
	}
	// The initial state is not finished: final conditions fail there.
	if err := properties.Deadlock.Final(w); err == nil || !strings.Contains(err.Error(), "4 packets not launched") {
		t.Errorf("deadlock: %v", err)
	}
	if err := properties.ExactlyOnce.Final(w); err == nil {
		t.Error("exactly-once accepted a final state with nothing delivered")
	}
	if properties.WaitForCycle(w) != nil {
		t.Error("a wait-for cycle in the initial state")
	}
}

func TestSelect(t *testing.T) {
	all := []properties.Property{properties.Deadlock, properties.FIFO}
	if got, err := properties.Select(all, []string{"fifo"}); err != nil || len(got) != 1 || got[0].Name != "fifo" {
		t.Fatalf("%v %v", got, err)
	}
	if _, err := properties.Select(all, []string{"liveness"}); err == nil || !strings.Contains(err.Error(), "known: deadlock, fifo") {
		t.Fatalf("%v", err)
	}
}
