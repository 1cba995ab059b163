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
// protocol registers the tags it defines with RegisterTag.
type Tag uint8

// TagInfo describes a registered tag.
type TagInfo struct {
	// Name is the tag as the thesis writes it, e.g. in Table 3.3.
	Name string
	// Data is set for packets that consume a send credit and occupy a
	// receive buffer when they arrive; control packets do neither.
	Data bool
	// Brief renders a packet of this tag briefly for traces, without the
	// piggybacked-credit suffix that Packet.String adds; nil renders Name.
	Brief func(p Packet) string
}

var tagTable [256]*TagInfo

// RegisterTag declares tag t. Protocols call it from their package
// initialization; registering tag 0 or a tag twice panics, so two
// protocols can never give one tag two meanings.
func RegisterTag(t Tag, info TagInfo) {
	if t == 0 || t >= chanFlag {
		panic(fmt.Sprintf("model: tag %d is reserved (tags are 1..%d)", t, chanFlag-1))
	}
	if tagTable[t] != nil {
		panic(fmt.Sprintf("model: tag %d registered twice (%s and %s)", t, tagTable[t].Name, info.Name))
	}
	tagTable[t] = &info
}

// Info returns the registration of t; an unregistered tag gets a
// placeholder name.
func (t Tag) Info() TagInfo {
	if i := tagTable[t]; i != nil {
		return *i
	}
	return TagInfo{Name: "tag" + strconv.Itoa(int(t))}
}

// IsData reports whether packets with this tag consume a credit and occupy
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
	Tree    uint16 // hdr.tree: multicast tree id, where a protocol uses one
	Origin  NodeID // the node whose host (or NI) created the packet
	Seq     uint16 // 1-based number of the packet in its stream
	Val     uint32 // a protocol-defined value (for example a counter value)
	// Chan is RECOV's deadlock channel field (§3.4, Fig. 4.11): 0 when the
	// packet is not deadlocked, c+1 when it travels on the recovery
	// channel of NI c. Like Src and Credits it is a per-hop header field
	// that send_packet writes.
	Chan uint8
}

// String renders a packet as its tag's brief form, plus "@chC" for a data
// packet on NI C's recovery channel and "+N" for N piggybacked credits.
func (p Packet) String() string {
	s := p.Tag.Info().Name
	if i := tagTable[p.Tag]; i != nil && i.Brief != nil {
		s = i.Brief(p)
	}
	if p.Chan > 0 && p.Tag.IsData() {
		s += "@ch" + strconv.Itoa(int(p.Chan)-1)
	}
	if p.Credits > 0 {
		s += "+" + strconv.Itoa(int(p.Credits))
	}
	return s
}

// SameData reports whether p and q are copies of the same created packet
// (they may differ in the per-hop header fields Src, Credits and Chan).
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
