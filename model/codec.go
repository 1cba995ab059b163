package model

import (
	"encoding/binary"
	"errors"
	"strings"
)

// AppendPacket appends the canonical encoding of a packet.
// A packet with a hop byte (Packet.Hop) sets the tag byte's top bit and
// adds that byte, so packets of protocols without one encode as before.
func AppendPacket(buf []byte, p Packet) []byte {
	if p.Hop != 0 {
		buf = append(buf, byte(p.Tag)|hopFlag, p.Hop)
	} else {
		buf = append(buf, byte(p.Tag))
	}
	buf = append(buf, byte(p.Src), p.Credits, byte(p.Origin))
	buf = binary.AppendUvarint(buf, uint64(p.Tree))
	buf = binary.AppendUvarint(buf, uint64(p.Seq))
	return binary.AppendUvarint(buf, uint64(p.Val))
}

// AppendBool appends a boolean as one byte.
func AppendBool(buf []byte, b bool) []byte {
	if b {
		return append(buf, 1)
	}
	return append(buf, 0)
}

// hopFlag marks a packet encoding that carries a hop byte (Packet.Hop);
// tags stay below it.
const hopFlag = 0x80

var errCorrupt = errors.New("model: corrupt state encoding")

// Decoder reads a canonical encoding. After the first error every read
// returns zero and Err reports the error.
type Decoder struct {
	b   []byte
	err error
}

// NewDecoder returns a decoder that reads b.
func NewDecoder(b []byte) *Decoder { return &Decoder{b: b} }

// Len is the number of bytes not yet read.
func (d *Decoder) Len() int { return len(d.b) }

// Err is the first error met, if any.
func (d *Decoder) Err() error { return d.err }

// Byte reads one byte.
func (d *Decoder) Byte() byte {
	if len(d.b) == 0 {
		d.err = errCorrupt
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

// Bool reads a boolean written by AppendBool.
func (d *Decoder) Bool() bool { return d.Byte() == 1 }

// Uvarint reads an unsigned varint.
func (d *Decoder) Uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errCorrupt
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

// Count reads a length, rejecting ones the rest of the input cannot hold.
func (d *Decoder) Count() int {
	v := d.Uvarint()
	if v > uint64(len(d.b)) {
		d.err = errCorrupt
		d.b = nil
		return 0
	}
	return int(v)
}

// Packet reads a packet written by AppendPacket.
func (d *Decoder) Packet() Packet {
	var p Packet
	if t := d.Byte(); t&hopFlag != 0 {
		p.Tag, p.Hop = Tag(t&^hopFlag), d.Byte()
	} else {
		p.Tag = Tag(t)
	}
	p.Src, p.Credits, p.Origin = NodeID(d.Byte()), d.Byte(), NodeID(d.Byte())
	p.Tree = uint16(d.Uvarint())
	p.Seq = uint16(d.Uvarint())
	p.Val = uint32(d.Uvarint())
	return p
}

// Packets reads a length-prefixed packet list into dst[:0].
func (d *Decoder) Packets(dst []Packet) []Packet {
	dst = dst[:0]
	for k := d.Count(); k > 0 && d.err == nil; k-- {
		dst = append(dst, d.Packet())
	}
	return dst
}

// AppendPackets appends a length-prefixed packet list.
func AppendPackets(buf []byte, ps []Packet) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(ps)))
	for _, p := range ps {
		buf = AppendPacket(buf, p)
	}
	return buf
}

// ListOf renders xs as "[a b c]" using f for each element.
func ListOf[T any](xs []T, f func(T) string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, x := range xs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f(x))
	}
	b.WriteByte(']')
	return b.String()
}

// PacketList renders packets as "[a b c]".
func PacketList(ps []Packet) string { return ListOf(ps, Packet.String) }
