package ucast

import (
	"encoding/binary"
	"fmt"

	"lfccheck/model"
	"lfccheck/properties"
)

// LFC's fetch-and-add (§3.8), once for every protocol that offers it: its
// packet tags, its state, the server NI's handler, the client NI's, the
// bug variants and the properties. UCAST and MCAST offer it beside their
// traffic (Machine.FetchAdd: the machine encodes, renders and dispatches
// it), the library on MCAST's machine, package fa on its own, and GSB's
// sequencer; the last two call the handlers from their own Receive and
// keep the state in Node.FA, which they encode themselves.
//
// One fetch-and-add variable lives on every NI, initially 0; requests go
// to the variable of one NI, the server. A request is an FA_REQUEST data
// packet: it consumes a send credit toward the server (credit_send) and
// so occupies, conceptually, a receive buffer of the client's partition
// at the server. The server's NI handles it entirely: it reads the
// variable, increments it, releases the buffer and sends an FA_REPLY
// control packet carrying the old value back, all in one handler (NI
// handlers run to completion, §3.3.4); the released buffer's credit rides
// back on the reply (send_packet piggybacks owed credits, Fig. 4.2). A
// request of the server's own process is local: no packet.

// Fetch-and-add's packet tags (Table 3.3): a request is data (it consumes
// a credit), the reply control.
var (
	TagFARequest = model.NewTag(model.TagInfo{Name: "FA_REQUEST", Data: true,
		Brief: func(p model.Packet) string { return fmt.Sprintf("fa%d#%d", p.Origin, p.Seq) }})
	TagFAReply = model.NewTag(model.TagInfo{Name: "FA_REPLY",
		Brief: func(p model.Packet) string { return fmt.Sprintf("fr%d#%d=%d", p.Origin, p.Seq, p.Val) }})
)

// Fetch-and-add's bug variants, which every protocol offering it lists
// (FAVariants).
const (
	// FANoIncrement: the server increments its variable only for the
	// first request.
	FANoIncrement = "fa-no-increment"
	// FASplitIncrement: the server's NI reads the variable on arrival
	// into a per-request register, and a later step ("ni N increment")
	// writes register+1 back and replies; two requests can read the same
	// value in between.
	FASplitIncrement = "split-increment"
	// FADropReply: the server's NI never sends the reply that carries
	// value 1.
	FADropReply = "drop-reply"
)

// FAVariants are fetch-and-add's bug variants for a protocol that offers
// it, each with example, a configuration of that protocol that issues
// concurrent requests, and the property of that protocol that catches it
// (catches gives it per variant name).
func FAVariants(example model.Config, catches func(variant string) string) []model.Variant {
	return []model.Variant{
		{Name: FANoIncrement, Doc: "fetch-and-add: the server's NI increments its variable only for the first request",
			Catches: catches(FANoIncrement), Example: example},
		{Name: FASplitIncrement, Doc: "fetch-and-add: the server's NI reads the variable on arrival and increments it in a later step",
			Catches: catches(FASplitIncrement), Example: example},
		{Name: FADropReply, Doc: "fetch-and-add: the server's NI never sends the reply that carries value 1",
			Catches: catches(FADropReply), Example: example},
	}
}

// FAState is a node's fetch-and-add state: its NI's variable (and, in
// variant split-increment, the requests read and not yet incremented),
// and its process's one outstanding request with the values it got
// (history, for the properties).
type FAState struct {
	Var         uint32
	Reads       []FARead
	Outstanding bool
	Got         []uint32
}

// FARead is a request read by the server but not yet incremented and
// answered (variant split-increment).
type FARead struct {
	Req   model.Packet
	Value uint32
}

func (r FARead) String() string { return fmt.Sprintf("%s=%d", r.Req, r.Value) }

// ReadsText renders the reads for a node's description.
func (f *FAState) ReadsText() string { return model.ListOf(f.Reads, FARead.String) }

// ServeFA is the server NI's handler of a request req that arrived from
// node from (its credits already accepted).
func (m *Machine) ServeFA(n *Node, from model.NodeID, req model.Packet, out *model.Outbox) {
	if m.Variant == FASplitIncrement {
		// The request holds its receive buffer until the increment; the
		// buffer is not for the host (no copy takes it: Node.NextCopy).
		n.Recv = append(n.Recv, RecvBuf{Pkt: req, From: from})
		n.FA.Reads = append(n.FA.Reads, FARead{Req: req, Value: n.FA.Var})
		return
	}
	m.replyFA(n, req, m.LocalFA(n), out)
}

// LocalFA is the server NI's read-and-increment of its variable, which
// returns the value read: a request's, or the server's own process's
// (local, no packet).
func (m *Machine) LocalFA(n *Node) uint32 {
	v := n.FA.Var
	if m.Variant != FANoIncrement || v == 0 {
		n.FA.Var++
	}
	return v
}

// replyFA releases the request's buffer, whose credit is then owed to the
// client, and sends FA_REPLY with value v, which piggybacks the credit.
func (m *Machine) replyFA(n *Node, req model.Packet, v uint32, out *model.Outbox) {
	n.PCB[req.Origin].FreeCredits++
	if m.Variant == FADropReply && v == 1 {
		return // the bug: the second request's reply is never sent
	}
	m.SendPacket(n, Desc{Dest: req.Origin, Pkt: model.Packet{Tag: TagFAReply, Origin: req.Origin, Seq: req.Seq, Val: v}}, out)
}

// TakeFAReply is the client NI's handler of a reply: it hands the value
// to the process, which may then issue its next request.
func (m *Machine) TakeFAReply(n *Node, reply model.Packet) {
	n.FA.Outstanding = false
	n.FA.Got = append(n.FA.Got, reply.Val)
}

// FAIncrementKind is the action kind "ni N increment" of variant
// split-increment, which ends the oldest read: it writes its value+1 to
// the variable, frees the request's buffer and replies. nodeOf gives the
// UCAST node of the protocol's node.
func (m *Machine) FAIncrementKind() *model.ActionKind {
	return &model.ActionKind{Name: "increment", Pattern: "ni {node} increment", Owner: model.OwnerNI,
		Fair: model.Weak, FairClass: "ni {node}",
		Enabled: func(mn model.Node) bool { return len(m.NodeOf(mn).FA.Reads) > 0 },
		Apply: func(mn model.Node, out *model.Outbox) {
			n := m.NodeOf(mn)
			r := n.FA.Reads[0]
			n.FA.Reads = append(n.FA.Reads[:0], n.FA.Reads[1:]...)
			i := n.FindRecv(r.Req)
			n.Recv = append(n.Recv[:i], n.Recv[i+1:]...)
			n.FA.Var = r.Value + 1
			m.replyFA(n, r.Req, r.Value, out)
		}}
}

// FAValues is fetch-and-add's correctness: no value is handed to two
// requests, every process gets its values in increasing order, and at a
// proper end the server's variable equals the number of values handed out
// (so they are 0..N-1: no increment lost). Without requests it holds
// trivially.
var FAValues = model.Property{
	Name: "fa-values",
	Doc:  "fetch-and-add: no two requests get the same value, each process's values increase, and at the end the variable equals the number of requests",
	State: func(w *model.World) error {
		total := 0
		for i := range w.Nodes {
			total += len(NodeAt(w, i).FA.Got)
		}
		if total < 2 {
			return nil // without requests (most configurations) at no cost
		}
		// Value by value, host by host: a repeat, then the order (the
		// order of the checks decides the message, which trace files
		// record).
		seen := make(map[uint32]int, total)
		for i := range w.Nodes {
			g := NodeAt(w, i).FA.Got
			for k, v := range g {
				if h, dup := seen[v]; dup {
					return fmt.Errorf("value %d was handed to host %d and to host %d", v, h, i)
				}
				seen[v] = i
				if k > 0 && v <= g[k-1] {
					return fmt.Errorf("host %d got %d after %d", i, v, g[k-1])
				}
			}
		}
		return nil
	},
	// The values a process got are never taken back: a repeat or a
	// decrease, once there, stays.
	Stable: true,
	// No process has got a value: nothing to repeat or to order.
	Vacuous: func(w *model.World, n int) bool { return len(NodeAt(w, n).FA.Got) == 0 },
	Final: func(w *model.World) error {
		n := 0
		for i := range w.Nodes {
			n += len(NodeAt(w, i).FA.Got)
		}
		if v := NodeAt(w, int(mach(w).Server)).FA.Var; v != uint32(n) {
			return fmt.Errorf("the variable holds %d after %d requests were answered", v, n)
		}
		return nil
	},
}

// faRequests counts the requests of client c in the system: in a send
// pool, read at the server, or (with their replies) on a link.
func faRequests(w *model.World, c int) int {
	n := 0
	for i := range w.Nodes {
		nd := NodeAt(w, i)
		for _, s := range nd.Send {
			if s.Pkt.Tag == TagFARequest && int(s.Pkt.Origin) == c {
				n++
			}
		}
		for _, r := range nd.FA.Reads {
			if int(r.Req.Origin) == c {
				n++
			}
		}
	}
	for _, l := range w.Links {
		for _, p := range l {
			if (p.Tag == TagFARequest || p.Tag == TagFAReply) && int(p.Origin) == c {
				n++
			}
		}
	}
	return n
}

// FAOneOutstanding: every process has at most one request in the system,
// exactly while it waits for a reply (§3.8).
var FAOneOutstanding = model.Property{
	Name: "one-outstanding",
	Doc:  "every process has at most one request in the system, exactly while it waits for a reply",
	State: func(w *model.World) error {
		for c := range w.Nodes {
			n, out := faRequests(w, c), NodeAt(w, c).FA.Outstanding
			if n > 1 || (n == 1) != out {
				return fmt.Errorf("host %d has %d requests in the system, outstanding %v", c, n, out)
			}
		}
		return nil
	},
}

// FAConcurrentRequests: some reachable state has requests of two
// processes in the system at once (so that a configuration exercises the
// race at the server).
var FAConcurrentRequests = model.Property{
	Name: "concurrent-requests",
	Doc:  "some state has requests of two processes in the system at once",
	Sometimes: func(w *model.World) bool {
		k := 0
		for c := range w.Nodes {
			if NodeAt(w, c).FA.Outstanding {
				k++
			}
		}
		return k >= 2
	},
}

// faWaiting reports whether some process waits for a reply.
func faWaiting(w *model.World) bool {
	for i := range w.Nodes {
		if NodeAt(w, i).FA.Outstanding {
			return true
		}
	}
	return false
}

// FAEventualReply: once a process waits for a reply, a state comes where
// no process waits. With finite workloads and one outstanding request per
// process (§3.8) this says that every request is eventually answered.
var FAEventualReply = properties.LeadsTo("eventual-reply",
	"every request is eventually answered: after a process starts waiting, a state comes where none waits",
	faWaiting, func(w *model.World) bool { return !faWaiting(w) })

// FARenamed maps the property names package fa used before fetch-and-add
// had one property set to the property that checks them now.
var FARenamed = map[string]string{"distinct-values": FAValues.Name, "increasing": FAValues.Name}

// AppendHistory appends the encoding of the values the process got.
func (f *FAState) AppendHistory(buf []byte) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(f.Got)))
	for _, v := range f.Got {
		buf = binary.AppendUvarint(buf, uint64(v))
	}
	return buf
}

// DecodeHistory reads what AppendHistory wrote.
func (f *FAState) DecodeHistory(d *model.Decoder) {
	f.Got = f.Got[:0]
	for k := d.Count(); k > 0 && d.Err() == nil; k-- {
		f.Got = append(f.Got, uint32(d.Uvarint()))
	}
}

// AppendReads appends the encoding of the reads.
func (f *FAState) AppendReads(buf []byte) []byte { return appendReads(buf, f.Reads, nil) }

// DecodeReads reads what AppendReads wrote.
func (f *FAState) DecodeReads(d *model.Decoder) { f.Reads = decodeReads(d, f.Reads[:0], nil) }

func appendReads(buf []byte, reads []FARead, rename func(model.Packet) model.Packet) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(reads)))
	for _, r := range reads {
		req := r.Req
		if rename != nil {
			req = rename(req)
		}
		buf = binary.AppendUvarint(model.AppendPacket(buf, req), uint64(r.Value))
	}
	return buf
}

func decodeReads(d *model.Decoder, reads []FARead, rename func(model.Packet) model.Packet) []FARead {
	for k := d.Count(); k > 0 && d.Err() == nil; k-- {
		r := FARead{Req: d.Packet()}
		if rename != nil {
			r.Req = rename(r.Req)
		}
		r.Value = uint32(d.Uvarint())
		reads = append(reads, r)
	}
	return reads
}

// CopyFrom makes f a deep copy of src.
func (f *FAState) CopyFrom(src *FAState) {
	f.Var, f.Outstanding = src.Var, src.Outstanding
	f.Reads = append(f.Reads[:0], src.Reads...)
	f.Got = append(f.Got[:0], src.Got...)
}
