package model

// Transmit is a packet put on the link to To.
type Transmit struct {
	To  NodeID
	Pkt Packet
	// Paid reports that the sender spent one of its flow-control credits
	// for To on this transmission (Outbox.Paid): protocols that count
	// credits say so, and step properties read it. It is not part of the
	// packet: the link carries Pkt only.
	Paid bool
}

// StreamLog is history (ghost) state of one FIFO stream at one host: which
// of the stream's packets the host has been handed, over modular sequence
// numbers (SeqSpace), so that a stream may run for ever. Last is the
// number of the most recent one (0: none, or no order to check); Base the
// end of the contiguous prefix (every number from the stream's first up
// to Base was handed over; 0: none yet); Mask has bit i set when number
// Base+1+i was handed over out of order (LogWindow numbers ahead of Base
// at most). A stream handed over in order has Last = Base and Mask = 0.
// Protocols keep one per host and stream in their node state; the
// properties package checks FIFO order and exactly-once delivery over
// them.
type StreamLog struct {
	Last uint16
	Base uint16
	Mask uint64
}

// Has reports whether the host was handed number s: s is at most
// SeqWindow steps behind Base (or Base itself), or recorded in Mask.
func (l StreamLog) Has(s uint16) bool {
	if s == 0 {
		return false
	}
	if l.Base != 0 && SeqAhead(s, l.Base) < SeqWindow {
		return true
	}
	d := SeqAhead(l.Base, s)
	return d >= 1 && d <= LogWindow && l.Mask&(1<<(d-1)) != 0
}

// Add records that the host was handed number s. A number more than
// LogWindow ahead of the contiguous prefix is not recorded (exactly-once
// then finds it missing); one already handed over changes only Last.
func (l *StreamLog) Add(s uint16) {
	l.Last = s
	if s == 0 || l.Has(s) {
		return
	}
	d := SeqAhead(l.Base, s)
	if d > LogWindow {
		return
	}
	l.Mask |= 1 << (d - 1)
	for l.Mask&1 != 0 {
		l.Base = SeqNext(l.Base)
		l.Mask >>= 1
	}
}

// Complete reports whether the host was handed exactly the first n
// numbers of the stream (modulo SeqSpace: n and n+SeqSpace look alike).
func (l StreamLog) Complete(n int) bool { return l.Base == SeqOf(n) && l.Mask == 0 }

// MaxStreamSeq is the largest number of packets a stream of a checked
// workload may have (the explorer's limit, not the numbers': those wrap,
// see SeqSpace).
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
func (o *Outbox) Transmit(to NodeID, p Packet) { o.Sends = append(o.Sends, Transmit{To: to, Pkt: p}) }

// Paid marks Sends[k], a transmission of this step, as paid for with one
// of the sender's flow-control credits (Transmit.Paid).
func (o *Outbox) Paid(k int) { o.Sends[k].Paid = true }

// Deliver records that host h was handed p as part of stream, and updates
// log, h's history of that stream.
func (o *Outbox) Deliver(h NodeID, p Packet, stream int, log *StreamLog) {
	o.Deliveries = append(o.Deliveries, Delivery{Host: h, Pkt: p, Stream: stream, Prev: *log})
	log.Add(p.Seq)
}
