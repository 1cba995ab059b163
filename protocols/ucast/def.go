package ucast

import (
	"fmt"

	"lfccheck/model"
	"lfccheck/properties"
)

// Def is UCAST's protocol definition.
var Def = &model.Def{
	Name:      "ucast",
	Doc:       "credit-based reliable FIFO unicast between NIs (thesis §4.1)",
	Params:    ParamSpecs(),
	NewParams: func() model.Params { return Defaults() },
	Variants: []model.Variant{
		{Name: Correct, Doc: "the protocol of Fig. 4.1-4.3"},
		{Name: NoCreditCheck, Doc: "credit_send transmits even with no credit left", Catches: "pool-bound",
			Example: Config(2, 1, 2)},
		{Name: BlockedLIFO, Doc: "accept_new_credits serves the blocked-sends queue newest first", Catches: "fifo",
			Example: Config(2, 1, 3)},
		{Name: NoCreditReturn, Doc: "event_packet_released forgets to return the credit", Catches: "credit-conservation",
			Example: Config(2, 1, 1)},
		BounceVariant(oneWay()),
		NoDrainVariant(noDrainExample()),
	},
	Properties: Properties(),
	Stats:      HostLibraryStats,
	Acyclic:    true,
	New:        func(cfg model.Config) (model.Machine, error) { return New(cfg) },
	Claims:     append(claims(), model.UnreliableClaim("P=2 C=1 K=1", Config(2, 1, 1), "credit-conservation")),
}

// Config is a UCAST configuration of nodes NIs, credits C and packets K.
func Config(nodes, credits, packets int) model.Config {
	p := Defaults()
	p.Credits, p.Packets = credits, packets
	return model.Config{Protocol: "ucast", Nodes: nodes, Params: p}
}

// ReplyConfig is UCAST with every node sending packets requests to every
// other node and every upcall replying (reply=on), with C credits, one
// host buffer and one send packet: handlers that wait for send packets
// hold the only host buffer.
func ReplyConfig(nodes, credits, packets int) model.Config {
	c := Config(nodes, credits, packets)
	p := c.Params.(*Params)
	p.Reply, p.SendBuffers = true, 1
	return c
}

// noDrainExample is the no-drain variant's example: ReplyConfig(2, 1, 3)
// without nested upcalls. (With them the deadlock is as short, but the
// state graph is not layered at the deadlock's level, and with several
// workers whether the search meets a non-layered transition before it
// stops, and so runs again without sleep sets, depends on the schedule.)
func noDrainExample() model.Config {
	c := ReplyConfig(2, 1, 3)
	c.Params.(*Params).NoNestedUpcalls = true
	return c
}

// Flows is a UCAST configuration of nodes NIs and credits C whose
// workload is flows.
func Flows(nodes, credits int, flows ...Flow) model.Config {
	c := Config(nodes, credits, 1)
	c.Params.(*Params).Flows = flows
	return c
}

func claims() []model.Claim {
	const doc = "UCAST is reliable, FIFO and deadlock-free"
	var cs []model.Claim
	for _, c := range [][3]int{{2, 1, 3}, {2, 2, 4}, {3, 1, 1}, {3, 2, 1}} {
		cs = append(cs, model.Claim{Name: fmt.Sprintf("P=%d C=%d K=%d", c[0], c[1], c[2]),
			Config: Config(c[0], c[1], c[2]), Expect: "pass", Ref: "§4.1", Doc: doc})
	}
	fl := []Flow{{0, 1, 3}, {1, 0, 3}, {2, 1, 2}}
	cs = append(cs, model.Claim{Name: "P=3 C=1 flows=" + Join(fl), Config: Flows(3, 1, fl...), Expect: "pass", Ref: "§4.1", Doc: doc})
	const replyDoc = "handlers that reply from their upcalls do not deadlock: every call that waits for a send packet drains the network"
	for _, c := range []struct {
		nodes, packets int
		nested         bool
	}{{2, 3, true}, {2, 3, false}} {
		cfg := ReplyConfig(c.nodes, 1, c.packets)
		name := fmt.Sprintf("reply P=%d C=1 K=%d send-buffers=1", c.nodes, c.packets)
		if !c.nested {
			cfg.Params.(*Params).NoNestedUpcalls = true
			name += " upcalls-allowed=off"
		}
		cs = append(cs, model.Claim{Name: name, Config: cfg, Expect: "pass", Ref: "§3.1.4, §3.6, §6.2.3", Doc: replyDoc})
	}
	refresh := Config(2, 1, 2)
	refresh.Params.(*Params).Refresh = 2
	cs = append(cs, model.Claim{Name: "refresh>C P=2 C=1 K=2", Config: refresh, Expect: "fail deadlock", Ref: "Fig. 4.3",
		Doc: "credits owed below CREDIT_REFRESH > C are never returned"})
	return cs
}

// New builds UCAST for a resolved configuration.
func New(cfg model.Config) (*Machine, error) {
	p := cfg.Params.(*Params)
	work := p.UnicastWork(cfg.Nodes, make([][]WorkItem, cfg.Nodes), len(p.Flows) == 0)
	if err := CheckWork(work); err != nil {
		return nil, err
	}
	m := NewMachine(cfg, p, work)
	m.Compose(m, Features{AllowSymmetry: true})
	m.Finish(func(_ int, it WorkItem) []model.NodeID { return []model.NodeID{it.Dest} })
	return m, m.ReplyErr
}

// Machine of a world built from a machine of this package (or of a
// protocol built on it).
func mach(w *model.World) *Machine { return NodeAt(w, 0).M }

// Base returns the UCAST part of the node.
func (n *Node) Base() *Node { return n }

// NodeAt returns the UCAST part of node i of w. A UCAST node is found by
// a concrete type assertion (a comparison), cheaper than the assertion to
// an interface the other machines' nodes need.
func NodeAt(w *model.World, i int) *Node {
	if n, ok := w.Nodes[i].(*Node); ok {
		return n
	}
	return baseOf(w.Nodes[i])
}

// baseOf returns the UCAST part of n, a node of a machine built on UCAST's.
func baseOf(n model.Node) *Node { return n.(interface{ Base() *Node }).Base() }

// Nodes appends every node's UCAST part to buf (properties that look at
// every pair fetch them once).
func Nodes(w *model.World, buf []*Node) []*Node {
	for i := range w.Nodes {
		buf = append(buf, NodeAt(w, i))
	}
	return buf
}

// Properties are UCAST's properties, in checking order.
func Properties() []model.Property {
	return []model.Property{Deadlock, CreditConservation, PoolBound, properties.FIFO, ExactlyOnce, EventualDelivery}
}

// EventualDelivery: on every fair run, every launched packet is eventually
// delivered to every destination host. As "always eventually, everything
// launched so far is delivered" it says the same, because launches and
// deliveries are never undone.
var EventualDelivery = properties.AlwaysEventually("eventual-delivery",
	"every launched packet is eventually delivered to every destination host, on every fair run",
	func(w *model.World) bool { return NodeAt(w, 0).M.AllDelivered(w) })

// BounceVariant is the livelock variant credit-bounce with the example
// configuration ex, in which a send must wait for a returned credit.
func BounceVariant(ex model.Config) model.Variant {
	return model.Variant{Name: CreditBounce, Cyclic: true,
		Doc:     "accept_new_credits returns an explicit CREDIT packet's credits to their sender instead of keeping them: they travel back and forth for ever while a send waits (a livelock)",
		Catches: "eventual-delivery", Example: ex}
}

// oneWay is two nodes where only node 0 sends, two packets with one
// credit: the second waits for the credit that comes back.
func oneWay() model.Config {
	return Flows(2, 1, Flow{0, 1, 2})
}

// Deadlock: a state with no enabled action must be a proper end; the
// explanation is App. A.1's wait-for cycle of receive pools that hold every credit (full, or the rest owed below CREDIT_REFRESH).
var Deadlock = properties.Deadlock(func(w *model.World) error {
	if Finished(w) {
		return nil
	}
	return fmt.Errorf("%s", Remaining(w))
}, ExplainCycle)

// ExactlyOnce over the hosts' stream logs and the workload's expectations.
var ExactlyOnce = properties.ExactlyOnce(
	func(w *model.World, h int) []model.StreamLog { return NodeAt(w, h).Log },
	func(w *model.World, h int) []int { return mach(w).Expect[h] })

// Finished reports whether the run has ended properly: every packet
// launched, nothing in flight, queued, pooled or unprocessed. Credits still
// owed (free credits below the refresh threshold) are allowed.
func Finished(w *model.World) bool {
	for i := range w.Nodes {
		n := NodeAt(w, i)
		if n.Next < len(n.M.Work[i]) || n.HostBuffersUsed() > 0 || n.Extra > 0 || len(n.Recv) > 0 || len(n.Send) > 0 || n.FA.Outstanding {
			return false
		}
		for p := range n.PCB {
			if len(n.PCB[p].Blocked) > 0 {
				return false
			}
		}
	}
	return w.LinksEmpty()
}

// Remaining summarizes the work left in a state, for deadlock messages.
func Remaining(w *model.World) string {
	unsent, blocked, pooled, queued := 0, 0, 0, 0
	for i := range w.Nodes {
		n := NodeAt(w, i)
		unsent += len(n.M.Work[i]) - n.Next
		queued += n.HostBuffersUsed()
		pooled += len(n.Recv)
		for p := range n.PCB {
			blocked += len(n.PCB[p].Blocked)
		}
	}
	return properties.Counts(unsent, "packets not launched", blocked, "blocked sends",
		pooled, "NI receive buffers occupied", queued, "host buffers in use", w.InFlight(), "packets in flight")
}

// CreditConservation: per ordered pair S->R, credits held by S, data
// packets in flight S->R, R's buffers occupied by S's packets, credits R
// owes S and credits in flight R->S add up to C, and no count is negative.
// Packets on recovery channels and recovery-channel buffers (RECOV) are
// outside the pair's window and not counted.
var CreditConservation = model.Property{
	Name: "credit-conservation",
	Doc:  "per ordered pair, credits held + data in flight + buffers occupied + credits owed or returning = C; none negative",
	State: func(w *model.World) error {
		P, C := w.Sys.P, mach(w).C
		var nb [64]*Node
		nodes := Nodes(w, nb[:0])
		var pb [64]int
		for r := 0; r < P; r++ {
			pool := nodes[r].poolCounts(pb[:0], P)
			for s := 0; s < P; s++ {
				if s == r {
					continue
				}
				if err := creditPair(w, nodes[s], nodes[r], s, r, pool[s], C); err != nil {
					return err
				}
			}
		}
		return nil
	},
	// The pair's sum, over its two nodes and the packets between them, is
	// conserved (for the stubborn-set reduction, model.Conservation).
	Conserved: &model.Conservation{
		Sums: func(sys *model.System) int { return sys.P * sys.P },
		Node: func(w *model.World, n int, add func(int, int64)) {
			P := w.Sys.P
			me := NodeAt(w, n)
			var pb [64]int
			pool := me.poolCounts(pb[:0], P)
			for o := range P {
				if o != n {
					add(n*P+o, int64(me.PCB[o].SendCredits))         // held by n for o
					add(o*P+n, int64(pool[o]+me.PCB[o].FreeCredits)) // buffers and owed at n
				}
			}
		},
		Packet: func(w *model.World, from, to model.NodeID, p model.Packet, add func(int, int64)) {
			P := w.Sys.P
			if p.Tag.IsData() && p.Hop == 0 {
				add(int(from)*P+int(to), 1) // data in flight from->to
			}
			if p.Credits != 0 {
				add(int(to)*P+int(from), int64(p.Credits)) // credits returning to->from
			}
		},
		Bounds: func(w *model.World, n int) error {
			me := NodeAt(w, n)
			for o := range w.Nodes {
				if o == n {
					continue
				}
				if held := me.PCB[o].SendCredits; held < 0 {
					return fmt.Errorf("ni %d holds %d credits for %d", n, held, o)
				}
				if owed := me.PCB[o].FreeCredits; owed < 0 {
					return fmt.Errorf("ni %d owes %d credits to %d", n, owed, o)
				}
			}
			return nil
		},
	},
	// A pair's sum reads its two nodes and the links between them.
	Local: func(w *model.World, n int) error {
		C := mach(w).C
		me := NodeAt(w, n)
		var pb [64]int
		pool := me.poolCounts(pb[:0], w.Sys.P)
		for o := range w.Nodes {
			if o == n {
				continue
			}
			other := NodeAt(w, o)
			if err := creditPair(w, me, other, n, o, other.poolFrom(n), C); err != nil {
				return err
			}
			if err := creditPair(w, other, me, o, n, pool[o], C); err != nil {
				return err
			}
		}
		return nil
	},
}

// creditPair checks credit conservation for the ordered pair s->r (nodes
// ns and nr), where bufs of r's receive buffers hold s's packets.
func creditPair(w *model.World, ns, nr *Node, s, r, bufs, C int) error {
	held := ns.PCB[r].SendCredits
	owed := nr.PCB[s].FreeCredits
	if held < 0 {
		return fmt.Errorf("ni %d holds %d credits for %d", s, held, r)
	}
	if owed < 0 {
		return fmt.Errorf("ni %d owes %d credits to %d", r, owed, s)
	}
	data := 0
	for _, p := range w.Link(model.NodeID(s), model.NodeID(r)) {
		if p.Tag.IsData() && p.Hop == 0 {
			data++
		}
	}
	back := 0
	for _, p := range w.Link(model.NodeID(r), model.NodeID(s)) {
		back += int(p.Credits)
	}
	if sum := held + data + bufs + owed + back; sum != C {
		return fmt.Errorf("pair %d->%d: held %d + in flight %d + buffers %d + owed %d + returning %d = %d, want C = %d",
			s, r, held, data, bufs, owed, back, sum, C)
	}
	return nil
}

// PoolBound: no NI ever holds more than C packets from one sender.
var PoolBound = model.Property{
	Name: "pool-bound",
	Doc:  "no NI receive pool ever holds more than C packets of one sender",
	State: func(w *model.World) error {
		for r := range w.Nodes {
			if err := poolBound(w, r); err != nil {
				return err
			}
		}
		return nil
	},
	Local:     poolBound,
	NodeLocal: true, // poolBound reads node r alone
}

func poolBound(w *model.World, r int) error {
	C := mach(w).C
	var pb [64]int
	pool := NodeAt(w, r).poolCounts(pb[:0], w.Sys.P)
	for s, n := range pool {
		if n > C {
			return fmt.Errorf("ni %d holds %d packets from %d, more than C = %d", r, n, s, C)
		}
	}
	return nil
}
