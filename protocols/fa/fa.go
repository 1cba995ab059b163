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
// # Properties
//
// Fetch-and-add's one property set (package ucast's, also checked by MCAST
// and the library wherever they offer fetch-and-add):
//
//  1. fa-values: no value is handed to two requests, every process gets
//     its values in increasing order, and at a proper end the variable
//     holds the number of values handed out (so they are 0..N-1: no lost
//     or duplicated increment). It was two properties here,
//     distinct-values and increasing; those names still select it
//     (Def.Renamed), and trace files that name them still replay.
//  2. one-outstanding: every process has at most one request in the
//     system (being sent, queued, in flight, at the server, or answered in
//     flight), exactly when it is waiting for a reply.
//  3. credit-conservation, pool-bound: as for UCAST.
//  4. deadlock: a state with no enabled action has every request answered.
//  5. eventual-reply: every request is eventually answered.
//  6. concurrent-requests (a Sometimes goal): some reachable state has
//     requests of two processes in the system at once, so the claims'
//     configurations exercise the race the protocol must win.
//
// # Broken variants
//
// Fetch-and-add's own (ucast.FAVariants), which MCAST and GSB list too:
// fa-no-increment (the NI increments only for the first request; caught
// by fa-values at the end), split-increment (the NI reads the variable on
// arrival into a per-request register, and a separate later step, "ni N
// increment", writes register+1 back and replies: two requests can read
// the same value in between; caught by fa-values) and drop-reply (the
// reply carrying value 1 is never sent; caught by eventual-reply).
package fa

import (
	"encoding/binary"
	"fmt"
	"strings"

	"lfccheck/model"
	"lfccheck/protocols/ucast"
)

// Packet tags and variant names of fetch-and-add: package ucast's, where
// fetch-and-add is written once (ucast/fetchadd.go).
var (
	TagRequest = ucast.TagFARequest // FA_REQUEST: data, consumes a credit
	TagReply   = ucast.TagFAReply   // FA_REPLY: control, carries the old value
)

const (
	Correct        = "correct"
	SplitIncrement = ucast.FASplitIncrement
	DropReply      = ucast.FADropReply
	NoIncrement    = ucast.FANoIncrement
)

// Node is a node's state: UCAST's, whose FA part (ucast.FAState) holds
// the NI's variable, the reads of variant split-increment, and the
// process's outstanding request and the values it got.
type Node struct {
	ucast.Node
}

// Base returns the UCAST part.
func (n *Node) Base() *ucast.Node { return &n.Node }

// Encode appends the canonical encoding.
func (n *Node) Encode(buf []byte) []byte {
	buf = n.Node.Encode(buf)
	buf = binary.AppendUvarint(buf, uint64(n.FA.Var))
	buf = n.FA.AppendReads(buf)
	buf = model.AppendBool(buf, n.FA.Outstanding)
	return n.FA.AppendHistory(buf)
}

// Decode reads the encoding written by Encode.
func (n *Node) Decode(d *model.Decoder) {
	n.Node.Decode(d)
	n.FA.Var = uint32(d.Uvarint())
	n.FA.DecodeReads(d)
	n.FA.Outstanding = d.Bool()
	n.FA.DecodeHistory(d)
}

// CopyFrom makes n a deep copy of src, a *Node.
func (n *Node) CopyFrom(src model.Node) { n.Node.CopyNode(&src.(*Node).Node) }

func (n *Node) faLine() string {
	return fmt.Sprintf("fa %d: var %d, reads %s, outstanding %v, got %v", n.ID, n.FA.Var, n.FA.ReadsText(), n.FA.Outstanding, n.FA.Got)
}

// Describe renders the node: UCAST's lines and a line for fetch-and-add.
func (n *Node) Describe() []string { return append(n.Node.Describe(), n.faLine()) }

// Diff reports what differs from prev, a *Node, with the labels this
// package's traces have always used for the process's state ("host H
// outstanding", "host H got"), so that trace files written before
// fetch-and-add's state moved into UCAST's node still reproduce.
func (n *Node) Diff(prev model.Node, ch func(what, from, to string)) {
	p := prev.(*Node)
	own := fmt.Sprintf("host %d fa ", n.ID)
	n.Node.Diff(&p.Node, func(what, from, to string) {
		ch(strings.Replace(what, own, fmt.Sprintf("host %d ", n.ID), 1), from, to)
	})
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
				return !n.FA.Outstanding && n.Next < len(m.Work[n.ID]) && len(n.Send) < m.SendBuffers
			},
			Apply: func(mn model.Node, out *model.Outbox) {
				n := node(mn)
				n.FA.Outstanding = true
				m.Launch(&n.Node, out)
			}},
		model.Deliver,
	}
	if m.variant == SplitIncrement {
		m.kinds = append(m.kinds, m.FAIncrementKind())
	}
	return m.kinds
}

// NewNode builds node id in its initial state.
func (m *Machine) NewNode(id model.NodeID) model.Node {
	n := &Node{}
	m.InitNode(&n.Node, id)
	return n
}

// Receive is event_packet_received: credits first (UCAST), then
// fetch-and-add's handlers (ucast.Machine.ServeFA, TakeFAReply).
func (m *Machine) Receive(mn model.Node, from model.NodeID, pkt model.Packet, out *model.Outbox) {
	n := node(mn)
	pkt = m.AcceptNewCredits(&n.Node, pkt, out)
	switch pkt.Tag {
	case TagRequest:
		m.ServeFA(&n.Node, from, pkt, out)
	case TagReply:
		m.TakeFAReply(&n.Node, pkt)
	}
}
