// Package mcast implements MCAST, LFC's NI-level spanning-tree multicast on
// UCAST's credits (thesis §4.2, Fig. 4.5-4.7), as pure event handlers.
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
// rule covers them. Unicast and multicast traffic mix in one run.
//
// # Modeling decisions
//
//   - Atomicity as for UCAST (see package model): arrival, with the forward
//     attempts it triggers, is one step; so is the copy to the host with the
//     release it may trigger. A forward that finds no credit waits in the
//     blocked-sends queue and is transmitted by a later arrival of credits;
//     if that transmission completes the buffer's forwards and the host copy
//     is done, the release happens in that step too.
//   - The send packet of a multicast is shared by its descriptors and
//     returns to the send pool after the last one is transmitted.
//
// # Invariants (checked by the properties package)
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
package mcast

import (
	"fmt"

	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols/ucast"
)

// Variant names.
const (
	Correct      = "correct"
	CreditToSrc  = "credit-to-src"
	EarlyRelease = "early-release"
)

// Variants lists MCAST's variants, the correct one first.
func Variants() []model.VariantInfo {
	return []model.VariantInfo{
		{Name: Correct, Doc: "the protocol of Fig. 4.5-4.7"},
		{Name: CreditToSrc, Doc: "a released buffer's credit goes to the packet's originating root (hdr.src left unchanged by forwarding) instead of the tree parent",
			Catches: "credit-conservation", Example: model.Config{Nodes: 3, Credits: 1, Packets: 1, Tree: "chain", Casts: []model.Cast{{Root: 0, Count: 1}}}},
		{Name: EarlyRelease, Doc: "the receive buffer is released after the host copy even while forwards are still queued",
			Catches: "buffer-held", Example: model.Config{Nodes: 3, Credits: 1, Packets: 1, Tree: "chain", Casts: []model.Cast{{Root: 0, Count: 2}}}},
	}
}

// Properties are MCAST's properties, in checking order.
func Properties() []properties.Property {
	return []properties.Property{
		properties.Deadlock, properties.CreditConservation, properties.PoolBound,
		properties.FIFO, properties.ExactlyOnce, properties.BufferHeld,
	}
}

// MCAST is the protocol: UCAST's machinery plus the forwarding tables.
type MCAST struct {
	U       *ucast.UCAST
	Topo    *model.Topology
	Variant string
}

// New builds MCAST for a configuration and its topology.
func New(cfg model.Config, topo *model.Topology) (*MCAST, error) {
	m := &MCAST{Topo: topo, Variant: cfg.Variant}
	if m.Variant == "" {
		m.Variant = Correct
	}
	known := false
	for _, v := range Variants() {
		known = known || v.Name == m.Variant
	}
	if !known {
		return nil, fmt.Errorf("unknown mcast variant %q (see 'lfccheck list')", cfg.Variant)
	}
	ucfg := cfg
	ucfg.Variant = ucast.Correct
	u, err := ucast.New(ucfg)
	if err != nil {
		return nil, err
	}
	u.ReturnTo = m.returnTo
	m.U = u
	return m, nil
}

// returnTo is event_packet_released's target (Fig. 4.7): the NI's parent in
// the packet's tree; for unicast packets, the unicast tree's parent, which
// is the sender.
func (m *MCAST) returnTo(ni *model.NI, rb *model.RecvBuf) model.NodeID {
	if rb.Pkt.Tag != model.TagMulticast {
		return rb.From
	}
	if m.Variant == CreditToSrc {
		return rb.Pkt.Origin
	}
	return model.NodeID(m.Topo.Trees[rb.Pkt.Tree].Parent[ni.ID])
}

// InitNI gives the NI its UCAST credits.
func (m *MCAST) InitNI(ni *model.NI) { m.U.InitNI(ni) }

// Launch is event_unicast or event_multicast (Fig. 4.6).
func (m *MCAST) Launch(ni *model.NI, it model.WorkItem, out *model.Outbox) {
	if it.Tag != model.TagMulticast {
		m.U.Launch(ni, it, out)
		return
	}
	sb := &ni.Send[len(ni.Send)-1]
	sb.Pkt.Tag = model.TagMulticast
	sb.Pkt.Tree = it.Tree
	children := m.Topo.Trees[it.Tree].Children[ni.ID]
	if len(children) == 0 {
		ni.Send = ni.Send[:len(ni.Send)-1]
		out.SendFreed++
		return
	}
	sb.Refs = uint8(len(children))
	pkt := sb.Pkt
	m.forward(ni, pkt, children, false, out)
}

// forward is forward_packet (Fig. 4.6): one descriptor per child through
// credit_send.
func (m *MCAST) forward(ni *model.NI, pkt model.Packet, children []model.NodeID, fwd bool, out *model.Outbox) {
	for _, c := range children {
		m.U.CreditSend(ni, model.Desc{Dest: c, Fwd: fwd, Pkt: pkt}, out)
	}
}

// Receive is event_packet_received (Fig. 4.7): accept credits, then for a
// multicast packet forward it to this NI's children (delivery to the host
// is the separate copy step).
func (m *MCAST) Receive(ni *model.NI, pkt model.Packet, buf int, out *model.Outbox) {
	m.U.AcceptNewCredits(ni, pkt, out)
	if pkt.Tag != model.TagMulticast {
		return
	}
	// Accepting credits may have released older buffers; the new one is
	// still the last.
	buf = len(ni.Recv) - 1
	children := m.Topo.Trees[pkt.Tree].Children[ni.ID]
	ni.Recv[buf].Pending = uint8(len(children))
	m.forward(ni, pkt, children, true, out)
}

// Copied releases the buffer once copied and fully forwarded.
func (m *MCAST) Copied(ni *model.NI, buf int, out *model.Outbox) {
	if ni.Recv[buf].Pending == 0 || m.Variant == EarlyRelease {
		m.U.Release(ni, buf, out)
	}
}
