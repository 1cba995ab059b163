package imc

import (
	"fmt"

	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols/irx"
	"lfccheck/protocols/topology"
)

// Def is I_mc's protocol definition.
var Def = &model.Def{
	Name:       "imc",
	Doc:        "I_rx I_mc: multicast forwarding on the NI over I_rx's go-back-N retransmission, with ACK-forward acknowledgements (thesis §8.3, App. A)",
	Params:     ParamSpecsAt(irx.NI),
	NewParams:  func() model.Params { return Defaults() },
	Properties: Props(irx.NI),
	Variants:   VariantsAt(irx.NI),
	New:        New,
	Claims:     claims(),
}

// Protocol is the name of the protocol at level l: imc or hmc.
func Protocol(l irx.Level) string {
	if l == irx.Host {
		return "hmc"
	}
	return "imc"
}

// pick returns ni or host, for level l.
func pick(l irx.Level, ni, host string) string {
	if l == irx.Host {
		return host
	}
	return ni
}

// Config is the configuration of P nodes with the given tree family,
// window, receive buffers, faults and casts.
func Config(nodes int, tree string, window, buffers int, faults string, casts ...topology.Cast) model.Config {
	return ConfigAt(irx.NI, nodes, tree, window, buffers, faults, casts...)
}

// ConfigAt is Config for the protocol at level lvl.
func ConfigAt(lvl irx.Level, nodes int, tree string, window, buffers int, faults string, casts ...topology.Cast) model.Config {
	p := DefaultsFor(Protocol(lvl))
	p.Window, p.RecvBuffers, p.Casts = window, buffers, casts
	if tree != "binary" {
		p.Tree = tree
	}
	f, err := model.ParseFaults(faults)
	if err != nil {
		panic(err)
	}
	return model.Config{Protocol: Protocol(lvl), Nodes: nodes, Params: p, Faults: f}
}

// TopologyConfig is Config with an explicit topology, given as the text
// of a topology file.
func TopologyConfig(topo string, window, buffers int, faults string, casts ...topology.Cast) model.Config {
	return TopologyConfigAt(irx.NI, topo, window, buffers, faults, casts...)
}

// TopologyConfigAt is TopologyConfig for the protocol at level lvl.
func TopologyConfigAt(lvl irx.Level, topo string, window, buffers int, faults string, casts ...topology.Cast) model.Config {
	cfg := ConfigAt(lvl, 0, "binary", window, buffers, faults, casts...)
	if err := cfg.Params.(*Params).SetFile("topology", "topology", []byte(topo)); err != nil {
		panic(err)
	}
	return cfg
}

// Remaining says what is left undone in w (irx.Streams).
func (m *Machine) Remaining(w *model.World) error {
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

// Window is W (irx.Streams).
func (m *Machine) Window() int { return m.W }

// Buffers is the receive buffers of a node (irx.Streams).
func (m *Machine) Buffers() int { return m.B }

// Unacked is how many packets n has to d unacknowledged (irx.Streams).
func (m *Machine) Unacked(n model.Node, d int) int { return int(n.(*Node).Sent[d]) }

// Held is how many received packets n holds against its receive
// buffers (irx.Streams).
func (m *Machine) Held(n model.Node) int { return n.(*Node).held() }

// Logs is n's host's log of each root's stream (irx.Streams).
func (m *Machine) Logs(n model.Node) []model.StreamLog { return n.(*Node).Log }

// Want is how many packets host h is to be delivered from each root
// (irx.Streams).
func (m *Machine) Want(h int) []int {
	want := make([]int, m.P)
	for r := 0; r < m.P; r++ {
		if m.reaches(r, h) {
			want[r] = m.count[r]
		}
	}
	return want
}

// Side names who forwards and runs the windows in messages (irx.Streams).
func (m *Machine) Side() string { return pick(m.Level, "ni", "host") }

// Holder names who holds the receive buffers in messages (irx.Streams).
func (m *Machine) Holder() string { return pick(m.Level, "ni", "node") }

// Props are the properties of the protocol at level lvl: I_rx's, per
// root.
func Props(lvl irx.Level) []model.Property {
	return irx.StreamProps(irx.PropDocs{
		Window: pick(lvl, "no NI has more than W packets to one destination unacknowledged (§8.2.2)",
			"no host has more than W packets to one destination unacknowledged (§8.2.2)"),
		Buffers: pick(lvl, "no NI holds more received packets (in receive buffers or waiting to be forwarded) than its receive buffers (§8.2.6, §8.3.2)",
			"no node holds more packets in its receive pool (arrived, not yet handled by the host) than its receive buffers (§8.2.2, §8.2.6)"),
		Delivery: "on every fair run every multicast packet reaches every host in its tree and is acknowledged on every hop (with finitely many faults, a link that keeps retransmitting delivers)",
	})
}

func cast(root, count int) topology.Cast { return topology.Cast{Root: root, Count: count} }

// VariantsAt are the variants of the protocol at level lvl.
func VariantsAt(lvl irx.Level) []model.Variant {
	if lvl == irx.Host {
		return hostVariants()
	}
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

// hostVariants are H_mc's variants: the bugs of I_mc that host
// forwarding can have too, one of its own (forward-out-of-order) and
// two of H_rx's.
func hostVariants() []model.Variant {
	cfg := func(nodes int, tree string, window, buffers int, faults string, casts ...topology.Cast) model.Config {
		return ConfigAt(irx.Host, nodes, tree, window, buffers, faults, casts...)
	}
	return []model.Variant{
		{Name: "correct", Doc: "H_rx H_mc as §8.3 describes it: host forwarding over H_rx, ACK-forward at the host (§8.3.2), the receive buffer freed once the host has handled the packet (delivered it and queued it for the children)"},
		{Name: "ack-receive", Doc: "ACK-receive instead of ACK-forward (§8.3.2): the host acknowledges a packet to its parent as soon as it accepts it, before it has transmitted it to its children; nothing then bounds the packets a forwarding host queues for a child behind a closed window"},
		{Name: "no-piggyback", Doc: "explicit acknowledgements only, as I_mc's model has them: no data packet carries the acknowledgement of the reverse stream (H_rx piggybacks, §8.2.2)"},
		{Name: "forward-duplicates", Doc: "the host forwards every copy of a packet that it handles, also a duplicate that it drops as out of sequence: each hop is a fresh H_rx stream, so the children take it as a new packet",
			Catches: "exactly-once", Example: cfg(3, "chain", 1, 2, "dup:1", cast(0, 1))},
		{Name: "forward-out-of-order", Doc: "the host forwards a packet that arrives after a gap (a lost packet before it), which it rightly drops for itself: the child's stream numbers it afresh, so the child takes it before the packet that was lost",
			Catches: "fifo", Example: cfg(3, "chain", 2, 2, "loss:1", cast(0, 2))},
		{Name: "window-off-by-one", Doc: "the host transmits to a child while at most W packets are outstanding (<= instead of <): W+1 in flight",
			Catches: "window", Example: cfg(3, "chain", 1, 2, "", cast(0, 2))},
		{Name: "no-buffer-check", Doc: "the NI stores an arriving packet although every buffer of the receive pool is taken",
			Catches: "buffer-bound", Example: cfg(3, "chain", 1, 1, "", cast(0, 2))},
		{Name: "no-retransmit-timer", Doc: "no retransmission timer: H_rx has no NACKs, so a packet the NI dropped for lack of a buffer is never sent again",
			Catches: "eventual-delivery", Example: cfg(2, "chain", 2, 1, "", cast(0, 2))},
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
