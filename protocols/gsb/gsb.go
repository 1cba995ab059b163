// Package gsb implements Panda's totally-ordered broadcast, GSB
// ("get a sequence number, then broadcast", thesis §6.4), on LFC's
// NI-level fetch-and-add (§3.8) and MCAST's broadcast trees (§4.2), and
// registers it as the protocol "gsb".
//
// # The protocol
//
// Before broadcasting a message, a sender obtains a system-wide sequence
// number with lfc_fetch_and_add on one F&A variable, held by the
// sequencer's NI; then it broadcasts the message's packets (one or more,
// §6.3: parameter fragments) on its broadcast tree, each carrying the
// sequence number. A receiver assembles the message and delivers it only
// after every message with a smaller number: it holds back a message that
// arrives early (§6.4: "a message is not delivered until all preceding
// messages have been delivered"). LFC's broadcast does not deliver to the
// sender (Table 3.1, lfc_bcast_launch), so the sender delivers its own
// message from its own memory, held back in the same way.
//
// # Actions and atomicity
//
//   - "host H request": process H calls lfc_fetch_and_add for its next
//     message (§3.8). It allocates an FA_REQUEST send packet and the NI
//     sends it to the sequencer under UCAST's credits (a data packet,
//     consuming a credit; it waits in the blocked-sends queue without
//     one). At the sequencer itself the request needs no packet: the NI
//     increments its variable and stores the old value at once (a
//     modelling choice; the thesis sends it through the network, see
//     "Thesis and modelling choices"). A process
//     requests a number for a message only after it has launched every
//     packet of its previous message, so at most one request per process is
//     outstanding, as §3.8 assumes. Requests are not fair: a process may
//     stop broadcasting.
//   - "deliver I->J": the kernel's arrival event. At the sequencer an
//     FA_REQUEST is handled entirely by the NI: it increments the variable,
//     returns the request's credit and sends an FA_REPLY control packet
//     with the old value, in one handler. At the requester the FA_REPLY's
//     value is copied to "a location in NI memory that is polled by
//     lfc_fetch_and_add()" (§3.8): one slot per process. Broadcast packets
//     are MCAST's: they take a receive buffer and are forwarded to the NI's
//     children in the tree.
//   - "host H broadcast": process H launches the next packet of its current
//     message (lfc_bcast_launch, one send packet each); for the first packet
//     it first reads the F&A result from the slot (the return of
//     lfc_fetch_and_add). Weakly fair per host: a process that holds a
//     sequence number goes on to broadcast its message.
//   - "ni N copy": UCAST's copy of the oldest received packet into a free
//     host receive buffer, followed in the same step by the client's upcall
//     for it (lfc_upcall, Table 3.1), as if the host polled at once. A
//     plain multicast is consumed and its buffer recycled. A broadcast
//     packet is kept (the upcall returns nonzero), so its host buffer stays
//     in use; then the client delivers, in sequence-number order, what is
//     next: its own message from memory, or the next message's held
//     packets. Delivery streams as Panda's does (§6.3): the message's
//     handler is invoked with its first packet (that is the delivery the
//     properties read) and consumes the rest as they arrive, freeing each
//     consumed packet with lfc_packet_free; the next message's handler
//     runs only after the previous one has consumed every packet (a SAP's
//     handler is not invoked again until it returns). With --delivery whole
//     a message is delivered only when every packet of it is held, and its
//     packets are freed together (the model before it streamed, kept to
//     compare pinned memory). Processing and freeing are thus
//     separate steps for a held-back packet: its own step keeps it, a later
//     one (another packet's copy, or the sender's broadcast step that makes
//     it next) frees it. Weakly fair per NI.
//   - "host H launch" (only with casts): the process launches its next
//     plain multicast; a node's program launches its casts before its
//     messages.
//
// Why the upcall runs inside the copy step: with a separate "host H
// process" step the state space of P=3 with three senders is ten times
// larger (575,028 states against 53,579) and nothing is lost by merging.
// Take any run with separate steps and move every process step back to
// just after the copy of its packet (keeping their order, which is the
// queue's). The process step of H touches only H's host; it never disables
// an action (it only frees host buffers, which can enable H's copies), and
// it commutes with every action of other nodes, with H's arrivals and
// with H's broadcast steps (both end in the same fixpoint of "deliver what
// is next", since what is available only grows). So the moved run is a run
// of the merged model, it ends in the same state (a state without enabled
// actions has an empty host queue in both), and in each of its states
// every host's delivered sequence extends the one in the original run at
// the same point. The safety properties that read deliveries (total-order,
// sender-order, no-duplicates) are violated by a state only if they are by
// every extension of it, so every violation and every end state of the
// separate-step model appears in the merged one. The argument is for the
// correct protocol; the broken variants are caught in the merged model
// anyway, which is what they are for.
//
// No action kind is ample: the delivery order is what the properties read,
// and the copy step delivers (it runs the upcall); the broadcast step
// sends on links the NI's other steps use (the orders differ), takes a
// send buffer a launch or request may need, and waits for the
// fetch-and-add result a delivery brings; request and launch have no
// fairness, which an ample kind needs where the graph could have cycles. Every step makes
// progress, so every run is finite and the protocol is declared Acyclic.
//
// # Host buffers and pinned memory
//
// Held-back packets occupy host receive buffers, and the thesis has no
// flow control for ordered broadcast (§6.1.1). LFC's library does not run
// out of buffers at a fixed count: its receive ring starts with the
// client's initial number (parameter host-buffers) and, whenever an upcall
// would leave it without an empty buffer, takes one more from the pool
// (§3.6), until the host can pin no more memory (§6.6.4: "LFC will continue
// to add new packet buffers to its receive ring and will eventually run
// out of pinnable memory"). Parameter pinned is that limit, in receive
// buffers per host; Machine.ring keeps the ring's size (Host.Extra beyond
// the initial ones), which is a function of the buffers in use, so it adds
// no state, and the NI finds a free buffer exactly while fewer than pinned
// are in use. A receiver whose pinned buffers are all held by messages that
// come after a missing one can no longer copy the missing one out of its
// NI, so nothing moves again: the system stalls. The finding is thus how
// much pinned memory ordered broadcast needs: the suite's pinned rows give
// the smallest limits that stall and pass, the statistic pinned-buffers
// the most a ring held, and docs/results.md a table per P and senders.
//
// # Thesis and modelling choices
//
// The thesis's: GSB itself (§6.4), one fetch-and-add variable on the
// sequencer's NI served without the host (§3.8), one outstanding request
// per process because of the FA_REPLY memory on the server's NI (§3.8),
// no flow control for ordered broadcast (§6.1.1), the growing receive ring
// (§3.6) bounded by pinned memory (§6.6.4), streaming delivery (§6.3).
// Modelling choices: the upcall inside the copy step (argued above); when
// the ring returns a freed buffer to the pool (one empty buffer is
// "sufficient", as in UCAST's host library); the sequencer's link to a
// client standing for its transmit queue, where an FA_REPLY occupies the
// NI's memory until delivered; reply memory of one FA_REPLY per node by
// default (what one outstanding request per process needs); and the
// sequencer's own request. §5.2 says the local fetch-and-add is not
// optimized: FA_REQUEST and FA_REPLY travel to the switch and back. The
// model answers it at once, because its kernel has no link from a node
// to itself. The difference: in the thesis the local request holds one of
// the sequencer's send packets and a credit to itself, occupies reply
// memory, and is served at its arrival, later than it was issued. The
// serving order is no loss (the request step is unconstrained, so the
// model can take it at the moment the looped-back request would arrive),
// but runs in which the sequencer's request waits for a send packet or a
// credit, or in which its reply fills the reply memory, are not explored;
// reply-memory's default of one per node leaves room for it.
//
// # Properties
//
//  1. total-order: every two processes deliver the same sequence (one is a
//     prefix of the other, the sender's own messages included).
//  2. sender-order: every process delivers each sender's messages in the
//     order they were sent, without gaps.
//  3. no-duplicates: no process delivers a message twice; at a proper end
//     every process has delivered every message.
//  4. deadlock: a state with no enabled action has every message launched
//     and delivered everywhere, and nothing left in buffers or on links.
//  5. eventual-delivery (liveness): every message whose sequence number was
//     requested is eventually delivered by every process, under the
//     fairness above.
//  6. credit-conservation, pool-bound, fifo, exactly-once, buffer-held:
//     UCAST's and MCAST's, on the packets of the broadcast.
//  7. reply-memory: the sequencer's NI never holds more FA_REPLY packets
//     than its reply memory (§3.8).
//  8. held-back (a Sometimes goal): some process holds back a whole message
//     that arrived before an earlier one, so the claims exercise the
//     hold-back.
//
// # Broken variants
//
//   - no-holdback: every process delivers a message as soon as it has it
//     whole, its own at once; total-order catches it.
//   - self-immediate: receivers hold back correctly, but a sender delivers
//     its own message as soon as it has its sequence number; total-order
//     catches it.
//   - two-outstanding: a process requests the sequence number of its next
//     message before it has broadcast the current one, two outstanding
//     requests where §3.8 allows one. §3.8's reason: requests return their
//     credits when they are received, possibly before the reply is
//     generated, so nothing bounds the FA_REPLY packets the server's NI
//     creates and queues but one request per process. With two credits
//     and two senders, four replies wait at the sequencer's NI, whose
//     memory is for three (one per node): reply-memory catches it. The
//     results are queued at the client here, so a second reply does not
//     overwrite the first in the one result slot; that would be a second,
//     client-side reason, not the one the thesis gives.
//   - prefetch-lifo: a process fetches the numbers of its next two
//     messages ahead, the NI queues the results (so none is lost), and the
//     process uses them newest first: every process delivers the sender's
//     second message before its first; sender-order catches it.
//   - double-own: a sender delivers its own message as soon as it has its
//     number, and again when the number comes up; no-duplicates catches it.
//   - no-free: the client never calls lfc_packet_free for the packets of a
//     delivered message; host buffers leak until nothing can be copied, and
//     eventual-delivery catches the messages that are never delivered.
//   - fa-no-increment, split-increment, drop-reply: fetch-and-add's own
//     bugs at the sequencer's NI (ucast.FAVariants; the sequencer's handler
//     is ucast.Machine.ServeFA, fetch-and-add's one server handler): a
//     repeated sequence number breaks total-order, a lost reply leaves its
//     sender waiting (deadlock).
//
// held-back's counterpart is the claim with a single sender, where nothing
// is ever held back and the goal fails.
//
// # The live API
//
// StartLive runs GSB in-process as a library, Panda-style: Group.Broadcast
// is the totally-ordered group send (fetch-and-add on the sequencer, then
// broadcast), LiveOptions.OnDeliver the receive upcall, and Group.Close
// returns the run, which Result.Check replays through this model. Group
// says which calls may be made from which goroutines.
package gsb

import (
	"encoding/binary"
	"fmt"

	"lfccheck/model"
	"lfccheck/protocols/fa"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/ucast"
)

// Variant names.
const (
	Correct        = "correct"
	NoHoldback     = "no-holdback"
	SelfImmediate  = "self-immediate"
	TwoOutstanding = "two-outstanding"
	PrefetchLIFO   = "prefetch-lifo"
	DoubleOwn      = "double-own"
	NoFree         = "no-free"
)

// Msg names a broadcast message: its sender and its 1-based number among
// the sender's messages.
type Msg struct {
	From model.NodeID
	K    uint16
}

func (m Msg) String() string { return fmt.Sprintf("%d.%d", m.From, m.K) }

// Node is a node's state: UCAST's NI and host (with the packets the
// client keeps), the NI's F&A variable and result slot, and the process's
// GSB state.
type Node struct {
	ucast.Node
	Slot      uint32 // the NI location lfc_fetch_and_add polls (§3.8)
	SlotFull  bool   // Slot holds a result the process has not read
	Requested uint16 // sequence numbers requested so far
	Waiting   uint8  // requests whose result the process has not read
	// Seqs are the sequence numbers of the process's own messages, in
	// order, as read from the slot.
	Seqs []uint32
	// Prefetched are results queued at the NI (variant prefetch-lifo
	// only), oldest first.
	Prefetched []uint32
	// NextSeq is the sequence number of the next message to deliver.
	NextSeq uint32
	// Consumed counts the packets of message NextSeq that its handler has
	// consumed (streaming delivery, §6.3): 0 before the handler runs, and
	// always 0 with one packet per message or whole-message delivery.
	Consumed uint8
	// Delivered lists the messages delivered, in order (history).
	Delivered []Msg

	g *Machine // the machine that built the node
}

// Base returns the UCAST part.
func (n *Node) Base() *ucast.Node { return &n.Node }

// Encode appends the canonical encoding.
func (n *Node) Encode(buf []byte) []byte {
	buf = n.Node.Encode(buf)
	buf = binary.AppendUvarint(buf, uint64(n.FA.Var))
	if n.M.Variant == ucast.FASplitIncrement {
		buf = n.FA.AppendReads(buf)
	}
	buf = binary.AppendUvarint(buf, uint64(n.Slot))
	buf = model.AppendBool(buf, n.SlotFull)
	buf = binary.AppendUvarint(buf, uint64(n.Requested))
	buf = append(buf, n.Waiting)
	buf = binary.AppendUvarint(buf, uint64(len(n.Seqs)))
	for _, s := range n.Seqs {
		buf = binary.AppendUvarint(buf, uint64(s))
	}
	buf = binary.AppendUvarint(buf, uint64(len(n.Prefetched)))
	for _, s := range n.Prefetched {
		buf = binary.AppendUvarint(buf, uint64(s))
	}
	buf = binary.AppendUvarint(buf, uint64(n.NextSeq))
	buf = append(buf, n.Consumed)
	buf = binary.AppendUvarint(buf, uint64(len(n.Delivered)))
	for _, m := range n.Delivered {
		buf = binary.AppendUvarint(append(buf, byte(m.From)), uint64(m.K))
	}
	return buf
}

// Decode reads the encoding written by Encode.
func (n *Node) Decode(d *model.Decoder) {
	n.Node.Decode(d)
	n.FA.Var = uint32(d.Uvarint())
	if n.M.Variant == ucast.FASplitIncrement {
		n.FA.DecodeReads(d)
	}
	n.Slot = uint32(d.Uvarint())
	n.SlotFull = d.Bool()
	n.Requested = uint16(d.Uvarint())
	n.Waiting = d.Byte()
	n.Seqs = n.Seqs[:0]
	for k := d.Count(); k > 0 && d.Err() == nil; k-- {
		n.Seqs = append(n.Seqs, uint32(d.Uvarint()))
	}
	n.Prefetched = n.Prefetched[:0]
	for k := d.Count(); k > 0 && d.Err() == nil; k-- {
		n.Prefetched = append(n.Prefetched, uint32(d.Uvarint()))
	}
	n.NextSeq = uint32(d.Uvarint())
	n.Consumed = d.Byte()
	n.Delivered = n.Delivered[:0]
	for k := d.Count(); k > 0 && d.Err() == nil; k-- {
		m := Msg{From: model.NodeID(d.Byte())}
		m.K = uint16(d.Uvarint())
		n.Delivered = append(n.Delivered, m)
	}
	if n.g != nil {
		n.g.ring(n) // derived from the buffers in use, so not encoded
	}
}

// CopyFrom makes n a deep copy of src, a *Node.
func (n *Node) CopyFrom(src model.Node) {
	s := src.(*Node)
	n.Node.CopyNode(&s.Node)
	n.Slot, n.SlotFull, n.Requested, n.Waiting, n.NextSeq, n.Consumed = s.Slot, s.SlotFull, s.Requested, s.Waiting, s.NextSeq, s.Consumed
	n.Seqs = append(n.Seqs[:0], s.Seqs...)
	n.Prefetched = append(n.Prefetched[:0], s.Prefetched...)
	n.Delivered = append(n.Delivered[:0], s.Delivered...)
}

func (n *Node) slotText() string {
	if len(n.Prefetched) > 0 {
		return fmt.Sprint(n.Prefetched)
	}
	if !n.SlotFull {
		return "empty"
	}
	return fmt.Sprint(n.Slot)
}

func (n *Node) gsbLine() string {
	return fmt.Sprintf("gsb %d: var %d, slot %s, requested %d, waiting %d, seqnos %v, next %d, delivered %s",
		n.ID, n.FA.Var, n.slotText(), n.Requested, n.Waiting, n.Seqs, n.NextSeq, model.ListOf(n.Delivered, Msg.String))
}

// Describe renders the node: UCAST's lines and a line for GSB.
func (n *Node) Describe() []string { return append(n.Node.Describe(), n.gsbLine()) }

// Diff reports what differs from prev, a *Node.
func (n *Node) Diff(prev model.Node, ch func(what, from, to string)) {
	p := prev.(*Node)
	n.Node.Diff(&p.Node, ch)
	ch(fmt.Sprintf("ni %d fa slot", n.ID), p.slotText(), n.slotText())
	ch(fmt.Sprintf("host %d requested", n.ID), fmt.Sprint(p.Requested), fmt.Sprint(n.Requested))
	ch(fmt.Sprintf("host %d sequence numbers", n.ID), fmt.Sprint(p.Seqs), fmt.Sprint(n.Seqs))
	ch(fmt.Sprintf("host %d next to deliver", n.ID), fmt.Sprint(p.NextSeq), fmt.Sprint(n.NextSeq))
	ch(fmt.Sprintf("host %d delivered", n.ID), model.ListOf(p.Delivered, Msg.String), model.ListOf(n.Delivered, Msg.String))
}

// Machine is GSB: MCAST's broadcast on UCAST's credits, plus
// fetch-and-add at the sequencer.
type Machine struct {
	*mcast.Machine
	Sequencer model.NodeID
	Fragments int
	// Pinned is the most host receive buffers a host can pin (§6.6.4):
	// the receive ring starts with HostBuffers and grows to Pinned.
	Pinned int
	// ReplyMemory is the number of FA_REPLY packets the sequencer's NI
	// has memory for (§3.8).
	ReplyMemory int
	// WholeMessages: a message is delivered once every packet of it is
	// held (delivery "whole"), not streamed from its first packet.
	WholeMessages bool
	// Messages is, per node, how many messages it broadcasts (K for a
	// sender, 0 otherwise).
	Messages []int
	// item gives, per node and work item, the broadcast message the item
	// is a packet of (0-based) and the packet's place in it, or message
	// -1 for a plain multicast (a cast).
	item [][]itemInfo
	// trees gives, per node, its tree in the broadcast group, or -1 for a
	// node that does not broadcast.
	trees []int
	// ordered marks the trees of the broadcast group.
	ordered []bool
	// Total is the number of messages of the run.
	Total   int
	casts   bool // the workload has plain multicasts
	variant string
	kinds   []*model.ActionKind
}

type itemInfo struct{ msg, frag int }

func node(n model.Node) *Node { return n.(*Node) }

// current is the work item n launches next, or false when none is left.
func (m *Machine) current(n *Node) (itemInfo, bool) {
	if n.Next >= len(m.item[n.ID]) {
		return itemInfo{}, false
	}
	return m.item[n.ID][n.Next], true
}

// maxWaiting is the number of outstanding requests a process allows itself.
func (m *Machine) maxWaiting() uint8 {
	if m.prefetches() {
		return 2
	}
	return 1
}

// prefetches reports whether processes request numbers ahead.
func (m *Machine) prefetches() bool { return m.variant == TwoOutstanding || m.variant == PrefetchLIFO }

// haveResult reports whether a fetch-and-add result waits to be read.
func (m *Machine) haveResult(n *Node) bool {
	if m.prefetches() {
		return len(n.Prefetched) > 0
	}
	return n.SlotFull
}

// canRequest: a message is left to number, the process may issue another
// request, and (but at the sequencer) a send packet is free. The correct
// process numbers a message only once its previous one is launched whole.
func (m *Machine) canRequest(n *Node) bool {
	if int(n.Requested) >= m.Messages[n.ID] || n.Waiting >= m.maxWaiting() {
		return false
	}
	if !m.prefetches() {
		// lfc_fetch_and_add is called when the program reaches the
		// message: every earlier packet is launched.
		if it, ok := m.current(n); !ok || it.msg != int(n.Requested) || it.frag != 0 {
			return false
		}
	}
	return n.ID == m.Sequencer || len(n.Send) < m.SendBuffers
}

// canBroadcast: a packet is left to launch, a send packet is free, and the
// current message has its number or the slot holds it.
func (m *Machine) canBroadcast(n *Node) bool {
	it, ok := m.current(n)
	if !ok || it.msg < 0 || len(n.Send) >= m.SendBuffers {
		return false
	}
	return it.msg < len(n.Seqs) || (it.msg == len(n.Seqs) && m.haveResult(n))
}

// canCast: the next work item is a plain multicast and a send packet is
// free.
func (m *Machine) canCast(n *Node) bool {
	it, ok := m.current(n)
	return ok && it.msg < 0 && len(n.Send) < m.SendBuffers
}

// Kinds are request, deliver, broadcast and copy (which runs the upcall),
// plus launch when the workload has plain multicasts.
func (m *Machine) Kinds() []*model.ActionKind {
	if m.kinds != nil {
		return m.kinds
	}
	copyKind := *m.Machine.Machine.Kinds()[2]
	copyKind.Apply = func(mn model.Node, out *model.Outbox) {
		n := node(mn)
		m.Copy(&n.Node, out)
		m.process(n)
		m.ring(n)
	}
	m.kinds = []*model.ActionKind{
		{Name: "request", Pattern: "host {node} request", Owner: model.OwnerHost, Live: model.LiveClient,
			Enabled: func(mn model.Node) bool { return m.canRequest(node(mn)) },
			Apply:   func(mn model.Node, out *model.Outbox) { m.request(node(mn), out) }},
		model.Deliver,
		{Name: "broadcast", Pattern: "host {node} broadcast", Owner: model.OwnerHost, Fair: model.Weak, FairClass: "host {node}",
			Enabled: func(mn model.Node) bool { return m.canBroadcast(node(mn)) },
			Apply:   func(mn model.Node, out *model.Outbox) { m.broadcast(node(mn), out) }},
		&copyKind,
	}
	if m.casts {
		m.kinds = append(m.kinds, &model.ActionKind{Name: "launch", Pattern: "host {node} launch", Owner: model.OwnerHost,
			Enabled: func(mn model.Node) bool { return m.canCast(node(mn)) },
			Apply:   func(mn model.Node, out *model.Outbox) { m.Launch(&node(mn).Node, out) }})
	}
	if m.variant == ucast.FASplitIncrement {
		m.kinds = append(m.kinds, m.FAIncrementKind())
	}
	return m.kinds
}

// NewNode builds node id in its initial state.
func (m *Machine) NewNode(id model.NodeID) model.Node {
	n := &Node{g: m}
	m.InitNode(&n.Node, id)
	return n
}

// request is lfc_fetch_and_add's request (§3.8).
func (m *Machine) request(n *Node, out *model.Outbox) {
	n.Requested++
	n.Waiting++
	if n.ID == m.Sequencer {
		// The local NI performs the fetch-and-add at once.
		m.result(n, m.LocalFA(&n.Node))
		return
	}
	pkt := model.Packet{Tag: fa.TagRequest, Src: n.ID, Origin: n.ID, Seq: n.Requested}
	n.Send = append(n.Send, ucast.SendBuf{Pkt: pkt, Refs: 1})
	m.CreditSend(&n.Node, ucast.Desc{Dest: m.Sequencer, Pkt: pkt}, out)
}

// broadcast launches the next packet of the current message, reading the
// message's sequence number from the slot first if it is the first.
func (m *Machine) broadcast(n *Node, out *model.Outbox) {
	it, _ := m.current(n)
	if it.msg == len(n.Seqs) {
		if m.variant == PrefetchLIFO {
			// The bug: the newest result first.
			last := len(n.Prefetched) - 1
			n.Seqs = append(n.Seqs, n.Prefetched[last])
			n.Prefetched = n.Prefetched[:last]
		} else if m.variant == TwoOutstanding {
			n.Seqs = append(n.Seqs, n.Prefetched[0])
			n.Prefetched = append(n.Prefetched[:0], n.Prefetched[1:]...)
		} else {
			n.Seqs = append(n.Seqs, n.Slot)
			n.SlotFull = false
		}
		n.Waiting--
	}
	m.LaunchVal(&n.Node, n.Seqs[it.msg], out)
	m.drain(n)
	m.ring(n)
}

// ring sets the host receive buffers the library has taken from the pool
// beyond the initial HostBuffers (Host.Extra), as §3.6 manages them: before
// an upcall the library appends a buffer from the pool when no empty one
// is left, and a freed packet goes back to the pool when the ring already
// has an empty buffer (how many are "sufficient" is a modelling choice, as
// in UCAST's host library); the pool grows until the host can pin no more
// memory (§6.6.4: Pinned buffers). So the ring holds max(HostBuffers,
// used+1) buffers, at most Pinned, and the NI finds a free one exactly
// while fewer than Pinned are in use. The value is a function of the
// buffers in use, so it adds no state.
func (m *Machine) ring(n *Node) {
	want := min(max(m.HostBuffers, n.HostBuffersUsed()+1), m.Pinned)
	n.Extra = max(0, want-m.HostBuffers)
}

// Receive is event_packet_received: fetch-and-add's packets here, the
// broadcast's and credits in UCAST and MCAST.
func (m *Machine) Receive(mn model.Node, from model.NodeID, pkt model.Packet, out *model.Outbox) {
	n := node(mn)
	switch pkt.Tag {
	case fa.TagRequest:
		pkt = m.AcceptNewCredits(&n.Node, pkt, out)
		m.ServeFA(&n.Node, from, pkt, out)
	case fa.TagReply:
		pkt = m.AcceptNewCredits(&n.Node, pkt, out)
		m.result(n, pkt.Val)
	default:
		m.Machine.Machine.Receive(mn, from, pkt, out)
	}
}

// result stores a fetch-and-add result where lfc_fetch_and_add polls for
// it: the one slot (§3.8), or, in the variants with two outstanding
// requests, a queue (so that a second result does not overwrite the first:
// those variants fail for what the server's NI does, not the client's).
func (m *Machine) result(n *Node, v uint32) {
	if m.prefetches() {
		n.Prefetched = append(n.Prefetched, v)
		return
	}
	n.Slot, n.SlotFull = v, true
}

// process is the client's upcall for the oldest packet in the host queue:
// a plain multicast is consumed and its buffer recycled at once; a packet
// of the ordered broadcast is kept, then what has become deliverable is
// delivered.
func (m *Machine) process(n *Node) {
	pkt := n.Queue[0]
	n.Queue = append(n.Queue[:0], n.Queue[1:]...)
	if !m.ordered[pkt.Tree] {
		return
	}
	n.Held = append(n.Held, pkt)
	if m.variant == NoHoldback {
		if m.whole(n, pkt.Val) {
			m.deliverHeld(n, pkt.Val)
		}
		return
	}
	m.drain(n)
}

// whole reports whether every packet of the message numbered seq is held.
func (m *Machine) whole(n *Node, seq uint32) bool {
	k := 0
	for _, p := range n.Held {
		if p.Val == seq {
			k++
		}
	}
	return k == m.Fragments
}

// deliverHeld delivers the held message numbered seq and frees its packets.
func (m *Machine) deliverHeld(n *Node, seq uint32) {
	kept := n.Held[:0]
	var msg Msg
	for _, p := range n.Held {
		if p.Val == seq {
			msg = Msg{From: p.Origin, K: uint16((int(p.Seq)-1)/m.Fragments + 1)}
			if m.variant != NoFree {
				continue // lfc_packet_free
			}
			p.Val = noSeq // delivered; the bug: never freed
		}
		kept = append(kept, p)
	}
	n.Held = kept
	n.Delivered = append(n.Delivered, msg)
}

// noSeq marks a delivered packet that variant no-free keeps for ever.
const noSeq = ^uint32(0)

// own returns the index of the process's own message numbered seq, or -1.
func own(n *Node, seq uint32) int {
	for k, s := range n.Seqs {
		if s == seq {
			return k
		}
	}
	return -1
}

// delivered reports whether n has delivered msg.
func delivered(n *Node, msg Msg) bool {
	for _, d := range n.Delivered {
		if d == msg {
			return true
		}
	}
	return false
}

// drain delivers, in sequence-number order, every message that is next
// and available: the process's own (from its memory) or a whole held one.
// In the variants that deliver their own message at once, it does that
// first.
func (m *Machine) drain(n *Node) {
	if m.variant == NoHoldback || m.variant == SelfImmediate || m.variant == DoubleOwn {
		for k := range n.Seqs {
			if msg := (Msg{From: n.ID, K: uint16(k + 1)}); !delivered(n, msg) {
				n.Delivered = append(n.Delivered, msg)
			}
		}
		if m.variant == NoHoldback {
			return
		}
	}
	for {
		if k := own(n, n.NextSeq); k >= 0 {
			// Variant double-own's bug: no check that it was delivered.
			if msg := (Msg{From: n.ID, K: uint16(k + 1)}); !delivered(n, msg) || m.variant == DoubleOwn {
				n.Delivered = append(n.Delivered, msg)
			}
		} else if !m.WholeMessages {
			if !m.consume(n) {
				return
			}
			if n.Consumed < uint8(m.Fragments) {
				continue
			}
			n.Consumed = 0
		} else if m.whole(n, n.NextSeq) {
			m.deliverHeld(n, n.NextSeq)
		} else {
			return
		}
		n.NextSeq++
	}
}

// consume is streaming delivery (§6.3, §6.4): the handler of message
// NextSeq consumes its next packet if it is held, and frees it
// (pan_msg_consume returns each consumed packet to LFC). The first packet
// delivers the message: Panda invokes the handler, which then consumes
// the rest as they arrive. A message's packets travel on one tree, so they
// are held in order. It reports whether a packet was consumed.
func (m *Machine) consume(n *Node) bool {
	for i, p := range n.Held {
		if p.Val != n.NextSeq {
			continue
		}
		if n.Consumed == 0 {
			n.Delivered = append(n.Delivered, Msg{From: p.Origin, K: uint16((int(p.Seq)-1)/m.Fragments + 1)})
		}
		n.Consumed++
		if m.variant == NoFree {
			n.Held[i].Val = noSeq // consumed; the bug: never freed
		} else {
			n.Held = append(n.Held[:i], n.Held[i+1:]...) // lfc_packet_free
		}
		return true
	}
	return false
}

// Triggers, Pending, Waiting and Commutes (model.Dependencies) declare
// nothing:
// GSB's requests, replies and broadcasts are its own steps, which the
// substrate's data graph (the methods these replace) does not describe,
// so the stubborn-set reduction is off for GSB.
func (m *Machine) Triggers(_, _ model.NodeID) uint64 { return allNodes(m.P) }

// Pending declares nothing (see Triggers).
func (m *Machine) Pending(model.Node) uint64 { return allNodes(m.P) }

// Waiting declares nothing (see Triggers).
func (m *Machine) Waiting(model.Node) bool { return true }

// Commutes declares nothing (see Triggers).
func (m *Machine) Commutes(_, _ model.NodeID) bool { return false }

func allNodes(p int) uint64 { return ^uint64(0) >> uint(64-p) }
