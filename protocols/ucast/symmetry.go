package ucast

import (
	"fmt"

	"lfccheck/model"
)

// Symmetries implements model.Symmetric: the rotations that map the
// workload (and the topology, through Extension.TreeRenaming) onto itself.
func (m *Machine) Symmetries() []model.Perm {
	if !m.AllowSymmetry {
		return nil
	}
	var out []model.Perm
	for r := 1; r < m.P; r++ {
		p := model.Rotation(m.P, r)
		if !m.ext.TreeRenaming(&p) {
			continue
		}
		if m.workMaps(&p) {
			out = append(out, p)
		}
	}
	return out
}

// workMaps reports whether renaming every host's workload by p gives the
// workload of the renamed host.
func (m *Machine) workMaps(p *model.Perm) bool {
	for i := range m.Work {
		a, b := m.Work[i], m.Work[p.Node[i]]
		if len(a) != len(b) {
			return false
		}
		for k := range a {
			want := a[k]
			if m.ext.PacketHasTree(model.Packet{Tag: want.Tag}) {
				want.Tree = p.Tree[want.Tree]
			} else {
				want.Dest = p.Node[want.Dest]
			}
			if b[k] != want {
				return false
			}
		}
	}
	return true
}

// RenamePacket implements model.Symmetric.
func (m *Machine) RenamePacket(pkt model.Packet, p *model.Perm) model.Packet {
	pkt.Src, pkt.Origin = p.Node[pkt.Src], p.Node[pkt.Origin]
	if pkt.Hop != 0 {
		pkt.Hop = uint8(p.Node[pkt.Hop-1]) + 1
	}
	if m.ext.PacketHasTree(pkt) {
		pkt.Tree = p.Tree[pkt.Tree]
	}
	return pkt
}

// renameStream is the stream that stream s becomes under p: streams below
// P are per origin, the others per tree (MCAST).
func (m *Machine) renameStream(s int, p *model.Perm) int {
	if s < m.P {
		return int(p.Node[s])
	}
	if m.Replies && s >= m.ReplyBase {
		return m.ReplyBase + int(p.Node[s-m.ReplyBase])
	}
	if p.Tree == nil {
		panic(fmt.Sprintf("ucast: stream %d of a machine without trees", s))
	}
	return m.P + int(p.Tree[s-m.P])
}

// RenameFrom implements model.Renamable.
func (n *Node) RenameFrom(src model.Node, p *model.Perm) {
	s := src.(*Node)
	m := s.M
	n.ID, n.M = p.Node[s.ID], m
	if len(n.PCB) != len(s.PCB) {
		n.PCB = make([]PCB, len(s.PCB))
	}
	for q := range s.PCB {
		d, sp := &n.PCB[p.Node[q]], &s.PCB[q]
		d.SendCredits, d.FreeCredits = sp.SendCredits, sp.FreeCredits
		d.Blocked = d.Blocked[:0]
		for _, b := range sp.Blocked {
			d.Blocked = append(d.Blocked, Desc{Dest: p.Node[b.Dest], Fwd: b.Fwd, Pkt: m.RenamePacket(b.Pkt, p)})
		}
	}
	n.Recv = n.Recv[:0]
	for _, r := range s.Recv {
		r.From, r.Pkt = p.Node[r.From], m.RenamePacket(r.Pkt, p)
		if r.Chan != 0 {
			r.Chan = uint8(p.Node[r.Chan-1]) + 1
		}
		n.Recv = append(n.Recv, r)
	}
	n.Send = n.Send[:0]
	for _, sb := range s.Send {
		sb.Pkt = m.RenamePacket(sb.Pkt, p)
		n.Send = append(n.Send, sb)
	}
	n.Free = n.Free[:0]
	for _, h := range s.Free {
		n.Free = append(n.Free, renamedHop(h, p))
	}
	n.Next = s.Next
	n.Queue = n.Queue[:0]
	for _, q := range s.Queue {
		n.Queue = append(n.Queue, m.RenamePacket(q, p))
	}
	n.Held = n.Held[:0]
	for _, q := range s.Held {
		n.Held = append(n.Held, m.RenamePacket(q, p))
	}
	n.Up = n.Up[:0]
	for _, q := range s.Up {
		n.Up = append(n.Up, m.RenamePacket(q, p))
	}
	n.Extra = s.Extra
	if len(n.Log) != len(s.Log) {
		n.Log = make([]model.StreamLog, len(s.Log))
	}
	for st, l := range s.Log {
		n.Log[m.renameStream(st, p)] = l
	}
}

// streamOf is stream s renamed by p (s itself for p nil).
func (m *Machine) streamOf(s int, p *model.Perm) int {
	if p == nil {
		return s
	}
	return m.renameStream(s, p)
}

// CodesRenamed implements model.RenamingCoder: only for a node that is
// itself a *Node, since protocols that embed Node add state these
// methods do not cover.
func (n *Node) CodesRenamed(self model.Node) bool {
	_, ok := self.(*Node)
	return ok && n.M.AllowSymmetry
}

// EncodeRenamed implements model.RenamingCoder.
func (n *Node) EncodeRenamed(buf []byte, p, inv *model.Perm) []byte { return n.encode(buf, p, inv) }

// DecodeRenamed implements model.RenamingCoder.
func (n *Node) DecodeRenamed(d *model.Decoder, from model.NodeID, p *model.Perm) {
	n.decode(d, from, p)
}
