package model

import "fmt"

// NodeID names an NI and the host attached to it, 0..P-1.
type NodeID uint8

// MaxNodes bounds P so that node ids fit a NodeID and per-node tables stay
// small.
const MaxNodes = 64

// Tag is a packet type (thesis Table 3.3).
type Tag uint8

// Packet tags. Data packets occupy a receive buffer and consume a credit;
// control packets are handled on arrival.
const (
	TagNone      Tag = iota
	TagUnicast       // UCAST data packet (Fig. 4.1)
	TagMulticast     // MCAST data packet (Fig. 4.5)
	TagCredit        // explicit credit update (Fig. 4.3)
)

// IsData reports whether packets with this tag consume a credit and occupy a
// receive buffer.
func (t Tag) IsData() bool { return t == TagUnicast || t == TagMulticast }

func (t Tag) String() string {
	switch t {
	case TagUnicast:
		return "UNICAST"
	case TagMulticast:
		return "MULTICAST"
	case TagCredit:
		return "CREDIT"
	}
	return fmt.Sprintf("tag%d", uint8(t))
}

// Packet is a packet header as the protocols see it (Fig. 4.1, 4.5) plus two
// bookkeeping fields (Origin, Seq) that no protocol reads: they identify the
// packet for the properties and for people reading traces.
type Packet struct {
	Tag     Tag
	Src     NodeID // hdr.src: the NI that transmitted this copy
	Credits uint8  // hdr.credits: piggybacked credits
	Tree    uint16 // hdr.tree: multicast tree id (unused by UCAST)
	Origin  NodeID // host that launched the packet
	Seq     uint16 // 1-based number of the packet in its stream
}

// String renders a packet briefly: u0#2 is origin 0's second unicast packet,
// m1#1 root 1's first multicast packet on tree 1 (m1t5#1 on tree 5, when the
// tree id is not the root's id), "cr" a CREDIT packet; "+N" shows
// piggybacked credits.
func (p Packet) String() string {
	var s string
	switch p.Tag {
	case TagUnicast:
		s = fmt.Sprintf("u%d#%d", p.Origin, p.Seq)
	case TagMulticast:
		if int(p.Tree) == int(p.Origin) {
			s = fmt.Sprintf("m%d#%d", p.Origin, p.Seq)
		} else {
			s = fmt.Sprintf("m%dt%d#%d", p.Origin, p.Tree, p.Seq)
		}
	case TagCredit:
		s = "cr"
	default:
		s = p.Tag.String()
	}
	if p.Credits > 0 {
		s += fmt.Sprintf("+%d", p.Credits)
	}
	return s
}

// SameData reports whether p and q are copies of the same launched data packet.
func (p Packet) SameData(q Packet) bool {
	return p.Tag == q.Tag && p.Origin == q.Origin && p.Tree == q.Tree && p.Seq == q.Seq
}

// Desc is a send descriptor (Fig. 4.1): a packet to transmit to Dest. Fwd is
// set when the packet lives in a receive buffer being forwarded (MCAST) rather
// than in the send pool.
type Desc struct {
	Dest NodeID
	Fwd  bool
	Pkt  Packet
}

// PCB is the per-peer protocol control block (Fig. 4.1).
type PCB struct {
	SendCredits int    // credits this NI holds for the peer
	FreeCredits int    // credits owed to the peer, not yet returned
	Blocked     []Desc // blocked-sends queue, FIFO
}

// RecvBuf is an occupied NI receive buffer. From is the immediate sender, so
// the pool partition the buffer belongs to.
type RecvBuf struct {
	Pkt     Packet
	From    NodeID
	Copied  bool  // delivered to the host
	Pending uint8 // forwards not yet transmitted (MCAST)
}

// SendBuf is an occupied NI send packet with the number of send descriptors
// that still refer to it.
type SendBuf struct {
	Pkt  Packet
	Refs uint8
}

// NI is the state of one network interface.
type NI struct {
	ID   NodeID    // static, not part of the encoding
	PCB  []PCB     // indexed by peer; the entry for ID itself is unused
	Recv []RecvBuf // occupied receive buffers in arrival order
	Send []SendBuf // occupied send packets in allocation order
}

// StreamLog records which packets of one stream a host has been delivered:
// Last is the sequence number of the most recent one, Mask has bit s-1 set
// for every sequence number s delivered.
type StreamLog struct {
	Last uint16
	Mask uint64
}

// Host is the state of one host process.
type Host struct {
	Next  int         // index of the next workload item to launch
	Queue []Packet    // delivered, not yet processed (full host buffers)
	Log   []StreamLog // per stream (see System.Stream)
}

// WorkItem is one packet a host launches: a unicast to Dest, numbered Seq in
// its stream.
type WorkItem struct {
	Tag  Tag
	Dest NodeID
	Tree uint16
	Seq  uint16
}

// Transmit is a packet put on the link to To.
type Transmit struct {
	To  NodeID
	Pkt Packet
}

// Outbox collects what a handler asks its driver to do. The explorer appends
// transmissions to links; the live runtime sends them on channels.
type Outbox struct {
	Sends     []Transmit
	SendFreed int // send packets returned to the NI send pool
}

// Reset empties the outbox, keeping its capacity.
func (o *Outbox) Reset() { o.Sends = o.Sends[:0]; o.SendFreed = 0 }

// Transmit appends a transmission.
func (o *Outbox) Transmit(to NodeID, p Packet) { o.Sends = append(o.Sends, Transmit{to, p}) }
