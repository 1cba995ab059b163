// Package ucast implements UCAST, LFC's credit-based reliable FIFO unicast
// between NIs (thesis §4.1, Fig. 4.1–4.3), as pure event handlers over its
// own node state, and registers it as the protocol "ucast". It is also the
// substrate of every other protocol here: they embed its Node and Machine
// and compose it in one documented way (Extension, Compose, Features; see
// "The substrate" below).
//
// # The substrate
//
// UCAST is the substrate of every protocol here: its credits, send and
// receive pools, blocked-sends queues, host buffers, workload and stream
// logs, and its handlers (event_unicast, credit_send, send_packet,
// accept_new_credits, event_packet_received, event_packet_released). A
// protocol built on it (MCAST, RECOV, GSB, fa, INTR) composes it in one
// way, which is all it may do to it:
//
//   - its machine embeds *Machine and implements Extension's methods it
//     needs; *Machine implements all of them with UCAST's own behaviour,
//     so an embedding machine inherits the rest (and a protocol built on
//     another, RECOV on MCAST, inherits that one's);
//   - its constructor calls Compose once with its machine and the
//     Features it switches on (a protocol that wraps another calls it
//     again with its own machine);
//   - its node type embeds Node (Node.Base finds it: Machine.NodeOf) and
//     may add state of its own, which it encodes, copies, describes,
//     diffs and (for symmetry) renames itself;
//   - its packet tags are its own (model.NewTag; data tags reach
//     ReceiveData, control tags ReceiveControl), and so are its action
//     kinds and properties, which may use UCAST's exported handlers
//     (CreditSend, SendPacket, Release, AcceptNewCredits, Copy, ...) and
//     fetch-and-add's (fetchadd.go).
//
// It may not reach into UCAST's handlers otherwise: the fields of Machine
// other than Work are configuration that NewMachine and Compose set.
//
// # The modeled system (§3.1–3.6, §4.1)
//
// Every NI holds, per peer, a protocol control block (send credits, a FIFO
// blocked-sends queue, free credits; Fig. 4.1), a receive pool partitioned
// per immediate sender (at most C buffers each by the flow-control
// contract), and a bounded send pool (§3.5). Every host has a bounded pool
// of host receive buffers (§3.6): the NI copies a received data packet into
// a free one, and the host processes and frees it later.
//
// # The protocol
//
// Every NI holds C send credits per peer (one per receive buffer the peer
// reserves for it). credit_send transmits when a credit is available and
// otherwise queues the descriptor; send_packet piggybacks all owed credits
// on the outgoing packet; accept_new_credits adds arriving credits and
// transmits blocked descriptors in FIFO order while credits last; releasing
// a receive buffer returns one credit to its sender, by an explicit CREDIT
// packet once CREDIT_REFRESH credits are owed (Fig. 4.3).
//
// # Actions and atomicity
//
// Each action is one atomic transition of one node (the kernel's "deliver
// I->J" is the arrival event):
//
//   - "host H launch": host H takes a send packet from its NI's send pool and
//     launches the next item of its workload; the NI's send event handler
//     (event_unicast, event_multicast) runs in the same step. Merging the two
//     hides no interleaving: the launch has no effect other than appending to
//     the NI's FIFO send queue, so any schedule that delays the NI's handling
//     is equivalent to one that delays the launch itself.
//   - "deliver I->J": the packet at the head of link I->J arrives at NI J and
//     event_packet_received runs to completion (§3.3.4: NI handlers run to
//     completion, single-threaded). A data packet is put in a buffer of I's
//     partition of J's receive pool; a CREDIT packet occupies none (§3.4).
//   - "ni N copy": NI N copies its oldest received, not yet copied data
//     packet into a free host receive buffer (the NI's host-DMA resource
//     queue is FIFO, §3.3.4, §3.5); if the buffer is then no longer needed
//     the packet-release handler runs in the same step, as on DMA
//     completion.
//   - "host H process": host H hands its oldest delivered packet to the
//     client (lfc_upcall) and frees the host buffer (§3.6, §3.7).
//
// "host H process" only pops the head of host H's queue: it commutes with
// every other action, no other action disables it, and no property reads
// the host queue except the deadlock condition on terminal states. Every
// run is finite (each action advances a packet or consumes a credit
// packet), so the state graph is acyclic. The kind is therefore declared
// Ample and the protocol Acyclic, and the explorer explores a process step
// alone when one is enabled.
//
// With LFC's host library (Machine.HostLibrary, hostlib.go) "host H
// process" is not ample: it competes with "host H upcall" for the head of
// the queue and, by freeing a buffer, can disable "host H drain". Runs
// stay finite, though "host H drain" and "host H upcall" advance no
// packet: a drain adds a host buffer only while every buffer is in use
// and one packet waits for it, so the buffers from the pool never exceed
// the packets on the host (the next copy uses it), and each freed buffer
// returns one; an upcall moves a packet that only a return or a reply,
// which consume it, take back. So the graph is still acyclic, but not
// layered: a packet processed in one step or through upcall and return
// reaches the same state at two depths, and the explorer's sleep sets
// switch themselves off for these configurations (sound, slower).
//
// # Modeling decisions
//
//   - A receive buffer is released right after its packet is copied to the
//     host (§3.5: "After this copy, the NI receive buffer is returned to its
//     pool"), in the same atomic step.
//   - CREDIT packets are real packets on the FIFO link, not stack variables
//     (Fig. 4.3 sends a stack variable asynchronously).
//   - Send packets return to the send pool when transmitted (§4.1.2).
//   - The credit to return goes to the buffer's immediate sender (its pool
//     partition), which for unicast is hdr.src of Fig. 4.3 and for MCAST the
//     tree parent of Fig. 4.7; the two agree whenever hdr.src is written by
//     send_packet, as it always is.
//   - The default CREDIT_REFRESH is half the window, at least 1 (§8.2.1's
//     half-window acknowledgement rule applied to credits).
//
// # Invariants
//
//  1. credit-conservation: for every ordered pair S->R, S's send credits for
//     R + data packets in flight S->R + R's occupied buffers from S + R's
//     free credits for S + credits travelling R->S equals C; no count is
//     negative.
//  2. pool-bound: R never holds more than C buffers from one sender S.
//  3. fifo: every host is delivered each sender's packets in send order.
//  4. exactly-once: every packet is delivered to its destination host once.
//  5. deadlock: a state with no enabled action has delivered and processed
//     every packet.
//  6. eventual-delivery (liveness): on every fair run, every launched packet
//     is eventually delivered (copied) to every destination host.
//
// # Fairness
//
// For liveness checks every class is weakly fair except launches: links
// (the kernel's, per link: the network delivers what it carries), "ni N
// copy" per NI (the NI's DMA engine serves a waiting packet once a host
// buffer is free) and "host H process" per host (the client keeps consuming
// what it was handed; a client that stops would stall its senders, which is
// flow control at work, not a protocol failure). "host H launch" gets no
// fairness: a client may stop sending, and the promise concerns packets
// that were launched. No class needs strong fairness: once enabled, a copy
// or a process stays enabled until taken (only those actions consume host
// buffers and received packets), and so does a delivery.
//
// Every run of the protocol is finite, so eventual-delivery is checked on
// end states (see the properties package): a fair run on which some packet
// is never delivered ends in a state without enabled actions.
//
// # Symmetry
//
// A machine of this package (or MCAST's) whose workload maps onto itself
// under a rotation of node ids i -> i+r mod P (and, for MCAST, whose
// topology does too) offers that rotation to the search (model.Symmetric),
// which then stores one state per orbit. Nothing is assumed: Symmetries
// checks every rotation against the workload and the extension's TreeRenaming, and
// Node.RenameFrom renames every id in a node's state (peers' control
// blocks, senders of buffers, packets' origins, sources and trees, the
// stream logs). Protocols that embed Node and add state of their own must
// rename that too, so only machines that set AllowSymmetry offer any.
//
// # Broken variants
//
// Named variants break one rule each so tests can show the checker catches
// it (see Def). credit-bounce is a livelock: accept_new_credits returns an
// explicit CREDIT packet's credits to their sender, so they travel back and
// forth for ever while a send waits; it is declared Cyclic (its runs are
// infinite), which switches the reduction off for it, and eventual-delivery
// catches it with a lasso.
package ucast

import (
	"fmt"

	"lfccheck/model"
)

// Packet tags of UCAST (Table 3.3), handed out by the kernel's registry.
var (
	// TagUnicast is UCAST's data packet (Fig. 4.1).
	TagUnicast = model.NewTag(model.TagInfo{Name: "UNICAST", Data: true,
		Brief: func(p model.Packet) string { return fmt.Sprintf("u%d#%d%s", p.Origin, p.Seq, RequestMark(p)) }})
	// TagCredit is an explicit credit update (Fig. 4.3).
	TagCredit = model.NewTag(model.TagInfo{Name: "CREDIT", Brief: func(model.Packet) string { return "cr" }})
	// TagReply is the reply a request's upcall sends to the request's
	// origin (Machine.Replies): a data packet routed like UNICAST.
	TagReply = model.NewTag(model.TagInfo{Name: "REPLY", Data: true,
		Brief: func(p model.Packet) string { return fmt.Sprintf("r%d#%d", p.Origin, p.Seq) }})
)

// ReplyWanted is the Val of a request packet (Machine.Replies): its
// upcall must reply to its origin before returning.
const ReplyWanted uint32 = 1

// Variant names.
const (
	Correct        = "correct"
	NoCreditCheck  = "no-credit-check"
	BlockedLIFO    = "blocked-lifo"
	NoCreditReturn = "no-credit-return"
	CreditBounce   = "credit-bounce"
)

// RequestMark is "?" for a request packet (one whose upcall replies), ""
// otherwise: the suffix of a data packet's brief form.
func RequestMark(p model.Packet) string {
	if p.Val == ReplyWanted && p.Tag != TagFARequest && p.Tag != TagReply {
		return "?"
	}
	return ""
}

// Machine is UCAST bound to a configuration: constants, workload, the
// features its protocol switches on and the protocol's extension (see
// Extension and Compose).
type Machine struct {
	P           int
	C           int // initial send credits per peer
	Refresh     int // CREDIT_REFRESH
	HostBuffers int
	SendBuffers int
	// Features are set by the protocol built on UCAST, through Compose.
	Features
	// HostLibrary models LFC's host library (§3.1.4, §3.6, §6.2.3): an
	// upcall may be a step of its own ("host H upcall" moves the packet
	// whose handler runs aside, Host.Up, still holding its host buffer;
	// "host H return" ends it), and a routine that waits for a resource
	// (a send packet, a fetch-and-add reply) drains the network: "host H
	// drain" takes a host receive buffer from the pool (Host.Extra) when
	// the NI has a packet for the host and every buffer is full. A freed
	// buffer goes back to the pool while buffers from it are in use. With
	// Nested (upcalls_allowed), a waiting routine also makes upcalls for
	// the packets that follow. (Parameters, not features: they come with
	// the configuration.)
	HostLibrary bool
	Nested      bool
	// Replies makes every packet of the workload a request (Val
	// ReplyWanted): its upcall replies to its origin (a REPLY packet,
	// numbered like the request, in stream ReplyBase+replier at the
	// requester) before it returns. Set HostLibrary with it.
	Replies   bool
	ReplyBase int
	// ReplyErr, set by Finish, rejects a workload whose replies cannot be
	// numbered (requests to one destination in two streams).
	ReplyErr error
	Variant  string
	// Work lists, per host, the packets it launches in order.
	Work [][]WorkItem
	// Expect gives, per host and stream, how many packets it must receive.
	Expect [][]int
	// Streams is the number of FIFO streams a host tracks (the extension's
	// PacketStream numbers them): set by Finish, from P, the features'
	// ExtraStreams and the reply streams.
	Streams int

	// ext is the protocol built on UCAST (the machine itself for UCAST's
	// own), set by Compose.
	ext Extension

	kinds []*model.ActionKind
	depState
	// owed lists, per host and work item, the (destination, stream)
	// pairs that must be delivered once the item is launched.
	owed [][][]owedTo
	// dests gives a work item's destinations (Finish's argument), and
	// replyVia the stream of each (requester, replier) pair's requests.
	dests    func(src int, it WorkItem) []model.NodeID
	replyVia map[[2]int]int
}

// NewMachine builds UCAST's machine for a resolved configuration with
// parameters p and workload work, composed with no extension and no
// features (Compose changes both).
func NewMachine(cfg model.Config, p *Params, work [][]WorkItem) *Machine {
	m := &Machine{P: cfg.Nodes, C: p.Credits, Refresh: p.Refresh, HostBuffers: p.HostBuffers,
		SendBuffers: p.SendBuffers, Variant: cfg.Variant, Work: work, Streams: cfg.Nodes,
		HostLibrary: p.HostLibrary(), Nested: p.HostLibrary() && !p.NoNestedUpcalls, Replies: p.Reply}
	m.ext = m
	return m
}

// Kinds are launch, deliver, copy and process, in that order per node.
func (m *Machine) Kinds() []*model.ActionKind {
	if m.kinds == nil {
		m.kinds = []*model.ActionKind{
			{Name: "launch", Pattern: "host {node} launch", Owner: model.OwnerHost,
				Enabled: func(n model.Node) bool { return m.canLaunch(m.NodeOf(n)) },
				Apply:   func(n model.Node, out *model.Outbox) { m.Launch(m.NodeOf(n), out) }},
			model.Deliver,
			{Name: "copy", Pattern: "ni {node} copy", Owner: model.OwnerNI, Fair: model.Weak, FairClass: "ni {node}",
				Enabled: func(n model.Node) bool { return m.canCopy(m.NodeOf(n)) },
				Apply:   func(n model.Node, out *model.Outbox) { m.Copy(m.NodeOf(n), out) }},
			{Name: "process", Pattern: "host {node} process", Owner: model.OwnerHost, Ample: m.Keep == 0 && !m.HostLibrary,
				Fair: model.Weak, FairClass: "host {node}", Live: m.processMode(),
				Enabled: func(n model.Node) bool { return m.mayTakeHead(m.NodeOf(n)) },
				Apply:   func(n model.Node, _ *model.Outbox) { m.Process(m.NodeOf(n)) }},
		}
		if m.Keep > 0 {
			m.kinds = append(m.kinds,
				&model.ActionKind{Name: "keep", Pattern: "host {node} keep", Owner: model.OwnerHost,
					Fair: model.Weak, FairClass: "host {node}", Live: model.LiveClient,
					Enabled: func(n model.Node) bool { u := m.NodeOf(n); return m.mayTakeHead(u) && len(u.Held) < m.Keep },
					Apply: func(n model.Node, _ *model.Outbox) {
						u := m.NodeOf(n)
						u.Held = append(u.Held, u.Queue[0])
						u.Queue = append(u.Queue[:0], u.Queue[1:]...)
					}},
				&model.ActionKind{Name: "free", Pattern: "host {node} free", Owner: model.OwnerHost,
					Fair: model.Weak, FairClass: "host {node} free", Live: model.LiveClient,
					Enabled: func(n model.Node) bool { return len(m.NodeOf(n).Held) > 0 },
					Apply: func(n model.Node, _ *model.Outbox) {
						// The client may free its kept packets in any order;
						// which one it frees is not observable (only their
						// number is: host buffers), so the model frees the
						// oldest.
						u := m.NodeOf(n)
						u.Held = append(u.Held[:0], u.Held[1:]...)
						m.freed(u)
					}})
		}
		if m.HostLibrary {
			m.kinds = append(m.kinds, m.hostLibraryKinds()...)
		}
		if m.FetchAdd && m.Variant == FASplitIncrement {
			m.kinds = append(m.kinds, m.FAIncrementKind())
		}
	}
	return m.kinds
}

func (m *Machine) processMode() model.LiveMode {
	if m.ClientProcess {
		return model.LiveClient
	}
	return model.LiveEager
}

// NewNode builds node id with C send credits for every peer.
func (m *Machine) NewNode(id model.NodeID) model.Node {
	n := &Node{}
	m.InitNode(n, id)
	return n
}

// InitNode sets n to node id's initial UCAST state.
func (m *Machine) InitNode(n *Node, id model.NodeID) {
	*n = Node{ID: id, M: m, NI: NI{PCB: make([]PCB, m.P)}, Host: Host{Log: make([]model.StreamLog, m.Streams)}}
	for p := range n.PCB {
		if p != int(id) {
			n.PCB[p].SendCredits = m.C
		}
	}
}

func (m *Machine) canLaunch(n *Node) bool {
	return n.Next < len(m.Work[n.ID]) && len(n.Send) < m.SendBuffers && !n.FA.Outstanding
}

func (m *Machine) canCopy(n *Node) bool {
	return n.HostBuffersUsed() < m.HostBuffers+n.Extra && n.NextCopy() >= 0
}

// Launch allocates a send packet for host n's next work item and runs the
// NI's send handler: event_unicast (Fig. 4.2) or the extension's LaunchItem.
func (m *Machine) Launch(n *Node, out *model.Outbox) { m.LaunchVal(n, 0, out) }

// LaunchVal is Launch with the packet's protocol-defined value set to val
// (for example a sequence number).
func (m *Machine) LaunchVal(n *Node, val uint32, out *model.Outbox) {
	it := m.Work[n.ID][n.Next]
	n.Next++
	fa := m.FetchAdd && it.Tag == TagFARequest
	if fa && n.ID == m.Server {
		n.FA.Got = append(n.FA.Got, m.LocalFA(n)) // local: no packet
		return
	}
	if m.Replies && !fa {
		val = ReplyWanted
	}
	pkt := model.Packet{Tag: it.Tag, Src: n.ID, Tree: it.Tree, Origin: n.ID, Seq: it.Seq, Val: val, Hop: m.reusedHeader(n)}
	n.Send = append(n.Send, SendBuf{Pkt: pkt})
	if fa {
		n.FA.Outstanding = true
		it.Dest = m.Server
	}
	if it.Tag != TagUnicast && !fa {
		m.ext.LaunchItem(n, it, out)
		return
	}
	sb := &n.Send[len(n.Send)-1]
	sb.Refs++
	d := Desc{Dest: it.Dest, Pkt: sb.Pkt}
	d.Pkt.Hop = 0 // event_unicast reads no header (Fig. 4.2)
	m.CreditSend(n, d, out)
}

// reusedHeader takes a send packet from the pool for a launch and returns
// the deadlock channel field it still holds (Features.ReusedHeaders; 0
// otherwise).
func (m *Machine) reusedHeader(n *Node) uint8 {
	k := len(n.Free)
	if !m.ReusedHeaders || k == 0 {
		return 0
	}
	h := n.Free[k-1]
	n.Free = n.Free[:k-1]
	return h
}

// Receive is event_packet_received (Fig. 4.3): a data packet takes a
// buffer of its sender's pool partition (UNICAST; other data tags decide in
// ReceiveData), then the packet's credits are accepted. Delivery to the host is
// the separate "ni N copy" action.
func (m *Machine) Receive(mn model.Node, from model.NodeID, pkt model.Packet, out *model.Outbox) {
	n := m.NodeOf(mn)
	// Accepting credits only transmits (it never takes or frees a receive
	// buffer), so the packet may take its buffer afterwards.
	pkt = m.AcceptNewCredits(n, pkt, out)
	if pkt.Tag == TagUnicast || pkt.Tag == TagReply {
		n.Recv = append(n.Recv, RecvBuf{Pkt: pkt, From: from})
	}
	switch {
	case pkt.Tag == TagUnicast || pkt.Tag == TagCredit || pkt.Tag == TagReply:
	case pkt.Tag == TagFARequest && m.FetchAdd:
		m.ServeFA(n, from, pkt, out)
	case pkt.Tag == TagFAReply && m.FetchAdd:
		m.TakeFAReply(n, pkt)
	case pkt.Tag.IsData():
		m.ext.ReceiveData(n, from, pkt, out)
	default:
		m.ext.ReceiveControl(n, from, pkt, out)
	}
}

// Copy copies n's oldest uncopied received packet into a free host buffer,
// records the delivery, and runs the extension's Copied.
func (m *Machine) Copy(n *Node, out *model.Outbox) {
	i := n.NextCopy()
	n.Recv[i].Copied = true
	pkt := n.Recv[i].Pkt
	n.Queue = append(n.Queue, pkt)
	st := m.StreamOf(pkt)
	out.Deliver(n.ID, pkt, st, &n.Log[st])
	if pkt.Tag == TagReply && m.Nested {
		// Nested upcalls reply in another order than the requests came:
		// a reply's number is its request's, not its place in the
		// stream, so the stream has no order to check (exactly-once
		// still reads its mask).
		n.Log[st].Last = 0
	}
	m.ext.Copied(n, pkt, out)
}

// StreamOf is the stream a data packet belongs to at its destination
// hosts: the extension's PacketStream, and for a REPLY the replier's reply
// stream.
func (m *Machine) StreamOf(pkt model.Packet) int {
	if pkt.Tag == TagReply {
		return m.ReplyBase + int(pkt.Origin)
	}
	return m.ext.PacketStream(pkt)
}

// Process is the host's processing of its oldest delivered packet, which
// frees the host buffer.
func (m *Machine) Process(n *Node) {
	copy(n.Queue, n.Queue[1:])
	n.Queue = n.Queue[:len(n.Queue)-1]
	m.freed(n)
}

// CreditSend is credit_send (Fig. 4.2; Fig. 4.13 through NoCreditSend).
// A send that consumes a credit is never deadlocked.
func (m *Machine) CreditSend(n *Node, d Desc, out *model.Outbox) {
	pcb := &n.PCB[d.Dest]
	if pcb.SendCredits > 0 {
		pcb.SendCredits--
		d.Pkt.Hop = 0
		k := len(out.Sends)
		m.SendPacket(n, d, out)
		out.Paid(k) // for step properties: this send consumed a credit
		return
	}
	switch {
	case m.Variant == NoCreditCheck:
		m.SendPacket(n, d, out)
	default:
		m.ext.NoCreditSend(n, d, out)
	}
}

// NoCreditSend is UCAST's credit_send branch for a descriptor that finds
// no credit: it waits on the destination's blocked-sends queue.
func (m *Machine) NoCreditSend(n *Node, d Desc, out *model.Outbox) {
	pcb := &n.PCB[d.Dest]
	pcb.Blocked = append(pcb.Blocked, d)
}

// SendPacket is send_packet (Fig. 4.2): stamp the header, piggyback all owed
// credits, transmit, and account for the transmitted descriptor.
func (m *Machine) SendPacket(n *Node, d Desc, out *model.Outbox) {
	pcb := &n.PCB[d.Dest]
	pkt := d.Pkt
	pkt.Src = n.ID
	pkt.Credits = uint8(pcb.FreeCredits)
	pcb.FreeCredits = 0
	out.Transmit(d.Dest, pkt)
	if !pkt.Tag.IsData() {
		return
	}
	if d.Fwd {
		if i := n.FindRecv(pkt); i >= 0 && n.Recv[i].Pending > 0 {
			if m.SharedHeaders {
				n.Recv[i].Pkt.Hop = pkt.Hop
			}
			n.Recv[i].Pending--
			if n.Recv[i].Pending == 0 && n.Recv[i].Copied {
				m.Release(n, pkt, out)
			}
		}
		return
	}
	for i := range n.Send {
		if n.Send[i].Pkt.SameData(pkt) {
			if m.SharedHeaders {
				n.Send[i].Pkt.Hop = pkt.Hop
			}
			n.Send[i].Refs--
			if n.Send[i].Refs == 0 {
				if m.ReusedHeaders {
					n.Free = append(n.Free, pkt.Hop) // the header this send wrote
				}
				n.Send = append(n.Send[:i], n.Send[i+1:]...)
			}
			return
		}
	}
}

// AcceptNewCredits is accept_new_credits (Fig. 4.3). It returns the packet
// with its piggybacked credits taken out: once accepted, hdr.credits is
// never read again (send_packet writes it anew for every transmission), so
// a packet kept in a buffer, a host queue or a descriptor keeps no count.
// Keeping it would tell apart states that behave alike (by a factor of 3
// or more with C >= 4); every handler stores the returned packet.
func (m *Machine) AcceptNewCredits(n *Node, pkt model.Packet, out *model.Outbox) model.Packet {
	credits := int(pkt.Credits)
	pkt.Credits = 0
	pcb := &n.PCB[pkt.Src]
	if m.Variant == CreditBounce && pkt.Tag == TagCredit && credits > 0 {
		// The bug: the credits are booked as owed to the sender and
		// returned at once, so they travel back and forth for ever.
		pcb.FreeCredits += credits
		m.SendPacket(n, Desc{Dest: pkt.Src, Pkt: model.Packet{Tag: TagCredit, Origin: n.ID}}, out)
		return pkt
	}
	pcb.SendCredits += credits
	for len(pcb.Blocked) > 0 && pcb.SendCredits > 0 {
		var d Desc
		if m.Variant == BlockedLIFO {
			d = pcb.Blocked[len(pcb.Blocked)-1]
			pcb.Blocked = pcb.Blocked[:len(pcb.Blocked)-1]
		} else {
			d = pcb.Blocked[0]
			pcb.Blocked = append(pcb.Blocked[:0], pcb.Blocked[1:]...)
		}
		m.CreditSend(n, d, out)
	}
	return pkt
}

// Release is event_packet_released (Fig. 4.3, 4.7): free the buffer
// holding pkt and return a credit to the NI the extension's CreditTo
// names.
func (m *Machine) Release(n *Node, pkt model.Packet, out *model.Outbox) {
	i := n.FindRecv(pkt)
	rb := n.Recv[i]
	to := m.ext.CreditTo(n, &rb)
	n.Recv = append(n.Recv[:i], n.Recv[i+1:]...)
	if m.Variant != NoCreditReturn {
		m.ext.ReturnCredit(n, rb, to, out)
	}
}

// ReturnCredit is UCAST's credit return of a released buffer: owed to its
// sender, returned at CREDIT_REFRESH.
func (m *Machine) ReturnCredit(n *Node, _ RecvBuf, to model.NodeID, out *model.Outbox) {
	m.ReturnCreditTo(n, to, out)
}

// ReturnCreditTo is return_credit_to (Fig. 4.3).
func (m *Machine) ReturnCreditTo(n *Node, sender model.NodeID, out *model.Outbox) {
	pcb := &n.PCB[sender]
	pcb.FreeCredits++
	if pcb.FreeCredits >= m.Refresh {
		m.SendPacket(n, Desc{Dest: sender, Pkt: model.Packet{Tag: TagCredit, Origin: n.ID}}, out)
	}
}
