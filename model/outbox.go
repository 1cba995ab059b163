package model

// Transmit is a packet put on the link to To.
type Transmit struct {
	To  NodeID
	Pkt Packet
}

// StreamLog is history (ghost) state of one FIFO stream at one host: which
// of the stream's packets the host has been handed. Last is the sequence
// number of the most recent one, Mask has bit s-1 set for every sequence
// number s handed over. Protocols keep one per host and stream in their
// node state; the properties package checks FIFO order and exactly-once
// delivery over them.
type StreamLog struct {
	Last uint16
	Mask uint64
}

// MaxStreamSeq is the largest sequence number a StreamLog records.
const MaxStreamSeq = 64

// Delivery is a packet handed to a host by a step, with the stream it
// belongs to and the host's log of that stream before the hand-over.
type Delivery struct {
	Host   NodeID
	Pkt    Packet
	Stream int
	Prev   StreamLog
}

// Outbox collects what a handler asks its driver to do and what it did that
// properties observe, in the manner of etcd raft's Ready: the explorer
// appends Sends to links, the live runtime sends them on channels, and
// step properties read Deliveries.
type Outbox struct {
	Sends      []Transmit
	Deliveries []Delivery
	// Arrived is the packet a Deliver step took off its link (Arrival
	// set), for step properties that judge what the handler did with it.
	Arrived Packet
	Arrival bool
}

// Reset empties the outbox, keeping its capacity.
func (o *Outbox) Reset() {
	o.Sends, o.Deliveries = o.Sends[:0], o.Deliveries[:0]
	o.Arrived, o.Arrival = Packet{}, false
}

// Transmit asks for p to be put on the link to node to.
func (o *Outbox) Transmit(to NodeID, p Packet) { o.Sends = append(o.Sends, Transmit{to, p}) }

// Deliver records that host h was handed p as part of stream, and updates
// log, h's history of that stream.
func (o *Outbox) Deliver(h NodeID, p Packet, stream int, log *StreamLog) {
	o.Deliveries = append(o.Deliveries, Delivery{Host: h, Pkt: p, Stream: stream, Prev: *log})
	log.Last = p.Seq
	if p.Seq >= 1 && p.Seq <= MaxStreamSeq {
		log.Mask |= 1 << (p.Seq - 1)
	}
}
