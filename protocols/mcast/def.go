package mcast

import (
	_ "embed"
	"fmt"

	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols/ucast"
)

// OverlapSmallFile is topologies/overlap-small.topo: three overlapping
// 4-member groups on 6 nodes with binary trees, a small analogue of App.
// A.2 (examples/overlap-small.topo links to it).
//
//go:embed topologies/overlap-small.topo
var OverlapSmallFile []byte

// OverlapCasts are the multicasts that close the overlap example's
// wait-for cycle: 0 in g1, 2 in g2, 4 in g3.
var OverlapCasts = []model.Cast{{Group: "g1", Root: 0, Count: 1}, {Group: "g2", Root: 2, Count: 1}, {Group: "g3", Root: 4, Count: 1}}

// Def is MCAST's protocol definition.
var Def = &model.Def{
	Name:      "mcast",
	Doc:       "NI-level spanning-tree multicast on UCAST's credits (thesis §4.2)",
	Params:    ParamSpecs(),
	NewParams: func() model.Params { return Defaults() },
	Variants: []model.Variant{
		{Name: Correct, Doc: "the protocol of Fig. 4.5-4.7"},
		{Name: CreditToSrc, Doc: "a released buffer's credit goes to the packet's originating root instead of the NI's tree parent",
			Catches: "credit-conservation", Example: chainCast(3, 1, 1)},
		{Name: EarlyRelease, Doc: "the receive buffer is released after the host copy even while forwards are still queued",
			Catches: "buffer-held", Example: chainCast(3, 1, 2)},
		ucast.BounceVariant(chainCast(2, 1, 2)),
	},
	Properties: []model.Property{ucast.Deadlock, ucast.CreditConservation, ucast.PoolBound,
		properties.FIFO, ucast.ExactlyOnce, BufferHeld, ucast.EventualDelivery},
	Acyclic: true,
	New:     func(cfg model.Config) (model.Machine, error) { return New(cfg) },
	Claims:  claims(),
	Sweep:   []model.Setting{{Key: "tree", Value: "binary,binomial"}, {Key: "credits", Value: "1,2"}, {Key: "packets", Value: "1,2"}},
}

// Config is an MCAST configuration: nodes NIs, credits C, every member
// multicasting packets K on its tree of the family.
func Config(tree string, nodes, credits, packets int) model.Config {
	p := Defaults()
	p.Tree, p.Credits, p.Packets = tree, credits, packets
	return model.Config{Protocol: "mcast", Nodes: nodes, Params: p}
}

// chainCast is a chain of nodes where only node 0 multicasts count packets.
func chainCast(nodes, credits, count int) model.Config {
	c := Config("chain", nodes, credits, 1)
	c.Params.(*Params).Casts = []model.Cast{{Root: 0, Count: count}}
	return c
}

// OverlapConfig is the overlap example with the first groups groups (and
// their casts).
func OverlapConfig(groups int) model.Config {
	p := Defaults()
	if err := p.SetTopologyFile("overlap-small.topo", OverlapSmallFile); err != nil {
		panic("mcast: embedded topology: " + err.Error())
	}
	p.Topology.Groups, p.Topology.Trees = p.Topology.Groups[:groups], p.Topology.Trees[:groups]
	p.Casts = append([]model.Cast(nil), OverlapCasts[:groups]...)
	return model.Config{Protocol: "mcast", Nodes: 6, Params: p}
}

func claims() []model.Claim {
	cs := []model.Claim{{Name: "chain P=4 C=1 K=1", Config: Config("chain", 4, 1, 1), Expect: "fail deadlock",
		Ref: "Fig. 4.8", Doc: "chains deadlock"}}
	for _, tree := range []string{"binary", "binomial"} {
		for _, c := range [][3]int{{3, 1, 1}, {3, 2, 1}, {3, 1, 2}} {
			cs = append(cs, model.Claim{Name: fmt.Sprintf("%s P=%d C=%d K=%d", tree, c[0], c[1], c[2]),
				Config: Config(tree, c[0], c[1], c[2]), Expect: "pass", Ref: "App. A.1", Doc: tree + " trees are deadlock-free"})
		}
	}
	return append(cs,
		model.Claim{Name: "3 overlapping groups P=6", Config: OverlapConfig(3), Expect: "fail deadlock",
			Ref: "App. A.2", Doc: "overlapping groups can deadlock"},
		model.Claim{Name: "2 of those groups P=6", Config: OverlapConfig(2), Expect: "pass",
			Ref: "App. A.2", Doc: "the cycle needs all three groups"})
}

// BufferHeld: every packet queued for forwarding still occupies its NI
// receive buffer, and each buffer's pending-forward count equals the
// forwards of it still queued.
var BufferHeld = model.Property{
	Name: "buffer-held",
	Doc:  "a packet queued for forwarding still occupies its receive buffer, with a matching pending-forward count",
	State: func(w *model.World) error {
		for i := range w.Nodes {
			n := ucast.NodeAt(w, i)
			for p := range n.PCB {
				for _, d := range n.PCB[p].Blocked {
					if d.Fwd && n.FindRecv(d.Pkt) < 0 {
						return fmt.Errorf("ni %d has %s queued for %d, but its receive buffer was released", i, d.Pkt, d.Dest)
					}
				}
			}
			for j := range n.Recv {
				rb := &n.Recv[j]
				queued := 0
				for p := range n.PCB {
					for _, d := range n.PCB[p].Blocked {
						if d.Fwd && d.Pkt.SameData(rb.Pkt) {
							queued++
						}
					}
				}
				if queued != int(rb.Pending) {
					return fmt.Errorf("ni %d buffer %s counts %d pending forwards, %d are queued", i, rb.Pkt, rb.Pending, queued)
				}
			}
		}
		return nil
	},
}
