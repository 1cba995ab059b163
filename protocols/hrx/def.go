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
	Variants:   irx.VariantsAt(irx.Host),
	New:        New,
	Claims:     claims(),
}

// Config is the configuration of P nodes, each sending k packets to
// every other, with window w and the given faults.
func Config(nodes, window, packets int, faults string) model.Config {
	return irx.ConfigAt(irx.Host, nodes, window, packets, faults)
}

// FlowConfig is the configuration of the given flows on P nodes.
func FlowConfig(nodes, window, buffers int, faults string, flows ...ucast.Flow) model.Config {
	return irx.FlowConfigAt(irx.Host, nodes, window, buffers, faults, flows...)
}

// claims are I_rx's claims at the host level and the livelocks the
// checks find (see the package doc).
func claims() []model.Claim {
	const live = "a fair run of H_rx that never delivers: "
	links := FlowConfig(2, 2, 1, "", ucast.Flow{Src: 0, Dst: 1, Count: 4})
	links.Params.(*irx.Params).Timer = irx.TimerLinks
	return append(irx.ClaimsAt(irx.Host), []model.Claim{
		{Name: "P=3 ring flows=0:1:1,1:2:1,2:0:1 recv-buffers=1", Config: FlowConfig(3, 2, 1, "", ucast.Flow{Src: 0, Dst: 1, Count: 1}, ucast.Flow{Src: 1, Dst: 2, Count: 1}, ucast.Flow{Src: 2, Dst: 0, Count: 1}),
			Expect: "fail eventual-delivery", Ref: "§8.2.2, §8.2.6",
			Doc: live + "acknowledgements need receive buffers as data does, and each reaches its sender while the sender's one buffer holds a retransmission from its own sender (reliable links; I_rx passes, H_rx passes with two buffers)"},
		{Name: "P=3 W=2 flows=0:2:2,1:2:2 faults=loss@0->2:1", Config: FlowConfig(3, 2, 1, "loss@0->2:1", ucast.Flow{Src: 0, Dst: 2, Count: 2}, ucast.Flow{Src: 1, Dst: 2, Count: 2}),
			Expect: "fail eventual-delivery", Ref: "§8.2.2, §8.2.6",
			Doc: live + "after one loss each sender's packet after the gap takes the shared buffer just before the other sender's awaited packet arrives, in turn, for ever (I_rx drops a packet after a gap without taking a buffer and passes)"},
		{Name: "P=2 W=2 flow=0:1:4 timer=links", Config: links,
			Expect: "fail eventual-delivery", Ref: "§8.2.2, §3.7, §4.4",
			Doc: live + "when the retransmission timer may expire while packets wait for a host that polls late, a stale retransmitted copy keeps taking the receive buffer that the awaited packet needs"},
	}...)
}
