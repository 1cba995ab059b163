package properties_test

import (
	"strings"
	"testing"

	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/ucast"
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
		{ucast.CreditConservation, func(w *model.World) { ucast.NodeAt(w, 0).PCB[1].SendCredits++ }, "pair 0->1"},
		{ucast.CreditConservation, func(w *model.World) { ucast.NodeAt(w, 1).PCB[0].FreeCredits = -1 }, "owes -1"},
		{ucast.PoolBound, func(w *model.World) {
			p := model.Packet{Tag: ucast.TagUnicast, Src: 2, Origin: 2, Seq: 1}
			n := ucast.NodeAt(w, 0)
			n.Recv = append(n.Recv, ucast.RecvBuf{Pkt: p, From: 2}, ucast.RecvBuf{Pkt: p, From: 2})
		}, "ni 0 holds 2 packets from 2"},
		{mcast.BufferHeld, func(w *model.World) {
			p := model.Packet{Tag: mcast.TagMulticast, Src: 1, Origin: 1, Tree: 1, Seq: 1}
			n := ucast.NodeAt(w, 2)
			n.PCB[0].Blocked = append(n.PCB[0].Blocked, ucast.Desc{Dest: 0, Fwd: true, Pkt: p})
		}, "receive buffer was released"},
	}
	for _, c := range cases {
		w := world(t, mcast.Config("binary", 3, 1, 1))
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
	w := world(t, ucast.Config(2, 1, 2))
	p := model.Packet{Tag: ucast.TagUnicast, Origin: 0, Seq: 1}
	step := func(d model.Delivery) *model.Outbox { return &model.Outbox{Deliveries: []model.Delivery{d}} }
	// Seq 1 after seq 2: FIFO violation; seq 1 again: duplicate.
	late := step(model.Delivery{Host: 1, Pkt: p, Prev: model.StreamLog{Last: 2, Mask: 0b10}})
	if err := properties.FIFO.Step(w, model.Action{}, late); err == nil {
		t.Error("fifo accepted an out-of-order delivery")
	}
	dup := step(model.Delivery{Host: 1, Pkt: p, Prev: model.StreamLog{Last: 1, Mask: 0b1}})
	if err := ucast.ExactlyOnce.Step(w, model.Action{}, dup); err == nil {
		t.Error("exactly-once accepted a duplicate")
	}
	inOrder := step(model.Delivery{Host: 1, Pkt: model.Packet{Tag: ucast.TagUnicast, Seq: 2}, Prev: model.StreamLog{Last: 1, Mask: 0b1}})
	if properties.FIFO.Step(w, model.Action{}, inOrder) != nil || ucast.ExactlyOnce.Step(w, model.Action{}, inOrder) != nil {
		t.Error("an in-order delivery was rejected")
	}
	// Across the wrap of the numbers (model.SeqSpace): 1 follows 65535;
	// 65535 after 1 is late; a number behind the prefix is a duplicate.
	wrapped := model.StreamLog{Last: model.SeqSpace, Base: model.SeqSpace}
	next := step(model.Delivery{Host: 1, Pkt: p, Prev: wrapped})
	if properties.FIFO.Step(w, model.Action{}, next) != nil || ucast.ExactlyOnce.Step(w, model.Action{}, next) != nil {
		t.Error("number 1 after 65535 was rejected")
	}
	after := model.StreamLog{Last: 1, Base: 1}
	old := step(model.Delivery{Host: 1, Pkt: model.Packet{Tag: ucast.TagUnicast, Seq: model.SeqSpace}, Prev: after})
	if properties.FIFO.Step(w, model.Action{}, old) == nil || ucast.ExactlyOnce.Step(w, model.Action{}, old) == nil {
		t.Error("number 65535 after 1 (a packet of the last round) was accepted")
	}
	// The initial state is not finished: final conditions fail there.
	if err := ucast.Deadlock.Final(w); err == nil || !strings.Contains(err.Error(), "4 packets not launched") {
		t.Errorf("deadlock: %v", err)
	}
	if err := ucast.ExactlyOnce.Final(w); err == nil {
		t.Error("exactly-once accepted a final state with nothing delivered")
	}
	if ucast.WaitForCycle(w) != nil {
		t.Error("a wait-for cycle in the initial state")
	}
}

// A Sometimes goal that no state reaches is reported after the search; one
// that the initial state reaches is not.
func TestSometimes(t *testing.T) {
	ck, err := protocols.Build(ucast.Config(2, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	never := model.Property{Name: "never", Doc: "an impossible state", Sometimes: func(*model.World) bool { return false }}
	always := model.Property{Name: "always", Doc: "any state", Sometimes: func(*model.World) bool { return true }}
	c := properties.NewChecker(ck.Sys, []model.Property{never, always})
	if _, err := c.Initial(); err != nil {
		t.Fatal(err)
	}
	un := c.Unreached()
	if len(un) != 1 || un[0].Property != "never" {
		t.Fatalf("unreached: %v", un)
	}
}

func TestSelect(t *testing.T) {
	all := []properties.Property{ucast.Deadlock, properties.FIFO}
	if got, err := properties.Select(all, []string{"fifo"}); err != nil || len(got) != 1 || got[0].Name != "fifo" {
		t.Fatalf("%v %v", got, err)
	}
	if _, err := properties.Select(all, []string{"liveness"}); err == nil || !strings.Contains(err.Error(), "known: deadlock, fifo") {
		t.Fatalf("%v", err)
	}
}
