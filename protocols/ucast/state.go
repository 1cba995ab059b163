package ucast

import (
	"encoding/binary"
	"fmt"

	"lfccheck/model"
)

// Desc is a send descriptor (Fig. 4.1): a packet to transmit to Dest. Fwd is
// set when the packet lives in a receive buffer being forwarded (protocols
// that forward, such as MCAST) rather than in the send pool.
type Desc struct {
	Dest model.NodeID
	Fwd  bool
	Pkt  model.Packet
}

// PCB is the per-peer protocol control block (Fig. 4.1).
type PCB struct {
	SendCredits int    // credits this NI holds for the peer
	FreeCredits int    // credits owed to the peer, not yet returned
	Blocked     []Desc // blocked-sends queue, FIFO
}

// RecvBuf is an occupied NI receive buffer. From is the immediate sender,
// so the pool partition the buffer belongs to. A buffer is named by its
// packet (model.Packet.SameData), which no handler changes, never by its
// position in the pool.
type RecvBuf struct {
	Pkt     model.Packet
	From    model.NodeID
	Copied  bool  // delivered to the host
	Pending uint8 // forwards not yet transmitted (forwarding protocols)
	// Chan is the buffer's class in protocols with recovery channels
	// (RECOV): 0 for a buffer of From's pool partition, c+1 for NI c's
	// recovery-channel buffer. Encoded only when Machine.Channels is set.
	Chan uint8
}

// SendBuf is an occupied NI send packet with the number of send
// descriptors that still refer to it.
type SendBuf struct {
	Pkt  model.Packet
	Refs uint8
}

// NI is the state of one network interface.
type NI struct {
	PCB  []PCB     // indexed by peer; the entry for the NI itself is unused
	Recv []RecvBuf // occupied receive buffers in arrival order
	Send []SendBuf // occupied send packets in allocation order
	// Free is, with Features.ReusedHeaders, the deadlock channel field
	// (model.Packet.Hop) that each send packet in the pool which was used
	// before still holds, the one returned last at the end: a launch takes
	// that one (the pool is a LIFO free list), or, when Free is empty, a
	// packet never used (header 0).
	Free []uint8
}

// Host is the state of one host process, with the stream logs that the
// fifo and exactly-once properties read (history state).
type Host struct {
	Next  int            // index of the next workload item to launch
	Queue []model.Packet // delivered, not yet processed (full host buffers)
	// Held are packets the client kept after its upcall (lfc_upcall
	// returned nonzero, Table 3.1) and has not yet freed with
	// lfc_packet_free: they occupy host buffers like Queue's. Only
	// protocols whose machine sets KeepsPackets have any.
	Held []model.Packet
	// Up are the packets whose upcalls are aside (Machine.HostLibrary):
	// their handlers run (a request's replies) or wait in a routine that
	// drains, innermost last; each holds its host buffer.
	Up []model.Packet
	// Extra is the number of host receive buffers draining took from the
	// pool beyond the machine's HostBuffers (Machine.HostLibrary), at
	// most MaxExtraBuffers.
	Extra int
	Log   []model.StreamLog // per stream (see Extension.PacketStream)
}

// HostBuffersUsed is the number of host receive buffers in use: packets
// delivered and not yet processed, packets whose upcalls are aside, and
// packets the client keeps.
func (h *Host) HostBuffersUsed() int { return len(h.Queue) + len(h.Held) + len(h.Up) }

// Node is one node's UCAST state: its NI and its host. Protocols built on
// UCAST embed it.
type Node struct {
	ID model.NodeID
	M  *Machine // static; not part of the encoding
	// Outer is the protocol's node that embeds this one, for extension
	// methods that need its state (static: set by the protocol's NewNode, kept by
	// copies and decoding; nil for UCAST's own nodes).
	Outer model.Node
	NI
	Host
	FA FAState // encoded only when the machine sets FetchAdd
}

var _ model.Node = (*Node)(nil)

// Encode appends the node's canonical encoding.
func (n *Node) Encode(buf []byte) []byte { return n.encode(buf, nil, nil) }

// Decode reads the encoding written by Encode.
func (n *Node) Decode(d *model.Decoder) { n.decode(d, n.ID, nil) }

// renamed is pkt renamed by p (pkt itself for p nil, the identity).
func (m *Machine) renamed(pkt model.Packet, p *model.Perm) model.Packet {
	if p == nil {
		return pkt
	}
	return m.RenamePacket(pkt, p)
}

// renamedID is node id renamed by p (nil: the identity).
func renamedID(id model.NodeID, p *model.Perm) model.NodeID {
	if p == nil {
		return id
	}
	return p.Node[id]
}

// appendRenamed appends a length-prefixed packet list, each renamed by p.
func (m *Machine) appendRenamed(buf []byte, ps []model.Packet, p *model.Perm) []byte {
	if p == nil {
		return model.AppendPackets(buf, ps)
	}
	return model.AppendRenamedPackets(m, buf, ps, p)
}

// encode appends the encoding of n renamed by p (inv its inverse; both
// nil for n's own encoding): what RenameFrom(n, p) followed by Encode
// gives, without building the renamed node.
func (n *Node) encode(buf []byte, p, inv *model.Perm) []byte {
	m := n.M
	id := renamedID(n.ID, p)
	for r := range n.PCB {
		if r == int(id) {
			continue
		}
		pcb := &n.PCB[renamedID(model.NodeID(r), inv)]
		buf = append(buf, byte(pcb.SendCredits), byte(pcb.FreeCredits))
		buf = binary.AppendUvarint(buf, uint64(len(pcb.Blocked)))
		for _, d := range pcb.Blocked {
			buf = model.AppendBool(append(buf, byte(renamedID(d.Dest, p))), d.Fwd)
			buf = model.AppendPacket(buf, m.renamed(d.Pkt, p))
		}
	}
	buf = binary.AppendUvarint(buf, uint64(len(n.Recv)))
	for _, r := range n.Recv {
		buf = append(model.AppendBool(append(buf, byte(renamedID(r.From, p))), r.Copied), r.Pending)
		if m.Channels {
			c := r.Chan
			if c != 0 {
				c = uint8(renamedID(model.NodeID(c-1), p)) + 1
			}
			buf = append(buf, c)
		}
		buf = model.AppendPacket(buf, m.renamed(r.Pkt, p))
	}
	buf = binary.AppendUvarint(buf, uint64(len(n.Send)))
	for _, s := range n.Send {
		buf = model.AppendPacket(append(buf, s.Refs), m.renamed(s.Pkt, p))
	}
	if m.ReusedHeaders {
		buf = binary.AppendUvarint(buf, uint64(len(n.Free)))
		for _, h := range n.Free {
			buf = append(buf, renamedHop(h, p))
		}
	}
	buf = binary.AppendUvarint(buf, uint64(n.Next))
	buf = m.appendRenamed(buf, n.Queue, p)
	if m.KeepsPackets {
		buf = m.appendRenamed(buf, n.Held, p)
	}
	if m.HostLibrary {
		buf = m.appendRenamed(binary.AppendUvarint(buf, uint64(n.Extra)), n.Up, p)
	}
	for st := range n.Log {
		l := &n.Log[m.streamOf(st, inv)]
		buf = binary.AppendUvarint(buf, uint64(l.Last))
		buf = binary.AppendUvarint(buf, uint64(l.Base))
		buf = binary.AppendUvarint(buf, l.Mask)
	}
	if m.FetchAdd {
		buf = model.AppendBool(binary.AppendUvarint(buf, uint64(n.FA.Var)), n.FA.Outstanding)
		buf = n.FA.AppendHistory(buf)
		if m.Variant == FASplitIncrement {
			buf = appendReads(buf, n.FA.Reads, func(q model.Packet) model.Packet { return m.renamed(q, p) })
		}
	}
	return buf
}

// decode overwrites n with the state read from d, an encoding of node
// from, renamed by p (which maps from to n.ID; nil, with from = n.ID, for
// n's own encoding): what Decode into a node from followed by
// RenameFrom(that node, p) gives, without building that node.
func (n *Node) decode(d *model.Decoder, from model.NodeID, p *model.Perm) {
	m := n.M
	for q := range n.PCB {
		if q == int(from) {
			continue
		}
		pcb := &n.PCB[renamedID(model.NodeID(q), p)]
		pcb.SendCredits = int(int8(d.Byte()))
		pcb.FreeCredits = int(int8(d.Byte()))
		pcb.Blocked = pcb.Blocked[:0]
		for k := d.Count(); k > 0 && d.Err() == nil; k-- {
			dest := renamedID(model.NodeID(d.Byte()), p)
			fwd := d.Bool()
			pcb.Blocked = append(pcb.Blocked, Desc{Dest: dest, Fwd: fwd, Pkt: m.renamed(d.Packet(), p)})
		}
	}
	n.Recv = n.Recv[:0]
	for k := d.Count(); k > 0 && d.Err() == nil; k-- {
		r := RecvBuf{From: renamedID(model.NodeID(d.Byte()), p), Copied: d.Bool(), Pending: d.Byte()}
		if m.Channels {
			if r.Chan = d.Byte(); r.Chan != 0 {
				r.Chan = uint8(renamedID(model.NodeID(r.Chan-1), p)) + 1
			}
		}
		r.Pkt = m.renamed(d.Packet(), p)
		n.Recv = append(n.Recv, r)
	}
	n.Send = n.Send[:0]
	for k := d.Count(); k > 0 && d.Err() == nil; k-- {
		sb := SendBuf{Refs: d.Byte()}
		sb.Pkt = m.renamed(d.Packet(), p)
		n.Send = append(n.Send, sb)
	}
	if m.ReusedHeaders {
		n.Free = n.Free[:0]
		for k := d.Count(); k > 0 && d.Err() == nil; k-- {
			n.Free = append(n.Free, renamedHop(d.Byte(), p))
		}
	}
	n.Next = int(d.Uvarint())
	n.Queue = m.renameAll(d.Packets(n.Queue), p)
	if m.KeepsPackets {
		n.Held = m.renameAll(d.Packets(n.Held), p)
	}
	if m.HostLibrary {
		n.Extra = int(d.Uvarint())
		n.Up = m.renameAll(d.Packets(n.Up), p)
	}
	for st := range n.Log {
		l := &n.Log[m.streamOf(st, p)]
		l.Last = uint16(d.Uvarint())
		l.Base = uint16(d.Uvarint())
		l.Mask = d.Uvarint()
	}
	if m.FetchAdd {
		n.FA.Var = uint32(d.Uvarint())
		n.FA.Outstanding = d.Bool()
		n.FA.DecodeHistory(d)
		if m.Variant == FASplitIncrement {
			n.FA.Reads = decodeReads(d, n.FA.Reads[:0], func(q model.Packet) model.Packet { return m.renamed(q, p) })
		}
	}
}

// renamedHop is a deadlock channel field (0, or c+1 for NI c) renamed by
// p (nil: the identity).
func renamedHop(h uint8, p *model.Perm) uint8 {
	if h == 0 {
		return 0
	}
	return uint8(renamedID(model.NodeID(h-1), p)) + 1
}

// renameAll renames the packets of ps by p in place.
func (m *Machine) renameAll(ps []model.Packet, p *model.Perm) []model.Packet {
	if p == nil {
		return ps
	}
	return model.RenamePackets(m, ps[:0], ps, p)
}

// CopyFrom makes n a deep copy of src, a *Node.
func (n *Node) CopyFrom(src model.Node) { n.CopyNode(src.(*Node)) }

// CopyNode makes n a deep copy of s, reusing n's storage.
func (n *Node) CopyNode(s *Node) {
	n.ID, n.M = s.ID, s.M
	if len(n.PCB) != len(s.PCB) {
		n.PCB = make([]PCB, len(s.PCB))
	}
	for p := range s.PCB {
		d, f := &n.PCB[p], &s.PCB[p]
		d.SendCredits, d.FreeCredits = f.SendCredits, f.FreeCredits
		d.Blocked = copyOf(d.Blocked, f.Blocked)
	}
	n.Recv = copyOf(n.Recv, s.Recv)
	n.Send = copyOf(n.Send, s.Send)
	n.Free = copyOf(n.Free, s.Free)
	n.Next = s.Next
	n.Queue = copyOf(n.Queue, s.Queue)
	n.Held = copyOf(n.Held, s.Held)
	n.Up = copyOf(n.Up, s.Up)
	n.Extra = s.Extra
	n.Log = copyOf(n.Log, s.Log)
	n.FA.CopyFrom(&s.FA)
}

// copyOf is append(dst[:0], src...) without the call to copy nothing
// (most of a node's lists are empty, and it is copied for every step).
func copyOf[T any](dst, src []T) []T {
	if len(src) == 0 {
		return dst[:0]
	}
	return append(dst[:0], src...)
}

func descList(ds []Desc) string {
	return model.ListOf(ds, func(d Desc) string { return d.Pkt.String() })
}

func sendList(ss []SendBuf) string {
	return model.ListOf(ss, func(s SendBuf) string { return s.Pkt.String() })
}

// freeList renders NI.Free: "-" for a clear header, "chC" for one that
// names NI C's channel.
func freeList(hs []uint8) string {
	return model.ListOf(hs, func(h uint8) string {
		if h == 0 {
			return "-"
		}
		return fmt.Sprintf("ch%d", h-1)
	})
}

func recvList(rs []RecvBuf) string {
	return model.ListOf(rs, func(r RecvBuf) string {
		pkt := r.Pkt
		pkt.Hop = 0 // the buffer's class is shown instead
		s := fmt.Sprintf("%s<%d", pkt, r.From)
		if r.Copied {
			s += " copied"
		}
		if r.Pending > 0 {
			s += fmt.Sprintf(" fwd%d", r.Pending)
		}
		if r.Chan > 0 {
			s += fmt.Sprintf(" ch%d", r.Chan-1)
		}
		return s
	})
}

// Describe renders the NI (credits, owed credits and blocked sends per
// peer, pools) and the host (launch progress, queue) on one line each.
func (n *Node) Describe() []string {
	s := fmt.Sprintf("ni %d:", n.ID)
	for p := range n.PCB {
		if p == int(n.ID) {
			continue
		}
		pcb := &n.PCB[p]
		s += fmt.Sprintf(" [to %d: credits %d owes %d", p, pcb.SendCredits, pcb.FreeCredits)
		if len(pcb.Blocked) > 0 {
			s += " blocked " + descList(pcb.Blocked)
		}
		s += "]"
	}
	s += fmt.Sprintf(" recv %s send %s", recvList(n.Recv), sendList(n.Send))
	if n.M.ReusedHeaders {
		s += " free headers " + freeList(n.Free)
	}
	h := fmt.Sprintf("host %d: launched %d of %d, queue %s", n.ID, n.Next, len(n.M.Work[n.ID]), model.PacketList(n.Queue))
	if n.M.KeepsPackets {
		h += " held " + model.PacketList(n.Held)
	}
	if n.M.HostLibrary {
		h += fmt.Sprintf(" upcalls %s extra buffers %d", model.PacketList(n.Up), n.Extra)
	}
	if n.M.FetchAdd {
		s += fmt.Sprintf(" fa-var %d", n.FA.Var)
		if len(n.FA.Reads) > 0 {
			s += " fa-reads " + n.FA.ReadsText()
		}
		h += fmt.Sprintf(" fa outstanding %v got %v", n.FA.Outstanding, n.FA.Got)
	}
	return []string{s, h}
}

// Diff reports what differs from prev, a *Node.
func (n *Node) Diff(prev model.Node, ch func(what, from, to string)) {
	x, id := prev.(*Node), n.ID
	for p := range n.PCB {
		if p == int(id) {
			continue
		}
		ch(fmt.Sprintf("ni %d credits for %d", id, p), fmt.Sprint(x.PCB[p].SendCredits), fmt.Sprint(n.PCB[p].SendCredits))
		ch(fmt.Sprintf("ni %d owes %d", id, p), fmt.Sprint(x.PCB[p].FreeCredits), fmt.Sprint(n.PCB[p].FreeCredits))
		ch(fmt.Sprintf("ni %d blocked to %d", id, p), descList(x.PCB[p].Blocked), descList(n.PCB[p].Blocked))
	}
	ch(fmt.Sprintf("ni %d recv pool", id), recvList(x.Recv), recvList(n.Recv))
	ch(fmt.Sprintf("ni %d send pool", id), sendList(x.Send), sendList(n.Send))
	ch(fmt.Sprintf("ni %d free send headers", id), freeList(x.Free), freeList(n.Free))
	ch(fmt.Sprintf("host %d launched", id), fmt.Sprint(x.Next), fmt.Sprint(n.Next))
	ch(fmt.Sprintf("host %d queue", id), model.PacketList(x.Queue), model.PacketList(n.Queue))
	ch(fmt.Sprintf("host %d held", id), model.PacketList(x.Held), model.PacketList(n.Held))
	ch(fmt.Sprintf("host %d upcalls", id), model.PacketList(x.Up), model.PacketList(n.Up))
	ch(fmt.Sprintf("host %d extra buffers", id), fmt.Sprint(x.Extra), fmt.Sprint(n.Extra))
	ch(fmt.Sprintf("ni %d fa variable", id), fmt.Sprint(x.FA.Var), fmt.Sprint(n.FA.Var))
	ch(fmt.Sprintf("ni %d fa reads", id), x.FA.ReadsText(), n.FA.ReadsText())
	ch(fmt.Sprintf("host %d fa outstanding", id), fmt.Sprint(x.FA.Outstanding), fmt.Sprint(n.FA.Outstanding))
	ch(fmt.Sprintf("host %d fa got", id), fmt.Sprint(x.FA.Got), fmt.Sprint(n.FA.Got))
}

// FindRecv returns the index of the receive buffer holding pkt, or -1.
func (n *Node) FindRecv(pkt model.Packet) int {
	for i := range n.Recv {
		if n.Recv[i].Pkt.SameData(pkt) {
			return i
		}
	}
	return -1
}

// PoolCount is the number of buffers of sender's pool partition that are
// occupied (recovery-channel buffers are not part of it).
func (n *Node) PoolCount(sender model.NodeID) int {
	c := 0
	for i := range n.Recv {
		if n.Recv[i].From == sender && n.Recv[i].Chan == 0 {
			c++
		}
	}
	return c
}

// poolCounts appends to buf, for each of the P senders, PoolCount of it.
func (n *Node) poolCounts(buf []int, P int) []int {
	for i := 0; i < P; i++ {
		buf = append(buf, 0)
	}
	for i := range n.Recv {
		if n.Recv[i].Chan == 0 {
			buf[n.Recv[i].From]++
		}
	}
	return buf
}

// poolFrom counts the receive buffers holding packets from s (outside
// recovery channels), as poolCounts does for every sender.
func (n *Node) poolFrom(s int) int {
	k := 0
	for i := range n.Recv {
		if n.Recv[i].Chan == 0 && int(n.Recv[i].From) == s {
			k++
		}
	}
	return k
}

// NextCopy is the index of the receive buffer the NI copies to its host
// next (the oldest one not yet copied), or -1.
func (n *Node) NextCopy() int {
	for i := range n.Recv {
		if !n.Recv[i].Copied && n.Recv[i].Pkt.Tag != TagFARequest {
			return i
		}
	}
	return -1
}

// Marks implements model.Marker: blocked sends per destination and full
// receive pool partitions on the NI, a full host buffer pool on the host.
func (n *Node) Marks() []model.Mark {
	var ms []model.Mark
	for p := range n.PCB {
		if b := n.PCB[p].Blocked; len(b) > 0 {
			ms = append(ms, model.Mark{Part: model.OwnerNI, Text: fmt.Sprintf("blocked to %d: %s", p, descList(b))})
		}
	}
	if n.M != nil {
		for p := range n.PCB {
			if p != int(n.ID) && n.PoolCount(model.NodeID(p)) >= n.M.C {
				ms = append(ms, model.Mark{Part: model.OwnerNI, Text: fmt.Sprintf("pool for %d full", p)})
			}
		}
		if n.HostBuffersUsed() >= n.M.HostBuffers+n.Extra {
			ms = append(ms, model.Mark{Part: model.OwnerHost, Text: "host buffers full"})
		}
	}
	return ms
}
