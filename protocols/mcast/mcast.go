// Package mcast implements MCAST, LFC's NI-level spanning-tree multicast on
// UCAST's credits (thesis §4.2, Fig. 4.5-4.7, App. A), as pure event
// handlers on UCAST's node state, and registers it as the protocol "mcast".
//
// # The protocol
//
// Multicast groups are fixed at start; every member has its own spanning
// tree over its group, and every NI's forwarding table (treetab, Fig. 4.5)
// lists its parent and children per tree. event_multicast tags the send
// packet MULTICAST with its tree id and calls forward_packet, which creates
// one send descriptor per child and passes each to UCAST's credit_send
// (Fig. 4.6). A received multicast packet is delivered to the host and
// forwarded to the NI's children in the same tree (Fig. 4.7). Its receive
// buffer is released only when it has been copied to the host AND
// transmitted to every child; the release returns one credit to the NI's
// parent in the packet's tree, never to hdr.src (§4.2.5). Unicast packets
// travel on two-node unicast trees, whose parent is the sender, so the same
// rule covers them. Unicast and multicast traffic mix in one run: --flow
// adds unicast packets to the multicast workload.
//
// # Modeling decisions
//
//   - Actions and atomicity as for UCAST (see package ucast): arrival, with
//     the forward attempts it triggers, is one step; so is the copy to the
//     host with the release it may trigger. A forward that finds no credit
//     waits in the blocked-sends queue and is transmitted by a later arrival
//     of credits; if that transmission completes the buffer's forwards and
//     the host copy is done, the release happens in that step too.
//   - The send packet of a multicast is shared by its descriptors and
//     returns to the send pool after the last one is transmitted.
//   - Unicast packets carry no explicit two-node tree id: the release goes
//     to the buffer's sender, which is that tree's parent.
//   - "host H process" is ample for the reasons given for UCAST: the
//     forwarding state is the NI's, never the host queue's.
//
// # Invariants
//
//  1. credit-conservation, 2. pool-bound: as for UCAST, per ordered pair
//     of immediate sender and receiver.
//  3. fifo: every member is delivered each tree's packets in send order.
//  4. exactly-once: every multicast reaches every member of its group
//     except its root exactly once; every unicast its destination.
//  5. buffer-held: a packet queued for forwarding still occupies its
//     receive buffer, and a buffer's pending-forward count equals its
//     queued forwards.
//  6. deadlock: as for UCAST. Chains deadlock (Fig. 4.8); trees that meet
//     App. A.1's distance condition, or its inverse form, cannot.
//  7. eventual-delivery (liveness): as for UCAST, with every member of a
//     multicast's group but its root as a destination, under UCAST's
//     fairness (links, NI copies and host processing weakly fair; launches
//     not). Forwarding happens inside delivery and copy handlers, so it
//     needs no fairness class of its own.
//
// # Workloads, kept packets and fetch-and-add
//
// Besides every member multicasting (--packets), --cast and --flow, a
// workload may be given node by node in launch order (--work, the form in
// which package lfc records a live run). With --keep N every host may keep
// up to N packets after their upcall and free them later ("host H keep",
// "host H free"; kept packets hold host buffers), and the search explores
// every choice; "host H process" is then not ample. A work entry + is a
// fetch-and-add request to the variable of NI --server (ucast.Machine's
// FetchAdd: one outstanding request per process, answered by the server's
// NI with the request's credit piggybacked; the server's own requests are
// local), checked by fa-values; node renamings are then not offered.
//
// # Broken variants
//
//   - credit-to-src: a released buffer's credit goes to hdr.src of the
//     packet as it arrived instead of to the NI's parent in the packet's
//     tree. Because send_packet rewrites hdr.src at every hop (Fig. 4.2),
//     hdr.src is the immediate sender, which is the tree parent whenever
//     packets arrive along their tree; the variant instead reads the
//     packet's originating root (Origin), which is what a forwarding NI that
//     did not rewrite src would see (§4.2.5's hazard), and returns the
//     credit there.
//   - early-release: the receive buffer is released after the host copy
//     even while forwards are still queued.
//   - credit-bounce: UCAST's livelock variant (see the ucast package), on a
//     two-node chain.
//   - fa-no-increment, split-increment, drop-reply: fetch-and-add's own
//     bugs (ucast.FAVariants) beside the traffic: the server's NI
//     increments its variable only for the first request, or reads and
//     increments in two steps (fa-values catches both), or loses the
//     reply carrying value 1 (deadlock: its process waits for ever).
package mcast

import (
	"fmt"

	"lfccheck/model"
	"lfccheck/protocols/topology"
	"lfccheck/protocols/ucast"
)

// TagMulticast is MCAST's data packet (Fig. 4.5).
var TagMulticast = model.NewTag(model.TagInfo{Name: "MULTICAST", Data: true, Brief: func(p model.Packet) string {
	if int(p.Tree) == int(p.Origin) {
		return fmt.Sprintf("m%d#%d", p.Origin, p.Seq)
	}
	return fmt.Sprintf("m%dt%d#%d", p.Origin, p.Tree, p.Seq)
}})

// Variant names.
const (
	Correct      = "correct"
	CreditToSrc  = "credit-to-src"
	EarlyRelease = "early-release"
)

// Machine is MCAST: UCAST's machine extended with forwarding (its
// ucast.Extension methods) and the topology.
type Machine struct {
	*ucast.Machine
	Topo    *topology.Topology
	variant string
}

// New builds MCAST for a resolved configuration: the unicast flows first,
// then the multicasts (the casts in order, or else every member of every
// group multicasting Packets packets on its own tree, round-robin over the
// trees).
func New(cfg model.Config) (*Machine, error) {
	p := cfg.Params.(*Params)
	topo, err := topology.Resolve(p.Tree, p.Topology, cfg.Nodes)
	if err != nil {
		return nil, err
	}
	if len(p.Work) > 0 {
		work, err := explicitWork(p, topo, cfg.Nodes)
		if err != nil {
			return nil, err
		}
		m := newMachine(cfg, p, topo, work)
		return m, m.ReplyErr
	}
	work := p.Params.UnicastWork(cfg.Nodes, make([][]ucast.WorkItem, cfg.Nodes), false)
	tseq := make([]uint16, len(topo.Trees))
	cast := func(tree int) error {
		tseq[tree]++
		if tseq[tree] > model.MaxStreamSeq {
			return fmt.Errorf("more than %d packets multicast on the tree of %d", model.MaxStreamSeq, topo.Trees[tree].Root)
		}
		r := topo.Trees[tree].Root
		work[r] = append(work[r], ucast.WorkItem{Tag: TagMulticast, Tree: uint16(tree), Seq: tseq[tree]})
		return nil
	}
	for i, c := range p.Casts {
		t, err := topo.CastTree(c)
		if err != nil {
			return nil, fmt.Errorf("cast %d (%s): %v", i+1, c, err)
		}
		for k := 0; k < c.Count; k++ {
			if err := cast(t); err != nil {
				return nil, err
			}
		}
	}
	if len(p.Casts) == 0 {
		for k := 0; k < p.Packets; k++ {
			for t := range topo.Trees {
				if err := cast(t); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := ucast.CheckWork(work); err != nil {
		return nil, err
	}
	m := newMachine(cfg, p, topo, work)
	return m, m.ReplyErr
}

func newMachine(cfg model.Config, p *Params, topo *topology.Topology, work [][]ucast.WorkItem) *Machine {
	mm := &Machine{Machine: ucast.NewMachine(cfg, &p.Params, work), Topo: topo}
	f := ucast.Features{Keep: p.Keep, KeepsPackets: p.Keep > 0, Server: model.NodeID(p.Server),
		// The in-process library drives the hosts' processing, and offers
		// fetch-and-add (under MCAST and RECOV).
		ClientProcess: p.Library, FetchAdd: p.Library}
	for _, items := range work {
		for _, it := range items {
			f.FetchAdd = f.FetchAdd || it.Tag == ucast.TagFARequest
		}
	}
	// Fetch-and-add's server is fixed, and node renaming does not cover
	// its state: no symmetry then.
	f.AllowSymmetry = !f.FetchAdd
	mm.Attach(mm, f, cfg.Variant)
	return mm
}

// TreeRenaming completes p with the renaming of the trees: tree t becomes the
// tree of the renamed root in the renamed group, which must have the
// renamed edges in the same forwarding order. It reports false when some
// tree has no such image.
func (m *Machine) TreeRenaming(p *model.Perm) bool {
	T := m.Topo.Trees
	p.Tree = make([]uint16, len(T))
	used := make([]bool, len(T))
	for t := range T {
		img := -1
		for u := range T {
			if !used[u] && T[u].Root == p.Node[T[t].Root] && m.mapsOnto(&T[t], &T[u], p) {
				img = u
				break
			}
		}
		if img < 0 {
			return false
		}
		used[img] = true
		p.Tree[t] = uint16(img)
	}
	return true
}

// mapsOnto reports whether renaming tree a by p gives tree b: the groups'
// members, parents and children in order.
func (m *Machine) mapsOnto(a, b *topology.Tree, p *model.Perm) bool {
	ga, gb := m.Topo.Groups[a.Group].Members, m.Topo.Groups[b.Group].Members
	if len(ga) != len(gb) {
		return false
	}
	in := map[model.NodeID]bool{}
	for _, x := range gb {
		in[x] = true
	}
	for _, x := range ga {
		if !in[p.Node[x]] {
			return false
		}
	}
	for n := range a.Parent {
		pn := p.Node[n]
		switch par := a.Parent[n]; par {
		case topology.IsRoot, topology.NotMember:
			if b.Parent[pn] != par {
				return false
			}
		default:
			if b.Parent[pn] != int(p.Node[par]) {
				return false
			}
		}
		ca, cb := a.Children[n], b.Children[pn]
		if len(ca) != len(cb) {
			return false
		}
		for i := range ca {
			if cb[i] != p.Node[ca[i]] {
				return false
			}
		}
	}
	return true
}

// Attach composes m's UCAST machine with MCAST's forwarding (streams per
// tree, event_multicast, forwarding on arrival, release to the tree
// parent) as ext, the machine of the protocol built on MCAST (m itself, or
// a machine embedding m: ordered broadcast, RECOV), with features f, and
// counts the workload's deliveries.
func (m *Machine) Attach(ext ucast.Extension, f ucast.Features, variant string) {
	u := m.Machine
	m.variant = variant
	f.ExtraStreams = len(m.Topo.Trees)
	u.Compose(ext, f)
	u.Finish(func(src int, it ucast.WorkItem) []model.NodeID {
		if it.Tag == ucast.TagFARequest {
			return nil // a value for the process, not a packet for a host
		}
		if it.Tag != TagMulticast {
			return []model.NodeID{it.Dest}
		}
		var out []model.NodeID
		for _, mem := range m.Topo.Groups[m.Topo.Trees[it.Tree].Group].Members {
			if int(mem) != src {
				out = append(out, mem)
			}
		}
		return out
	})
}

// PacketStream: a multicast packet's stream is its tree's, after the
// unicast streams (one per origin).
func (m *Machine) PacketStream(p model.Packet) int {
	if p.Tag == TagMulticast {
		return m.P + int(p.Tree)
	}
	return int(p.Origin)
}

// CreditTo: a multicast buffer's credit goes to the NI's parent in the
// packet's tree (variant credit-to-src: to the root).
func (m *Machine) CreditTo(n *ucast.Node, rb *ucast.RecvBuf) model.NodeID {
	if rb.Pkt.Tag != TagMulticast {
		return rb.From
	}
	if m.variant == CreditToSrc {
		return rb.Pkt.Origin
	}
	return model.NodeID(m.Topo.Trees[rb.Pkt.Tree].Parent[n.ID])
}

// PacketHasTree: multicast packets name their tree.
func (m *Machine) PacketHasTree(p model.Packet) bool { return p.Tag == TagMulticast }

// Copied releases a copied multicast buffer once it has been forwarded to
// every child (variant early-release: at once).
func (m *Machine) Copied(n *ucast.Node, pkt model.Packet, out *model.Outbox) {
	if i := n.FindRecv(pkt); n.Recv[i].Pending == 0 || m.variant == EarlyRelease {
		m.Release(n, pkt, out)
	}
}

// LaunchItem is event_multicast (Fig. 4.6) for the send packet just
// allocated.
func (m *Machine) LaunchItem(n *ucast.Node, it ucast.WorkItem, out *model.Outbox) {
	children := m.Topo.Trees[it.Tree].Children[n.ID]
	if len(children) == 0 {
		n.Send = n.Send[:len(n.Send)-1]
		return
	}
	sb := &n.Send[len(n.Send)-1]
	sb.Refs = uint8(len(children))
	m.forward(n, sb.Pkt, children, false, out)
}

// forward is forward_packet (Fig. 4.6): one descriptor per child through
// credit_send.
func (m *Machine) forward(n *ucast.Node, pkt model.Packet, children []model.NodeID, fwd bool, out *model.Outbox) {
	for _, c := range children {
		m.CreditSend(n, ucast.Desc{Dest: c, Fwd: fwd, Pkt: pkt}, out)
	}
}

// ReceiveData is the multicast part of event_packet_received (Fig. 4.7): the
// packet takes a buffer of its sender's pool partition and is forwarded to
// this NI's children (delivery to the host is the separate copy step).
func (m *Machine) ReceiveData(n *ucast.Node, from model.NodeID, pkt model.Packet, out *model.Outbox) {
	if pkt.Tag != TagMulticast {
		panic(fmt.Sprintf("mcast: unexpected data packet %s", pkt))
	}
	children := m.Topo.Trees[pkt.Tree].Children[n.ID]
	n.Recv = append(n.Recv, ucast.RecvBuf{Pkt: pkt, From: from, Pending: uint8(len(children))})
	m.forward(n, pkt, children, true, out)
}

// ItemHops implements ucast.Extension: a root launches a multicast packet
// to its children in the packet's tree.
func (m *Machine) ItemHops(at model.NodeID, it ucast.WorkItem) uint64 {
	if it.Tag != TagMulticast {
		return 0
	}
	return m.children(int(it.Tree), at)
}

// ForwardHops implements ucast.Extension: an NI forwards a packet that
// arrived from its parent in a tree to its children there (over the trees
// the workload multicasts on).
func (m *Machine) ForwardHops(at, from model.NodeID) uint64 {
	var hops uint64
	used := make([]bool, len(m.Topo.Trees))
	for _, w := range m.Work {
		for _, it := range w {
			if it.Tag == TagMulticast && !used[it.Tree] {
				used[it.Tree] = true
				if m.Topo.Trees[it.Tree].Parent[at] == int(from) {
					hops |= m.children(int(it.Tree), at)
				}
			}
		}
	}
	return hops
}

// children is the bit set of at's children in tree.
func (m *Machine) children(tree int, at model.NodeID) uint64 {
	var s uint64
	for _, c := range m.Topo.Trees[tree].Children[at] {
		s |= 1 << uint(c)
	}
	return s
}
