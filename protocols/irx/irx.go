// Package irx models I_rx, the retransmitting point-to-point protocol of
// the thesis's chapter 8 that runs on the NI (§8.2.2, §8.2.4-§8.2.6): a
// go-back-N protocol for links that may lose, duplicate or corrupt
// packets (lfccheck's --faults).
//
// # The protocol
//
// Each NI keeps a send window of W packets per destination: a packet is
// transmitted only while fewer than W packets to its destination are
// unacknowledged; the host's later packets wait on the NI (the
// blocked-sends queue). Every data packet carries a sequence number
// modulo seq-mod (at least W+1, so go-back-N tells a retransmission
// from a new packet) and a piggybacked cumulative acknowledgement of
// the reverse stream. A receiver accepts a packet only if it carries
// the next expected number and a receive buffer is free; the buffers are
// shared by all senders (§8.2.6). A packet with another number is
// dropped (and answered with an acknowledgement); one that finds no
// free buffer is dropped and registered, and when the NI frees a buffer
// it sends a NACK to its sender, which retransmits everything
// unacknowledged (§8.2.2). Acknowledgements are cumulative sequence
// numbers (§8.2.6). A receiver sets its acknowledgement timer for a
// sender whenever a packet from it arrives; when it expires the receiver
// sends an explicit acknowledgement unless one went back meanwhile
// (piggybacked or a NACK). A sender's retransmission timer runs while
// any packet is unacknowledged; when it expires, every unacknowledged
// packet is retransmitted (go-back-N).
//
// # Actions
//
//   - host N send: the host hands its next packet to the NI (its flows
//     round-robin), which transmits it if the window is open.
//   - ni N copy: the NI copies its oldest received packet to the host
//     and frees the buffer; NACKs registered go out in the same step.
//   - ni N ack-timer: the acknowledgement timer expires: an explicit
//     ACK goes to every sender owed one.
//   - ni N timeout: the retransmission timer expires.
//   - the kernel's deliver, and lose, duplicate and corrupt with
//     --faults (a corrupted packet fails the CRC check and is dropped).
//
// # Modelling choices
//
//   - Time is not modelled: the acknowledgement timer may expire
//     whenever it runs.
//   - The per-packet retransmission timers, multiplexed on one timer in
//     the thesis, are one timer per NI whose expiry retransmits the
//     unacknowledged packets of every destination; the acknowledgement
//     timers of one receiver, one per sender in the thesis, expire
//     together. Each choice retransmits or acknowledges at least as much
//     as the thesis's timers would at some instant.
//   - The retransmission timer is longer than any round trip: it
//     expires only while no packet is in flight from or to its NI
//     (model.ActionKind.Quiet). Premature timeouts, which retransmit
//     while the packets or their acknowledgements are under way, are not
//     explored: with them, timeouts could put ever more copies on a link
//     and the state space would be infinite (a bound on timeouts in a
//     row, tried first, either cut off runs that must retransmit again
//     or let links grow). Duplicates still arise, from retransmissions
//     after a lost acknowledgement or NACK and from the links' dup
//     faults.
//   - The host sends its flows round-robin and consumes a packet in the
//     step that copies it; half-window acknowledgements (§8.2.1) are not
//     modelled (the acknowledgement timer covers them, later) and the
//     send buffer pool of §8.2.5 is the window alone.
//   - The wire carries the sequence number modulo seq-mod (Packet.Tree)
//     and the piggybacked acknowledgement (Packet.Val, number+1); the
//     packet's Seq, its number in its stream, is history state read only
//     by the properties, never by the protocol.
package irx

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"lfccheck/model"
)

// Packet tags.
var (
	tagData = model.NewTag(model.TagInfo{Name: "IRX_DATA", Data: true, Brief: func(p model.Packet) string {
		s := fmt.Sprintf("d%d#%d(s%d", p.Origin, p.Seq, p.Tree)
		if p.Val > 0 {
			s += ",a" + strconv.Itoa(int(p.Val-1))
		}
		return s + ")"
	}})
	tagAck  = model.NewTag(model.TagInfo{Name: "IRX_ACK", Brief: func(p model.Packet) string { return fmt.Sprintf("ack%d", p.Tree) }})
	tagNack = model.NewTag(model.TagInfo{Name: "IRX_NACK", Brief: func(p model.Packet) string { return fmt.Sprintf("nack%d", p.Tree) }})
)

// Level says who runs the go-back-N protocol: the NI (I_rx) or the host
// (H_rx, protocols/hrx). The window arithmetic, the sequence numbers,
// the acknowledgements and the timers are the same code at both levels;
// the level decides only where a packet is handled and what the NI
// does with it (see Receive).
type Level uint8

// Levels.
const (
	// NI: I_rx. The NI handles every packet as it arrives: it drops a
	// duplicate or out-of-order packet without taking a buffer, takes
	// a buffer for the packet it accepts and NACKs a packet it dropped
	// for lack of one (§8.2.2).
	NI Level = iota
	// Host: H_rx. The NI is a plain engine that stores every packet it
	// receives (data or acknowledgement) in a free receive buffer, or
	// drops it when none is free; the host handles the packets in the
	// buffers in order when it polls, and only then drops duplicates.
	// There are no NACKs: only the host's retransmission timer makes
	// good a packet the NI dropped (§8.2.2: NACKs are I_rx's).
	Host
)

// Machine is I_rx (or H_rx) bound to a configuration.
type Machine struct {
	P, W, M, B int
	Level      Level
	linksTimer bool // Params.Timer is TimerLinks
	variant    string
	count      []int            // per pair s*P+d: packets s sends to d
	order      [][]model.NodeID // per host: the destinations of its packets, in sending order
	kinds      []*model.ActionKind
}

// Node is one node's state: counts per destination (sender side) and per
// source (receiver side), the NI's receive buffers and the host's logs.
type Node struct {
	m  *Machine
	ID model.NodeID
	// Sender side, per destination: packets the host handed to the NI,
	// packets transmitted at least once, packets acknowledged (all counts
	// from the start of the stream).
	Launched, Sent, Acked []uint16
	// Next is the host's position in its sending order.
	Next uint16
	// Receiver side, per source: packets accepted in order, whether an
	// acknowledgement is owed (the acknowledgement timer runs), whether a
	// packet was dropped for lack of a buffer (a NACK is owed).
	Expect          []uint16
	AckDue, NackDue []bool
	// Buf holds the accepted packets the NI has not yet copied to the
	// host, oldest first.
	Buf []model.Packet
	// Log is the host's history of each source's stream (for fifo and
	// exactly-once).
	Log []model.StreamLog
}

// maxPackets bounds the packets one node sends in all: its counts are
// 16 bits wide, and a stream's numbers (1..65535) never wrap. A checked
// workload is far smaller; live runs (live_test.go) use the room.
const maxPackets = 65534

// New builds I_rx for a resolved configuration.
func New(cfg model.Config) (*Machine, error) { return NewAt(cfg, NI) }

// NewAt builds the protocol at level lvl for a resolved configuration
// whose parameters are *Params.
func NewAt(cfg model.Config, lvl Level) (*Machine, error) {
	p := cfg.Params.(*Params)
	m := &Machine{P: cfg.Nodes, W: p.Window, M: p.mod(), B: p.RecvBuffers, Level: lvl, linksTimer: p.Timer == TimerLinks, variant: cfg.Variant, count: p.counts(cfg.Nodes)}
	if m.variant == "seq-mod-window" {
		m.M = m.W
	}
	if m.M < 2 {
		return nil, fmt.Errorf("%s: sequence numbers modulo %d: want at least 2", p.name(), m.M)
	}
	for s := 0; s < m.P; s++ {
		var order []model.NodeID
		left := make([]int, m.P)
		copy(left, m.count[s*m.P:(s+1)*m.P])
		for more := true; more; {
			more = false
			for d := 0; d < m.P; d++ {
				if left[d] > 0 {
					order = append(order, model.NodeID(d))
					left[d]--
					more = true
				}
			}
		}
		if len(order) > maxPackets {
			return nil, fmt.Errorf("%s: node %d sends %d packets: at most %d", p.name(), s, len(order), maxPackets)
		}
		m.order = append(m.order, order)
	}
	return m, nil
}

// Kinds lists the action kinds. At the host level the actions that
// handle packets and run the timers are the host's.
func (m *Machine) Kinds() []*model.ActionKind {
	if m.kinds != nil {
		return m.kinds
	}
	m.kinds = []*model.ActionKind{
		{Name: "send", Pattern: "host {node} send", Owner: model.OwnerHost, Fair: model.Weak, FairClass: "host {node}", Live: model.LiveClient,
			Enabled: func(n model.Node) bool { x := n.(*Node); return int(x.Next) < len(m.order[x.ID]) },
			Apply:   func(n model.Node, out *model.Outbox) { m.send(n.(*Node), out) }},
		model.Deliver,
	}
	side, owner := "ni", model.OwnerNI
	if m.Level == Host {
		side, owner = "host", model.OwnerHost
		m.kinds = append(m.kinds, &model.ActionKind{Name: "poll", Pattern: "host {node} poll", Owner: model.OwnerHost, Fair: model.Weak, FairClass: "poll {node}",
			Enabled: func(n model.Node) bool { return len(n.(*Node).Buf) > 0 },
			Apply:   func(n model.Node, out *model.Outbox) { m.poll(n.(*Node), out) }})
	} else {
		m.kinds = append(m.kinds, &model.ActionKind{Name: "copy", Pattern: "ni {node} copy", Owner: model.OwnerNI, Fair: model.Weak, FairClass: "ni {node}",
			Enabled: func(n model.Node) bool { return len(n.(*Node).Buf) > 0 },
			Apply:   func(n model.Node, out *model.Outbox) { m.copyOut(n.(*Node), out) }})
	}
	m.kinds = append(m.kinds, &model.ActionKind{Name: "ack-timer", Pattern: side + " {node} ack-timer", Owner: owner, Fair: model.Weak, FairClass: "ack timer {node}", Live: model.LiveTimer,
		Enabled: func(n model.Node) bool { return m.ackDue(n.(*Node)) },
		Apply:   func(n model.Node, out *model.Outbox) { m.ackTimer(n.(*Node), out) }})
	if m.variant != "no-retransmit-timer" {
		m.kinds = append(m.kinds, &model.ActionKind{Name: "timeout", Pattern: side + " {node} timeout", Owner: owner, Fair: model.Weak, FairClass: "timer {node}", Live: model.LiveTimer, Quiet: true,
			Enabled: func(n model.Node) bool { return m.timerRuns(n.(*Node)) },
			Apply:   func(n model.Node, out *model.Outbox) { m.timeout(n.(*Node), out) }})
	}
	return m.kinds
}

// NewNode builds node id in its initial state.
func (m *Machine) NewNode(id model.NodeID) model.Node {
	P := m.P
	return &Node{m: m, ID: id, Launched: make([]uint16, P), Sent: make([]uint16, P), Acked: make([]uint16, P),
		Expect: make([]uint16, P), AckDue: make([]bool, P), NackDue: make([]bool, P), Log: make([]model.StreamLog, P)}
}

// wire is the sequence number of the packet numbered k (from 0) in a
// stream.
func (m *Machine) wire(k uint16) uint16 { return Wire(k, m.M) }

// windowOpen reports whether n may transmit a new packet to d.
func (m *Machine) windowOpen(n *Node, d int) bool {
	return WindowOpen(int(n.Sent[d])-int(n.Acked[d]), m.W, m.variant == "window-off-by-one")
}

// transmit puts the packet numbered k of n's stream to d on the link,
// with the cumulative acknowledgement of d's stream to n piggybacked.
func (m *Machine) transmit(n *Node, d int, k uint16, out *model.Outbox) {
	out.Transmit(model.NodeID(d), model.Packet{Tag: tagData, Src: n.ID, Origin: n.ID, Seq: uint16(k) + 1,
		Tree: m.wire(k), Val: uint32(m.wire(n.Expect[d])) + 1})
	n.AckDue[d] = false
}

// fill transmits n's waiting packets to d while the window is open.
func (m *Machine) fill(n *Node, d int, out *model.Outbox) {
	for n.Sent[d] < n.Launched[d] && m.windowOpen(n, d) {
		m.transmit(n, d, n.Sent[d], out)
		n.Sent[d]++
	}
}

// ackFill transmits the packets an acknowledgement let into the window
// (the blocked-sends queue, §8.2.1); the broken variant
// blocked-sends-forgotten leaves them waiting.
func (m *Machine) ackFill(n *Node, d int, out *model.Outbox) {
	if m.variant != "blocked-sends-forgotten" {
		m.fill(n, d, out)
	}
}

func (m *Machine) send(n *Node, out *model.Outbox) {
	d := int(m.order[n.ID][n.Next])
	n.Next++
	n.Launched[d]++
	m.fill(n, d, out)
}

// ack handles a cumulative acknowledgement a (the wire number the
// receiver expects next) from d: it acknowledges the packets up to it if
// a lies within what is outstanding, and reports whether it did.
func (m *Machine) ack(n *Node, d int, a uint16) bool {
	adv := AckAdvance(a, n.Acked[d], int(n.Sent[d])-int(n.Acked[d]), m.M)
	if adv == 0 {
		return false
	}
	n.Acked[d] += uint16(adv)
	return true
}

// retransmit sends every unacknowledged packet to d again (go-back-N).
func (m *Machine) retransmit(n *Node, d int, out *model.Outbox) {
	for k := n.Acked[d]; k < n.Sent[d]; k++ {
		m.transmit(n, d, k, out)
	}
}

// Receive handles a packet from NI from. I_rx's NI handles it at once
// (handle); H_rx's NI stores it in a free receive buffer for the host to
// handle when it polls, or drops it if every buffer is taken: the NI
// knows no sequence numbers, so a duplicate takes a buffer as a new
// packet does, and nothing tells the sender of the drop.
func (m *Machine) Receive(mn model.Node, from model.NodeID, pkt model.Packet, out *model.Outbox) {
	n := mn.(*Node)
	if m.Level == Host {
		if len(n.Buf) >= m.B && m.variant != "no-buffer-check" {
			return // dropped for lack of a buffer; the timer makes good
		}
		n.Buf = append(n.Buf, pkt)
		return
	}
	m.handle(n, int(from), pkt, out)
}

// handle is the receiving side of go-back-N at either level: an
// acknowledgement or NACK from s, or a data packet from s, which is
// accepted (take) only if it carries the next expected number.
func (m *Machine) handle(n *Node, s int, pkt model.Packet, out *model.Outbox) {
	switch pkt.Tag {
	case tagAck:
		if m.ack(n, s, pkt.Tree) {
			m.ackFill(n, s, out)
		}
	case tagNack:
		m.ack(n, s, pkt.Tree)
		m.retransmit(n, s, out)
		m.ackFill(n, s, out)
	case tagData:
		if pkt.Val > 0 && m.ack(n, s, uint16(pkt.Val-1)) {
			m.ackFill(n, s, out)
		}
		switch {
		case pkt.Tree == m.wire(n.Expect[s]) || m.variant == "accept-out-of-order" && m.ahead(n, s, pkt.Tree):
			if !m.take(n, s, pkt, out) {
				return
			}
			n.Expect[s] += uint16((int(pkt.Tree)-int(m.wire(n.Expect[s]))+m.M)%m.M) + 1
			n.AckDue[s] = true
		default:
			// A duplicate or a packet after a gap: dropped; the
			// acknowledgement timer answers it.
			n.AckDue[s] = true
		}
	}
}

// take accepts the data packet pkt from s: I_rx's NI puts it in a free
// receive buffer (or drops it and owes s a NACK, §8.2.2, reporting
// false); H_rx's host, which handles a packet already in a buffer,
// hands it to the client.
func (m *Machine) take(n *Node, s int, pkt model.Packet, out *model.Outbox) bool {
	if m.Level == Host {
		out.Deliver(n.ID, pkt, int(pkt.Origin), &n.Log[pkt.Origin])
		return true
	}
	if len(n.Buf) >= m.B && m.variant != "no-buffer-check" {
		n.NackDue[s] = true // dropped for lack of a buffer (§8.2.2)
		return false
	}
	n.Buf = append(n.Buf, pkt)
	return true
}

// Holds reports whether node x holds a packet from node from in its
// receive buffers (model.Holder). Only the host level holds packets that
// are still under way: I_rx's buffers hold packets already accepted.
func (m *Machine) Holds(x model.Node, from model.NodeID) bool {
	if m.Level != Host || m.linksTimer {
		return false
	}
	for _, p := range x.(*Node).Buf {
		if p.Src == from {
			return true
		}
	}
	return false
}

// poll is H_rx's host handling the oldest packet in its receive buffers,
// which frees the buffer.
func (m *Machine) poll(n *Node, out *model.Outbox) {
	pkt := n.Buf[0]
	copy(n.Buf, n.Buf[1:])
	n.Buf = n.Buf[:len(n.Buf)-1]
	m.handle(n, int(pkt.Src), pkt, out)
}

// ahead reports whether wire number w is 1..W-1 ahead of what n expects
// from s (the broken variant accept-out-of-order takes such packets).
func (m *Machine) ahead(n *Node, s int, w uint16) bool {
	d := (int(w) - int(m.wire(n.Expect[s])) + m.M) % m.M
	return d >= 1 && d < m.W
}

func (m *Machine) copyOut(n *Node, out *model.Outbox) {
	pkt := n.Buf[0]
	copy(n.Buf, n.Buf[1:])
	n.Buf = n.Buf[:len(n.Buf)-1]
	out.Deliver(n.ID, pkt, int(pkt.Origin), &n.Log[pkt.Origin])
	for s := 0; s < m.P; s++ {
		if n.NackDue[s] {
			n.NackDue[s], n.AckDue[s] = false, false
			out.Transmit(model.NodeID(s), model.Packet{Tag: tagNack, Src: n.ID, Origin: n.ID, Tree: m.wire(n.Expect[s])})
		}
	}
}

func (m *Machine) ackDue(n *Node) bool {
	for _, a := range n.AckDue {
		if a {
			return true
		}
	}
	return false
}

func (m *Machine) ackTimer(n *Node, out *model.Outbox) {
	for s := 0; s < m.P; s++ {
		if n.AckDue[s] {
			n.AckDue[s] = false
			out.Transmit(model.NodeID(s), model.Packet{Tag: tagAck, Src: n.ID, Origin: n.ID, Tree: m.wire(n.Expect[s])})
		}
	}
}

// timerRuns reports whether the retransmission timer runs: a packet is
// unacknowledged. At the host level the timer, longer than any round
// trip, does not expire either while the host has a packet in its
// receive buffers that it has not handled (packets on the links and
// those other hosts hold: Quiet and Holds), unless --timer links says
// it may.
func (m *Machine) timerRuns(n *Node) bool {
	if m.Level == Host && !m.linksTimer && len(n.Buf) > 0 {
		return false
	}
	for d := 0; d < m.P; d++ {
		if n.Sent[d] > n.Acked[d] {
			return true
		}
	}
	return false
}

func (m *Machine) timeout(n *Node, out *model.Outbox) {
	for d := 0; d < m.P; d++ {
		m.retransmit(n, d, out)
	}
}

// Encode appends the node's canonical encoding.
func (n *Node) Encode(buf []byte) []byte {
	for _, xs := range [][]uint16{n.Launched, n.Sent, n.Acked, n.Expect} {
		for _, x := range xs {
			buf = binary.AppendUvarint(buf, uint64(x))
		}
	}
	for s := range n.AckDue {
		buf = append(buf, DueBits(n.AckDue[s], n.NackDue[s]))
	}
	buf = binary.AppendUvarint(buf, uint64(n.Next))
	buf = model.AppendPackets(buf, n.Buf)
	return AppendLogs(buf, n.Log)
}

// Decode reads the encoding written by Encode.
func (n *Node) Decode(d *model.Decoder) {
	for _, xs := range [][]uint16{n.Launched, n.Sent, n.Acked, n.Expect} {
		for i := range xs {
			xs[i] = uint16(d.Uvarint())
		}
	}
	for s := range n.AckDue {
		n.AckDue[s], n.NackDue[s] = DueFlags(d.Byte())
	}
	n.Next = uint16(d.Uvarint())
	n.Buf = d.Packets(n.Buf[:0])
	DecodeLogs(d, n.Log)
}

// CopyFrom makes n a deep copy of src.
func (n *Node) CopyFrom(src model.Node) {
	s := src.(*Node)
	n.m, n.ID, n.Next = s.m, s.ID, s.Next
	n.Launched = append(n.Launched[:0], s.Launched...)
	n.Sent = append(n.Sent[:0], s.Sent...)
	n.Acked = append(n.Acked[:0], s.Acked...)
	n.Expect = append(n.Expect[:0], s.Expect...)
	n.AckDue = append(n.AckDue[:0], s.AckDue...)
	n.NackDue = append(n.NackDue[:0], s.NackDue...)
	n.Buf = append(n.Buf[:0], s.Buf...)
	n.Log = append(n.Log[:0], s.Log...)
}

// Side names the part that runs the protocol in state descriptions
// (Streams).
func (m *Machine) Side() string { return m.Level.pick("ni", "host") }

// Describe renders the node: its NI's sending and receiving state, its
// host.
func (n *Node) Describe() []string {
	side := n.m.Side()
	return []string{
		fmt.Sprintf("%s %d: send %s", side, n.ID, n.sendString()),
		fmt.Sprintf("%s %d: recv %s; buffers %s", side, n.ID, n.recvString(), model.PacketList(n.Buf)),
		fmt.Sprintf("host %d: sent %d of %d; delivered %s", n.ID, n.Next, len(n.m.order[n.ID]), n.logString()),
	}
}

func (n *Node) sendString() string {
	var parts []string
	for d := 0; d < n.m.P; d++ {
		if n.m.count[int(n.ID)*n.m.P+d] > 0 {
			parts = append(parts, fmt.Sprintf("[to %d: acked %d sent %d launched %d]", d, n.Acked[d], n.Sent[d], n.Launched[d]))
		}
	}
	return strings.Join(parts, " ")
}

func (n *Node) recvString() string {
	return RecvString(n.Expect, n.AckDue, n.NackDue, n.m.M, func(s int) bool { return n.m.count[s*n.m.P+int(n.ID)] > 0 })
}

func (n *Node) logString() string {
	var parts []string
	for s := 0; s < n.m.P; s++ {
		if n.m.count[s*n.m.P+int(n.ID)] > 0 {
			parts = append(parts, fmt.Sprintf("from %d: %s", s, n.Log[s]))
		}
	}
	return strings.Join(parts, "; ")
}

// Diff reports every difference from prev.
func (n *Node) Diff(prev model.Node, ch func(what, from, to string)) {
	p := prev.(*Node)
	id := n.ID
	side := n.m.Side()
	ch(fmt.Sprintf("%s %d send", side, id), p.sendString(), n.sendString())
	ch(fmt.Sprintf("%s %d recv", side, id), p.recvString(), n.recvString())
	ch(fmt.Sprintf("%s %d buffers", side, id), model.PacketList(p.Buf), model.PacketList(n.Buf))
	if p.Next != n.Next {
		ch(fmt.Sprintf("host %d sent", id), strconv.Itoa(int(p.Next)), strconv.Itoa(int(n.Next)))
	}
	ch(fmt.Sprintf("host %d delivered", id), p.logString(), n.logString())
}
