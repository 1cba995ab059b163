package explore

import (
	"bytes"
	"unsafe"
)

// succCache is a worker's cache of the states it met lately (exact
// store, without the state graph), by their encodings. Every state in it
// went through the visited set, so it is stored, and a hit is a
// duplicate that needs neither the tree store nor the visited set: a
// state of an earlier level would not change there, and a state of the
// level being built was met by this worker before at a smaller (parent,
// successor) key (a worker's keys only grow within a level: it takes
// chunks and their states in order), so its level entry's minKey is
// already at most this one. Most successors hit (a breadth-first search
// of multicasts on binary trees at P=4: 81% of the successors are states stored already, 72% are among
// the last 16K a worker met). The encodings are compared in full, so the
// search stays exact. The cache is the worker's alone: a hit touches no
// shared memory.
type succCache struct {
	ents []succEnt
	ring []byte // the encodings, written round: absolute position p is at p mod len(ring)
	pos  uint64 // absolute position of the next encoding
}

type succEnt struct {
	h   uint64 // Hash of the encoding
	at  uint64 // absolute position of the encoding in the ring
	n   int    // length of the encoding (0: empty)
	li  uint32 // with sleep sets: its level entry, in the level built at depth lvl
	lvl uint32
}

// succCacheSize is the memory of a cache of 2^bits entries and ring
// bytes.
func succCacheSize(bits uint, ring int) uint64 {
	return uint64(ring) + uint64(unsafe.Sizeof(succEnt{}))<<bits
}

// newSuccCache returns a cache of 2^bits entries whose encodings share
// ring bytes (the oldest are overwritten first).
func newSuccCache(bits uint, ring int) *succCache {
	return &succCache{ents: make([]succEnt, 1<<bits), ring: make([]byte, ring)}
}

// memBytes is the memory the cache holds (0 for nil).
func (c *succCache) memBytes() int64 {
	if c == nil {
		return 0
	}
	return int64(len(c.ring)) + int64(unsafe.Sizeof(succEnt{}))*int64(len(c.ents))
}

// find returns the entry of the encoding b, whose hash is h, if cached.
func (c *succCache) find(h uint64, b []byte) *succEnt {
	e := &c.ents[h&uint64(len(c.ents)-1)]
	size := uint64(len(c.ring))
	if e.h != h || e.n != len(b) || e.n == 0 || e.at+size < c.pos {
		return nil // another encoding, or its bytes were overwritten
	}
	at := int(e.at % size)
	if !bytes.Equal(c.ring[at:at+e.n], b) {
		return nil
	}
	return e
}

// add caches the encoding b, whose hash is h, of a stored state (level
// entry li of the level built at depth lvl, if one).
func (c *succCache) add(h uint64, b []byte, li, lvl uint32) {
	size := uint64(len(c.ring))
	if len(b) == 0 || uint64(len(b)) > size/64 {
		return
	}
	off := c.pos % size
	if off+uint64(len(b)) > size {
		c.pos += size - off // no encoding wraps round the ring's end
		off = 0
	}
	copy(c.ring[off:], b)
	c.ents[h&uint64(len(c.ents)-1)] = succEnt{h: h, at: c.pos, n: len(b), li: li, lvl: lvl}
	c.pos += uint64(len(b))
}
