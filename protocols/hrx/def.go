package hrx

import (
	"lfccheck/model"
	"lfccheck/protocols/irx"
	"lfccheck/protocols/ucast"
)

// Def is H_rx's protocol definition.
var Def = &model.Def{
	Name:       "hrx",
	Doc:        "H_rx: go-back-N retransmission on the host over links that may lose, duplicate or corrupt packets; the NI stores or drops whatever arrives (thesis §8.2.2, §8.2.4-§8.2.6)",
	Params:     irx.ParamSpecsAt(irx.Host),
	NewParams:  func() model.Params { return irx.DefaultsFor("hrx") },
	Properties: irx.Props(irx.Host),
	Variants:   variants(),
	New:        New,
	Claims:     claims(),
}

// Config is the configuration of P nodes, each sending k packets to
// every other, with window w and the given faults.
func Config(nodes, window, packets int, faults string) model.Config {
	p := irx.DefaultsFor("hrx")
	p.Window, p.Packets = window, packets
	f, err := model.ParseFaults(faults)
	if err != nil {
		panic(err)
	}
	return model.Config{Protocol: "hrx", Nodes: nodes, Params: p, Faults: f}
}

// FlowConfig is the configuration of the given flows on P nodes.
func FlowConfig(nodes, window, buffers int, faults string, flows ...ucast.Flow) model.Config {
	cfg := Config(nodes, window, 2, faults)
	p := cfg.Params.(*irx.Params)
	p.RecvBuffers, p.Flows = buffers, flows
	return cfg
}

func variants() []model.Variant {
	return []model.Variant{
		{Name: "correct", Doc: "H_rx as §8.2.2 describes it"},
		{Name: "blocked-sends-forgotten", Doc: "an acknowledgement that opens the window does not transmit the packets waiting for it on the host: they wait for ever once the host has nothing more to send",
			Catches: "deadlock", Example: FlowConfig(2, 2, 1, "", ucast.Flow{Src: 0, Dst: 1, Count: 3})},
		{Name: "window-off-by-one", Doc: "the sending host transmits while at most W packets are outstanding (<= instead of <): W+1 in flight",
			Catches: "window", Example: Config(2, 2, 3, "")},
		{Name: "seq-mod-window", Doc: "sequence numbers modulo W instead of at least W+1: after the wrap a retransmitted old packet carries the number the receiving host expects and is accepted again",
			Catches: "exactly-once", Example: Config(2, 2, 3, "")},
		{Name: "no-retransmit-timer", Doc: "no retransmission timer: H_rx has no NACKs, so a packet the NI dropped for lack of a buffer (or a link lost) is never sent again",
			Catches: "eventual-delivery", Example: FlowConfig(2, 2, 1, "", ucast.Flow{Src: 0, Dst: 1, Count: 2})},
		{Name: "accept-out-of-order", Doc: "the receiving host accepts a packet up to W-1 numbers ahead of the one it expects, skipping a lost one",
			Catches: "fifo", Example: FlowConfig(2, 2, 2, "loss:1", ucast.Flow{Src: 0, Dst: 1, Count: 2})},
		{Name: "no-buffer-check", Doc: "the NI stores an arriving packet although every receive buffer is taken",
			Catches: "buffer-bound", Example: FlowConfig(2, 2, 1, "", ucast.Flow{Src: 0, Dst: 1, Count: 2})},
	}
}

func claims() []model.Claim {
	const doc = "H_rx delivers every packet exactly once, in order, within its window and buffers, and every fair run ends with all packets delivered and acknowledged"
	const live = "a fair run of H_rx that never delivers: "
	links := FlowConfig(2, 2, 1, "", ucast.Flow{Src: 0, Dst: 1, Count: 4})
	links.Params.(*irx.Params).Timer = irx.TimerLinks
	return []model.Claim{
		{Name: "P=2 W=2 flow=0:1:4 faults=loss:1,dup:1", Config: FlowConfig(2, 2, 1, "loss:1,dup:1", ucast.Flow{Src: 0, Dst: 1, Count: 4}),
			Expect: "pass", Ref: "§8.2.2, §8.2.5", Doc: doc + " (sequence numbers modulo 3 wrap; stale copies take the one buffer)"},
		{Name: "P=2 W=2 K=2 faults=loss:1,dup:1", Config: Config(2, 2, 2, "loss:1,dup:1"), Expect: "pass", Ref: "§8.2.2", Doc: doc + " (both ways: data and acknowledgements share the buffers)"},
		{Name: "P=2 W=1 K=2 faults=corrupt:1,dup:1", Config: Config(2, 1, 2, "corrupt:1,dup:1"), Expect: "pass", Ref: "§8.2.2", Doc: doc + " (stop-and-wait; a corrupted packet fails its CRC and the NI drops it)"},
		{Name: "P=3 W=2 flows=0:2:2,1:2:1 faults=loss:1,dup:1", Config: FlowConfig(3, 2, 1, "loss:1,dup:1", ucast.Flow{Src: 0, Dst: 2, Count: 2}, ucast.Flow{Src: 1, Dst: 2, Count: 1}),
			Expect: "pass", Ref: "§8.2.2, §8.2.6", Doc: doc + " (two senders share one receive buffer)"},
		{Name: "P=3 ring flows=0:1:1,1:2:1,2:0:1 recv-buffers=1", Config: FlowConfig(3, 2, 1, "", ucast.Flow{Src: 0, Dst: 1, Count: 1}, ucast.Flow{Src: 1, Dst: 2, Count: 1}, ucast.Flow{Src: 2, Dst: 0, Count: 1}),
			Expect: "fail eventual-delivery", Ref: "§8.2.2, §8.2.6",
			Doc: live + "acknowledgements need receive buffers as data does, and each reaches its sender while the sender's one buffer holds a retransmission from its own sender (reliable links; I_rx passes, H_rx passes with two buffers)"},
		{Name: "P=3 W=2 flows=0:2:2,1:2:2 faults=loss@0->2:1", Config: FlowConfig(3, 2, 1, "loss@0->2:1", ucast.Flow{Src: 0, Dst: 2, Count: 2}, ucast.Flow{Src: 1, Dst: 2, Count: 2}),
			Expect: "fail eventual-delivery", Ref: "§8.2.2, §8.2.6",
			Doc: live + "after one loss each sender's packet after the gap takes the shared buffer just before the other sender's awaited packet arrives, in turn, for ever (I_rx drops a packet after a gap without taking a buffer and passes)"},
		{Name: "P=2 W=2 flow=0:1:4 timer=links", Config: links,
			Expect: "fail eventual-delivery", Ref: "§8.2.2, §3.7, §4.4",
			Doc: live + "when the retransmission timer may expire while packets wait for a host that polls late, a stale retransmitted copy keeps taking the receive buffer that the awaited packet needs"},
	}
}
