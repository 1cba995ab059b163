package model

import (
	"encoding/binary"
	"errors"
)

// Encode appends the canonical encoding of w to buf and returns it. The
// encoding keeps the order of every queue, pool and link.
func (w *World) Encode(buf []byte) []byte {
	P := w.Sys.P
	for n := range w.NIs {
		ni := &w.NIs[n]
		for p := 0; p < P; p++ {
			if p == n {
				continue
			}
			pcb := &ni.PCB[p]
			buf = append(buf, byte(pcb.SendCredits), byte(pcb.FreeCredits))
			buf = binary.AppendUvarint(buf, uint64(len(pcb.Blocked)))
			for _, d := range pcb.Blocked {
				f := byte(0)
				if d.Fwd {
					f = 1
				}
				buf = append(buf, byte(d.Dest), f)
				buf = encPacket(buf, d.Pkt)
			}
		}
		buf = binary.AppendUvarint(buf, uint64(len(ni.Recv)))
		for _, r := range ni.Recv {
			c := byte(0)
			if r.Copied {
				c = 1
			}
			buf = append(buf, byte(r.From), c, r.Pending)
			buf = encPacket(buf, r.Pkt)
		}
		buf = binary.AppendUvarint(buf, uint64(len(ni.Send)))
		for _, s := range ni.Send {
			buf = append(buf, s.Refs)
			buf = encPacket(buf, s.Pkt)
		}
	}
	for n := range w.Hosts {
		h := &w.Hosts[n]
		buf = binary.AppendUvarint(buf, uint64(h.Next))
		buf = binary.AppendUvarint(buf, uint64(len(h.Queue)))
		for _, p := range h.Queue {
			buf = encPacket(buf, p)
		}
		for _, l := range h.Log {
			buf = binary.AppendUvarint(buf, uint64(l.Last))
			buf = binary.AppendUvarint(buf, l.Mask)
		}
	}
	for i := 0; i < P; i++ {
		for j := 0; j < P; j++ {
			if i == j {
				continue
			}
			l := w.Links[i*P+j]
			buf = binary.AppendUvarint(buf, uint64(len(l)))
			for _, p := range l {
				buf = encPacket(buf, p)
			}
		}
	}
	return buf
}

func encPacket(buf []byte, p Packet) []byte {
	buf = append(buf, byte(p.Tag), byte(p.Src), p.Credits, byte(p.Origin))
	buf = binary.AppendUvarint(buf, uint64(p.Tree))
	return binary.AppendUvarint(buf, uint64(p.Seq))
}

var errCorrupt = errors.New("model: corrupt state encoding")

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.err = errCorrupt
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errCorrupt
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a length, rejecting ones the rest of the input cannot hold.
func (d *decoder) count() int {
	v := d.uvarint()
	if v > uint64(len(d.b)) {
		d.err = errCorrupt
		d.b = nil
		return 0
	}
	return int(v)
}

func (d *decoder) packet() Packet {
	p := Packet{Tag: Tag(d.byte()), Src: NodeID(d.byte()), Credits: d.byte(), Origin: NodeID(d.byte())}
	p.Tree = uint16(d.uvarint())
	p.Seq = uint16(d.uvarint())
	return p
}

// Decode overwrites w with the state encoded in b, reusing w's slices.
func (s *System) Decode(b []byte, w *World) error {
	P := s.P
	d := decoder{b: b}
	w.Sys = s
	if len(w.NIs) != P {
		w.NIs = make([]NI, P)
		w.Hosts = make([]Host, P)
		w.Links = make([][]Packet, P*P)
	}
	for n := range w.NIs {
		ni := &w.NIs[n]
		ni.ID = NodeID(n)
		if len(ni.PCB) != P {
			ni.PCB = make([]PCB, P)
		}
		for p := 0; p < P; p++ {
			if p == n {
				continue
			}
			pcb := &ni.PCB[p]
			pcb.SendCredits = int(int8(d.byte()))
			pcb.FreeCredits = int(int8(d.byte()))
			k := d.count()
			pcb.Blocked = pcb.Blocked[:0]
			for ; k > 0 && d.err == nil; k-- {
				dest := NodeID(d.byte())
				fwd := d.byte() == 1
				pcb.Blocked = append(pcb.Blocked, Desc{Dest: dest, Fwd: fwd, Pkt: d.packet()})
			}
		}
		k := d.count()
		ni.Recv = ni.Recv[:0]
		for ; k > 0 && d.err == nil; k-- {
			r := RecvBuf{From: NodeID(d.byte()), Copied: d.byte() == 1, Pending: d.byte()}
			r.Pkt = d.packet()
			ni.Recv = append(ni.Recv, r)
		}
		k = d.count()
		ni.Send = ni.Send[:0]
		for ; k > 0 && d.err == nil; k-- {
			sb := SendBuf{Refs: d.byte()}
			sb.Pkt = d.packet()
			ni.Send = append(ni.Send, sb)
		}
	}
	for n := range w.Hosts {
		h := &w.Hosts[n]
		h.Next = int(d.uvarint())
		k := d.count()
		h.Queue = h.Queue[:0]
		for ; k > 0 && d.err == nil; k-- {
			h.Queue = append(h.Queue, d.packet())
		}
		if len(h.Log) != s.Streams() {
			h.Log = make([]StreamLog, s.Streams())
		}
		for i := range h.Log {
			h.Log[i].Last = uint16(d.uvarint())
			h.Log[i].Mask = d.uvarint()
		}
	}
	for i := 0; i < P; i++ {
		for j := 0; j < P; j++ {
			if i == j {
				continue
			}
			k := d.count()
			l := w.Links[i*P+j][:0]
			for ; k > 0 && d.err == nil; k-- {
				l = append(l, d.packet())
			}
			w.Links[i*P+j] = l
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = errCorrupt
	}
	return d.err
}
