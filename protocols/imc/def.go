package imc

import (
	"fmt"

	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols/topology"
)

// Def is I_mc's protocol definition.
var Def = &model.Def{
	Name:       "imc",
	Doc:        "I_rx I_mc: multicast forwarding on the NI over I_rx's go-back-N retransmission, with ACK-forward acknowledgements (thesis §8.3, App. A)",
	Params:     ParamSpecs(),
	NewParams:  func() model.Params { return Defaults() },
	Properties: props(),
	Variants:   variants(),
	New:        New,
	Claims:     claims(),
}

// Config is the configuration of P nodes with the given tree family,
// window, receive buffers, faults and casts.
func Config(nodes int, tree string, window, buffers int, faults string, casts ...topology.Cast) model.Config {
	p := Defaults()
	p.Window, p.RecvBuffers, p.Casts = window, buffers, casts
	if tree != "binary" {
		p.Tree = tree
	}
	f, err := model.ParseFaults(faults)
	if err != nil {
		panic(err)
	}
	return model.Config{Protocol: "imc", Nodes: nodes, Params: p, Faults: f}
}

// TopologyConfig is Config with an explicit topology, given as the text
// of a topology file.
func TopologyConfig(topo string, window, buffers int, faults string, casts ...topology.Cast) model.Config {
	cfg := Config(0, "binary", window, buffers, faults, casts...)
	if err := cfg.Params.(*Params).SetFile("topology", "topology", []byte(topo)); err != nil {
		panic(err)
	}
	return cfg
}

func machine(w *model.World) *Machine { return w.Sys.M.(*Machine) }

// remaining says what is left undone in w.
func remaining(w *model.World) error {
	m := machine(w)
	var undelivered, unacked, held int
	for h, nn := range w.Nodes {
		n := nn.(*Node)
		held += len(n.Buf)
		for d := range n.Queue {
			unacked += len(n.Queue[d])
		}
		if int(n.Next) < m.count[h] {
			unacked += m.count[h] - int(n.Next)
		}
		for r := 0; r < m.P; r++ {
			if m.reaches(r, h) && !n.Log[r].Complete(m.count[r]) {
				undelivered++
			}
		}
	}
	if undelivered+unacked+held == 0 {
		return nil
	}
	return fmt.Errorf("%s", properties.Counts(undelivered, "streams not delivered in full", unacked, "packets unacknowledged or not yet sent", held, "packets in receive buffers"))
}

func allNodes(local func(w *model.World, i int) error) func(w *model.World) error {
	return func(w *model.World) error {
		for i := range w.Nodes {
			if err := local(w, i); err != nil {
				return err
			}
		}
		return nil
	}
}

func props() []model.Property {
	window := model.Property{Name: "window", Doc: "no NI has more than W packets to one destination unacknowledged (§8.2.2)",
		Local: func(w *model.World, i int) error {
			m, n := machine(w), w.Nodes[i].(*Node)
			for d := range n.Sent {
				if int(n.Sent[d]) > m.W {
					return fmt.Errorf("ni %d has %d packets to %d unacknowledged, window %d", i, n.Sent[d], d, m.W)
				}
			}
			return nil
		}}
	window.State = allNodes(window.Local)
	buffers := model.Property{Name: "buffer-bound", Doc: "no NI holds more received packets (in receive buffers or waiting to be forwarded) than its receive buffers (§8.2.6, §8.3.2)",
		Local: func(w *model.World, i int) error {
			m, n := machine(w), w.Nodes[i].(*Node)
			if h := n.held(); h > m.B {
				return fmt.Errorf("ni %d holds %d received packets in %d buffers", i, h, m.B)
			}
			return nil
		}}
	buffers.State = allNodes(buffers.Local)
	return []model.Property{
		properties.Deadlock(remaining, nil),
		window,
		buffers,
		properties.FIFO,
		properties.ExactlyOnce(func(w *model.World, h int) []model.StreamLog { return w.Nodes[h].(*Node).Log },
			func(w *model.World, h int) []int {
				m := machine(w)
				want := make([]int, m.P)
				for r := 0; r < m.P; r++ {
					if m.reaches(r, h) {
						want[r] = m.count[r]
					}
				}
				return want
			}),
		{Name: "eventual-delivery", Doc: "on every fair run every multicast packet reaches every host in its tree and is acknowledged on every hop (with finitely many faults, a link that keeps retransmitting delivers)",
			Live: model.Eventually, Goal: func(w *model.World, _ int) bool { return remaining(w) == nil }},
	}
}

func cast(root, count int) topology.Cast { return topology.Cast{Root: root, Count: count} }

func variants() []model.Variant {
	return []model.Variant{
		{Name: "correct", Doc: "I_rx I_mc as §8.3 describes it: NI forwarding, ACK-forward, a forwarded packet's buffer freed once the host copied it and every child acknowledged it"},
		{Name: "ack-receive", Doc: "ACK-receive instead of ACK-forward (§8.3.2; the thesis's I_rx H_mc acknowledges so): the NI acknowledges a packet to its parent as soon as it accepts it, before forwarding it; the buffer is still held until the packet is copied and forwarded, the flow-control loophole of §8.3.2"},
		{Name: "release-on-copy", Doc: "the NI frees a multicast packet's receive buffer once the host has copied it, as for a unicast packet, although it still waits to be forwarded (§8.3.2: the buffer is not released until the packet is delivered and forwarded): the NI takes new packets while holding the old ones",
			Catches: "buffer-bound", Example: Config(3, "chain", 1, 1, "", cast(0, 2))},
		{Name: "forward-duplicates", Doc: "the NI forwards every copy of a packet that arrives, also a duplicate that it drops as out of sequence: the children receive it twice, as new packets",
			Catches: "exactly-once", Example: Config(3, "chain", 1, 2, "dup:1", cast(0, 1))},
		{Name: "window-off-by-one", Doc: "the NI transmits to a child while at most W packets are outstanding (<= instead of <): W+1 in flight",
			Catches: "window", Example: Config(3, "chain", 1, 2, "", cast(0, 2))},
	}
}

func claims() []model.Claim {
	const doc = "every multicast packet reaches every node of its tree exactly once, in order per root, within the windows and buffers, and every fair run ends with all delivered and acknowledged"
	const live = "a fair run that never delivers: "
	ring := Config(3, "chain", 1, 1, "", cast(0, 1), cast(1, 1), cast(2, 1))
	ringReceive := ring.Clone()
	ringReceive.Variant = "ack-receive"
	// Two groups whose chains cross: node 1 forwards group a's packets
	// to node 3, node 3 forwards group b's to node 1.
	const crossing = "nodes 4\ngroup a 0 1 3\ngroup b 1 2 3\ntree a * chain\ntree b * chain\n"
	crossed := func(buffers int) model.Config {
		return TopologyConfig(crossing, 1, buffers, "", topology.Cast{Group: "a", Root: 0, Count: 1}, topology.Cast{Group: "b", Root: 2, Count: 1})
	}
	return []model.Claim{
		{Name: "P=4 binary W=1 recv-buffers=2 cast=0:1 faults=loss:1", Config: Config(4, "binary", 1, 2, "loss:1", cast(0, 1)),
			Expect: "pass", Ref: "§8.3.1-§8.3.3, App. A", Doc: doc + " (a binary tree: node 1 forwards to node 3; a loss on any hop is made good)"},
		{Name: "P=3 chain W=1 recv-buffers=1 cast=0:2 faults=loss:1,dup:1", Config: Config(3, "chain", 1, 1, "loss:1,dup:1", cast(0, 2)),
			Expect: "pass", Ref: "§8.3.1, §8.3.2", Doc: doc + " (one chain, sequence numbers modulo 2: a single tree has no cycle of buffers, so one buffer suffices)"},
		{Name: "P=4 crossing groups W=1 recv-buffers=2 casts=a/0:1,b/2:1", Config: crossed(2),
			Expect: "pass", Ref: "§8.3.3, App. A.2", Doc: doc + " (two groups whose chains cross between nodes 1 and 3: two buffers each hold a packet to forward and leave one to receive)"},
		{Name: "P=4 crossing groups W=1 recv-buffers=1 casts=a/0:1,b/2:1", Config: crossed(1),
			Expect: "fail eventual-delivery", Ref: "§8.3.3, App. A.2",
			Doc: live + "overlapping groups (App. A.2: the condition for one group does not cover overlapping ones): node 1 holds group a's packet to forward to node 3, node 3 holds group b's to forward to node 1, each in its one buffer, and each drops the other's packet for ever: the buffer deadlock of §8.3.3 with two nodes"},
		{Name: "P=3 chain W=1 recv-buffers=1 casts=0:1,1:1,2:1", Config: ring,
			Expect: "fail eventual-delivery", Ref: "§8.3.3, App. A (Fig. 4.8)",
			Doc: live + "the chains of the three roots overlap in a cycle 0->1->2->0, which App. A's condition excludes; under ACK-forward each NI's packet to forward waits in its window behind its own packet, whose acknowledgement waits for the next NI to forward, around the cycle (more buffers do not help: recv-buffers=3 fails too); with retransmission the deadlock shows as retransmissions that are dropped for ever"},
		{Name: "P=3 chain W=1 recv-buffers=1 casts=0:1,1:1,2:1 variant=ack-receive", Config: ringReceive,
			Expect: "fail eventual-delivery", Ref: "§8.3.3",
			Doc: live + "under ACK-receive the same cycle is §8.3.3's buffer deadlock: every NI's receive pool is full of a packet to forward to the next NI in the cycle, whose pool is full too, and every retransmission is dropped for lack of a buffer (with recv-buffers=2 it passes)"},
	}
}
