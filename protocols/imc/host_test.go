package imc

import (
	"testing"

	"lfccheck/model"
	"lfccheck/protocols/irx"
	"lfccheck/protocols/topology"
)

// At the host level ACK-forward is cumulative per parent: a packet the
// host is a leaf for, accepted after one that waits to be forwarded from
// the same parent, is not acknowledged before it. Node 0 is host 1's
// parent in group a's chain 0->1->2 (host 1 forwards) and in group b's
// chain 3->0->1 (host 1 is a leaf).
func TestHostAckForwardIsCumulative(t *testing.T) {
	const topo = "nodes 4\ngroup a 0 1 2\ngroup b 3 0 1\ntree a * chain\ntree b * chain\n"
	cfg := TopologyConfigAt(irx.Host, topo, 1, 2, "", topology.Cast{Group: "a", Root: 0, Count: 1}, topology.Cast{Group: "b", Root: 3, Count: 1})
	nodes, err := cfg.Params.Resolve(0)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Nodes = nodes
	m, err := NewAt(cfg, irx.Host)
	if err != nil {
		t.Fatal(err)
	}
	n := m.NewNode(1).(*Node)
	var out model.Outbox
	// Host 1's window to host 2 (W=1) is full.
	n.Queue[2], n.Sent[2] = []model.Packet{{Tag: tagData, Origin: 1, Seq: 1}}, 1
	a := model.Packet{Tag: tagData, Src: 0, Origin: 0, Seq: 1, Tree: m.wire(0), Val: uint32(m.tree[0])}
	b := model.Packet{Tag: tagData, Src: 0, Origin: 3, Seq: 1, Tree: m.wire(1), Val: uint32(m.tree[3])}
	m.handle(n, 0, a, &out)
	m.handle(n, 0, b, &out)
	if n.Expect[0] != 2 || len(out.Deliveries) != 2 {
		t.Fatalf("expect %d, %d deliveries", n.Expect[0], len(out.Deliveries))
	}
	if got := m.ackable(n, 0); got != 0 {
		t.Fatalf("ackable %d before a is forwarded, want 0 (Fwd %v)", got, n.Fwd)
	}
	// Host 2 acknowledges; a goes out, and both may be acknowledged.
	m.handle(n, 2, model.Packet{Tag: tagAck, Src: 2, Tree: m.wire(1)}, &out)
	if got := m.ackable(n, 0); got != 2 || len(n.Fwd) != 0 || !n.AckDue[0] {
		t.Fatalf("ackable %d after a is forwarded, want 2 (Fwd %v, ack due %v)", got, n.Fwd, n.AckDue[0])
	}
}
