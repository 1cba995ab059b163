// Package recov implements RECOV, MCAST extended with deadlock detection and
// recovery through per-owner recovery channels (thesis §4.3, Fig.
// 4.10-4.15), as pure event handlers on MCAST's machine, and registers it as
// the protocol "recov".
//
// # The protocol
//
// Every NI has P-1 extra receive buffers, one per other NI: NI c's buffers
// on all other NIs form c's recovery channel. An NI suspects deadlock when a
// send finds no credit (a blocked-sends queue would become non-empty). If
// the packet to send arrived on a recovery channel c, the NI forwards a
// packet of the same tree on channel c without consuming a credit, and
// counts one more CHANNEL_CLEAR acknowledgement to wait for (nr_acks of c).
// Otherwise, if the NI has no recovery of its own running, it starts one:
// it sends the descriptor on its own channel (recovery_active, nr_acks = 1);
// if it has, the descriptor waits in the blocked-sends queue. A packet that
// arrives on channel c takes c's buffer, sets nr_acks of c to 1 (its own
// release), remembers the NI it came from, and records c in the
// active_channels queue of its tree. When an NI releases a packet of a tree
// with an active channel, it withholds the credit and releases the channel
// instead (Fig. 4.15); once nr_acks of c drops to zero it sends
// CHANNEL_CLEAR up the recovery tree, and at the owner the recovery is
// complete: the owner searches its blocked-sends queues round-robin
// (try_new_recovery) and starts the next recovery with the head of the
// first non-empty one.
//
// # Packets and buffers
//
//   - hdr.deadlocked and hdr.channel are LFC's single deadlock channel field
//     (§3.4): model.Packet.Chan, 0 or c+1. A send descriptor keeps the
//     fields forward_packet saved (Fig. 4.12) in its copy of the packet.
//   - The receive pool is one pool of buffers with per-class accounting
//     (ucast.RecvBuf.Chan): C per sender, one per recovery channel.
//     Fig. 4.15's withheld credit is an exchange of classes: when a packet
//     of tree T is released while T has an active channel c and the
//     released packet is not c's own, c's packet takes over the released
//     buffer's class (it arrived from the same tree parent), and c's buffer
//     is free. Per tree, packets are released in arrival order (host copies
//     are FIFO and next_in_tree keeps each child's forwards FIFO), so the
//     queue's head is the oldest channel packet of T still held and the
//     exchange never leaves a buffer unaccounted for: credit-conservation
//     and pool-bound, restated for the classes, hold.
//   - The packet header is shared by the descriptors of one packet: in the
//     thesis send_packet overwrites hdr.deadlocked and hdr.channel for
//     every destination. The correct protocol never reads them after
//     forward_packet saved them, so the header in the buffer is dead state
//     and not kept; variant no-save reads it, and then the model keeps it
//     (ucast.Machine.SharedHeaders).
//   - CHANNEL_CLEAR and CREDIT packets are real control packets on the FIFO
//     links (the thesis sends stack variables asynchronously); a
//     CHANNEL_CLEAR carries its channel in the deadlock channel field and
//     piggybacks owed credits like every packet send_packet sends.
//   - Unicast packets travel on two-node unicast trees (§4.3.2): a deadlocked
//     unicast packet is recorded under the tree of its sender at the
//     receiver.
//
// # Corrections to the pseudocode
//
//  1. Fig. 4.13, credit_send: "send_packet(dest)" in the credit branch
//     passes dest where send_packet takes the descriptor; we send desc.
//  2. Fig. 4.13, credit_send, deadlocked branch: next_in_tree may return an
//     older descriptor of the same tree whose saved deadlocked field is
//     FALSE (its packet arrived normally). The design says it goes on the
//     channel: the prose ("This packet is transmitted on the recovery
//     channel") and the branch's own comment ("We forward desc->packet,
//     or a predecessor in the same tree, on the same channel"); only the
//     code omits marking it. Sent as the code has it, it travels as a
//     normal packet that consumed no credit (channel-forward fails in the
//     step that sends it): the child's pool partition overflows, the
//     credits of the pair no longer add up, and nr_acks waits for an
//     acknowledgement no one will send, so the recovery never completes. We mark the returned descriptor deadlocked on channel c
//     before sending it, as the prose says. Variant thesis-literal runs the
//     code as printed.
//  3. Fig. 4.14: "pkt->tag" and "pkt->channel" lack "hdr."; we read the
//     header fields.
//  4. Fig. 4.15, release_recovery_channel: "desc->dest = pcb->parent" uses
//     an undefined pcb, and the routine receives only the channel, so
//     neither the tree nor the NI upstream is known there. We record, per
//     channel, the NI its packet arrived from (at most one packet per
//     channel per NI, so one parent per channel) and send CHANNEL_CLEAR
//     there. Nothing in the thesis says what pcb->parent would be, so no
//     variant keeps it.
//  5. Fig. 4.15, event_packet_released: withholding the credit on the
//     release of any packet of the tree, not the channel's own, is kept: as
//     argued above it exchanges buffer classes and the accounting stays
//     exact (checked by credit-conservation and channel-bound on every
//     configuration of the suite).
//  6. try_new_recovery (not shown in the thesis) serves the blocked-sends
//     queues round-robin from the one after the queue it served last,
//     dequeues the head descriptor and sends it on the NI's own channel,
//     which keeps each queue FIFO.
//  7. Figs. 4.2, 4.3 and 4.6 never set the deadlocked field of a new
//     packet or descriptor (§4.3.3 adds it to both, Fig. 4.11): event_multicast sets
//     the tag and the tree only, and Fig. 4.12's forward_packet at the
//     root saves whatever the send packet's header still holds. Send
//     packets return to the pool when transmitted (§4.1.2) and are used
//     again; one whose last transmission started a recovery still says
//     deadlocked on the NI's own channel, and the next packet launched in
//     it is taken for a packet that arrived on that channel: where it finds
//     no credit, credit_send counts one more acknowledgement for the NI's
//     own channel and sends it there, whether a recovery is active or not.
//     On a chain of two where node 0 multicasts three packets through one
//     send packet (StaleHeaderConfig) the third follows the second on
//     channel 0, and NI 1 has one buffer for it (channel-bound, 3 steps);
//     the same configuration breaks channel-owner (a packet on channel 0
//     after its recovery ended), ack-count, and recovery-completes (NI 1's
//     count for channel 0 ends at -1, in the thesis an unsigned counter
//     that wraps, so no later recovery through NI 1 on that channel would
//     clear). With two packets nothing breaks. We launch every packet with
//     deadlocked FALSE: the model starts every packet and descriptor at 0.
//     Variant stale-header keeps the reused send packet's header
//     (ucast.NI.Free, a LIFO free list; with one send packet, as in the
//     example, there is no choice to make). Fig. 4.2's event_unicast and
//     Fig. 4.3's CREDIT packet leave the field of a new descriptor unset
//     in the same way; that is uninitialized memory, not a value the model
//     could reproduce, and the correction covers it too.
//
// The thesis-literal variant differs from the corrected protocol in 2
// only: 1, 3 and 4 are not executable as written, 5 is kept, 6 is not
// shown, and 7 is variant stale-header (thesis-literal starts packets
// clear, so that each variant shows one slip).
//
// # Not saving the header fields
//
// Variant no-save leaves out Fig. 4.12's "save!" lines: credit_send reads
// hdr.deadlocked and hdr.channel from the packet's header, which
// send_packet overwrote for the previous child. In this model send_packet
// copies the header onto the link at once (the NI's transmission is not
// modeled as a later DMA that could read a newer header), and a blocked
// descriptor is only ever sent again with a credit or as the head of a new
// recovery, so the stale header is read only inside forward_packet's loop.
// Two things go wrong there: a packet that arrived on channel c and was
// just sent to one child with a credit looks "not deadlocked" to the next
// child, which then gets the NI's own recovery (or waits for it in the
// blocked-sends queue) instead of channel c; and a packet whose first
// child just started the NI's own recovery extends that recovery to the
// next child. The first breaks channel-forward, the rule that a packet
// arriving on a recovery channel goes on to every child in the same step,
// with a credit or on its channel (Fig. 4.13's deadlocked branch): the
// checker finds it in 8 steps on a binary tree of five where only node 0
// multicasts two packets (ForkConfig: NI 1 forwards to two children).
// Neither breaks a safety property of the credits, buffers, FIFO order or
// recoveries, and every recovery still completes, because an NI's own
// recovery never waits: a deadlock would need a cycle of NIs each with its
// own recovery stuck, which no configuration small enough to finish
// reaches (chains of three pass with every other property, and searches
// of binary trees at P=4 (K=2) and binomial trees at P=4 (K=1) cut at 5
// million states, and random walks at P=5..7, found no violation). What
// no-save costs is the design's promise that recovery packets never wait.
//
// # Why P-1 recovery buffers
//
// Each NI owns one escape buffer on every other NI (§4.3.2), so an NI
// holds P-1, one per channel. Variant shared-escape gives every NI one,
// shared by all channels; nothing else changes, and nothing could: a
// recovery packet consumes no credit, so the sender cannot know whether
// another recovery's packet holds the buffer. Two recoveries meet at one
// NI as soon as an NI that relays one owner's recovery also runs its own:
// on a chain of three where 0 multicasts two packets and 1 one
// (SharedEscapeConfig), NI 1, with no credit for NI 2, starts its own
// recovery with m0#1 and then relays m0#2 on 0's channel, both to NI 2,
// which has one buffer for the two (channel-bound, which also bounds the
// channel packets at an NI by its escape buffers, fails in 5 steps). P=3
// is the smallest: with two NIs P-1 is one. Per-owner buffers make each
// channel a separate resource whose only user is its owner's one recovery
// (at most one per NI at a time), which is what channel-bound checks.
//
// # Fetch-and-add
//
// A fetch-and-add request (§3.8, the work's + entries) is a data packet
// that consumes a credit, so under RECOV one that finds no credit starts
// its NI's recovery or waits in the blocked-sends queue for one, and
// travels on its NI's recovery channel. The thesis gives a request no
// tree (only unicast packets are given one, §4.2.5), but RECOV needs one
// for every data packet ("every data packet travels along some tree",
// §4.3.2): here a request travels on its client's unicast tree, as a
// unicast packet to the server would. The server's NI handles a request at
// once and releases its buffer on receipt (§3.8), and that release is Fig.
// 4.15's: with an active channel on the client's tree at the server it
// withholds the credit and releases the channel; otherwise the credit is
// owed and rides on the FA_REPLY, as without recovery. A request that came
// on a channel registers the recovery first (Fig. 4.14), so its own
// release clears it: the server sends CHANNEL_CLEAR to the client before
// the reply. The suite's row FetchAddChain has a request on a channel,
// and a test checks that a request also arrives while its tree has an
// active channel at the server; fa-values is among the properties. The
// library (package lfc) offers it under recov as under mcast.
//
// # Statistics
//
// Node.Stats counts, per NI, the recoveries it started and the data packets
// it sent on recovery channels (Table 5.2's RC and D) on live runs; they
// are not part of the state.
//
// # Actions and atomicity
//
// As for MCAST (see packages ucast and mcast): arrival with everything its
// handler does (accepting credits, forwarding, recovery bookkeeping,
// CHANNEL_CLEAR propagation, starting the next recovery) is one step, and so
// is the host copy with the release it may trigger. "host H process" is
// ample for UCAST's reasons: no handler reads the host queue. Every run is
// finite: every recovery transmits a data packet one hop without consuming
// a credit, and acknowledgements are bounded by those transmissions. The
// kind would qualify on a graph with cycles too (weakly fair, a fairness
// class per host of its own, and what it enables, the NI's copy, stays
// enabled until taken: TestAmpleDeclarations checks this on the claims).
// No other kind does: a copy releases a buffer whose credit or
// CHANNEL_CLEAR goes out on a link the NI's launches and forwards also
// use (the orders differ), and launches have no fairness.
//
// # Properties
//
// MCAST's (deadlock, credit-conservation and pool-bound over the classes,
// fifo, exactly-once, buffer-held, fa-values, eventual-delivery) plus
// channel-bound (at most one packet per recovery channel per NI, held or
// on its way, and no more in all than the NI's escape buffers),
// channel-owner (a channel carries packets only of its owner's recovery),
// ack-count (nr_acks of c at an NI is its own unreleased channel packet plus
// the children it reached on c that have not acknowledged), idle-empty (no
// recovery active implies every blocked-sends queue is empty: the initiating
// branch sends the descriptor itself, which is FIFO-safe only then),
// recovery-tree (each channel's packets and parents lie on one tree and lead
// back to its owner, so simultaneous recoveries do not interfere),
// channel-forward (a step rule: a multicast packet arriving on channel c
// goes on to every tree child in the same step, on c or with a credit
// consumed for that child, which the substrate reports per send:
// model.Transmit.Paid), and
// recovery-completes (liveness: every recovery ends, so no recovery and no
// channel state is left when a run ends).
package recov

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"lfccheck/model"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/ucast"
)

// TagClear is CHANNEL_CLEAR (Table 3.3): a control packet acknowledging,
// up the recovery tree, that the channel in its deadlock channel field
// (Chan, c+1) is clear below.
var TagClear = model.NewTag(model.TagInfo{Name: "CHANNEL_CLEAR",
	Brief: func(p model.Packet) string { return fmt.Sprintf("clear%d", int(p.Hop)-1) }})

func init() {
	// The packet header's deadlock channel (§3.4, Fig. 4.11) is the
	// kernel's hop byte: 0 when the packet is not deadlocked, c+1 when it
	// travels on the recovery channel of NI c; "@chC" in traces.
	model.RegisterHop(model.HopInfo{Name: "deadlock channel",
		Brief: func(v uint8) string { return "@ch" + strconv.Itoa(int(v)-1) }})
}

// Variant names.
const (
	Correct       = "correct"
	ThesisLiteral = "thesis-literal"
	NoNextInTree  = "no-next-in-tree"
	NoSave        = "no-save"
	ChannelCredit = "channel-credit"
	TwoRecoveries = "two-recoveries"
	EarlyClear    = "early-clear"
	OtherTree     = "other-tree"
	StaleHeader   = "stale-header"
	SharedEscape  = "shared-escape"
)

// Stats count what the recovery protocol did at one NI: Table 5.2's RC and
// D. They are statistics, not state: not encoded, compared or checked.
type Stats struct {
	Recoveries     int // recoveries this NI started (RC)
	ChannelPackets int // data packets this NI sent on recovery channels (D)
}

// Node is a node's state: UCAST's NI and host plus Fig. 4.11's fields.
type Node struct {
	ucast.Node
	Active bool  // recovery_active
	NrAcks []int // per channel owner, in the owner's PCB (Fig. 4.11)
	// Parent is, per channel owner, the NI this NI's packet on that
	// channel came from (correction 4); state while NrAcks is not 0, never
	// for the NI's own channel, and 0 otherwise.
	Parent []model.NodeID
	// Channels is active_channels per tree (Fig. 4.11): multicast tree t
	// at index t, the unicast tree of sender s at len(trees)+s.
	Channels [][]model.NodeID
	// RR is the blocked-sends queue try_new_recovery served last.
	RR model.NodeID
	// Stats are not state (see Stats).
	Stats Stats
}

// Base returns the UCAST part.
func (n *Node) Base() *ucast.Node { return &n.Node }

// Encode appends the canonical encoding.
func (n *Node) Encode(buf []byte) []byte {
	buf = n.Node.Encode(buf)
	buf = append(model.AppendBool(buf, n.Active), byte(n.RR))
	for c, a := range n.NrAcks {
		buf = append(buf, byte(int8(a)))
		if a != 0 && c != int(n.ID) {
			buf = append(buf, byte(n.Parent[c]))
		}
	}
	for _, q := range n.Channels {
		buf = binary.AppendUvarint(buf, uint64(len(q)))
		for _, c := range q {
			buf = append(buf, byte(c))
		}
	}
	return buf
}

// Decode reads the encoding written by Encode.
func (n *Node) Decode(d *model.Decoder) {
	n.Node.Decode(d)
	n.Active = d.Bool()
	n.RR = model.NodeID(d.Byte())
	for c := range n.NrAcks {
		n.NrAcks[c] = int(int8(d.Byte()))
		n.Parent[c] = 0
		if n.NrAcks[c] != 0 && c != int(n.ID) {
			n.Parent[c] = model.NodeID(d.Byte())
		}
	}
	for t := range n.Channels {
		q := n.Channels[t][:0]
		for k := d.Count(); k > 0 && d.Err() == nil; k-- {
			q = append(q, model.NodeID(d.Byte()))
		}
		n.Channels[t] = q
	}
}

// CopyFrom makes n a deep copy of src, a *Node.
func (n *Node) CopyFrom(src model.Node) {
	s := src.(*Node)
	n.Node.CopyNode(&s.Node)
	n.Active, n.RR, n.Stats = s.Active, s.RR, s.Stats
	n.NrAcks = append(n.NrAcks[:0], s.NrAcks...)
	n.Parent = append(n.Parent[:0], s.Parent...)
	if len(n.Channels) != len(s.Channels) {
		n.Channels = make([][]model.NodeID, len(s.Channels))
	}
	for t := range s.Channels {
		n.Channels[t] = append(n.Channels[t][:0], s.Channels[t]...)
	}
}

func (n *Node) recovLine() string {
	s := fmt.Sprintf("recov %d: active %v", n.ID, n.Active)
	for c, a := range n.NrAcks {
		switch {
		case a != 0 && c == int(n.ID):
			s += fmt.Sprintf(" [own channel acks %d]", a)
		case a != 0:
			s += fmt.Sprintf(" [ch%d acks %d from %d]", c, a, n.Parent[c])
		}
	}
	for t, q := range n.Channels {
		if len(q) > 0 {
			s += fmt.Sprintf(" [tree %d channels %v]", t, q)
		}
	}
	return s
}

// Describe renders the node: UCAST's lines and a line for the recovery
// state.
func (n *Node) Describe() []string { return append(n.Node.Describe(), n.recovLine()) }

// Diff reports what differs from prev, a *Node.
func (n *Node) Diff(prev model.Node, ch func(what, from, to string)) {
	p := prev.(*Node)
	n.Node.Diff(&p.Node, ch)
	ch(fmt.Sprintf("ni %d recovery", n.ID), p.recovLine(), n.recovLine())
}

// Marks adds an active recovery to UCAST's marks.
func (n *Node) Marks() []model.Mark {
	ms := n.Node.Marks()
	if n.Active {
		ms = append(ms, model.Mark{Part: model.OwnerNI, Text: "recovery active"})
	}
	return ms
}

// Machine is RECOV: MCAST's machine with the recovery handlers
// (NoCreditSend, ReturnCredit: its ucast.Extension methods).
type Machine struct {
	*mcast.Machine
	variant string
	trees   int
	// Escape is the number of escape (recovery) buffers per NI: P-1, one
	// per other NI's channel (§4.3.2); 1 in variant shared-escape.
	Escape int
}

func node(n *ucast.Node) *Node { return n.Outer.(*Node) }

// New builds RECOV for a resolved configuration (MCAST's parameters).
func New(cfg model.Config) (*Machine, error) {
	mm, err := mcast.New(cfg)
	if err != nil {
		return nil, err
	}
	m := &Machine{Machine: mm, variant: cfg.Variant, trees: len(mm.Topo.Trees), Escape: mm.P - 1}
	if cfg.Variant == SharedEscape {
		m.Escape = 1
	}
	f := mm.Features
	f.Channels, f.SharedHeaders, f.ReusedHeaders = true, cfg.Variant == NoSave, cfg.Variant == StaleHeader
	mm.Machine.Compose(m, f)
	return m, nil
}

// RenameFrom implements model.Renamable: UCAST's state, then the
// per-owner counters and parents, the trees' active channels and the
// round-robin position (the scan order (RR+k) mod P commutes with
// rotations, the only renamings offered).
func (n *Node) RenameFrom(src model.Node, p *model.Perm) {
	s := src.(*Node)
	n.Node.RenameFrom(&s.Node, p)
	n.Active, n.RR, n.Stats = s.Active, p.Node[s.RR], s.Stats
	for c := range s.NrAcks {
		n.NrAcks[p.Node[c]] = s.NrAcks[c]
		n.Parent[p.Node[c]] = 0 // as Decode leaves an entry that is not state
		if s.NrAcks[c] != 0 && c != int(s.ID) {
			n.Parent[p.Node[c]] = p.Node[s.Parent[c]]
		}
	}
	trees := len(s.Channels) - len(s.NrAcks)
	for t, q := range s.Channels {
		var u int
		if t < trees {
			u = int(p.Tree[t])
		} else {
			u = trees + int(p.Node[t-trees])
		}
		n.Channels[u] = n.Channels[u][:0]
		for _, c := range q {
			n.Channels[u] = append(n.Channels[u], p.Node[c])
		}
	}
}

// NewNode builds node id in its initial state.
func (m *Machine) NewNode(id model.NodeID) model.Node {
	n := &Node{}
	m.InitNode(&n.Node, id)
	n.Outer = n
	n.RR = id // scanning starts after the NI itself: the same for every NI, as symmetry needs
	n.NrAcks = make([]int, m.P)
	n.Parent = make([]model.NodeID, m.P)
	n.Channels = make([][]model.NodeID, m.trees+m.P)
	return n
}

// LaunchItem is event_multicast (Fig. 4.6) with MCAST's forward_packet
// replaced by Fig. 4.12's, which saves the send packet's deadlock channel
// field in every descriptor: 0 for a new packet, or, in variant
// stale-header, what the reused send packet still holds (ucast.NI.Free).
// A root without children returns the packet to the pool untouched.
func (m *Machine) LaunchItem(n *ucast.Node, it ucast.WorkItem, out *model.Outbox) {
	if m.variant == StaleHeader && len(m.Topo.Trees[it.Tree].Children[n.ID]) == 0 {
		n.Free = append(n.Free, n.Send[len(n.Send)-1].Pkt.Hop)
	}
	m.Machine.LaunchItem(n, it, out)
}

// treeOf is the index in Node.Channels of the tree pkt travels on; from
// is the NI it came from (a unicast packet's tree is its sender's).
func (m *Machine) treeOf(pkt model.Packet, from model.NodeID) int {
	if pkt.Tag == mcast.TagMulticast {
		return int(pkt.Tree)
	}
	return m.trees + int(from)
}

// sameTree reports whether two descriptors at one NI forward packets of
// the same tree.
func sameTree(a, b ucast.Desc) bool {
	if a.Pkt.Tag != b.Pkt.Tag {
		return false
	}
	if a.Pkt.Tag == mcast.TagMulticast {
		return a.Pkt.Tree == b.Pkt.Tree
	}
	return a.Pkt.Origin == b.Pkt.Origin
}

// Receive is event_packet_received (Fig. 4.14). A data packet that
// arrived on a recovery channel is handled here in the thesis's order:
// accept its credits, register the recovery (nr_acks, the parent, the
// tree's active channels), then take the channel's buffer and forward as
// MCAST does. The buffer is in place before any forward, so a release that
// a forward triggers finds it.
func (m *Machine) Receive(mn model.Node, from model.NodeID, pkt model.Packet, out *model.Outbox) {
	n := mn.(*Node)
	switch {
	case pkt.Tag == TagClear:
		pkt = m.AcceptNewCredits(&n.Node, pkt, out)
		m.releaseChannel(n, model.NodeID(pkt.Hop-1), out)
	case pkt.Tag == ucast.TagFARequest && m.FetchAdd:
		m.serveFA(n, from, m.AcceptNewCredits(&n.Node, pkt, out), out)
	case pkt.Hop != 0 && pkt.Tag.IsData():
		pkt = m.AcceptNewCredits(&n.Node, pkt, out)
		c := pkt.Hop - 1
		n.NrAcks[c] = 1
		n.Parent[c] = from
		t := m.treeOf(pkt, from)
		n.Channels[t] = append(n.Channels[t], model.NodeID(c))
		var children []model.NodeID
		if pkt.Tag == mcast.TagMulticast {
			children = m.Topo.Trees[pkt.Tree].Children[n.ID]
		}
		n.Recv = append(n.Recv, ucast.RecvBuf{Pkt: pkt, From: from, Pending: uint8(len(children)), Chan: pkt.Hop})
		for _, ch := range children {
			m.CreditSend(&n.Node, ucast.Desc{Dest: ch, Fwd: true, Pkt: pkt}, out)
		}
	default:
		m.Machine.Machine.Receive(mn, from, pkt, out)
	}
}

// serveFA is the server NI's handler of a fetch-and-add request req from
// client from (§3.8), its credits accepted, under RECOV: a request travels
// on the client's unicast tree, like a unicast packet; one that arrived on
// channel c registers the recovery as any packet on a channel does (Fig.
// 4.14). The server reads and increments its variable, releases the
// request's buffer at once (§3.8: the credit is returned on receipt) as
// Fig. 4.15 releases any packet of the tree: with no active channel on the
// tree the credit is owed to the client and rides on the reply, as
// without recovery; otherwise the credit is withheld and the channel at
// the head of the queue released (CHANNEL_CLEAR to the client when it
// clears). Then FA_REPLY goes back.
func (m *Machine) serveFA(n *Node, from model.NodeID, req model.Packet, out *model.Outbox) {
	t := m.treeOf(req, from)
	if req.Hop != 0 {
		c := req.Hop - 1
		n.NrAcks[c], n.Parent[c] = 1, from
		n.Channels[t] = append(n.Channels[t], model.NodeID(c))
	}
	v := m.LocalFA(&n.Node)
	if len(n.Channels[t]) == 0 {
		n.PCB[from].FreeCredits++
	} else {
		m.ReturnCredit(&n.Node, ucast.RecvBuf{Pkt: req, From: from, Chan: req.Hop}, from, out)
	}
	m.SendPacket(&n.Node, ucast.Desc{Dest: req.Origin, Pkt: model.Packet{Tag: ucast.TagFAReply, Origin: req.Origin, Seq: req.Seq, Val: v}}, out)
}

// deadlocked returns the deadlock channel field credit_send tests for d:
// the one forward_packet saved in the descriptor, or, in variant no-save,
// the one in the packet's header as the last send_packet left it.
func (m *Machine) deadlocked(n *ucast.Node, d ucast.Desc) uint8 {
	if m.variant != NoSave {
		return d.Pkt.Hop
	}
	if d.Fwd {
		if i := n.FindRecv(d.Pkt); i >= 0 {
			return n.Recv[i].Pkt.Hop
		}
		return 0
	}
	for i := range n.Send {
		if n.Send[i].Pkt.SameData(d.Pkt) {
			return n.Send[i].Pkt.Hop
		}
	}
	return 0
}

// NoCreditSend is credit_send's branch for a descriptor that finds no credit
// (Fig. 4.13).
func (m *Machine) NoCreditSend(un *ucast.Node, d ucast.Desc, out *model.Outbox) {
	n := node(un)
	pcb := &n.PCB[d.Dest]
	if ch := m.deadlocked(un, d); ch != 0 {
		// The packet arrived on channel ch-1: forward it, or a predecessor
		// in its tree, on the same channel.
		c := ch - 1
		if m.variant != EarlyClear {
			if n.NrAcks[c]++; n.NrAcks[c] == 0 {
				n.Parent[c] = 0 // (from -1, in a broken variant) not state, as Decode leaves it
			}
		}
		if m.variant != NoNextInTree {
			d = m.nextInTree(pcb, d)
			if m.variant != ThesisLiteral {
				d.Pkt.Hop = ch
			}
		} else {
			d.Pkt.Hop = ch
		}
		if d.Pkt.Hop != 0 {
			n.Stats.ChannelPackets++
		}
		m.SendPacket(un, d, out)
		return
	}
	if n.Active && m.variant != TwoRecoveries {
		pcb.Blocked = append(pcb.Blocked, d)
		return
	}
	m.start(n, d, out)
}

// start initiates a recovery on n's own channel with descriptor d.
func (m *Machine) start(n *Node, d ucast.Desc, out *model.Outbox) {
	n.Active = true
	n.NrAcks[n.ID] = 1
	d.Pkt.Hop = uint8(n.ID) + 1
	n.Stats.Recoveries++
	n.Stats.ChannelPackets++
	m.SendPacket(&n.Node, d, out)
}

// nextInTree is next_in_tree: append d to the blocked-sends queue and
// remove the first descriptor of d's tree (variant other-tree: the first
// descriptor) from it.
func (m *Machine) nextInTree(pcb *ucast.PCB, d ucast.Desc) ucast.Desc {
	pcb.Blocked = append(pcb.Blocked, d)
	for i, b := range pcb.Blocked {
		if m.variant == OtherTree || sameTree(b, d) {
			pcb.Blocked = append(pcb.Blocked[:i], pcb.Blocked[i+1:]...)
			return b
		}
	}
	panic("recov: next_in_tree lost its descriptor")
}

// ReturnCredit is Fig. 4.15's event_packet_released after the buffer rb was
// freed: return the credit to the tree parent to, or, when rb's tree has
// an active channel, withhold it and release the channel.
func (m *Machine) ReturnCredit(un *ucast.Node, rb ucast.RecvBuf, to model.NodeID, out *model.Outbox) {
	n := node(un)
	t := m.treeOf(rb.Pkt, rb.From)
	q := n.Channels[t]
	if len(q) == 0 || m.variant == ChannelCredit {
		m.ReturnCreditTo(un, to, out)
		if len(q) == 0 {
			return
		}
	}
	c := q[0]
	n.Channels[t] = append(q[:0], q[1:]...)
	if rb.Chan != uint8(c)+1 {
		// c's packet takes over the released buffer's class.
		for i := range n.Recv {
			if n.Recv[i].Chan == uint8(c)+1 {
				n.Recv[i].Chan = rb.Chan
				break
			}
		}
	}
	m.releaseChannel(n, c, out)
}

// releaseChannel is release_recovery_channel (Fig. 4.15).
func (m *Machine) releaseChannel(n *Node, c model.NodeID, out *model.Outbox) {
	n.NrAcks[c]--
	if n.NrAcks[c] > 0 {
		return
	}
	if c == n.ID {
		n.Active = false
		m.tryNewRecovery(n, out)
		return
	}
	if n.NrAcks[c] < 0 {
		// Only in a broken variant (early-clear, two-recoveries), past
		// ack-count's violation: the channel was released already and its
		// parent forgotten (Parent is not state at a count of 0), so no
		// CLEAR goes up again, and the parent, state again at a count
		// other than 0, is the NI itself. (Sending the CLEAR to the
		// forgotten parent, node 0 in every naming, and keeping that 0,
		// broke the symmetry of the nodes.)
		n.Parent[c] = n.ID
		return
	}
	parent := n.Parent[c]
	n.Parent[c] = 0 // not state any more: kept at 0, as Decode leaves it
	m.SendPacket(&n.Node, ucast.Desc{Dest: parent, Pkt: model.Packet{Tag: TagClear, Origin: n.ID, Hop: uint8(c) + 1}}, out)
}

// tryNewRecovery is try_new_recovery: starting after the queue served
// last, find a non-empty blocked-sends queue and start a recovery with its
// head.
func (m *Machine) tryNewRecovery(n *Node, out *model.Outbox) {
	for k := 1; k <= m.P; k++ {
		p := (int(n.RR) + k) % m.P
		pcb := &n.PCB[p]
		if p == int(n.ID) || len(pcb.Blocked) == 0 {
			continue
		}
		d := pcb.Blocked[0]
		pcb.Blocked = append(pcb.Blocked[:0], pcb.Blocked[1:]...)
		n.RR = model.NodeID(p)
		m.start(n, d, out)
		return
	}
}
