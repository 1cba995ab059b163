package model

import (
	"encoding/binary"
	"fmt"
)

// Perm is a renaming of node ids, with the renaming of whatever ids a
// protocol derives from them (for example one spanning tree per member).
type Perm struct {
	// Node[i] is the new id of node i.
	Node []NodeID
	// Tree[t] is the new id of tree t; nil when the protocol has no trees.
	Tree []uint16
}

// Inverse returns the renaming that undoes p.
func (p *Perm) Inverse() *Perm {
	q := &Perm{Node: make([]NodeID, len(p.Node))}
	for i, n := range p.Node {
		q.Node[n] = NodeID(i)
	}
	if p.Tree != nil {
		q.Tree = make([]uint16, len(p.Tree))
		for t, u := range p.Tree {
			q.Tree[u] = uint16(t)
		}
	}
	return q
}

// Action renames the nodes of action a of system s: its node, and the
// sender of a delivery.
func (p *Perm) Action(s *System, a Action) Action {
	a.Node = p.Node[a.Node]
	if int(a.Kind) < len(s.Kinds) && s.Kinds[a.Kind] == Deliver {
		a.Peer = p.Node[a.Peer]
	}
	return a
}

// String renders the node renaming, e.g. "0->1 1->2 2->0".
func (p *Perm) String() string {
	s := ""
	for i, n := range p.Node {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%d->%d", i, n)
	}
	return s
}

// Rotation is the renaming i -> (i+r) mod n of n nodes (trees left to the
// protocol).
func Rotation(n, r int) Perm {
	p := Perm{Node: make([]NodeID, n)}
	for i := range p.Node {
		p.Node[i] = NodeID((i + r) % n)
	}
	return p
}

// Symmetric is implemented by machines whose system (topology, workload,
// parameters) maps onto itself under some renamings of node ids. A search
// may then store one state per orbit (symmetry reduction): properties are
// stated for every node alike, so a state and its renaming satisfy the
// same ones.
type Symmetric interface {
	// Symmetries returns the renamings, other than the identity, that map
	// the system onto itself; with the identity they form a group. The
	// machine must check them against its configuration, never assume
	// them.
	Symmetries() []Perm
	// RenamePacket returns pkt with every node and tree id renamed by p.
	RenamePacket(pkt Packet, p *Perm) Packet
}

// Renamable is implemented by the nodes of a Symmetric machine.
type Renamable interface {
	// RenameFrom makes the node a deep copy of src, a node of the same
	// type, with every id renamed by p: the node becomes node
	// p.Node[src's id].
	RenameFrom(src Node, p *Perm)
}

// RenamingCoder is an optional fast path of Renamable nodes for a
// symmetry reduction that stores states renamed: encoding and decoding a
// renamed node without building it.
type RenamingCoder interface {
	// CodesRenamed reports whether the two methods below cover the whole
	// state of self, this node as the world holds it (a protocol whose
	// node type embeds another's inherits the embedded type's methods,
	// which do not cover its own state).
	CodesRenamed(self Node) bool
	// EncodeRenamed appends what RenameFrom(the node, p) followed by
	// Encode would give; inv is p's inverse.
	EncodeRenamed(buf []byte, p, inv *Perm) []byte
	// DecodeRenamed overwrites the node with the renaming by p of the
	// state of node from read from d, where p maps from to the node's
	// id: what Decode into node from followed by RenameFrom would give.
	DecodeRenamed(d *Decoder, from NodeID, p *Perm)
}

// CodesRenamed returns n as a RenamingCoder if it is one that covers its
// whole state (see RenamingCoder), else nil.
func CodesRenamed(n Node) RenamingCoder {
	if rc, ok := n.(RenamingCoder); ok && rc.CodesRenamed(n) {
		return rc
	}
	return nil
}

// RenameFrom makes w the state src with every id renamed by p: node i of
// src becomes node p.Node[i] of w, link i->j becomes link
// p.Node[i]->p.Node[j]. The machine must be Symmetric and its nodes
// Renamable.
func (w *World) RenameFrom(src *World, p *Perm) {
	if w.Sys != src.Sys || len(w.Nodes) != len(src.Nodes) {
		*w = *src.Sys.Initial()
	}
	for i, n := range src.Nodes {
		w.Nodes[p.Node[i]].(Renamable).RenameFrom(n, p)
	}
	sym := src.Sys.M.(Symmetric)
	P := src.Sys.P
	for i := 0; i < P; i++ {
		for j := 0; j < P; j++ {
			if i == j {
				continue
			}
			dst := &w.Links[int(p.Node[i])*P+int(p.Node[j])]
			*dst = RenamePackets(sym, (*dst)[:0], src.Links[i*P+j], p)
		}
	}
}

// RenamePackets appends to dst the packets of src renamed by p, in order;
// dst may be src[:0] (renaming in place).
func RenamePackets(sym Symmetric, dst, src []Packet, p *Perm) []Packet {
	for _, pkt := range src {
		dst = append(dst, sym.RenamePacket(pkt, p))
	}
	return dst
}

// AppendRenamedPackets appends the length-prefixed list of the packets of
// ps renamed by p (as AppendPackets of RenamePackets).
func AppendRenamedPackets(sym Symmetric, buf []byte, ps []Packet, p *Perm) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(ps)))
	for _, pkt := range ps {
		buf = AppendPacket(buf, sym.RenamePacket(pkt, p))
	}
	return buf
}
