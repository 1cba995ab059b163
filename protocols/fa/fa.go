// Package fa implements LFC's NI-level fetch-and-add (thesis §3.8) on
// UCAST's credits, and registers it as the protocol "fa". It is the third
// protocol on the open core: a package of its own and one registration,
// with no change to the generic packages.
//
// # The protocol
//
// One fetch-and-add variable lives on every NI, initially 0; the run's
// requests all go to the variable of one NI, the server (parameter
// server, default 0). Every other node's process issues packets
// fetch-and-add requests, one at a time: at most one request per process is
// outstanding (§3.8). A request is an FA_REQUEST data packet: it consumes
// a UCAST send credit toward the server (credit_send; it waits in the
// blocked-sends queue when there is none) and so occupies, conceptually, a
// receive buffer of the client's partition at the server. The server's NI
// handles it entirely: on arrival it reads the variable, increments it,
// releases the buffer and sends an FA_REPLY control packet carrying the old
// value back, all in one handler (NI handlers run to completion, §3.3.4);
// the request never reaches the server's host. The released buffer's credit
// rides back on the reply (send_packet piggybacks all owed credits, Fig.
// 4.2). On the reply's arrival the client's NI hands the value to its
// process, which may then issue its next request.
//
// # Actions
//
//   - "host H launch": process H issues its next request (when it has none
//     outstanding and the NI has a free send packet); the NI's send handler
//     runs in the same step, as for UCAST.
//   - "deliver I->J": the kernel's arrival event.
//   - "ni N increment" (variant split-increment only): the second half of a
//     split read-and-increment, see below.
//
// There is no reduction: no action kind is declared ample.
//
// # Modeling decisions
//
//   - The server's own process issues no requests: a local fetch-and-add
//     needs no packet and cannot race with anything in this model.
//   - The reply is a host delivery of a value, not a data packet: it takes
//     no host receive buffer (host-buffers is irrelevant) and is not copied.
//   - With at most one outstanding request per process, a client never has
//     more than one request in flight, so its credits for the server never
//     run out; the interesting interleavings are those of several clients'
//     requests at the server.
//
// # Invariants
//
//  1. distinct-values: no value is handed to two requests; at a proper end
//     the values handed out are exactly 0..N-1 for N requests (no lost or
//     duplicated increment) and the variable holds N.
//  2. increasing: every process gets its values in increasing order.
//  3. one-outstanding: every process has at most one request in the
//     system (being sent, queued, in flight, at the server, or answered in
//     flight), exactly when it is waiting for a reply.
//  4. credit-conservation, pool-bound: as for UCAST.
//  5. deadlock: a state with no enabled action has every request answered.
//  6. concurrent-requests (a Sometimes goal): some reachable state has
//     requests of two processes in the system at once, so the claims'
//     configurations exercise the race the protocol must win.
//
// # Broken variant
//
// split-increment: the NI reads the variable on arrival into a per-request
// register, and a separate later step ("ni N increment") writes
// register+1 back and replies. Two requests can read the same value in
// between; distinct-values catches it.
package fa

import (
	"encoding/binary"
	"fmt"

	"lfccheck/model"
	"lfccheck/protocols/ucast"
)

// Packet tags of fetch-and-add (Table 3.3), registered by package ucast
// (machines with ucast.Machine.FetchAdd use them too).
const (
	TagRequest = ucast.TagFARequest // FA_REQUEST: data, consumes a credit
	TagReply   = ucast.TagFAReply   // FA_REPLY: control, carries the old value
)

// Variant names.
const (
	Correct        = "correct"
	SplitIncrement = "split-increment"
	DropReply      = "drop-reply"
)

// Read is a request read by the server but not yet incremented and
// answered (variant split-increment).
type Read struct {
	Req   model.Packet // the request
	Value uint32       // the value read
}

// Node is a node's state: UCAST's, plus the NI's variable and the
// process's fetch-and-add state.
type Node struct {
	ucast.Node
	Var         uint32   // the NI's fetch-and-add variable
	Reads       []Read   // split-increment: reads awaiting their increment
	Outstanding bool     // the process waits for a reply
	Got         []uint32 // values handed to the process, in order (history)
}

// Base returns the UCAST part.
func (n *Node) Base() *ucast.Node { return &n.Node }

// Encode appends the canonical encoding.
func (n *Node) Encode(buf []byte) []byte {
	buf = n.Node.Encode(buf)
	buf = binary.AppendUvarint(buf, uint64(n.Var))
	buf = binary.AppendUvarint(buf, uint64(len(n.Reads)))
	for _, r := range n.Reads {
		buf = binary.AppendUvarint(model.AppendPacket(buf, r.Req), uint64(r.Value))
	}
	buf = model.AppendBool(buf, n.Outstanding)
	buf = binary.AppendUvarint(buf, uint64(len(n.Got)))
	for _, v := range n.Got {
		buf = binary.AppendUvarint(buf, uint64(v))
	}
	return buf
}

// Decode reads the encoding written by Encode.
func (n *Node) Decode(d *model.Decoder) {
	n.Node.Decode(d)
	n.Var = uint32(d.Uvarint())
	n.Reads = n.Reads[:0]
	for k := d.Count(); k > 0 && d.Err() == nil; k-- {
		r := Read{Req: d.Packet()}
		r.Value = uint32(d.Uvarint())
		n.Reads = append(n.Reads, r)
	}
	n.Outstanding = d.Bool()
	n.Got = n.Got[:0]
	for k := d.Count(); k > 0 && d.Err() == nil; k-- {
		n.Got = append(n.Got, uint32(d.Uvarint()))
	}
}

// CopyFrom makes n a deep copy of src, a *Node.
func (n *Node) CopyFrom(src model.Node) {
	s := src.(*Node)
	n.Node.CopyNode(&s.Node)
	n.Var, n.Outstanding = s.Var, s.Outstanding
	n.Reads = append(n.Reads[:0], s.Reads...)
	n.Got = append(n.Got[:0], s.Got...)
}

func (n *Node) faLine() string {
	reads := model.ListOf(n.Reads, func(r Read) string { return fmt.Sprintf("%s=%d", r.Req, r.Value) })
	return fmt.Sprintf("fa %d: var %d, reads %s, outstanding %v, got %v", n.ID, n.Var, reads, n.Outstanding, n.Got)
}

// Describe renders the node: UCAST's lines and a line for fetch-and-add.
func (n *Node) Describe() []string { return append(n.Node.Describe(), n.faLine()) }

// Diff reports what differs from prev, a *Node.
func (n *Node) Diff(prev model.Node, ch func(what, from, to string)) {
	p := prev.(*Node)
	n.Node.Diff(&p.Node, ch)
	ch(fmt.Sprintf("ni %d fa variable", n.ID), fmt.Sprint(p.Var), fmt.Sprint(n.Var))
	ch(fmt.Sprintf("ni %d fa reads", n.ID),
		model.ListOf(p.Reads, func(r Read) string { return fmt.Sprintf("%s=%d", r.Req, r.Value) }),
		model.ListOf(n.Reads, func(r Read) string { return fmt.Sprintf("%s=%d", r.Req, r.Value) }))
	ch(fmt.Sprintf("host %d outstanding", n.ID), fmt.Sprint(p.Outstanding), fmt.Sprint(n.Outstanding))
	ch(fmt.Sprintf("host %d got", n.ID), fmt.Sprint(p.Got), fmt.Sprint(n.Got))
}

// Machine is fetch-and-add on UCAST's credit machinery.
type Machine struct {
	*ucast.Machine
	Server  model.NodeID
	variant string
	kinds   []*model.ActionKind
}

func node(n model.Node) *Node { return n.(*Node) }

// Kinds are launch and deliver, plus increment for split-increment.
func (m *Machine) Kinds() []*model.ActionKind {
	if m.kinds != nil {
		return m.kinds
	}
	m.kinds = []*model.ActionKind{
		{Name: "launch", Pattern: "host {node} launch", Owner: model.OwnerHost,
			Enabled: func(mn model.Node) bool {
				n := node(mn)
				return !n.Outstanding && n.Next < len(m.Work[n.ID]) && len(n.Send) < m.SendBuffers
			},
			Apply: func(mn model.Node, out *model.Outbox) {
				n := node(mn)
				n.Outstanding = true
				m.Launch(&n.Node, out)
			}},
		model.Deliver,
	}
	if m.variant == SplitIncrement {
		m.kinds = append(m.kinds, &model.ActionKind{Name: "increment", Pattern: "ni {node} increment", Owner: model.OwnerNI,
			Fair: model.Weak, FairClass: "ni {node}",
			Enabled: func(mn model.Node) bool { return len(node(mn).Reads) > 0 },
			Apply: func(mn model.Node, out *model.Outbox) {
				n := node(mn)
				r := n.Reads[0]
				n.Reads = append(n.Reads[:0], n.Reads[1:]...)
				i := n.FindRecv(r.Req)
				n.Recv = append(n.Recv[:i], n.Recv[i+1:]...)
				n.Var = r.Value + 1
				m.reply(n, r.Req, r.Value, out)
			}})
	}
	return m.kinds
}

// NewNode builds node id in its initial state.
func (m *Machine) NewNode(id model.NodeID) model.Node {
	n := &Node{}
	m.InitNode(&n.Node, id)
	return n
}

// Receive is event_packet_received: credits first (UCAST), then the
// fetch-and-add handlers.
func (m *Machine) Receive(mn model.Node, from model.NodeID, pkt model.Packet, out *model.Outbox) {
	n := node(mn)
	pkt = m.AcceptNewCredits(&n.Node, pkt, out)
	switch pkt.Tag {
	case TagRequest:
		if m.variant == SplitIncrement {
			// The request holds its receive buffer until the increment.
			n.Recv = append(n.Recv, ucast.RecvBuf{Pkt: pkt, From: from})
			n.Reads = append(n.Reads, Read{Req: pkt, Value: n.Var})
			return
		}
		v := n.Var
		n.Var++
		m.reply(n, pkt, v, out)
	case TagReply:
		n.Outstanding = false
		n.Got = append(n.Got, pkt.Val)
	}
}

// reply releases the request's buffer, whose credit is then owed to the
// client, and sends FA_REPLY with value v, which piggybacks the credit.
func (m *Machine) reply(n *Node, req model.Packet, v uint32, out *model.Outbox) {
	n.PCB[req.Origin].FreeCredits++
	if m.variant == DropReply && v == 1 {
		return // the bug: the second request's reply is never sent
	}
	m.SendPacket(&n.Node, ucast.Desc{Dest: req.Origin, Pkt: model.Packet{Tag: TagReply, Origin: req.Origin, Seq: req.Seq, Val: v}}, out)
}
