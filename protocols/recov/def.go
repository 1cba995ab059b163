package recov

import (
	"fmt"

	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols/gsb"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/topology"
	"lfccheck/protocols/ucast"
)

// Def is RECOV's protocol definition.
var Def = &model.Def{
	Name:      "recov",
	Doc:       "MCAST with deadlock detection and recovery channels, for any multicast tree (thesis §4.3)",
	Params:    mcast.ParamSpecs(),
	NewParams: func() model.Params { return mcast.Defaults() },
	Variants: []model.Variant{
		{Name: Correct, Doc: "Fig. 4.11-4.15 with the corrections in the package doc"},
		{Name: ThesisLiteral, Doc: "Fig. 4.13's code as printed: next_in_tree's descriptor is sent as returned, unmarked when its packet arrived normally (the prose and the code's comment send it on the channel): a normal packet that consumed no credit",
			Catches: "pool-bound", Example: Config("chain", 3, 1, 2)},
		{Name: NoNextInTree, Doc: "a packet that arrived on a recovery channel is forwarded on it at once, overtaking queued packets of its tree",
			Catches: "fifo", Example: Config("chain", 3, 1, 2)},
		{Name: NoSave, Doc: "forward_packet does not save the deadlocked and channel fields: credit_send reads the header, which send_packet overwrote for the previous child",
			Catches: "channel-forward", Example: ForkConfig()},
		{Name: ChannelCredit, Doc: "event_packet_released returns a credit even when it releases a recovery channel",
			Catches: "credit-conservation", Example: Config("chain", 3, 1, 1)},
		{Name: TwoRecoveries, Doc: "an NI starts a recovery while its previous one is still active",
			Catches: "channel-bound", Example: Config("chain", 3, 1, 2)},
		{Name: EarlyClear, Doc: "nr_acks is not increased when a packet is forwarded on the channel: CHANNEL_CLEAR goes up before the children acknowledged",
			Catches: "ack-count", Example: Config("chain", 3, 1, 1)},
		{Name: OtherTree, Doc: "next_in_tree returns the head of the blocked-sends queue, whatever its tree: the recovery continues on another tree",
			Catches: "recovery-tree", Example: Config("chain", 3, 1, 2)},
		{Name: StaleHeader, Doc: "Figs. 4.2 and 4.6 never set a new packet's deadlocked field: forward_packet at a root reads it from a reused send packet, which may still name the NI's own channel from an earlier recovery",
			Catches: "channel-bound", Example: StaleHeaderConfig()},
		{Name: SharedEscape, Doc: "one escape buffer per NI, shared by every recovery channel, instead of P-1 (§4.3.2): recoveries of two owners may reach one NI at once",
			Catches: "channel-bound", Example: SharedEscapeConfig()},
	},
	Properties: []model.Property{ucast.Deadlock, ucast.CreditConservation, ucast.PoolBound, ChannelBound, ChannelOwner,
		AckCount, IdleEmpty, RecoveryTree, ChannelForward, properties.FIFO, ucast.ExactlyOnce, mcast.BufferHeld,
		ucast.FAValues, ucast.EventualDelivery, RecoveryCompletes, Recovers},
	Acyclic: true,
	New:     func(cfg model.Config) (model.Machine, error) { return New(cfg) },
	Claims:  append(claims(), model.UnreliableClaim("chain P=3 C=1 K=1", Config("chain", 3, 1, 1), "credit-conservation")),
	Stats:   stats(),
}

// stats are Table 5.2's quantities for a search: recoveries started (RC)
// and packets sent on recovery channels (D), over the transitions explored,
// and the largest recovery tree seen.
func stats() []model.Stat {
	sends := func(owner bool) func(*model.World, model.Action, *model.Outbox) int64 {
		return func(_ *model.World, _ model.Action, out *model.Outbox) int64 {
			k := int64(0)
			for _, t := range out.Sends {
				if p := t.Pkt; p.Tag.IsData() && p.Hop != 0 && (!owner || p.Hop == uint8(p.Src)+1) {
					k++
				}
			}
			return k
		}
	}
	return []model.Stat{
		{Name: "recoveries", Doc: "transitions explored that start a recovery (RC)", Step: sends(true)},
		{Name: "channel-packets", Doc: "data packets sent on recovery channels by the transitions explored (D)", Step: sends(false)},
		{Name: "largest-recovery-tree", Doc: "most NIs in one recovery in any state", State: func(w *model.World) int64 {
			best := 0
			for c := 0; c < w.Sys.P; c++ {
				k := 0
				for i := range w.Nodes {
					if rnode(w, i).NrAcks[c] != 0 {
						k++
					}
				}
				best = max(best, k)
			}
			return int64(best)
		}},
	}
}

// Config is a RECOV configuration: nodes NIs, credits C, every member
// multicasting packets K on its tree of the family.
func Config(tree string, nodes, credits, packets int) model.Config {
	c := mcast.Config(tree, nodes, credits, packets)
	c.Protocol = "recov"
	return c
}

// claims are the suite's RECOV claims, small enough to run in seconds:
// chains of three (the recovery tree spans the chain; two packets per
// tree exercise next_in_tree; unicast beside the casts), a binary fork
// whose recovery tree branches, and the broadcast group beside an
// overlapping multicast group, which deadlocks under MCAST. App. A.2's
// kind of overlapping groups (examples/overlap-small.topo, 127,405 states)
// is in docs/results.md: it takes too long for the suite under the race
// detector.
// The P=4 tree families are in docs/results.md's table of verified
// configurations (minutes each).
func claims() []model.Claim {
	const doc = "RECOV is deadlock-free, FIFO and completes every recovery"
	return []model.Claim{
		{Name: "chain P=3 C=1 K=1", Config: Config("chain", 3, 1, 1), Expect: "pass", Ref: "§4.3", Doc: doc + " on chains"},
		{Name: "chain P=3 C=1, casts 0:2 1:2", Config: CastChain(), Expect: "pass", Ref: "§4.3", Doc: doc + " on chains, with next_in_tree"},
		{Name: "broadcast beside group g P=4", Config: BcastOverlapConfig(), Expect: "pass", Ref: "§4.2.6, §4.3",
			Doc: "the broadcast group beside an overlapping multicast group, which deadlocks under MCAST, recovers"},
		{Name: "fork P=5 binary, cast 0:2", Config: ForkConfig(), Expect: "pass", Ref: "§4.3, Fig. 4.13",
			Doc: doc + " when a recovery tree branches (it spans 4 NIs)"},
		{Name: "chain P=3, casts 0:2 1:1, flow 2:0:1", Config: MixedChain(), Expect: "pass", Ref: "§4.3",
			Doc: doc + " with unicast traffic beside the casts, also on recovery channels"},
		{Name: "chain P=3, work 0:*x2 1:0,+", Config: FetchAddChain(), Expect: "pass", Ref: "§3.8, §4.3",
			Doc: doc + " with a fetch-and-add request that finds no credit and travels on a recovery channel"},
	}
}

// CastChain is a chain of three where 0 and 1 multicast two packets each:
// a recovery packet finds earlier packets of its tree queued, so
// next_in_tree is exercised (variant no-next-in-tree fails here).
func CastChain() model.Config {
	c := Config("chain", 3, 1, 1)
	c.Params.(*mcast.Params).Casts = []topology.Cast{{Root: 0, Count: 2}, {Root: 1, Count: 2}}
	return c
}

// BcastOverlapConfig is examples/bcast-overlap.topo with node 0
// broadcasting one packet while 1 and 3 multicast one each in group g.
func BcastOverlapConfig() model.Config {
	p := mcast.Defaults()
	if err := p.SetTopologyFile("bcast-overlap.topo", gsb.BcastOverlapFile); err != nil {
		panic("recov: embedded topology: " + err.Error())
	}
	p.Casts = []topology.Cast{{Group: "all", Root: 0, Count: 1}, {Group: "g", Root: 1, Count: 1}, {Group: "g", Root: 3, Count: 1}}
	return model.Config{Protocol: "recov", Nodes: 4, Params: p}
}

// MixedChain is a chain of three where 0 multicasts two packets and 1
// one, while 2 sends a unicast packet to 0: unicast traffic beside the
// recoveries, and on their channels (a unicast packet that finds no
// credit is sent on its NI's recovery channel like a multicast one).
func MixedChain() model.Config {
	c := Config("chain", 3, 1, 1)
	p := c.Params.(*mcast.Params)
	p.Casts = []topology.Cast{{Root: 0, Count: 2}, {Root: 1, Count: 1}}
	p.Flows = []ucast.Flow{{Src: 2, Dst: 0, Count: 1}}
	return c
}

// StaleHeaderConfig is the smallest configuration where a reused send
// packet's header matters (variant stale-header): a chain of two where
// node 0 multicasts three packets through one send packet (so which free
// packet a launch takes is no choice): the second starts a recovery and
// leaves its header naming channel 0, and the third reads it.
func StaleHeaderConfig() model.Config {
	c := Config("chain", 2, 1, 1)
	p := c.Params.(*mcast.Params)
	p.Casts = []topology.Cast{{Root: 0, Count: 3}}
	p.SendBuffers = 1
	return c
}

// SharedEscapeConfig is the smallest configuration where one shared
// escape buffer per NI is too few (variant shared-escape): a chain of
// three where 0 multicasts two packets and 1 one, so that NI 1 forwards on
// its own channel and on 0's to NI 2. (Two NIs have one other NI each, so
// P-1 is 1 there; with fewer packets no two recoveries meet.)
func SharedEscapeConfig() model.Config {
	c := Config("chain", 3, 1, 1)
	c.Params.(*mcast.Params).Casts = []topology.Cast{{Root: 0, Count: 2}, {Root: 1, Count: 1}}
	return c
}

// FetchAddChain is a chain of three where 0 multicasts two packets and 1
// sends a unicast packet to 0 and then asks 0, the server, for a
// fetch-and-add value: the unicast packet takes 1's credit for 0, so the
// request finds none and travels on a recovery channel (§3.8, §4.3).
func FetchAddChain() model.Config {
	c := Config("chain", 3, 1, 1)
	c.Params.(*mcast.Params).Work = []mcast.Work{{Node: 0, Items: []mcast.WorkEntry{{Multicast: true, Count: 2}}},
		{Node: 1, Items: []mcast.WorkEntry{{Dest: 0, Count: 1}, {FetchAdd: true, Count: 1}}}}
	return c
}

// ForkConfig is a binary tree of five NIs where only node 0 multicasts,
// two packets: NI 1 forwards to two children (3 and 4), so a packet that
// reaches 1 on 0's recovery channel may find a credit for one child and
// none for the other (variant no-save fails channel-forward here), and a
// recovery tree branches: it spans 4 NIs.
func ForkConfig() model.Config {
	c := Config("binary", 5, 1, 1)
	c.Params.(*mcast.Params).Casts = []topology.Cast{{Root: 0, Count: 2}}
	return c
}

func rnode(w *model.World, i int) *Node { return w.Nodes[i].(*Node) }

func mach(w *model.World) *Machine { return w.Sys.M.(*Machine) }

// chanPackets calls f for every data packet on a recovery channel: in
// flight on a link (from, to) and held in a channel buffer at to.
func chanPackets(w *model.World, f func(pkt model.Packet, from, to model.NodeID, held bool) error) error {
	P := w.Sys.P
	for i := 0; i < P; i++ {
		for j := 0; j < P; j++ {
			for _, p := range w.Link(model.NodeID(i), model.NodeID(j)) {
				if p.Hop != 0 && p.Tag.IsData() {
					if err := f(p, model.NodeID(i), model.NodeID(j), false); err != nil {
						return err
					}
				}
			}
		}
		for _, rb := range rnode(w, i).Recv {
			if rb.Chan != 0 {
				pkt := rb.Pkt
				pkt.Hop = rb.Chan
				if err := f(pkt, rb.From, model.NodeID(i), true); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// ChannelBound: at most one packet per recovery channel per NI, held in
// the channel's buffer or on its way there, and no more in all than the
// NI has escape buffers (Machine.Escape: P-1, one per other NI's channel,
// so this follows from the first; 1 in variant shared-escape).
var ChannelBound = model.Property{
	Name: "channel-bound",
	Doc:  "at most one packet per recovery channel per NI, held or on its way, and no more in all than the NI's escape buffers",
	State: func(w *model.World) error {
		P, escape := w.Sys.P, mach(w).Escape
		count, total := make([]int, P*P), make([]int, P)
		first := make([]model.Packet, P)
		return chanPackets(w, func(pkt model.Packet, _, to model.NodeID, held bool) error {
			k := int(to)*P + int(pkt.Hop-1)
			count[k]++
			if count[k] > 1 {
				return fmt.Errorf("ni %d has two packets on the recovery channel of %d (the second %s)", to, pkt.Hop-1, pkt)
			}
			if total[to]++; total[to] == 1 {
				first[to] = pkt
			} else if total[to] > escape {
				return fmt.Errorf("ni %d has %d packets on recovery channels (%s and %s), more than its escape buffers (%d)", to, total[to], first[to], pkt, escape)
			}
			return nil
		})
	},
}

// ChannelOwner: a recovery channel carries packets only of its owner's
// recovery: the owner has a recovery active, and an NI that sent a packet
// on the channel still waits for its acknowledgement.
var ChannelOwner = model.Property{
	Name: "channel-owner",
	Doc:  "a recovery channel carries packets only while its owner's recovery is active",
	State: func(w *model.World) error {
		return chanPackets(w, func(pkt model.Packet, from, to model.NodeID, held bool) error {
			c := int(pkt.Hop - 1)
			if !rnode(w, c).Active {
				return fmt.Errorf("%s is on the recovery channel of %d (at or to ni %d), which has no recovery active", pkt, c, to)
			}
			if !held && rnode(w, int(from)).NrAcks[c] <= 0 {
				return fmt.Errorf("ni %d sent %s on the channel of %d but waits for no acknowledgement on it", from, pkt, c)
			}
			return nil
		})
	},
}

// AckCount: at every NI, nr_acks of channel c is 1 for the NI's own
// packet on c not yet released (not at the owner) plus the children it
// reached on c that have not acknowledged (packet in flight, child still
// in the recovery, or CHANNEL_CLEAR in flight).
var AckCount = model.Property{
	Name: "ack-count",
	Doc:  "nr_acks = own unreleased channel packet + children reached on the channel that have not acknowledged",
	State: func(w *model.World) error {
		// In the correct protocol a child reached on c is in exactly one
		// phase: its packet in flight, in the recovery, or its
		// CHANNEL_CLEAR in flight; so the phases are summed.
		P := w.Sys.P
		want := make([]int, P*P) // [x*P+c]
		for x := 0; x < P; x++ {
			n := rnode(w, x)
			for _, q := range n.Channels {
				for _, c := range q {
					if int(c) != x {
						want[x*P+int(c)]++
					}
				}
			}
			for c, a := range n.NrAcks {
				if a > 0 && c != x {
					want[int(n.Parent[c])*P+c]++
				}
			}
			for y := 0; y < P; y++ {
				for _, p := range w.Link(model.NodeID(x), model.NodeID(y)) {
					switch {
					case p.Hop != 0 && p.Tag.IsData():
						want[x*P+int(p.Hop-1)]++ // x reached y
					case p.Tag == TagClear:
						want[y*P+int(p.Hop-1)]++ // x acknowledges to y
					}
				}
			}
		}
		for x := 0; x < P; x++ {
			for c, a := range rnode(w, x).NrAcks {
				if a != want[x*P+c] {
					return fmt.Errorf("ni %d counts %d acknowledgements for the channel of %d, want %d", x, a, c, want[x*P+c])
				}
			}
		}
		return nil
	},
}

// IdleEmpty: an NI with no recovery active has every blocked-sends queue
// empty (so a recovery may start with the descriptor at hand, FIFO-safe).
var IdleEmpty = model.Property{
	Name: "idle-empty",
	Doc:  "no recovery active implies every blocked-sends queue is empty",
	State: func(w *model.World) error {
		for i := range w.Nodes {
			n := rnode(w, i)
			if n.Active {
				continue
			}
			for p := range n.PCB {
				if len(n.PCB[p].Blocked) > 0 {
					return fmt.Errorf("ni %d has no recovery active but blocked sends to %d", i, p)
				}
			}
		}
		return nil
	},
}

// treeParent is the parent of NI x in tree index t (multicast trees, then
// unicast trees per sender), or -1 at a root.
func (m *Machine) treeParent(t, x int) int {
	if t >= m.trees {
		if x == t-m.trees {
			return -1
		}
		return t - m.trees
	}
	return m.Topo.Trees[t].Parent[x]
}

// RecoveryTree: each channel's packets all travel on one tree, and every
// NI in the recovery has its tree parent as the channel's parent, on a
// path up the tree to the owner: recoveries on different channels share
// nothing, and none crosses to another tree.
var RecoveryTree = model.Property{
	Name: "recovery-tree",
	Doc:  "each recovery stays on one tree, along its edges below the owner; recoveries do not interfere",
	State: func(w *model.World) error {
		m, P := mach(w), w.Sys.P
		tree := make([]int, P)
		for c := range tree {
			tree[c] = -1
		}
		// on records that channel c is used on tree t; what names the use
		// in the message (formatted only then).
		on := func(c, t int, what func() string) error {
			if tree[c] < 0 {
				tree[c] = t
			} else if tree[c] != t {
				return fmt.Errorf("the recovery of %d spans trees %d and %d (%s)", c, tree[c], t, what())
			}
			return nil
		}
		err := chanPackets(w, func(pkt model.Packet, from, to model.NodeID, held bool) error {
			return on(int(pkt.Hop-1), m.treeOf(pkt, from), pkt.String)
		})
		if err != nil {
			return err
		}
		for x := 0; x < P; x++ {
			for t, q := range rnode(w, x).Channels {
				for _, c := range q {
					if err := on(int(c), t, func() string { return fmt.Sprintf("ni %d's active channels", x) }); err != nil {
						return err
					}
				}
			}
		}
		for x := 0; x < P; x++ {
			n := rnode(w, x)
			for c := 0; c < P; c++ {
				if c == x || n.NrAcks[c] == 0 || tree[c] < 0 {
					continue
				}
				if par := m.treeParent(tree[c], x); par != int(n.Parent[c]) {
					return fmt.Errorf("ni %d is in the recovery of %d through %d, not its tree parent %d", x, c, n.Parent[c], par)
				}
				y := x
				for y >= 0 && y != c {
					y = m.treeParent(tree[c], y)
				}
				if y != c {
					return fmt.Errorf("ni %d is in the recovery of %d but not below it in tree %d", x, c, tree[c])
				}
			}
		}
		return nil
	},
}

// ChannelForward: a multicast packet that arrives on recovery channel c
// goes on to every child of its tree in the same step, with a credit or,
// when the child has none, as c's packet (itself or, by next_in_tree, an
// older packet of its tree): Fig. 4.13's deadlocked branch, so a recovery
// packet never waits for a credit or for another recovery. This is what
// the saved fields of Fig. 4.12 are for: credit_send must know for each
// child that the packet came on a channel, although send_packet
// overwrote the header for the previous child. A send off the channel
// counts only if it consumed a credit for that child (model.Transmit.Paid,
// which credit_send's credit branch sets): a packet sent unmarked without
// a credit (variant thesis-literal) is neither.
var ChannelForward = model.Property{
	Name: "channel-forward",
	Doc:  "a multicast packet arriving on a recovery channel goes on to each tree child in the same step, with a credit consumed for it or on that channel",
	Step: func(w *model.World, a model.Action, out *model.Outbox) error {
		pkt := out.Arrived
		if !out.Arrival || pkt.Hop == 0 || pkt.Tag != mcast.TagMulticast {
			return nil
		}
		for _, ch := range mach(w).Topo.Trees[pkt.Tree].Children[a.Node] {
			sent, unpaid, bare := false, false, model.Packet{}
			for _, t := range out.Sends {
				p := t.Pkt
				if t.To != ch || p.Tag != mcast.TagMulticast || p.Tree != pkt.Tree {
					continue
				}
				if p.Hop == pkt.Hop || p.Hop == 0 && t.Paid {
					sent = true
					break
				}
				if p.Hop == 0 {
					unpaid, bare = true, p
				}
			}
			switch {
			case sent:
			case unpaid:
				return fmt.Errorf("ni %d got %s on the recovery channel of %d and sent child %d %s, neither on that channel nor with a credit", a.Node, pkt, pkt.Hop-1, ch, bare)
			default:
				return fmt.Errorf("ni %d got %s on the recovery channel of %d but sent child %d no packet of its tree with a credit or on that channel", a.Node, pkt, pkt.Hop-1, ch)
			}
		}
		return nil
	},
}

// Recovers (sometimes): some packet is forwarded on a recovery channel by
// an NI other than the channel's owner, so a recovery tree grows beyond
// its first hop. A configuration that never gets there does not exercise
// RECOV's forwarding on channels.
var Recovers = model.Property{
	Name: "recovers",
	Doc:  "some recovery grows beyond its first hop: an NI forwards a packet on another NI's channel",
	Sometimes: func(w *model.World) bool {
		found := false
		chanPackets(w, func(pkt model.Packet, from, _ model.NodeID, held bool) error {
			found = found || int(from) != int(pkt.Hop-1)
			return nil
		})
		return found
	},
}

// RecoveryCompletes (liveness): on every fair run, every recovery
// eventually completes: no NI has a recovery active, waits for an
// acknowledgement or holds an active channel.
var RecoveryCompletes = properties.AlwaysEventually("recovery-completes",
	"every recovery eventually completes (no recovery active, no acknowledgement awaited), on every fair run",
	func(w *model.World) bool {
		for i := range w.Nodes {
			n := rnode(w, i)
			if n.Active {
				return false
			}
			for _, a := range n.NrAcks {
				if a != 0 {
					return false
				}
			}
			for _, q := range n.Channels {
				if len(q) > 0 {
					return false
				}
			}
		}
		return true
	})
