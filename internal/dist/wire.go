// Package dist is the breadth-first search of package explore spread over
// processes and machines: every state is owned by one worker, chosen by
// the hash of its canonical encoding (the model's Successors gives
// canonical encodings, so symmetry and the other per-state reductions
// work unchanged); each worker expands the states it owns and sends their
// successors to their owners in batches over gRPC streams; levels end at a
// barrier, where the coordinator (rank 0) collects the counts and decides
// whether to go on, to stop at the violation first in breadth-first order,
// or to stop because the search is complete.
//
// The result is the one explore.BFS gives: the same states, transitions,
// levels and depth, the same verdict and the same shortest counterexample.
// That rests on the order a sequential breadth-first search finds states
// in: the states of a level come in the order of the smallest (parent,
// successor index) that reaches them, which is the lexicographic order of
// the successor indexes along their first path from the initial state.
// So every state of the level being expanded carries that path (one byte
// an index below 255, in a prefix-free code that keeps the order when
// compared as bytes), as its reference to its parent: successors are sent
// with their path, an owner keeps the smallest path of each new state, a
// violation is the one with the smallest path, and the counterexample is
// rebuilt by the coordinator by following the path from the initial state.
//
// The workers speak gRPC with a service declared by hand (no generated
// code) and a codec of raw bytes: Control carries the coordinator's
// commands, Push (a client stream) carries the batches of successors, with
// gRPC's flow control as backpressure.
package dist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"lfccheck/explore"
)

// appendIdx appends successor index i to a path: one byte below 255, else
// 255 and four bytes big-endian. The code is prefix-free and keeps the
// order of indexes, so paths of the same number of indexes compare as
// their sequences of indexes do when compared as bytes.
func appendIdx(dst []byte, i uint32) []byte {
	if i < 255 {
		return append(dst, byte(i))
	}
	return binary.BigEndian.AppendUint32(append(dst, 255), i)
}

// pathIdx decodes a path into its indexes.
func pathIdx(p []byte) ([]uint32, error) {
	var out []uint32
	for len(p) > 0 {
		if p[0] < 255 {
			out = append(out, uint32(p[0]))
			p = p[1:]
			continue
		}
		if len(p) < 5 {
			return nil, errors.New("dist: truncated path")
		}
		out = append(out, binary.BigEndian.Uint32(p[1:5]))
		p = p[5:]
	}
	return out, nil
}

// splitLast splits a path into its parent's path and its last index.
func splitLast(p []byte) ([]byte, uint32, error) {
	idx, err := pathIdx(p)
	if err != nil || len(idx) == 0 {
		return nil, 0, errors.New("dist: empty path")
	}
	last := idx[len(idx)-1]
	n := 1
	if last >= 255 {
		n = 5
	}
	return p[:len(p)-n], last, nil
}

// enc is a little encoder for the messages.
type enc struct{ b []byte }

func (e *enc) u(v uint64)     { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) i(v int64)      { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) bytes(p []byte) { e.u(uint64(len(p))); e.b = append(e.b, p...) }
func (e *enc) str(s string)   { e.bytes([]byte(s)) }

// countsAndReached writes a worker's statistics counts and the names of
// the reachability goals its model has reached, as checkpoints and the
// statistics answer both carry them.
func (e *enc) countsAndReached(counts []int64, m explore.Model) {
	e.u(uint64(len(counts)))
	for _, c := range counts {
		e.i(c)
	}
	var reached []string
	if gk, ok := m.(explore.GoalKeeper); ok {
		reached = gk.Reached()
	}
	e.u(uint64(len(reached)))
	for _, s := range reached {
		e.str(s)
	}
}
func (e *enc) bool(v bool) {
	if v {
		e.u(1)
	} else {
		e.u(0)
	}
}

// dec reads what enc wrote; the first error sticks.
type dec struct {
	b   []byte
	err error
}

func (d *dec) u() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errors.New("dist: malformed message")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) i() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errors.New("dist: malformed message")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) bytes() []byte {
	n := d.u()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = fmt.Errorf("dist: malformed message (%d bytes announced, %d left)", n, len(d.b))
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

func (d *dec) str() string { return string(d.bytes()) }
func (d *dec) bool() bool  { return d.u() != 0 }

// count reads the number of entries that follow, each at least one byte:
// a number beyond what is left is an error (and 0), not an allocation.
func (d *dec) count() int {
	n := d.u()
	if d.err == nil && n > uint64(len(d.b)) {
		d.err = fmt.Errorf("dist: malformed message (%d entries announced, %d bytes left)", n, len(d.b))
	}
	if d.err != nil {
		return 0
	}
	return int(n)
}

func appendUvarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

// appendLengths appends the lengths of the segments that end at ends (as
// batches and checkpoints send a state's segments).
func appendLengths(b []byte, ends []int) []byte {
	start := 0
	for _, e := range ends {
		b = appendUvarint(b, uint64(e-start))
		start = e
	}
	return b
}

// ends reads n segment lengths (appendLengths) into their end offsets,
// appended to dst[:0].
func (d *dec) ends(dst []int, n int) []int {
	dst, end := dst[:0], 0
	for range n {
		end += int(d.u())
		dst = append(dst, end)
	}
	return dst
}

// segDelta is what one side of a batch remembers of the successor sent
// last in it, against which the next is sent: as the segments that differ
// (appendSegs, dec.segs), and its path as what follows the prefix the two
// share (appendKey, dec.key). Successors sent one after the other share
// most of their segments (nodes unchanged by a step, siblings) and
// their paths but the last index or two.
type segDelta struct {
	enc, spare []byte
	ends       []int
	spE        []int // (scratch: a state's ends as read, or the zero lengths sent)
	nseg       int
	key        []byte
}

// reset forgets the successor before (a batch starts with none).
func (p *segDelta) reset() { p.forget(); p.key = p.key[:0] }

// forget forgets the segments of the state before (one sent whole).
func (p *segDelta) forget() { p.enc, p.ends = p.enc[:0], p.ends[:0] }

// appendKey appends path k: the length of the prefix it shares with the
// path before, then the rest; k becomes the path before.
func appendKey(b, k []byte, p *segDelta) []byte {
	n := 0
	for n < len(k) && n < len(p.key) && k[n] == p.key[n] {
		n++
	}
	b = appendUvarint(appendUvarint(b, uint64(n)), uint64(len(k)-n))
	p.key = append(p.key[:0], k...)
	return append(b, k[n:]...)
}

// key reads a path appended by appendKey, valid until the next call with p.
func (d *dec) key(p *segDelta) []byte {
	n := d.u()
	rest := d.bytes()
	if d.err == nil && n > uint64(len(p.key)) {
		d.err = errors.New("dist: malformed message (a path's prefix)")
	}
	if d.err != nil {
		return nil
	}
	p.key = append(p.key[:n], rest...)
	return p.key
}

// seg returns segment j of the state before, and whether it is known.
func (p *segDelta) seg(j int) ([]byte, bool) {
	if len(p.ends) != p.nseg || j < 0 || j >= p.nseg {
		return nil, false
	}
	start := 0
	if j > 0 {
		start = p.ends[j-1]
	}
	return p.enc[start:p.ends[j]], true
}

// appendSegs appends state s, whose segment ends are ends (of p.nseg >
// 0 segments; any other number: unknown), to a batch: its length, its
// segment lengths (zeros when unknown), and, when the lengths add up to
// s's (as dec.segs decides), for each segment either 1+j, when it equals
// segment j of the state before, or 0 and its bytes, s becoming the
// state before; else s whole.
func appendSegs(b, s []byte, ends []int, p *segDelta) []byte {
	b = appendUvarint(b, uint64(len(s)))
	if len(ends) != p.nseg || ends[p.nseg-1] != len(s) {
		p.spE = slices.Grow(p.spE[:0], p.nseg)[:p.nseg]
		clear(p.spE)
		ends = p.spE // (unknown: zero lengths)
	}
	b = appendLengths(b, ends)
	if ends[p.nseg-1] != len(s) {
		p.forget()
		return append(b, s...)
	}
	start := 0
	for _, e := range ends {
		seg, from := s[start:e], -1
		for j := range len(p.ends) {
			if prev, _ := p.seg(j); string(prev) == string(seg) {
				from = j
				break
			}
		}
		if from >= 0 {
			b = appendUvarint(b, uint64(from+1))
		} else {
			b = append(appendUvarint(b, 0), seg...)
		}
		start = e
	}
	p.enc, p.ends = append(p.enc[:0], s...), append(p.ends[:0], ends...)
	return b
}

// segs reads a state appended by appendSegs (p.nseg > 0), with its
// segment ends (nil when unknown); both are valid until the next call
// with p.
func (d *dec) segs(p *segDelta) ([]byte, []int) {
	n := d.u()
	p.spE = d.ends(p.spE, p.nseg)
	ends := p.spE
	if d.err != nil {
		return nil, nil
	}
	if ends[p.nseg-1] != int(n) { // (zero lengths: unknown)
		if n > uint64(len(d.b)) {
			d.err = errors.New("dist: malformed message (a state's segments)")
			return nil, nil
		}
		p.forget()
		s := d.b[:n:n]
		d.b = d.b[n:]
		return s, nil
	}
	s, start := p.spare[:0], 0
	for _, e := range ends {
		l := e - start
		from := d.u()
		switch {
		case d.err != nil:
			return nil, nil
		case l < 0:
			d.err = errors.New("dist: malformed message (a state's segments)")
			return nil, nil
		case from > 0:
			var prev []byte
			ok := from <= uint64(p.nseg)
			if ok {
				prev, ok = p.seg(int(from) - 1)
			}
			if !ok || len(prev) != l {
				d.err = errors.New("dist: malformed message (a segment of the state before)")
				return nil, nil
			}
			s = append(s, prev...)
		case l > len(d.b):
			d.err = errors.New("dist: malformed message (a state's segments)")
			return nil, nil
		default:
			s = append(s, d.b[:l]...)
			d.b = d.b[l:]
		}
		start = e
	}
	p.spare, p.enc = p.enc, s
	p.ends = append(p.ends[:0], ends...)
	return s, ends
}
