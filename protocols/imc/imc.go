// Package imc models I_mc over I_rx: multicast forwarding on the NI over
// the retransmitting NI protocol of the thesis's chapter 8 (§8.3), on
// links that may lose, duplicate or corrupt packets (--faults).
//
// # The protocol
//
// Every root multicasts its packets on its spanning tree (--tree, the
// broadcast group of all nodes, or the trees of a --topology file, as in
// MCAST; --cast [GROUP/]ROOT:COUNT). Every hop of a tree
// is a go-back-N stream as in I_rx (protocols/irx): the NI keeps one
// queue of real packets per destination (its own packets and forwarded
// ones share it), transmits while fewer than W are unacknowledged,
// numbers them modulo seq-mod, and retransmits every unacknowledged
// packet when its retransmission timer expires or a NACK arrives. A
// receiving NI accepts a packet only if it carries the next expected
// number and one of its receive buffers (shared by all senders) is
// free; otherwise it drops it, and NACKs the sender when a buffer frees
// if the drop was for lack of a buffer (§8.2.2). An accepted packet is
// copied to the host and forwarded by the NI to the node's children in
// the packet's tree: it is appended to each child's queue (§8.3.1). Its
// receive buffer is freed only when the host has copied it and every
// child has acknowledged it.
//
// Acknowledgements follow ACK-forward (§8.3.2): a node acknowledges a
// packet to its parent only once it has transmitted it to all its
// children; explicit acknowledgements go out when the acknowledgement
// timer expires.
//
// # Actions
//
//   - host N send: the host hands its next packet to the NI, which
//     queues it for the root's children.
//   - ni N copy: the NI copies its oldest packet not yet copied to the
//     host.
//   - ni N ack-timer, ni N timeout: the timers, as in I_rx.
//   - the kernel's deliver, and lose, duplicate and corrupt with
//     --faults.
//
// # Modelling choices
//
//   - Timers as in I_rx: one retransmission timer per NI, which expires
//     only while no packet is in flight from or to the NI (Quiet), and
//     one acknowledgement timer per NI for all its senders. The
//     retransmission timer is strongly fair (it expires if it is enabled
//     again and again): under ACK-forward a parent's retransmissions to
//     a node that waits for its own child keep that node from being
//     quiet, and with weak fairness the node's timer could be passed
//     over for ever, a livelock of the model rather than the protocol.
//   - No piggybacked acknowledgements: acknowledgements are explicit.
//   - The root's own packets take no receive buffer (the send window is
//     their buffer, as in I_rx); forwarded packets stay in the receive
//     buffer they arrived in until every child acknowledged them.
//   - One cast per root: a root's packets form one stream, numbered
//     1, 2, ... (Packet.Seq, history read only by the properties);
//     Packet.Val is the tree, Packet.Tree the wire sequence number.
//
// # The host level
//
// The same machine at the host level (NewAt with irx.Host) is H_rx H_mc,
// host forwarding over H_rx (protocols/hmc, whose package doc describes
// it): the NI stores or drops what arrives, the host handles it when it
// polls and reinjects it as new sends to the children, and frees the
// receive buffer then. The NI level's behaviour, state encoding and
// suite rows are unchanged by it.
package imc

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"lfccheck/model"
	"lfccheck/protocols/irx"
	"lfccheck/protocols/topology"
)

// Packet tags.
var (
	tagData = model.NewTag(model.TagInfo{Name: "IMC_DATA", Data: true, Brief: func(p model.Packet) string {
		if a := p.Val >> 16; a > 0 {
			return fmt.Sprintf("d%d#%d(s%d,a%d)", p.Origin, p.Seq, p.Tree, a-1)
		}
		return fmt.Sprintf("d%d#%d(s%d)", p.Origin, p.Seq, p.Tree)
	}})
	tagAck  = model.NewTag(model.TagInfo{Name: "IMC_ACK", Brief: func(p model.Packet) string { return fmt.Sprintf("ack%d", p.Tree) }})
	tagNack = model.NewTag(model.TagInfo{Name: "IMC_NACK", Brief: func(p model.Packet) string { return fmt.Sprintf("nack%d", p.Tree) }})
)

const maxPackets = 1000

// Machine is I_mc (or H_mc) bound to a configuration.
type Machine struct {
	P, W, M, B int
	// Level says who forwards and runs the go-back-N streams: the NI
	// (I_mc over I_rx) or the host (H_mc over H_rx, protocols/hmc).
	Level      irx.Level
	linksTimer bool // Params.Timer is irx.TimerLinks (the host level)
	variant    string
	topo       *topology.Topology
	tree       []int // per root: its tree, or -1
	count      []int // per root: packets it multicasts
	kinds      []*model.ActionKind
}

// Node is one node's state.
type Node struct {
	m  *Machine
	ID model.NodeID
	// Next is how many packets the host has handed to the NI.
	Next uint16
	// Sender side, per destination: the queue of packets not yet
	// acknowledged (the first Sent of them transmitted at least once) and
	// how many packets were acknowledged in all (the stream position of
	// Queue[d][0]).
	Queue       [][]model.Packet
	Sent, Acked []uint16
	// Receiver side, per source: packets accepted, whether an
	// acknowledgement or a NACK is owed.
	Expect          []uint16
	AckDue, NackDue []bool
	// Buf holds the accepted packets (Src: the parent they came from),
	// oldest first; Copied says which the host has copied. At the host
	// level Buf is the receive pool: every packet that arrived (data or
	// acknowledgement) and that the host has not yet handled, oldest
	// first, and Copied is empty.
	Buf    []model.Packet
	Copied []bool
	// Fwd (the host level) holds the packets the host accepted and
	// whose acknowledgement to their parent (Src) ACK-forward still
	// holds back, in acceptance order: a packet leaves once it and every
	// earlier one from the same parent have been transmitted to all
	// their children (at once if it has none and nothing earlier from
	// its parent is held: acknowledgements are cumulative).
	Fwd []model.Packet
	// Log is the host's history of each root's stream.
	Log []model.StreamLog
}

// New builds I_mc for a resolved configuration.
func New(cfg model.Config) (model.Machine, error) { return NewAt(cfg, irx.NI) }

// NewAt builds the protocol at level lvl (H_mc at irx.Host) for a
// resolved configuration whose parameters are *Params.
func NewAt(cfg model.Config, lvl irx.Level) (*Machine, error) {
	p := cfg.Params.(*Params)
	topo, err := p.topo(cfg.Nodes)
	if err != nil {
		return nil, err
	}
	m := &Machine{P: cfg.Nodes, W: p.Window, M: p.mod(), B: p.RecvBuffers, Level: lvl, linksTimer: p.Timer == irx.TimerLinks, variant: cfg.Variant, topo: topo,
		tree: make([]int, cfg.Nodes), count: make([]int, cfg.Nodes)}
	for i := range m.tree {
		m.tree[i] = -1
	}
	for _, c := range p.casts() {
		t, err := topo.CastTree(c)
		if err != nil {
			return nil, err
		}
		m.tree[c.Root], m.count[c.Root] = t, c.Count
	}
	return m, nil
}

// children are n's children in tree t.
func (m *Machine) children(t int, n model.NodeID) []model.NodeID {
	return m.topo.Trees[t].Children[n]
}

// reaches reports whether root r's packets reach node h.
func (m *Machine) reaches(r, h int) bool {
	return m.tree[r] >= 0 && r != h && m.topo.Trees[m.tree[r]].Parent[h] >= 0
}

// Kinds lists the action kinds. At the host level the host handles the
// packets in its receive pool when it polls and runs the timers.
func (m *Machine) Kinds() []*model.ActionKind {
	if m.kinds != nil {
		return m.kinds
	}
	m.kinds = []*model.ActionKind{
		{Name: "send", Pattern: "host {node} send", Owner: model.OwnerHost, Fair: model.Weak, FairClass: "host {node}", Live: model.LiveClient,
			Enabled: func(n model.Node) bool { x := n.(*Node); return int(x.Next) < m.count[x.ID] },
			Apply:   func(n model.Node, out *model.Outbox) { m.send(n.(*Node), out) }},
		model.Deliver,
	}
	side, owner := "ni", model.OwnerNI
	if m.Level == irx.Host {
		side, owner = "host", model.OwnerHost
		m.kinds = append(m.kinds, &model.ActionKind{Name: "poll", Pattern: "host {node} poll", Owner: model.OwnerHost, Fair: model.Weak, FairClass: "poll {node}",
			Enabled: func(n model.Node) bool { return len(n.(*Node).Buf) > 0 },
			Apply:   func(n model.Node, out *model.Outbox) { m.poll(n.(*Node), out) }})
	} else {
		m.kinds = append(m.kinds, &model.ActionKind{Name: "copy", Pattern: "ni {node} copy", Owner: model.OwnerNI, Fair: model.Weak, FairClass: "ni {node}",
			Enabled: func(n model.Node) bool { return n.(*Node).uncopied() >= 0 },
			Apply:   func(n model.Node, out *model.Outbox) { m.copyOut(n.(*Node), out) }})
	}
	m.kinds = append(m.kinds, &model.ActionKind{Name: "ack-timer", Pattern: side + " {node} ack-timer", Owner: owner, Fair: model.Weak, FairClass: "ack timer {node}", Live: model.LiveTimer,
		Enabled: func(n model.Node) bool { return anyTrue(n.(*Node).AckDue) },
		Apply:   func(n model.Node, out *model.Outbox) { m.ackTimer(n.(*Node), out) }})
	if m.variant == "no-retransmit-timer" {
		return m.kinds
	}
	m.kinds = append(m.kinds, &model.ActionKind{Name: "timeout", Pattern: side + " {node} timeout", Owner: owner, FairClass: "timer {node}", Live: model.LiveTimer, Quiet: true, Fair: model.Strong,
		Enabled: func(n model.Node) bool { return m.timerRuns(n.(*Node)) },
		Apply:   func(n model.Node, out *model.Outbox) { m.timeout(n.(*Node), out) }})
	return m.kinds
}

func anyTrue(xs []bool) bool {
	for _, x := range xs {
		if x {
			return true
		}
	}
	return false
}

// NewNode builds node id in its initial state.
func (m *Machine) NewNode(id model.NodeID) model.Node {
	P := m.P
	return &Node{m: m, ID: id, Queue: make([][]model.Packet, P), Sent: make([]uint16, P), Acked: make([]uint16, P),
		Expect: make([]uint16, P), AckDue: make([]bool, P), NackDue: make([]bool, P), Log: make([]model.StreamLog, P)}
}

func (m *Machine) wire(k uint16) uint16 { return irx.Wire(k, m.M) }

func (m *Machine) windowOpen(n *Node, d int) bool {
	return irx.WindowOpen(int(n.Sent[d]), m.W, m.variant == "window-off-by-one")
}

// fill transmits n's queued packets to d while the window is open; a
// forwarded packet transmitted to its last child may now be
// acknowledged to its parent (ACK-forward), so the acknowledgement
// timer runs for the parent.
func (m *Machine) fill(n *Node, d int, out *model.Outbox) {
	for int(n.Sent[d]) < len(n.Queue[d]) && m.windowOpen(n, d) {
		pkt := n.Queue[d][n.Sent[d]]
		m.transmit(n, d, int(n.Sent[d]), out)
		n.Sent[d]++
		if m.Level == irx.Host {
			continue
		}
		if i := n.find(pkt); i >= 0 {
			n.AckDue[n.Buf[i].Src] = true
		}
	}
	if m.Level == irx.Host {
		m.prune(n)
	}
}

// prune (the host level) drops from n.Fwd the packets that ACK-forward
// lets the host acknowledge now: those transmitted to all their
// children with every earlier one from the same parent; the
// acknowledgement timer runs for their parents.
func (m *Machine) prune(n *Node) {
	if len(n.Fwd) == 0 {
		return
	}
	var keep []model.Packet
	held := make([]bool, m.P) // parents with a packet kept
	for i, f := range n.Fwd {
		if held[f.Src] || m.forwarding(n, f, true) {
			held[f.Src] = true
			if keep != nil {
				keep = append(keep, f)
			}
			continue
		}
		n.AckDue[f.Src] = true
		if keep == nil {
			keep = append(make([]model.Packet, 0, len(n.Fwd)), n.Fwd[:i]...)
		}
	}
	if keep != nil {
		n.Fwd = keep
	}
}

// transmit puts the i-th packet of n's queue to d on the link.
// At the host level the packet carries the cumulative acknowledgement of
// d's stream to n piggybacked, as H_rx's do, once n has accepted a
// packet from d (Packet.Val's upper half, number+1; the lower half is
// the tree).
func (m *Machine) transmit(n *Node, d, i int, out *model.Outbox) {
	pkt := n.Queue[d][i]
	pkt.Src, pkt.Tree = n.ID, m.wire(n.Acked[d]+uint16(i))
	if m.Level == irx.Host && n.Expect[d] > 0 && m.variant != "no-piggyback" {
		pkt.Val |= uint32(m.wire(m.ackable(n, d))+1) << 16
		n.AckDue[d] = false
	}
	out.Transmit(model.NodeID(d), pkt)
}

// forward queues pkt for n's children in its tree.
func (m *Machine) forward(n *Node, pkt model.Packet, out *model.Outbox) {
	pkt.Src, pkt.Tree = 0, 0 // transmit writes this hop's
	for _, c := range m.children(int(pkt.Val), n.ID) {
		n.Queue[c] = append(n.Queue[c], pkt)
		m.fill(n, int(c), out)
	}
}

func (m *Machine) send(n *Node, out *model.Outbox) {
	n.Next++
	m.forward(n, model.Packet{Tag: tagData, Origin: n.ID, Seq: n.Next, Val: uint32(m.tree[n.ID])}, out)
}

// ack handles a cumulative acknowledgement a from d (the wire number d
// expects next) and reports whether it acknowledged anything.
func (m *Machine) ack(n *Node, d int, a uint16) bool {
	adv := irx.AckAdvance(a, n.Acked[d], int(n.Sent[d]), m.M)
	if adv == 0 {
		return false
	}
	n.Acked[d] += uint16(adv)
	n.Sent[d] -= uint16(adv)
	n.Queue[d] = append(n.Queue[d][:0:0], n.Queue[d][adv:]...)
	return true
}

func (m *Machine) retransmit(n *Node, d int, out *model.Outbox) {
	for i := 0; i < int(n.Sent[d]); i++ {
		m.transmit(n, d, i, out)
	}
}

// Receive handles a packet from node from. I_mc's NI handles it at
// once (handle); H_mc's NI stores it in a free buffer of the receive
// pool for the host to handle when it polls, or drops it if every
// buffer is taken (as H_rx's, irx.Host).
func (m *Machine) Receive(mn model.Node, from model.NodeID, pkt model.Packet, out *model.Outbox) {
	n := mn.(*Node)
	if m.Level == irx.Host {
		if len(n.Buf) >= m.B && m.variant != "no-buffer-check" {
			return // dropped for lack of a buffer; the sender's timer makes good
		}
		n.Buf = append(n.Buf, pkt)
		return
	}
	m.handle(n, int(from), pkt, out)
}

// poll is H_mc's host handling the oldest packet in its receive pool,
// which frees the buffer.
func (m *Machine) poll(n *Node, out *model.Outbox) {
	pkt := n.Buf[0]
	n.Buf = append(n.Buf[:0:0], n.Buf[1:]...)
	m.handle(n, int(pkt.Src), pkt, out)
}

// handle is the receiving side at either level: an acknowledgement or
// NACK from s, or a data packet from s, accepted only if it carries the
// next expected number. I_mc's NI puts an accepted packet in a free
// receive buffer (or drops it and owes s a NACK) and forwards it from
// there; H_mc's host, which handles a packet already in a buffer, hands
// it to the client, forwards it as new sends to the children and frees
// the buffer.
func (m *Machine) handle(n *Node, s int, pkt model.Packet, out *model.Outbox) {
	switch pkt.Tag {
	case tagAck:
		if m.ack(n, s, pkt.Tree) {
			m.fill(n, s, out)
			m.release(n, out)
		}
	case tagNack:
		if m.ack(n, s, pkt.Tree) {
			m.release(n, out)
		}
		m.retransmit(n, s, out)
		m.fill(n, s, out)
	case tagData:
		if a := pkt.Val >> 16; a > 0 {
			pkt.Val &= 0xffff // the tree
			if m.ack(n, s, uint16(a-1)) {
				m.fill(n, s, out)
			}
		}
		switch {
		case pkt.Tree != m.wire(n.Expect[s]):
			n.AckDue[s] = true // a duplicate or a packet after a gap
			if m.variant == "forward-duplicates" || m.variant == "forward-out-of-order" && m.ahead(n, s, pkt.Tree) {
				m.forward(n, pkt, out)
			}
		case m.Level == irx.NI && len(n.Buf) >= m.B:
			n.NackDue[s] = true // dropped for lack of a buffer (§8.2.2)
		case m.Level == irx.Host:
			n.Expect[s]++
			n.AckDue[s] = true
			out.Deliver(n.ID, pkt, int(pkt.Origin), &n.Log[pkt.Origin])
			if m.variant != "ack-receive" {
				n.Fwd = append(n.Fwd, pkt)
			}
			m.forward(n, pkt, out)
			m.prune(n)
		default:
			n.Expect[s]++
			n.AckDue[s] = true
			n.Buf = append(n.Buf, pkt)
			n.Copied = append(n.Copied, false)
			m.forward(n, pkt, out)
		}
	}
}

// ahead reports whether wire number w is 1..W-1 ahead of what n expects
// from s: a packet after a gap (the broken variant forward-out-of-order
// forwards such packets).
func (m *Machine) ahead(n *Node, s int, w uint16) bool {
	d := (int(w) - int(m.wire(n.Expect[s])) + m.M) % m.M
	return d >= 1 && d < m.W
}

// find returns the index in n's buffers of the packet of pkt's stream
// and number, or -1.
func (n *Node) find(pkt model.Packet) int {
	for i, b := range n.Buf {
		if b.Origin == pkt.Origin && b.Seq == pkt.Seq {
			return i
		}
	}
	return -1
}

// queued reports whether pkt waits in the queue to d (transmitted or not).
func (n *Node) queued(d model.NodeID, pkt model.Packet) bool {
	for _, q := range n.Queue[d] {
		if q.Origin == pkt.Origin && q.Seq == pkt.Seq {
			return true
		}
	}
	return false
}

// forwarding reports whether buffered packet pkt still waits for one of
// n's children: queued and not yet transmitted (sent false) or not yet
// acknowledged (sent true).
func (m *Machine) forwarding(n *Node, pkt model.Packet, untransmitted bool) bool {
	for _, c := range m.children(int(pkt.Val), n.ID) {
		for i, q := range n.Queue[c] {
			if q.Origin == pkt.Origin && q.Seq == pkt.Seq && (!untransmitted || i >= int(n.Sent[c])) {
				return true
			}
		}
	}
	return false
}

// release frees the buffers of the packets that the host has copied and
// every child has acknowledged, and sends the NACKs owed if it freed
// one. The broken variant release-on-copy frees a buffer as soon as the
// host has copied its packet, as for a unicast packet.
func (m *Machine) release(n *Node, out *model.Outbox) {
	if m.Level == irx.Host {
		return // the host freed the buffer when it handled the packet
	}
	freed := false
	for i := 0; i < len(n.Buf); {
		if n.Copied[i] && (m.variant == "release-on-copy" || !m.forwarding(n, n.Buf[i], false)) {
			n.Buf = append(n.Buf[:i], n.Buf[i+1:]...)
			n.Copied = append(n.Copied[:i], n.Copied[i+1:]...)
			freed = true
			continue
		}
		i++
	}
	if !freed {
		return
	}
	for s := 0; s < m.P; s++ {
		if n.NackDue[s] {
			n.NackDue[s], n.AckDue[s] = false, false
			out.Transmit(model.NodeID(s), model.Packet{Tag: tagNack, Src: n.ID, Origin: n.ID, Tree: m.wire(m.ackable(n, s))})
		}
	}
}

// ackable is how many packets from s n may acknowledge: under
// ACK-forward those accepted and transmitted to all their children (the
// packets from s still waiting to be transmitted to a child are the
// last ones from s in the buffers); the broken variant ack-receive
// acknowledges every packet accepted, as for a unicast packet.
func (m *Machine) ackable(n *Node, s int) uint16 {
	k := n.Expect[s]
	if m.variant == "ack-receive" {
		return k
	}
	if m.Level == irx.Host {
		for _, f := range n.Fwd {
			if int(f.Src) == s {
				k--
			}
		}
		return k
	}
	waiting := 0
	for _, b := range n.Buf {
		if int(b.Src) != s {
			continue
		}
		if waiting > 0 || m.forwarding(n, b, true) {
			waiting++
		}
	}
	return k - uint16(waiting)
}

// uncopied is the index of the oldest buffered packet the host has not
// copied, or -1.
func (n *Node) uncopied() int {
	for i, c := range n.Copied {
		if !c {
			return i
		}
	}
	return -1
}

func (m *Machine) copyOut(n *Node, out *model.Outbox) {
	i := n.uncopied()
	pkt := n.Buf[i]
	n.Copied[i] = true
	out.Deliver(n.ID, pkt, int(pkt.Origin), &n.Log[pkt.Origin])
	m.release(n, out)
}

func (m *Machine) ackTimer(n *Node, out *model.Outbox) {
	for s := 0; s < m.P; s++ {
		if n.AckDue[s] {
			n.AckDue[s] = false
			out.Transmit(model.NodeID(s), model.Packet{Tag: tagAck, Src: n.ID, Origin: n.ID, Tree: m.wire(m.ackable(n, s))})
		}
	}
}

// timerRuns reports whether the retransmission timer runs: a packet is
// unacknowledged. At the host level, as in H_rx, it does not expire
// either while the host has a packet in its receive pool that it has
// not handled (and packets other hosts hold: Holds), unless --timer
// links says it may.
func (m *Machine) timerRuns(n *Node) bool {
	if m.Level == irx.Host && !m.linksTimer && len(n.Buf) > 0 {
		return false
	}
	for _, s := range n.Sent {
		if s > 0 {
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

// Holds reports whether node x holds a packet from node from in its
// receive pool that its host has not handled (model.Holder): only at the
// host level, under the round-trip timer rule (as H_rx's).
func (m *Machine) Holds(x model.Node, from model.NodeID) bool {
	if m.Level != irx.Host || m.linksTimer {
		return false
	}
	for _, p := range x.(*Node).Buf {
		if p.Src == from {
			return true
		}
	}
	return false
}

// held is how many received packets n holds: in its receive buffers or
// waiting in a queue to a child. At the host level it is the receive
// pool alone: a packet the host forwards is copied into its send
// queues when the host handles it, which frees the buffer.
func (n *Node) held() int {
	if n.m.Level == irx.Host {
		return len(n.Buf)
	}
	k := len(n.Buf)
	var seen []model.Packet
	for d := range n.Queue {
		for _, q := range n.Queue[d] {
			if q.Origin == n.ID || n.find(q) >= 0 {
				continue
			}
			dup := false
			for _, x := range seen {
				dup = dup || x.Origin == q.Origin && x.Seq == q.Seq
			}
			if !dup {
				seen = append(seen, q)
				k++
			}
		}
	}
	return k
}

// Encode appends the node's canonical encoding.
func (n *Node) Encode(buf []byte) []byte {
	buf = binary.AppendUvarint(buf, uint64(n.Next))
	for d := range n.Queue {
		buf = binary.AppendUvarint(buf, uint64(n.Sent[d]))
		buf = binary.AppendUvarint(buf, uint64(n.Acked[d]))
		buf = binary.AppendUvarint(buf, uint64(n.Expect[d]))
		buf = append(buf, irx.DueBits(n.AckDue[d], n.NackDue[d]))
		buf = model.AppendPackets(buf, n.Queue[d])
	}
	buf = model.AppendPackets(buf, n.Buf)
	for _, c := range n.Copied {
		if c {
			buf = append(buf, 1)
		} else {
			buf = append(buf, 0)
		}
	}
	if n.m.Level == irx.Host {
		buf = model.AppendPackets(buf, n.Fwd)
	}
	return irx.AppendLogs(buf, n.Log)
}

// Decode reads the encoding written by Encode.
func (n *Node) Decode(d *model.Decoder) {
	n.Next = uint16(d.Uvarint())
	for i := range n.Queue {
		n.Sent[i] = uint16(d.Uvarint())
		n.Acked[i] = uint16(d.Uvarint())
		n.Expect[i] = uint16(d.Uvarint())
		n.AckDue[i], n.NackDue[i] = irx.DueFlags(d.Byte())
		n.Queue[i] = d.Packets(n.Queue[i][:0])
	}
	n.Buf = d.Packets(n.Buf[:0])
	n.Copied = n.Copied[:0]
	if n.m.Level == irx.Host {
		n.Fwd = d.Packets(n.Fwd[:0]) // no Copied at the host level
	} else {
		for range n.Buf {
			n.Copied = append(n.Copied, d.Byte() != 0)
		}
	}
	irx.DecodeLogs(d, n.Log)
}

// CopyFrom makes n a deep copy of src.
func (n *Node) CopyFrom(src model.Node) {
	s := src.(*Node)
	n.m, n.ID, n.Next = s.m, s.ID, s.Next
	if len(n.Queue) != len(s.Queue) {
		n.Queue = make([][]model.Packet, len(s.Queue))
	}
	for d := range s.Queue {
		n.Queue[d] = append(n.Queue[d][:0], s.Queue[d]...)
	}
	n.Sent = append(n.Sent[:0], s.Sent...)
	n.Acked = append(n.Acked[:0], s.Acked...)
	n.Expect = append(n.Expect[:0], s.Expect...)
	n.AckDue = append(n.AckDue[:0], s.AckDue...)
	n.NackDue = append(n.NackDue[:0], s.NackDue...)
	n.Buf = append(n.Buf[:0], s.Buf...)
	n.Copied = append(n.Copied[:0], s.Copied...)
	n.Fwd = append(n.Fwd[:0], s.Fwd...)
	n.Log = append(n.Log[:0], s.Log...)
}

// Describe renders the node.
func (n *Node) Describe() []string {
	side := n.m.Side()
	return []string{
		fmt.Sprintf("%s %d: send %s", side, n.ID, n.sendString()),
		fmt.Sprintf("%s %d: recv %s; buffers %s", side, n.ID, n.recvString(), n.bufString()),
		fmt.Sprintf("host %d: sent %d of %d; delivered %s", n.ID, n.Next, n.m.count[n.ID], n.logString()),
	}
}

func (n *Node) sendString() string {
	var parts []string
	for d := range n.Queue {
		if len(n.Queue[d]) > 0 || n.Acked[d] > 0 {
			parts = append(parts, fmt.Sprintf("[to %d: acked %d sent %d queue %s]", d, n.Acked[d], n.Sent[d], model.PacketList(n.Queue[d])))
		}
	}
	return strings.Join(parts, " ")
}

func (n *Node) recvString() string {
	return irx.RecvString(n.Expect, n.AckDue, n.NackDue, n.m.M, func(s int) bool { return n.Expect[s] > 0 || n.AckDue[s] || n.NackDue[s] })
}

func (n *Node) bufString() string {
	s := model.PacketList(n.Buf)
	var c []model.Packet
	for i, x := range n.Copied {
		if x {
			c = append(c, n.Buf[i])
		}
	}
	if len(c) > 0 {
		s += ", copied to the host " + model.PacketList(c)
	}
	if len(n.Fwd) > 0 {
		s += ", acknowledgement held until forwarded " + model.PacketList(n.Fwd)
	}
	return s
}

func (n *Node) logString() string {
	var parts []string
	for r := 0; r < n.m.P; r++ {
		if n.m.reaches(r, int(n.ID)) {
			parts = append(parts, fmt.Sprintf("from %d: %s", r, n.Log[r]))
		}
	}
	return strings.Join(parts, "; ")
}

// Diff reports every difference from prev.
func (n *Node) Diff(prev model.Node, ch func(what, from, to string)) {
	p := prev.(*Node)
	id, side := n.ID, n.m.Side()
	ch(fmt.Sprintf("%s %d send", side, id), p.sendString(), n.sendString())
	ch(fmt.Sprintf("%s %d recv", side, id), p.recvString(), n.recvString())
	ch(fmt.Sprintf("%s %d buffers", side, id), p.bufString(), n.bufString())
	if p.Next != n.Next {
		ch(fmt.Sprintf("host %d sent", id), strconv.Itoa(int(p.Next)), strconv.Itoa(int(n.Next)))
	}
	ch(fmt.Sprintf("host %d delivered", id), p.logString(), n.logString())
}
