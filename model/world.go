package model

import (
	"errors"
	"fmt"
)

// World is one global state of the modeled system.
type World struct {
	Sys   *System
	NIs   []NI
	Hosts []Host
	Links [][]Packet // Links[i*P+j] is the FIFO link i->j, head first
}

// Link returns the contents of link i->j, head first.
func (w *World) Link(i, j NodeID) []Packet { return w.Links[int(i)*w.Sys.P+int(j)] }

// StepInfo tells the property checks what one step did beyond the state
// change: which packet, if any, was delivered to a host, and that host's
// stream log before the delivery.
type StepInfo struct {
	Delivered bool
	Host      NodeID
	Pkt       Packet
	Stream    int
	Prev      StreamLog
}

// ErrNotEnabled is returned (wrapped) by Apply for an action that is not
// enabled in the state.
var ErrNotEnabled = errors.New("action not enabled")

// Enabled appends the enabled actions to buf in a fixed order and returns it.
func (w *World) Enabled(buf []Action) []Action {
	P := w.Sys.P
	for n := 0; n < P; n++ {
		id := NodeID(n)
		if w.canLaunch(id) {
			buf = append(buf, Action{Kind: ActLaunch, Node: id})
		}
		for i := 0; i < P; i++ {
			if i != n && len(w.Links[i*P+n]) > 0 {
				buf = append(buf, Action{Kind: ActDeliver, Node: id, From: NodeID(i)})
			}
		}
		if w.copyIndex(id) >= 0 {
			buf = append(buf, Action{Kind: ActCopy, Node: id})
		}
		if len(w.Hosts[n].Queue) > 0 {
			buf = append(buf, Action{Kind: ActProcess, Node: id})
		}
	}
	return buf
}

func (w *World) canLaunch(n NodeID) bool {
	return w.Hosts[n].Next < len(w.Sys.Work[n]) && len(w.NIs[n].Send) < w.Sys.Cfg.SendBuffers
}

// copyIndex is the receive buffer NI n would copy to its host next, or -1.
func (w *World) copyIndex(n NodeID) int {
	if len(w.Hosts[n].Queue) >= w.Sys.Cfg.HostBuffers {
		return -1
	}
	return w.NIs[n].NextCopy()
}

// Apply performs action a, using out as scratch space, and fills info.
// An action that is not enabled leaves the world unchanged and returns an
// error wrapping ErrNotEnabled.
func (w *World) Apply(a Action, out *Outbox, info *StepInfo) error {
	*info = StepInfo{}
	out.Reset()
	P := w.Sys.P
	if int(a.Node) >= P || int(a.From) >= P {
		return fmt.Errorf("%s: %w: node out of range", a, ErrNotEnabled)
	}
	ni := &w.NIs[a.Node]
	host := &w.Hosts[a.Node]
	switch a.Kind {
	case ActLaunch:
		if !w.canLaunch(a.Node) {
			return fmt.Errorf("%s: %w", a, ErrNotEnabled)
		}
		it := w.Sys.Work[a.Node][host.Next]
		host.Next++
		w.Sys.LaunchAt(ni, it, out)
	case ActDeliver:
		k := int(a.From)*P + int(a.Node)
		if a.From == a.Node || len(w.Links[k]) == 0 {
			return fmt.Errorf("%s: %w", a, ErrNotEnabled)
		}
		pkt := w.Links[k][0]
		copy(w.Links[k], w.Links[k][1:])
		w.Links[k] = w.Links[k][:len(w.Links[k])-1]
		w.Sys.ReceiveAt(ni, a.From, pkt, out)
	case ActCopy:
		if len(host.Queue) >= w.Sys.Cfg.HostBuffers {
			return fmt.Errorf("%s: %w: no free host buffer", a, ErrNotEnabled)
		}
		pkt, ok := w.Sys.CopyAt(ni, out)
		if !ok {
			return fmt.Errorf("%s: %w: nothing to copy", a, ErrNotEnabled)
		}
		host.Queue = append(host.Queue, pkt)
		st := w.Sys.Stream(pkt)
		lg := &host.Log[st]
		*info = StepInfo{Delivered: true, Host: a.Node, Pkt: pkt, Stream: st, Prev: *lg}
		lg.Last = pkt.Seq
		if pkt.Seq >= 1 && pkt.Seq <= 64 {
			lg.Mask |= 1 << (pkt.Seq - 1)
		}
	case ActProcess:
		if len(host.Queue) == 0 {
			return fmt.Errorf("%s: %w", a, ErrNotEnabled)
		}
		copy(host.Queue, host.Queue[1:])
		host.Queue = host.Queue[:len(host.Queue)-1]
	default:
		return fmt.Errorf("%s: %w: unknown kind", a, ErrNotEnabled)
	}
	w.flush(a.Node, out)
	return nil
}

// flush puts the outbox's transmissions from NI n on their links.
func (w *World) flush(n NodeID, out *Outbox) {
	for _, t := range out.Sends {
		k := int(n)*w.Sys.P + int(t.To)
		w.Links[k] = append(w.Links[k], t.Pkt)
	}
}

// Finished reports whether the run has ended properly: every packet
// launched, nothing in flight, queued, pooled or unprocessed. Credits still
// owed (free credits below the refresh threshold) are allowed.
func (w *World) Finished() bool {
	for n := range w.Hosts {
		h := &w.Hosts[n]
		if h.Next < len(w.Sys.Work[n]) || len(h.Queue) > 0 {
			return false
		}
		ni := &w.NIs[n]
		if len(ni.Recv) > 0 || len(ni.Send) > 0 {
			return false
		}
		for p := range ni.PCB {
			if len(ni.PCB[p].Blocked) > 0 {
				return false
			}
		}
	}
	for _, l := range w.Links {
		if len(l) > 0 {
			return false
		}
	}
	return true
}

// Clone returns a deep copy of w.
func (w *World) Clone() *World {
	c := &World{}
	if err := w.Sys.Decode(w.Encode(nil), c); err != nil {
		panic("model: clone of an encodable world failed: " + err.Error())
	}
	return c
}

// CopyFrom makes w a deep copy of src, reusing w's slices.
func (w *World) CopyFrom(src *World) {
	w.Sys = src.Sys
	if len(w.NIs) != len(src.NIs) {
		w.NIs = make([]NI, len(src.NIs))
		w.Hosts = make([]Host, len(src.Hosts))
		w.Links = make([][]Packet, len(src.Links))
	}
	for n := range src.NIs {
		d, s := &w.NIs[n], &src.NIs[n]
		d.ID = s.ID
		if len(d.PCB) != len(s.PCB) {
			d.PCB = make([]PCB, len(s.PCB))
		}
		for p := range s.PCB {
			d.PCB[p].SendCredits = s.PCB[p].SendCredits
			d.PCB[p].FreeCredits = s.PCB[p].FreeCredits
			d.PCB[p].Blocked = append(d.PCB[p].Blocked[:0], s.PCB[p].Blocked...)
		}
		d.Recv = append(d.Recv[:0], s.Recv...)
		d.Send = append(d.Send[:0], s.Send...)
		dh, sh := &w.Hosts[n], &src.Hosts[n]
		dh.Next = sh.Next
		dh.Queue = append(dh.Queue[:0], sh.Queue...)
		dh.Log = append(dh.Log[:0], sh.Log...)
	}
	for k := range src.Links {
		w.Links[k] = append(w.Links[k][:0], src.Links[k]...)
	}
}

// The node-local steps below are shared by every driver: World.Apply uses
// them on a global state, the live runtime on an NI owned by one goroutine.

// LaunchAt allocates a send packet for it at ni and runs the protocol's
// send handler.
func (s *System) LaunchAt(ni *NI, it WorkItem, out *Outbox) {
	pkt := Packet{Tag: it.Tag, Src: ni.ID, Tree: it.Tree, Origin: ni.ID, Seq: it.Seq}
	ni.Send = append(ni.Send, SendBuf{Pkt: pkt})
	s.Proto.Launch(ni, it, out)
}

// ReceiveAt receives pkt from the link from->ni: a data packet into a buffer
// of from's pool partition, then the protocol's receive handler.
func (s *System) ReceiveAt(ni *NI, from NodeID, pkt Packet, out *Outbox) {
	buf := -1
	if pkt.Tag.IsData() {
		ni.Recv = append(ni.Recv, RecvBuf{Pkt: pkt, From: from})
		buf = len(ni.Recv) - 1
	}
	s.Proto.Receive(ni, pkt, buf, out)
}

// NextCopy is the index of the receive buffer the NI copies to its host
// next (the oldest one not yet copied), or -1.
func (ni *NI) NextCopy() int {
	for i := range ni.Recv {
		if !ni.Recv[i].Copied {
			return i
		}
	}
	return -1
}

// CopyAt copies ni's next packet to the host (the caller provides the free
// host buffer) and runs the protocol's post-copy handler.
func (s *System) CopyAt(ni *NI, out *Outbox) (Packet, bool) {
	i := ni.NextCopy()
	if i < 0 {
		return Packet{}, false
	}
	ni.Recv[i].Copied = true
	pkt := ni.Recv[i].Pkt
	s.Proto.Copied(ni, i, out)
	return pkt, true
}
