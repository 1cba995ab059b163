// Package panda models Panda's message passing over LFC: its host-level
// sliding-window flow control, multi-packet messages, an RPC whose
// handler sends its reply from inside its upcall, and the upcall models
// of thesis §6.2.3 under which that handler may or may not block. It
// registers the protocol "panda".
//
// # What the thesis says (§6.2.3, §6.3)
//
// Panda fragments a message into LFC packets and runs a sliding-window
// flow control per pair of processes on top of LFC: every packet header
// carries a count of piggybacked credits "used by Panda's sliding-window
// flow-control scheme" (§6.3, Fig. 6.12), and senders do not interleave
// the packets of different messages. §6.2.3 names the hazard this creates
// for upcalls: "Consider for example the transmission of a large reply
// message by an upcall handler. If the message is sent by means of a
// flow-controlled protocol, then the send routine may block when its send
// window closes. The send window can be reopened only after an
// acknowledgement has been processed, which requires another upcall. If
// the active-messages system allows at most one upcall at a time, then we
// have a deadlock. If the system allows multiple upcalls, however, then
// the acknowledgement handler can be run on top of the blocked handler
// (i.e., as a nested upcall) and no deadlock occurs." Panda's own model
// (end of §6.2.3) allows "up to one upcall per endpoint" at a time; on
// LFC, lfc_upcall runs synchronously whenever an LFC routine polls, in
// the context of the current thread, queues the packet at its endpoint
// (SAP) and invokes the SAP's handler only when no earlier message of that
// SAP is being handled (§6.3: "a SAP's handler is not invoked again until
// the previous invocation has returned").
//
// Both results are the thesis's: the variant one-upcall deadlocks (the
// counterexample is the thesis's sentence, step by step), and the correct
// model, where lfc_upcall nests on top of the blocked handler, does not.
//
// # The model
//
// Node 0 is an RPC server, nodes 1..P-1 are clients. Each client's thread
// makes calls RPCs, one after the other: it sends a request of
// request-packets packets to the server's request SAP and waits for the
// reply. The server's request handler, an upcall, sends a reply of
// reply-packets packets back to the client's reply SAP before it returns;
// the client's reply handler hands the reply to the waiting thread.
//
// Every ordered pair of hosts S->R has a window of W packets: S's credits
// for R start at W, and S sends a data packet (request or reply) to R only
// with a credit, spending it; otherwise the sending routine blocks (in the
// thread or in the handler). R's lfc_upcall, processing a data packet from
// S, adds the credits it carries to its credits for S and then owes S one
// credit; owed credits ride on R's next data packet to S (piggybacked) or,
// once refresh of them are owed, go back at once in an explicit ACK
// message, a control packet outside the window. An ACK, like a data
// packet, reaches its destination's credits only through that host's
// lfc_upcall: an acknowledgement "requires another upcall".
//
// Actions, each one atomic step of one host, and the kernel's "deliver
// I->J", which appends the packet to host J's queue of packets LFC has
// delivered to host memory and not yet handed to lfc_upcall:
//
//   - "host H call": client H's thread begins its next RPC.
//   - "host H send": H's sending routine, the thread's request or the
//     handler's reply, transmits its next packet, spending a credit and
//     piggybacking what H owes the destination; after the reply's last
//     packet the request handler returns in the same step.
//   - "host H upcall": lfc_upcall for the oldest packet LFC delivered to
//     H: credits, reassembly, credits owed, perhaps an ACK; a message whose
//     last packet this was is queued at its SAP.
//   - "host H serve": the request SAP's handler begins for the oldest
//     queued request (it then sends the reply through "host H send").
//   - "host H wake": the reply SAP's handler hands the oldest queued reply
//     to the waiting thread, which may make its next call.
//
// Correct (Panda's model on LFC): lfc_upcall runs whenever a packet
// waits, also on top of a request handler that is blocked in its send
// (the send routine polls: a nested upcall); the request SAP has at most
// one handler at a time, so requests queue behind a blocked one in
// order. Variant one-upcall allows at most one upcall per host at a time:
// while the request handler runs, no lfc_upcall and no other handler
// does.
//
// # Modelling choices
//
//   - A standalone machine on model.Machine, not UCAST's substrate: the
//     deadlock is a host-level one, above LFC, and LFC's guarantees are
//     what the kernel's links already are (reliable, FIFO per pair, no
//     loss; UCAST checks that LFC provides them, and that LFC's host
//     library drains the network while a routine waits, §3.1.4, §3.6, so
//     LFC itself never stops delivering to host memory). Composing UCAST's
//     NI credits and host buffers underneath would multiply the states
//     without changing the question; the NI-level analogue, a reply
//     waiting for send packets, is UCAST's reply rows and variant
//     no-drain.
//   - When R returns a window credit is not in the thesis. Here it is
//     when lfc_upcall has taken the packet off LFC's delivery queue into
//     Panda's message structure: the window bounds the packets per pair
//     that wait in host memory for an upcall, and messages longer than
//     the window can complete although their handler has not run.
//   - Handlers get whole messages (invoked when the last packet has been
//     queued), not §6.3's stream messages consumed from the first packet
//     on; the request handler consumes its request at once and never waits
//     for another packet of it.
//   - The ACK threshold (refresh, default max(1, W/2)) borrows the
//     half-window acknowledgement of §8.2.1; the thesis gives none for
//     Panda. refresh above W is refused: a receiver could then owe a
//     blocked sender its whole window for ever, a deadlock of the
//     parameter, not of the upcall model.
//   - Over-approximation: in the correct model lfc_upcall may run at any
//     time (polls by LFC routines, and interrupts, §6.2.2), not only while
//     a routine waits; the model's runs include the library's.
//   - One request handler and one reply handler per host; a host is a
//     server or a client, never both, so its thread and its handler never
//     send at once and Panda's rule that messages are not interleaved
//     holds by construction.
//
// # Properties
//
//  1. deadlock: a state with no enabled action has every call answered
//     and nothing left in queues or on links.
//  2. window: for every ordered pair S->R, S's credits for R + R's data
//     packets from S on the link or in R's delivery queue + credits R owes
//     S + credits travelling R->S (piggybacked or in ACKs, on the link or
//     in S's delivery queue) = W; none is negative.
//  3. fifo, exactly-once: every handler is handed each sender's messages
//     in call order, each once, and at a proper end all of them.
//  4. reply-blocks (a Sometimes goal): some reachable state has a request
//     handler blocked in its reply with its window closed, so the passing
//     rows exercise the thesis's scenario.
//
// Statistic nested-upcalls counts the lfc_upcall steps the search takes
// while a request handler is active on the same host.
//
// Every run is finite (calls, packets and the ACKs they trigger are
// bounded), so the protocol is declared Acyclic; no action kind is ample,
// and no symmetry is offered.
package panda

import (
	"encoding/binary"
	"fmt"
	"strings"

	"lfccheck/model"
)

// Variants.
const (
	Correct    = "correct"
	OneUpcall  = "one-upcall"
	serverNode = model.NodeID(0)
)

// Packet tags: REQUEST and REPLY packets are data (they spend a window
// credit); ACK is a control packet carrying credits only. A data packet's
// Seq is its call's number, Val its 1-based index in its message.
var (
	TagRequest = model.NewTag(model.TagInfo{Name: "PANDA_REQUEST", Data: true,
		Brief: func(p model.Packet) string { return fmt.Sprintf("req%d.%d", p.Seq, p.Val) }})
	TagReply = model.NewTag(model.TagInfo{Name: "PANDA_REPLY", Data: true,
		Brief: func(p model.Packet) string { return fmt.Sprintf("rep%d.%d", p.Seq, p.Val) }})
	TagAck = model.NewTag(model.TagInfo{Name: "PANDA_ACK",
		Brief: func(model.Packet) string { return "ack" }})
)

// Node is a host's Panda state.
type Node struct {
	ID model.NodeID
	// Credits[p] are the window credits for sending to p; Owed[p] the
	// credits owed to p, not yet returned.
	Credits, Owed []uint8
	// Delivered holds the packets LFC delivered to host memory, oldest
	// first, that lfc_upcall has not yet processed.
	Delivered []model.Packet
	// Partial are messages whose first packets lfc_upcall has queued and
	// whose last has not arrived (Tag and Seq of the message, Origin its
	// sender, Val the packets so far), in order of sender.
	Partial []model.Packet
	// Requests and Replies are complete messages queued at the request
	// and reply SAPs.
	Requests, Replies []model.Packet
	// Serving: the request SAP's handler is running (until its reply's
	// last packet is sent).
	Serving bool
	// Out is the message being sent (Tag 0: none): Tag, Seq, Val the
	// packets sent so far; Dest its destination.
	Out  model.Packet
	Dest model.NodeID
	// Calls is the number of calls the thread has begun; Waiting says it
	// waits for the last one's reply.
	Calls   int
	Waiting bool
	// Logs[s] records the messages from s handed to a handler (history
	// state for fifo and exactly-once).
	Logs []model.StreamLog
}

// Encode appends the canonical encoding.
func (n *Node) Encode(buf []byte) []byte {
	buf = append(buf, n.Credits...)
	buf = append(buf, n.Owed...)
	buf = model.AppendPackets(buf, n.Delivered)
	buf = model.AppendPackets(buf, n.Partial)
	buf = model.AppendPackets(buf, n.Requests)
	buf = model.AppendPackets(buf, n.Replies)
	buf = model.AppendBool(buf, n.Serving)
	buf = model.AppendPacket(buf, n.Out)
	buf = append(buf, byte(n.Dest))
	buf = binary.AppendUvarint(buf, uint64(n.Calls))
	buf = model.AppendBool(buf, n.Waiting)
	for _, l := range n.Logs {
		buf = binary.AppendUvarint(buf, uint64(l.Last))
		buf = binary.AppendUvarint(buf, uint64(l.Base))
		buf = binary.AppendUvarint(buf, l.Mask)
	}
	return buf
}

// Decode reads the encoding written by Encode.
func (n *Node) Decode(d *model.Decoder) {
	for i := range n.Credits {
		n.Credits[i] = d.Byte()
	}
	for i := range n.Owed {
		n.Owed[i] = d.Byte()
	}
	n.Delivered = d.Packets(n.Delivered)
	n.Partial = d.Packets(n.Partial)
	n.Requests = d.Packets(n.Requests)
	n.Replies = d.Packets(n.Replies)
	n.Serving = d.Bool()
	n.Out = d.Packet()
	n.Dest = model.NodeID(d.Byte())
	n.Calls = int(d.Uvarint())
	n.Waiting = d.Bool()
	for i := range n.Logs {
		n.Logs[i].Last = uint16(d.Uvarint())
		n.Logs[i].Base = uint16(d.Uvarint())
		n.Logs[i].Mask = d.Uvarint()
	}
}

// CopyFrom makes n a deep copy of src, a *Node.
func (n *Node) CopyFrom(src model.Node) {
	s := src.(*Node)
	n.ID = s.ID
	n.Credits = append(n.Credits[:0], s.Credits...)
	n.Owed = append(n.Owed[:0], s.Owed...)
	n.Delivered = append(n.Delivered[:0], s.Delivered...)
	n.Partial = append(n.Partial[:0], s.Partial...)
	n.Requests = append(n.Requests[:0], s.Requests...)
	n.Replies = append(n.Replies[:0], s.Replies...)
	n.Serving, n.Out, n.Dest, n.Calls, n.Waiting = s.Serving, s.Out, s.Dest, s.Calls, s.Waiting
	n.Logs = append(n.Logs[:0], s.Logs...)
}

func peers(xs []uint8, self model.NodeID) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, x := range xs {
		if i > 0 {
			b.WriteByte(' ')
		}
		if model.NodeID(i) == self {
			b.WriteByte('-')
		} else {
			fmt.Fprint(&b, x)
		}
	}
	return b.String() + "]"
}

func msgList(ps []model.Packet) string {
	return model.ListOf(ps, func(p model.Packet) string {
		kind := "request"
		if p.Tag == TagReply {
			kind = "reply"
		}
		return fmt.Sprintf("%s %d from %d", kind, p.Seq, p.Origin)
	})
}

func (n *Node) outText() string {
	if n.Out.Tag == 0 {
		return "none"
	}
	kind := "request"
	if n.Out.Tag == TagReply {
		kind = "reply"
	}
	return fmt.Sprintf("%s %d to %d, %d packets sent", kind, n.Out.Seq, n.Dest, n.Out.Val)
}

// Describe renders the host's state: its window and its upcalls.
func (n *Node) Describe() []string {
	return []string{
		fmt.Sprintf("host %d: credits %s, owed %s, delivered %s", n.ID, peers(n.Credits, n.ID), peers(n.Owed, n.ID), model.PacketList(n.Delivered)),
		fmt.Sprintf("host %d: partial %s, requests %s, replies %s, serving %v, sending %s, calls %d, waiting %v",
			n.ID, msgList(n.Partial), msgList(n.Requests), msgList(n.Replies), n.Serving, n.outText(), n.Calls, n.Waiting),
	}
}

// Diff reports what differs from prev, a *Node.
func (n *Node) Diff(prev model.Node, ch func(what, from, to string)) {
	p := prev.(*Node)
	h := fmt.Sprintf("host %d ", n.ID)
	ch(h+"credits", peers(p.Credits, n.ID), peers(n.Credits, n.ID))
	ch(h+"owed", peers(p.Owed, n.ID), peers(n.Owed, n.ID))
	ch(h+"delivered", model.PacketList(p.Delivered), model.PacketList(n.Delivered))
	ch(h+"partial", msgList(p.Partial), msgList(n.Partial))
	ch(h+"requests", msgList(p.Requests), msgList(n.Requests))
	ch(h+"replies", msgList(p.Replies), msgList(n.Replies))
	ch(h+"serving", fmt.Sprint(p.Serving), fmt.Sprint(n.Serving))
	ch(h+"sending", p.outText(), n.outText())
	ch(h+"calls", fmt.Sprint(p.Calls), fmt.Sprint(n.Calls))
	ch(h+"waiting", fmt.Sprint(p.Waiting), fmt.Sprint(n.Waiting))
	for s := range n.Logs {
		ch(fmt.Sprintf("%shandled from %d", h, s), p.Logs[s].String(), n.Logs[s].String())
	}
}

// Machine is Panda's message passing for one configuration.
type Machine struct {
	P                    int
	W, Refresh, Calls    int
	RequestLen, ReplyLen int
	Variant              string
	kinds                []*model.ActionKind
}

// New builds the machine for a resolved configuration.
func New(cfg model.Config) (*Machine, error) {
	p := cfg.Params.(*Params)
	return &Machine{P: cfg.Nodes, W: p.Window, Refresh: p.RefreshOrDefault(), Calls: p.Calls,
		RequestLen: p.RequestPackets, ReplyLen: p.ReplyPackets, Variant: cfg.Variant}, nil
}

func node(n model.Node) *Node { return n.(*Node) }

// NewNode builds host id in its initial state: a full window to every
// peer.
func (m *Machine) NewNode(id model.NodeID) model.Node {
	n := &Node{ID: id, Credits: make([]uint8, m.P), Owed: make([]uint8, m.P), Logs: make([]model.StreamLog, m.P)}
	for i := range n.Credits {
		if model.NodeID(i) != id {
			n.Credits[i] = uint8(m.W)
		}
	}
	return n
}

// msgLen is the number of packets of a message with tag t.
func (m *Machine) msgLen(t model.Tag) int {
	if t == TagReply {
		return m.ReplyLen
	}
	return m.RequestLen
}

// upcallFree reports whether host n may begin an upcall: always with
// nested upcalls, and under one-upcall only while no handler runs.
func (m *Machine) upcallFree(n *Node) bool { return m.Variant != OneUpcall || !n.Serving }

// Blocked reports whether n's sending routine waits for a window credit.
func (n *Node) Blocked() bool { return n.Out.Tag != 0 && n.Credits[n.Dest] == 0 }

// Kinds are call, send, upcall, serve, wake and the kernel's deliver.
func (m *Machine) Kinds() []*model.ActionKind {
	if m.kinds != nil {
		return m.kinds
	}
	m.kinds = []*model.ActionKind{
		{Name: "call", Pattern: "host {node} call", Owner: model.OwnerHost,
			Enabled: func(mn model.Node) bool {
				n := node(mn)
				return n.ID != serverNode && !n.Waiting && n.Calls < m.Calls
			},
			Apply: func(mn model.Node, _ *model.Outbox) {
				n := node(mn)
				n.Calls++
				n.Waiting = true
				n.Out, n.Dest = model.Packet{Tag: TagRequest, Origin: n.ID, Seq: model.SeqOf(n.Calls)}, serverNode
			}},
		{Name: "send", Pattern: "host {node} send", Owner: model.OwnerHost,
			Enabled: func(mn model.Node) bool { n := node(mn); return n.Out.Tag != 0 && n.Credits[n.Dest] > 0 },
			Apply:   func(mn model.Node, out *model.Outbox) { m.send(node(mn), out) }},
		{Name: "upcall", Pattern: "host {node} upcall", Owner: model.OwnerHost,
			Enabled: func(mn model.Node) bool { n := node(mn); return len(n.Delivered) > 0 && m.upcallFree(n) },
			Apply:   func(mn model.Node, out *model.Outbox) { m.upcall(node(mn), out) }},
		{Name: "serve", Pattern: "host {node} serve", Owner: model.OwnerHost,
			Enabled: func(mn model.Node) bool { n := node(mn); return len(n.Requests) > 0 && !n.Serving },
			Apply: func(mn model.Node, out *model.Outbox) {
				n := node(mn)
				req := n.Requests[0]
				n.Requests = append(n.Requests[:0], n.Requests[1:]...)
				out.Deliver(n.ID, req, int(req.Origin), &n.Logs[req.Origin])
				n.Serving = true
				n.Out, n.Dest = model.Packet{Tag: TagReply, Origin: n.ID, Seq: req.Seq}, req.Origin
			}},
		{Name: "wake", Pattern: "host {node} wake", Owner: model.OwnerHost,
			Enabled: func(mn model.Node) bool { n := node(mn); return len(n.Replies) > 0 && m.upcallFree(n) },
			Apply: func(mn model.Node, out *model.Outbox) {
				n := node(mn)
				rep := n.Replies[0]
				n.Replies = append(n.Replies[:0], n.Replies[1:]...)
				out.Deliver(n.ID, rep, int(rep.Origin), &n.Logs[rep.Origin])
				n.Waiting = false
			}},
		model.Deliver,
	}
	return m.kinds
}

// send transmits the next packet of n's outgoing message, spending a
// window credit and piggybacking what n owes the destination; after a
// reply's last packet the request handler returns.
func (m *Machine) send(n *Node, out *model.Outbox) {
	d := n.Dest
	n.Credits[d]--
	n.Out.Val++
	pkt := model.Packet{Tag: n.Out.Tag, Src: n.ID, Origin: n.ID, Seq: n.Out.Seq, Val: n.Out.Val, Credits: n.Owed[d]}
	n.Owed[d] = 0
	out.Transmit(d, pkt)
	out.Paid(len(out.Sends) - 1)
	if int(n.Out.Val) == m.msgLen(n.Out.Tag) {
		if n.Out.Tag == TagReply {
			n.Serving = false
		}
		n.Out, n.Dest = model.Packet{}, 0
	}
}

// upcall is lfc_upcall for the oldest packet LFC delivered to n: it
// takes the piggybacked credits, queues a data packet's message at its
// SAP when complete, and owes the sender a credit, returned by an ACK
// once refresh are owed.
func (m *Machine) upcall(n *Node, out *model.Outbox) {
	pkt := n.Delivered[0]
	n.Delivered = append(n.Delivered[:0], n.Delivered[1:]...)
	s := pkt.Src
	n.Credits[s] += pkt.Credits
	if pkt.Tag == TagAck {
		return
	}
	i := 0
	for i < len(n.Partial) && (n.Partial[i].Origin < pkt.Origin || n.Partial[i].Origin == pkt.Origin && n.Partial[i].Tag < pkt.Tag) {
		i++
	}
	if i == len(n.Partial) || n.Partial[i].Origin != pkt.Origin || n.Partial[i].Tag != pkt.Tag {
		n.Partial = append(n.Partial, model.Packet{})
		copy(n.Partial[i+1:], n.Partial[i:])
		n.Partial[i] = model.Packet{Tag: pkt.Tag, Origin: pkt.Origin, Seq: pkt.Seq}
	}
	n.Partial[i].Val++
	if int(n.Partial[i].Val) == m.msgLen(pkt.Tag) {
		msg := n.Partial[i]
		n.Partial = append(n.Partial[:i], n.Partial[i+1:]...)
		if msg.Tag == TagRequest {
			n.Requests = append(n.Requests, msg)
		} else {
			n.Replies = append(n.Replies, msg)
		}
	}
	n.Owed[s]++
	if int(n.Owed[s]) >= m.Refresh {
		out.Transmit(s, model.Packet{Tag: TagAck, Src: n.ID, Origin: n.ID, Credits: n.Owed[s]})
		n.Owed[s] = 0
	}
}

// Receive is LFC delivering a packet to host memory: it waits there for
// lfc_upcall.
func (m *Machine) Receive(mn model.Node, _ model.NodeID, pkt model.Packet, _ *model.Outbox) {
	n := node(mn)
	n.Delivered = append(n.Delivered, pkt)
}
