package irx

import (
	"fmt"

	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols/ucast"
)

// Def is I_rx's protocol definition.
var Def = &model.Def{
	Name:       "irx",
	Doc:        "I_rx: go-back-N retransmission on the NI over links that may lose, duplicate or corrupt packets (thesis §8.2.2, §8.2.4-§8.2.6)",
	Params:     ParamSpecs(),
	NewParams:  func() model.Params { return Defaults() },
	Properties: Props(NI),
	Variants:   VariantsAt(NI),
	New:        func(cfg model.Config) (model.Machine, error) { return New(cfg) },
	Claims:     ClaimsAt(NI),
}

// Protocol is the name of the protocol at level l: irx or hrx.
func (l Level) Protocol() string {
	if l == Host {
		return "hrx"
	}
	return "irx"
}

// pick returns ni or host, for level l.
func (l Level) pick(ni, host string) string {
	if l == Host {
		return host
	}
	return ni
}

// Config is I_rx's configuration of P nodes, each sending k packets to
// every other, with window w and the given faults.
func Config(nodes, window, packets int, faults string) model.Config {
	return ConfigAt(NI, nodes, window, packets, faults)
}

// FlowConfig is I_rx's configuration of the given flows on P nodes.
func FlowConfig(nodes, window, buffers int, faults string, flows ...ucast.Flow) model.Config {
	return FlowConfigAt(NI, nodes, window, buffers, faults, flows...)
}

// ConfigAt is Config for the protocol at level lvl.
func ConfigAt(lvl Level, nodes, window, packets int, faults string) model.Config {
	p := DefaultsFor(lvl.Protocol())
	p.Window, p.Packets = window, packets
	f, err := model.ParseFaults(faults)
	if err != nil {
		panic(err)
	}
	return model.Config{Protocol: lvl.Protocol(), Nodes: nodes, Params: p, Faults: f}
}

// FlowConfigAt is FlowConfig for the protocol at level lvl.
func FlowConfigAt(lvl Level, nodes, window, buffers int, faults string, flows ...ucast.Flow) model.Config {
	cfg := ConfigAt(lvl, nodes, window, 2, faults)
	p := cfg.Params.(*Params)
	p.RecvBuffers, p.Flows = buffers, flows
	return cfg
}

func machine(w *model.World) *Machine { return w.Sys.M.(*Machine) }

// Remaining says what is left undone in w: packets not delivered, not
// acknowledged, or held in receive buffers.
func (m *Machine) Remaining(w *model.World) error {
	var undelivered, unacked, held int
	for i, nn := range w.Nodes {
		n := nn.(*Node)
		held += len(n.Buf)
		for d := 0; d < m.P; d++ {
			k := m.count[i*m.P+d]
			unacked += k - int(n.Acked[d])
			if !w.Nodes[d].(*Node).Log[i].Complete(k) {
				undelivered++
			}
		}
	}
	if undelivered+unacked+held == 0 {
		return nil
	}
	return fmt.Errorf("%s", properties.Counts(undelivered, "streams not delivered in full", unacked, "packets unacknowledged", held, "packets in receive buffers"))
}

// Window is W (Streams).
func (m *Machine) Window() int { return m.W }

// Buffers is the receive buffers of a node (Streams).
func (m *Machine) Buffers() int { return m.B }

// Unacked is how many packets n has to d unacknowledged (Streams).
func (m *Machine) Unacked(n model.Node, d int) int {
	x := n.(*Node)
	return int(x.Sent[d]) - int(x.Acked[d])
}

// Held is how many packets n holds in its receive buffers (Streams).
func (m *Machine) Held(n model.Node) int { return len(n.(*Node).Buf) }

// Logs is n's host's log of each source's stream (Streams).
func (m *Machine) Logs(n model.Node) []model.StreamLog { return n.(*Node).Log }

// Want is how many packets host h is to be delivered from each source
// (Streams).
func (m *Machine) Want(h int) []int {
	want := make([]int, m.P)
	for s := 0; s < m.P; s++ {
		want[s] = m.count[s*m.P+h]
	}
	return want
}

// Holder names who holds the receive buffers in messages (Streams).
func (m *Machine) Holder() string { return m.Level.pick("ni", "node") }

// Props are the properties of the protocol at level lvl (the same
// properties; their texts name the level's buffers).
func Props(lvl Level) []model.Property {
	return StreamProps(PropDocs{
		Window:   "no sender has more than W packets to one destination unacknowledged (§8.2.2)",
		Buffers:  lvl.pick("no NI holds more received packets than its receive buffers (§8.2.6)", "no node holds more received packets than its receive buffers (§8.2.2, §8.2.6)"),
		Delivery: "on every fair run every packet reaches its host and is acknowledged (with finitely many faults, a link that keeps retransmitting delivers)",
	})
}

// VariantsAt are the variants of the protocol at level lvl: the same
// bugs at both levels, each caught by the same property.
func VariantsAt(lvl Level) []model.Variant {
	flow := func(buffers int, faults string, count int) model.Config {
		return FlowConfigAt(lvl, 2, 2, buffers, faults, ucast.Flow{Src: 0, Dst: 1, Count: count})
	}
	noTimer := lvl.pick("no retransmission timer: only a NACK makes the sender retransmit, so a lost NACK is never made good",
		"no retransmission timer: H_rx has no NACKs, so a packet the NI dropped for lack of a buffer (or a link lost) is never sent again")
	noTimerExample := flow(1, "loss:1", 2)
	if lvl == Host {
		noTimerExample = flow(1, "", 2) // the buffer drop alone, no fault
	}
	return []model.Variant{
		{Name: "correct", Doc: lvl.pick("I_rx", "H_rx") + " as §8.2.2 describes it"},
		{Name: "blocked-sends-forgotten", Doc: "an acknowledgement that opens the window does not transmit the packets waiting for it" + lvl.pick("", " on the host") + ": they wait for ever once the host has nothing more to send",
			Catches: "deadlock", Example: flow(1, "", 3)},
		{Name: "window-off-by-one", Doc: "the " + lvl.pick("sender", "sending host") + " transmits while at most W packets are outstanding (<= instead of <): W+1 in flight",
			Catches: "window", Example: ConfigAt(lvl, 2, 2, 3, "")},
		{Name: "seq-mod-window", Doc: "sequence numbers modulo W instead of at least W+1: after the wrap a retransmitted old packet carries the number the " + lvl.pick("receiver", "receiving host") + " expects and is accepted again",
			Catches: "exactly-once", Example: ConfigAt(lvl, 2, 2, 3, "")},
		{Name: "no-retransmit-timer", Doc: noTimer,
			Catches: "eventual-delivery", Example: noTimerExample},
		{Name: "accept-out-of-order", Doc: "the " + lvl.pick("receiver", "receiving host") + " accepts a packet up to W-1 numbers ahead of the one it expects, skipping a lost one",
			Catches: "fifo", Example: flow(2, "loss:1", 2)},
		{Name: "no-buffer-check", Doc: lvl.pick("the receiver accepts a packet although every receive buffer is full", "the NI stores an arriving packet although every receive buffer is taken"),
			Catches: "buffer-bound", Example: flow(1, "", 2)},
	}
}

// ClaimsAt are the claims that the protocol at level lvl passes: the
// same configurations at both levels.
func ClaimsAt(lvl Level) []model.Claim {
	doc := lvl.pick("I_rx", "H_rx") + " delivers every packet exactly once, in order, within its window and buffers, and every fair run ends with all packets delivered and acknowledged"
	return []model.Claim{
		{Name: "P=2 W=2 flow=0:1:4 faults=loss:1,dup:1", Config: FlowConfigAt(lvl, 2, 2, 1, "loss:1,dup:1", ucast.Flow{Src: 0, Dst: 1, Count: 4}),
			Expect: "pass", Ref: "§8.2.2, §8.2.5", Doc: doc + lvl.pick(" (sequence numbers modulo 3 wrap)", " (sequence numbers modulo 3 wrap; stale copies take the one buffer)")},
		{Name: "P=2 W=2 K=2 faults=loss:1,dup:1", Config: ConfigAt(lvl, 2, 2, 2, "loss:1,dup:1"), Expect: "pass", Ref: "§8.2.2",
			Doc: doc + lvl.pick(" (both ways: piggybacked acknowledgements)", " (both ways: data and acknowledgements share the buffers)")},
		{Name: "P=2 W=1 K=2 faults=corrupt:1,dup:1", Config: ConfigAt(lvl, 2, 1, 2, "corrupt:1,dup:1"), Expect: "pass", Ref: "§8.2.2",
			Doc: doc + lvl.pick(" (stop-and-wait; a corrupted packet fails its CRC and is dropped)", " (stop-and-wait; a corrupted packet fails its CRC and the NI drops it)")},
		{Name: "P=3 W=2 flows=0:2:2,1:2:1 faults=loss:1,dup:1", Config: FlowConfigAt(lvl, 3, 2, 1, "loss:1,dup:1", ucast.Flow{Src: 0, Dst: 2, Count: 2}, ucast.Flow{Src: 1, Dst: 2, Count: 1}),
			Expect: "pass", Ref: "§8.2.2, §8.2.6", Doc: doc + lvl.pick(" (two senders share one receive buffer: NACKs)", " (two senders share one receive buffer)")},
	}
}
