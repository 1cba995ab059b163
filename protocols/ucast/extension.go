package ucast

import "lfccheck/model"

// Features are what a protocol built on UCAST switches on (Compose).
type Features struct {
	// KeepsPackets: clients keep packets after the upcall (Host.Held):
	// held packets occupy host buffers, and the node encoding includes
	// them.
	KeepsPackets bool
	// Keep, when positive, lets a host keep up to Keep packets after their
	// upcall (lfc_upcall returning nonzero, Table 3.1) and free them later
	// (lfc_packet_free): the kinds "host H keep" and "host H free" are
	// added, kept packets occupy host buffers (Held, encoded), and "host H
	// process" is no longer ample (keep competes with it for the head of
	// the queue). Set KeepsPackets with it.
	Keep int
	// Channels: the protocol has recovery channels (RECOV): a receive
	// buffer's class (RecvBuf.Chan) is part of the encoding.
	Channels bool
	// SharedHeaders: a variant reads a packet's header after send_packet
	// overwrote it for another destination: send_packet then writes the
	// deadlock channel field into the buffer holding the packet (the
	// thesis's one packet per buffer, Fig. 4.12), which is otherwise dead
	// state and not kept.
	SharedHeaders bool
	// ReusedHeaders: a variant reads the deadlock channel field of a new
	// send packet, which no launch sets (Figs. 4.2 and 4.6): a send packet
	// returns to the pool with the header its last transmission wrote,
	// and a launch takes it again with that header (NI.Free, part of the
	// encoding then).
	ReusedHeaders bool
	// ClientProcess makes "host H process" a client action of the live
	// runtime (model.LiveClient): the program on the host takes each
	// delivered packet itself (lfc_poll, or a library's upcall loop)
	// instead of the runtime discarding it. The model is unchanged.
	ClientProcess bool
	// FetchAdd adds LFC's fetch-and-add (§3.8, fetchadd.go) beside the
	// traffic: work items tagged TagFARequest are requests to the
	// variable of NI Server (the server's own are local), one outstanding
	// per process (the process waits for its value before it launches
	// anything else). Node.FA holds the state, which the machine encodes.
	FetchAdd bool
	Server   model.NodeID
	// AllowSymmetry lets Symmetries offer the rotations that map the
	// system onto itself; set only by protocols whose node state
	// RenameFrom renames completely (UCAST, MCAST).
	AllowSymmetry bool
	// ExtraStreams is the number of FIFO streams the protocol's packets
	// use beside UCAST's one per origin (MCAST: one per tree), numbered
	// from P on by its PacketStream.
	ExtraStreams int
}

// Extension is what a protocol built on UCAST gives it: the handlers and
// answers UCAST asks the protocol for. *Machine implements every method
// with UCAST's own behaviour.
type Extension interface {
	// PacketStream is a data packet's FIFO stream at its destination
	// hosts, below Machine.Streams (UCAST: one per origin).
	PacketStream(p model.Packet) int
	// CreditTo names the NI that a released buffer's credit goes to
	// (UCAST: the buffer's sender).
	CreditTo(n *Node, rb *RecvBuf) model.NodeID
	// LaunchItem sends a work item of the protocol's own tag, after its
	// send packet was allocated as the last entry of n.Send (UCAST has
	// none).
	LaunchItem(n *Node, it WorkItem, out *model.Outbox)
	// ReceiveData handles an arrived packet of a data tag other than
	// UNICAST and REPLY, after its credits were accepted; it decides
	// whether the packet takes a receive buffer.
	ReceiveData(n *Node, from model.NodeID, pkt model.Packet, out *model.Outbox)
	// ReceiveControl handles an arrived control packet other than CREDIT
	// after its credits were accepted.
	ReceiveControl(n *Node, from model.NodeID, pkt model.Packet, out *model.Outbox)
	// Copied runs after the buffer holding pkt was copied to the host
	// (UCAST: release the buffer).
	Copied(n *Node, pkt model.Packet, out *model.Outbox)
	// NoCreditSend is credit_send's branch for a descriptor that finds no
	// credit (UCAST: queue it on the blocked-sends queue; RECOV: Fig.
	// 4.13's recovery).
	NoCreditSend(n *Node, d Desc, out *model.Outbox)
	// ReturnCredit is event_packet_released's credit return for rb, the
	// buffer just freed, whose credit goes to to (UCAST: owe it, and
	// send a CREDIT packet at CREDIT_REFRESH; RECOV: Fig. 4.15).
	ReturnCredit(n *Node, rb RecvBuf, to model.NodeID, out *model.Outbox)
	// PacketHasTree reports whether a packet's Tree field names a tree,
	// which renaming maps (UCAST: none does).
	PacketHasTree(p model.Packet) bool
	// ItemHops returns, as a bit set, the NIs that NI at sends a work
	// item of the protocol's own tags to when it launches it (UCAST has
	// none; see deps.go).
	ItemHops(at model.NodeID, it WorkItem) uint64
	// ForwardHops returns, as a bit set, the NIs that NI at sends data
	// packets on to when they arrive from NI from (UCAST: none).
	ForwardHops(at, from model.NodeID) uint64
	// TreeRenaming completes p, a renaming of nodes, with the renaming of
	// the trees, and reports whether the topology maps onto itself under
	// it (UCAST: no trees, so it does).
	TreeRenaming(p *model.Perm) bool
}

var _ Extension = (*Machine)(nil)

// Compose makes ext the protocol built on m, with features f. A
// protocol's constructor calls it on the machine its own embeds (ext is
// that machine); one that wraps another protocol calls it again with its
// own machine and the features it adds to the other's.
func (m *Machine) Compose(ext Extension, f Features) {
	m.ext, m.Features = ext, f
}

// NodeOf is the UCAST node inside a node of the machine's protocol (whose
// node type embeds Node).
func (m *Machine) NodeOf(n model.Node) *Node {
	if b, ok := n.(*Node); ok {
		return b // Base of a *Node is itself; this assertion is the cheaper
	}
	return n.(interface{ Base() *Node }).Base()
}

// PacketStream is UCAST's: one stream per origin.
func (m *Machine) PacketStream(p model.Packet) int { return int(p.Origin) }

// CreditTo is UCAST's: the buffer's sender.
func (m *Machine) CreditTo(_ *Node, rb *RecvBuf) model.NodeID { return rb.From }

// LaunchItem is UCAST's: it has no work items of other tags.
func (m *Machine) LaunchItem(_ *Node, it WorkItem, _ *model.Outbox) {
	panic("ucast: a work item of tag " + it.Tag.String() + " without a protocol to launch it")
}

// ReceiveData is UCAST's: it has no data packets of other tags.
func (m *Machine) ReceiveData(_ *Node, _ model.NodeID, pkt model.Packet, _ *model.Outbox) {
	panic("ucast: a data packet of tag " + pkt.Tag.String() + " without a protocol to receive it")
}

// ReceiveControl is UCAST's: it has no control packets of other tags.
func (m *Machine) ReceiveControl(_ *Node, _ model.NodeID, pkt model.Packet, _ *model.Outbox) {
	panic("ucast: a control packet of tag " + pkt.Tag.String() + " without a protocol to receive it")
}

// Copied is UCAST's: the buffer is released.
func (m *Machine) Copied(n *Node, pkt model.Packet, out *model.Outbox) { m.Release(n, pkt, out) }

// PacketHasTree is UCAST's: no packet names a tree.
func (m *Machine) PacketHasTree(model.Packet) bool { return false }

// TreeRenaming is UCAST's: there are no trees to rename.
func (m *Machine) TreeRenaming(*model.Perm) bool { return true }
