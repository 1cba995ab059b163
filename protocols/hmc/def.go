package hmc

import (
	"lfccheck/model"
	"lfccheck/protocols/imc"
	"lfccheck/protocols/irx"
	"lfccheck/protocols/topology"
)

// Def is H_mc's protocol definition.
var Def = &model.Def{
	Name:       "hmc",
	Doc:        "H_rx H_mc: multicast forwarding on the host over H_rx's go-back-N retransmission, with ACK-forward at the host (thesis §8.3)",
	Params:     imc.ParamSpecsAt(irx.Host),
	NewParams:  func() model.Params { return imc.DefaultsFor("hmc") },
	Properties: imc.Props(irx.Host),
	Variants:   imc.VariantsAt(irx.Host),
	New:        New,
	Claims:     claims(),
}

// New builds H_mc for a resolved configuration.
func New(cfg model.Config) (model.Machine, error) { return imc.NewAt(cfg, irx.Host) }

// Config is the configuration of P nodes with the given tree family,
// window, receive buffers, faults and casts.
func Config(nodes int, tree string, window, buffers int, faults string, casts ...topology.Cast) model.Config {
	return imc.ConfigAt(irx.Host, nodes, tree, window, buffers, faults, casts...)
}

// TopologyConfig is Config with an explicit topology, given as the text
// of a topology file.
func TopologyConfig(topo string, window, buffers int, faults string, casts ...topology.Cast) model.Config {
	return imc.TopologyConfigAt(irx.Host, topo, window, buffers, faults, casts...)
}

func cast(root, count int) topology.Cast { return topology.Cast{Root: root, Count: count} }

// crossing is two groups whose chains cross: node 1 forwards group a's
// packets to node 3, node 3 forwards group b's to node 1 (imc's claims
// and protocols/imc/testdata/crossing.topo).
const crossing = "nodes 4\ngroup a 0 1 3\ngroup b 1 2 3\ntree a * chain\ntree b * chain\n"

func crossed(buffers int) model.Config {
	return TopologyConfig(crossing, 1, buffers, "", topology.Cast{Group: "a", Root: 0, Count: 1}, topology.Cast{Group: "b", Root: 2, Count: 1})
}

// claims compare H_mc with I_mc (protocols/imc) on the same
// configurations (see the package doc).
func claims() []model.Claim {
	const doc = "every multicast packet reaches every node of its tree exactly once, in order per root, within the windows and the receive pools, and every fair run ends with all delivered and acknowledged"
	const live = "a fair run that never delivers: "
	chainReceive := Config(3, "chain", 1, 1, "loss:1,dup:1", cast(0, 2))
	chainReceive.Variant = "ack-receive"
	crossedExplicit := crossed(1)
	crossedExplicit.Variant = "no-piggyback"
	return []model.Claim{
		{Name: "P=4 binary W=1 recv-buffers=2 cast=0:1 faults=loss@0->1:1,dup@1->3:1", Config: Config(4, "binary", 1, 2, "loss@0->1:1,dup@1->3:1", cast(0, 1)),
			Expect: "pass", Ref: "§8.3.1, §8.3.2", Doc: doc + " (a binary tree: host 1 forwards to host 3; a loss on the hop to the forwarding host and a duplicate on the hop it forwards on are made good; with a loss and a duplicate on any hop it passes too, in 197,493 states, docs/results.md)"},
		{Name: "P=3 chain W=1 recv-buffers=2 cast=0:2 faults=loss:1,dup:1", Config: Config(3, "chain", 1, 2, "loss:1,dup:1", cast(0, 2)),
			Expect: "pass", Ref: "§8.3.1, §8.3.2", Doc: doc + " (one chain, sequence numbers modulo 2)"},
		{Name: "P=3 chain W=1 recv-buffers=1 cast=0:2", Config: Config(3, "chain", 1, 1, "", cast(0, 2)),
			Expect: "fail eventual-delivery", Ref: "§8.3.2, §8.2.2",
			Doc: live + "ACK-forward on the host with one receive buffer, over reliable links: host 1 holds back its acknowledgement of packet 2 until host 2 acknowledges packet 1, so host 0 retransmits packet 2, and that copy holds host 1's one buffer each time host 2's acknowledgement arrives, which is dropped, round after round (H_rx's livelock, protocols/hrx; I_mc passes a chain with one buffer, H_mc with two, and with ACK-receive)"},
		{Name: "P=3 chain W=1 recv-buffers=1 cast=0:2 faults=loss:1,dup:1 variant=ack-receive", Config: chainReceive,
			Expect: "pass", Ref: "§8.3.2", Doc: doc + " (under ACK-receive host 1 acknowledges packet 2 when it takes it, host 0 stops retransmitting, and one buffer suffices)"},
		{Name: "P=4 crossing groups W=1 recv-buffers=1 casts=a/0:1,b/2:1", Config: crossed(1),
			Expect: "pass", Ref: "§8.3.1, §8.3.3, App. A.2",
			Doc: doc + " (two groups whose chains cross between hosts 1 and 3: the configuration in which I_mc's NIs deadlock with one buffer each passes, because a host frees the buffer once it has handled the packet and forwards from its send queues, so no receive buffer waits for a child)"},
		{Name: "P=4 crossing groups W=1 recv-buffers=1 casts=a/0:1,b/2:1 variant=no-piggyback", Config: crossedExplicit,
			Expect: "fail eventual-delivery", Ref: "§8.2.2, §8.3.3",
			Doc: live + "the same crossing groups with explicit acknowledgements only: not I_mc's buffer deadlock but H_rx's livelock; hosts 1 and 3 each retransmit their packet to the other just before acknowledging the other's, on the same link, and the acknowledgement finds the one buffer holding the stale copy, for ever (the piggybacked acknowledgement on the retransmission breaks it)"},
	}
}
