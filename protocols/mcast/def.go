package mcast

import (
	_ "embed"
	"fmt"

	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols/topology"
	"lfccheck/protocols/ucast"
)

// OverlapSmallFile is topologies/overlap-small.topo: three overlapping
// 4-member groups on 6 nodes with binary trees, a small analogue of App.
// A.2 (examples/overlap-small.topo links to it).
//
//go:embed topologies/overlap-small.topo
var OverlapSmallFile []byte

// OverlapA2File is topologies/overlap-a2.topo: App. A.2's three
// overlapping groups on 9 nodes (examples/overlap-a2.topo links to it).
//
//go:embed topologies/overlap-a2.topo
var OverlapA2File []byte

// OverlapCasts are the multicasts that close the overlap example's
// wait-for cycle: 0 in g1, 2 in g2, 4 in g3.
var OverlapCasts = []topology.Cast{{Group: "g1", Root: 0, Count: 1}, {Group: "g2", Root: 2, Count: 1}, {Group: "g3", Root: 4, Count: 1}}

// Def is MCAST's protocol definition.
var Def = &model.Def{
	Name:      "mcast",
	Doc:       "NI-level spanning-tree multicast on UCAST's credits (thesis §4.2)",
	Params:    ParamSpecs(),
	NewParams: func() model.Params { return Defaults() },
	Variants: append([]model.Variant{
		{Name: Correct, Doc: "the protocol of Fig. 4.5-4.7"},
		{Name: CreditToSrc, Doc: "a released buffer's credit goes to the packet's originating root instead of the NI's tree parent",
			Catches: "credit-conservation", Example: chainCast(3, 1, 1)},
		{Name: EarlyRelease, Doc: "the receive buffer is released after the host copy even while forwards are still queued",
			Catches: "buffer-held", Example: chainCast(3, 1, 2)},
		ucast.BounceVariant(chainCast(2, 1, 2))},
		// Fetch-and-add beside the traffic (the work's + entries, and the
		// library's FetchAndAdd): a lost reply leaves its process waiting
		// in a state where nothing can happen.
		ucast.FAVariants(faWork(), func(v string) string {
			if v == ucast.FADropReply {
				return ucast.Deadlock.Name
			}
			return ucast.FAValues.Name
		})...),
	Properties: []model.Property{ucast.Deadlock, ucast.CreditConservation, ucast.PoolBound,
		properties.FIFO, ucast.ExactlyOnce, BufferHeld, ucast.FAValues, ucast.EventualDelivery},
	Acyclic: true,
	Stats:   append([]model.Stat{Forwarded}, ucast.HostLibraryStats...),
	New:     func(cfg model.Config) (model.Machine, error) { return New(cfg) },
	Claims:  append(claims(), model.UnreliableClaim("binary P=3 C=1 K=1", Config("binary", 3, 1, 1), "credit-conservation")),
	Static:  staticClaims(),
	Sweep:   []model.Setting{{Key: "tree", Value: "binary,binomial"}, {Key: "credits", Value: "1,2"}, {Key: "packets", Value: "1,2"}},
}

// Config is an MCAST configuration: nodes NIs, credits C, every member
// multicasting packets K on its tree of the family.
func Config(tree string, nodes, credits, packets int) model.Config {
	p := Defaults()
	p.Tree, p.Credits, p.Packets = tree, credits, packets
	return model.Config{Protocol: "mcast", Nodes: nodes, Params: p}
}

// faWork is 3 nodes where node 1 sends to 2 and asks for a fetch-and-add
// value and node 2 asks for two around a send to 1 (server 0).
func faWork() model.Config {
	c := Config("binary", 3, 1, 1)
	p := c.Params.(*Params)
	p.Work = []Work{{Node: 1, Items: []WorkEntry{{Dest: 2, Count: 1}, {FetchAdd: true, Count: 1}}},
		{Node: 2, Items: []WorkEntry{{FetchAdd: true, Count: 1}, {Dest: 1, Count: 1}, {FetchAdd: true, Count: 1}}}}
	return c
}

// ReplyTree is request/reply through a forwarding tree (reply=on): binary
// trees on 4 NIs, one credit, one host buffer and one send packet; node 0
// multicasts two requests, which every member answers from its upcall,
// and node 3 sends node 0 a unicast request, which node 0 answers while
// its own second multicast waits for a send packet (so node 0 drains).
func ReplyTree() model.Config {
	c := Casts("binary", 4, 1, topology.Cast{Root: 0, Count: 2})
	p := c.Params.(*Params)
	p.Reply, p.SendBuffers = true, 1
	p.Flows = []ucast.Flow{{Src: 3, Dst: 0, Count: 1}}
	return c
}

// chainCast is a chain of nodes where only node 0 multicasts count packets.
func chainCast(nodes, credits, count int) model.Config {
	c := Config("chain", nodes, credits, 1)
	c.Params.(*Params).Casts = []topology.Cast{{Root: 0, Count: count}}
	return c
}

// Forwarded counts the multicast packets that NIs other than the packet's
// root send on: a configuration where it stays 0 never exercises
// forwarding (at P=3 every binary and binomial tree is a star).
var Forwarded = model.Stat{Name: "forwarded-packets",
	Doc: "multicast packets sent on by an NI that is not their root, in the transitions explored (0: nothing is forwarded)",
	Step: func(w *model.World, a model.Action, out *model.Outbox) int64 {
		k := int64(0)
		for _, t := range out.Sends {
			if t.Pkt.Tag == TagMulticast && t.Pkt.Origin != a.Node {
				k++
			}
		}
		return k
	}}

// Casts is Config with explicit multicasts (root:count each) instead of
// every member multicasting.
func Casts(tree string, nodes, credits int, casts ...topology.Cast) model.Config {
	c := Config(tree, nodes, credits, 1)
	c.Params.(*Params).Casts = casts
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
	p.Casts = append([]topology.Cast(nil), OverlapCasts[:groups]...)
	return model.Config{Protocol: "mcast", Nodes: 6, Params: p}
}

// OverlapA2Config is App. A.2's three groups on 9 nodes
// (overlap-a2.topo) with the multicasts casts.
func OverlapA2Config(casts ...topology.Cast) model.Config {
	p := Defaults()
	if err := p.SetTopologyFile("overlap-a2.topo", OverlapA2File); err != nil {
		panic("mcast: embedded topology: " + err.Error())
	}
	p.Casts = append([]topology.Cast(nil), casts...)
	return model.Config{Protocol: "mcast", Nodes: 9, Params: p}
}

// staticClaims are the buffer dependency graph's verdicts on the tree
// families at P=64 and P=1024, on chains, and on App. A.2's groups.
func staticClaims() []model.StaticClaim {
	deps := func(g topology.DepGraph) (string, int64, error) {
		if g.Acyclic {
			return "acyclic", int64(g.Partitions), nil
		}
		return "cycle", int64(g.Partitions), nil
	}
	var cs []model.StaticClaim
	for _, c := range []struct {
		fam    string
		p      int
		expect string
	}{{"binary", 64, "acyclic"}, {"binomial", 64, "acyclic"}, {"binary", 1024, "acyclic"}, {"binomial", 1024, "acyclic"}, {"chain", 64, "cycle"}} {
		c := c
		doc := c.fam + " trees are deadlock-free for every C and K"
		if c.expect == "cycle" {
			doc = "chains can deadlock: their buffer dependency graph has a cycle"
		}
		cs = append(cs, model.StaticClaim{Name: fmt.Sprintf("dependency graph %s P=%d", c.fam, c.p), Expect: c.expect, Ref: "App. A.1", Doc: doc,
			Check: func() (string, int64, error) {
				r, err := topology.AnalyzeFamily(c.fam, c.p)
				if err != nil {
					return "", 0, err
				}
				return deps(r.Dependencies)
			}})
	}
	return append(cs, model.StaticClaim{Name: "dependency graph App. A.2 groups", Expect: "cycle", Ref: "App. A.2",
		Doc: "overlapping groups whose trees each meet the distance condition can still wait on each other",
		Check: func() (string, int64, error) {
			spec, n, err := topology.ParseFile("overlap-a2.topo", OverlapA2File)
			if err != nil {
				return "", 0, err
			}
			t, err := topology.Build(spec, n)
			if err != nil {
				return "", 0, err
			}
			return deps(topology.Dependencies(t, n))
		}})
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
	// At P=4 binary and binomial trees forward (P=3 trees are stars); one
	// root multicasts two packets, so with C=1 its window fills, and a
	// second root's tree shares the NIs.
	for _, tree := range []string{"binary", "binomial"} {
		for _, c := range []int{1, 2} {
			cs = append(cs, model.Claim{Name: fmt.Sprintf("%s P=4 C=%d, casts 0:2 2:1 (forwarding)", tree, c),
				Config: Casts(tree, 4, c, topology.Cast{Root: 0, Count: 2}, topology.Cast{Root: 2, Count: 1}), Expect: "pass",
				Ref: "App. A.1", Doc: tree + " trees that forward are deadlock-free"})
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
			if err := bufferHeld(w, i); err != nil {
				return err
			}
		}
		return nil
	},
	Local:     bufferHeld,
	NodeLocal: true, // bufferHeld reads node i alone
}

func bufferHeld(w *model.World, i int) error {
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
	return nil
}
