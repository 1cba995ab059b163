package model

import (
	"fmt"
	"strconv"
)

// NodeID names a node: an NI and the host attached to it, 0..P-1.
type NodeID uint8

// MaxNodes bounds P so that node ids fit a NodeID and per-node tables stay
// small.
const MaxNodes = 64

// Tag is a packet type (thesis Table 3.3). The kernel knows no tag: each
// protocol registers the tags it defines with NewTag.
type Tag uint8

// TagInfo describes a registered tag.
type TagInfo struct {
	// Name is the tag as the thesis writes it, e.g. in Table 3.3.
	Name string
	// Data is set for packets that consume one of the sender's credits and occupy a
	// receive buffer when they arrive; control packets do neither.
	Data bool
	// Brief renders a packet of this tag briefly for traces, without the
	// suffix for piggybacked credits that Packet.String adds; nil renders
	// Name.
	Brief func(p Packet) string
}

var tagTable [256]*TagInfo

// NewTag registers a packet tag described by info and returns it: the
// registry hands out tags, 1, 2, ... in registration order, so no protocol
// numbers its tags and two protocols can never give one tag two meanings.
// Protocols call it in their package-level variable declarations.
// Registering a tag name twice, or more than hopFlag-1 tags, panics.
func NewTag(info TagInfo) Tag {
	for _, t := range tagTable {
		if t != nil && t.Name == info.Name {
			panic(fmt.Sprintf("model: tag %s registered twice", info.Name))
		}
	}
	if nextTag >= hopFlag {
		panic(fmt.Sprintf("model: more than %d tags", hopFlag-1))
	}
	t := nextTag
	nextTag++
	tagTable[t] = &info
	return t
}

var nextTag Tag = 1

// Info returns the registration of t; an unregistered tag gets a
// placeholder name.
func (t Tag) Info() TagInfo {
	if i := tagTable[t]; i != nil {
		return *i
	}
	return TagInfo{Name: "tag" + strconv.Itoa(int(t))}
}

// IsData reports whether packets with this tag consume one of the sender's credits and occupy
// a receive buffer.
func (t Tag) IsData() bool { return tagTable[t] != nil && tagTable[t].Data }

func (t Tag) String() string { return t.Info().Name }

// Packet is a packet on a link: LFC's header fields (tag, source, piggybacked
// credits, tree) plus a protocol-defined value and two bookkeeping fields
// (Origin, Seq) that identify the packet for properties and for people
// reading traces.
type Packet struct {
	Tag     Tag
	Src     NodeID // hdr.src: the NI that transmitted this copy
	Credits uint8  // hdr.credits: piggybacked credits
	Tree    uint16 // hdr.tree: a tree id, where a protocol uses trees
	Origin  NodeID // the node whose host (or NI) created the packet
	Seq     uint16 // 1-based number of the packet in its stream
	Val     uint32 // a protocol-defined value (for example a counter value)
	// Hop is a per-hop header byte that a protocol may define (0: unset):
	// like Src and Credits, the sending NI writes it for each hop. The
	// protocol that uses it names and renders it with RegisterHop.
	Hop uint8
}

// HopInfo describes the protocol-defined header byte Packet.Hop.
type HopInfo struct {
	// Name is the field's name in the protocol (for people and docs).
	Name string
	// Brief renders a set byte as the suffix of a data packet's brief
	// form; nil renders nothing.
	Brief func(v uint8) string
}

var hopInfo *HopInfo

// RegisterHop declares the meaning of Packet.Hop. One protocol may
// register it, from its package initialization; a second registration
// panics, so two protocols can never give the byte two meanings.
func RegisterHop(info HopInfo) {
	if hopInfo != nil {
		panic(fmt.Sprintf("model: the hop byte is registered twice (%s and %s)", hopInfo.Name, info.Name))
	}
	hopInfo = &info
}

// String renders a packet as its tag's brief form, plus the hop byte's
// rendering for a data packet that has one (RegisterHop) and "+N" for N
// piggybacked credits.
func (p Packet) String() string {
	s := p.Tag.Info().Name
	if i := tagTable[p.Tag]; i != nil && i.Brief != nil {
		s = i.Brief(p)
	}
	if p.Hop > 0 && p.Tag.IsData() && hopInfo != nil && hopInfo.Brief != nil {
		s += hopInfo.Brief(p.Hop)
	}
	if p.Credits > 0 {
		s += "+" + strconv.Itoa(int(p.Credits))
	}
	return s
}

// SameData reports whether p and q are copies of the same created packet
// (they may differ in the per-hop header fields Src, Credits and Hop).
func (p Packet) SameData(q Packet) bool {
	return p.Tag == q.Tag && p.Origin == q.Origin && p.Tree == q.Tree && p.Seq == q.Seq && p.Val == q.Val
}

// RegisteredTags lists every registered tag's information.
func RegisteredTags() []TagInfo {
	var out []TagInfo
	for _, t := range tagTable {
		if t != nil {
			out = append(out, *t)
		}
	}
	return out
}
