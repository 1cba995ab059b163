package dist

import (
	"errors"
	"sync/atomic"

	"lfccheck/explore"
)

// leaves numbers the segments of the states a worker stores, for a model
// that keeps what it decoded of a segment by such a number
// (explore.LeafUser), as explore's tree store numbers its leaves: a state
// to expand then comes with the numbers of its segments, and the model
// copies the nodes it decoded before instead of decoding them again
// (at P=4, a few thousand segments make up 808,510 states). Segments of
// equal bytes get equal numbers under one owner (a number no other
// numbering has); the table starts again under a new owner when it grows
// past leafMax, between levels.
type leaves struct {
	lu    explore.LeafUser
	sg    explore.Segmenter
	p     int // segments per state
	owner uint64
	ids   map[string]uint32
	ends  []int    // scratch: a successor's segment ends
	use   []uint32 // scratch: UseLeaves' arguments
	useE  []int
}

// leafMax bounds the table of segments.
const leafMax = 1 << 20

// leafOwners numbers the tables (the high bit keeps them apart from
// explore's store serials).
var leafOwners atomic.Uint64

func newLeaves(m explore.Model) *leaves {
	lu, ok1 := m.(explore.LeafUser)
	sg, ok2 := m.(explore.Segmenter)
	if !ok1 || !ok2 {
		return nil
	}
	return &leaves{lu: lu, sg: sg}
}

// reset starts a new numbering of p segments per state.
func (l *leaves) reset(p int) {
	l.p, l.owner, l.ids = p, 1<<63|leafOwners.Add(1), make(map[string]uint32)
}

// appendSeg appends to dst the numbers and ends of encoding e's segments
// (2p values), or p+p markers when ends are not e's segments.
func (l *leaves) appendSeg(dst []uint32, e []byte, ends []int) []uint32 {
	if !validEnds(ends, l.p, len(e)) {
		for range 2 * l.p {
			dst = append(dst, noLeaf)
		}
		return dst
	}
	st := 0
	for _, end := range ends {
		seg := e[st:end]
		id, ok := l.ids[string(seg)]
		if !ok {
			id = uint32(len(l.ids))
			l.ids[string(seg)] = id
		}
		dst = append(dst, id)
		st = end
	}
	for _, end := range ends {
		dst = append(dst, uint32(end))
	}
	return dst
}

// noLeaf marks a state whose segments are not known (the stride stays 2p).
const noLeaf = ^uint32(0)

func validEnds(ends []int, p, n int) bool {
	if p == 0 || len(ends) != p || ends[p-1] != n {
		return false
	}
	st := 0
	for _, e := range ends {
		if e < st {
			return false
		}
		st = e
	}
	return true
}

// useLeaves tells the model the segments of the state to expand next
// (seg: its 2p values in the level's table, under owner).
func (l *leaves) useLeaves(owner uint64, seg []uint32) {
	if len(seg) != 2*l.p || seg[0] == noLeaf {
		return
	}
	l.use = append(l.use[:0], seg[:l.p]...)
	l.useE = l.useE[:0]
	for _, e := range seg[l.p:] {
		l.useE = append(l.useE, int(e))
	}
	l.lu.UseLeaves(owner, l.use, l.useE)
}

// appendEnds appends a successor's segment ends to a batch: their number,
// then each as the length of its segment.
func appendEnds(b []byte, ends []int) []byte {
	b = appendUvarint(b, uint64(len(ends)))
	st := 0
	for _, e := range ends {
		b = appendUvarint(b, uint64(e-st))
		st = e
	}
	return b
}

// readEnds reads what appendEnds wrote into dst.
func (d *dec) ends(dst []int) []int {
	n := d.u()
	if n > uint64(len(d.b)) {
		d.err = errors.New("dist: malformed message (segment ends)")
		return dst
	}
	st := 0
	for range n {
		st += int(d.u())
		dst = append(dst, st)
	}
	return dst
}
