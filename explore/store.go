package explore

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// Seed is the fixed hash seed: fingerprints, and so state counts in
// fingerprint mode, reproduce across runs and processes.
const Seed = 0x6c66636368656b21 // "lfcchek!"

// Hash is a fixed-seed 64-bit hash of a state encoding (a multiply-fold
// over 8-byte words with a murmur3 finalizer).
func Hash(b []byte) uint64 {
	const m = 0x9E3779B97F4A7C15
	h := uint64(Seed) ^ uint64(len(b))*m
	for len(b) >= 8 {
		hi, lo := bits.Mul64(h^binary.LittleEndian.Uint64(b), m)
		h = hi ^ lo
		b = b[8:]
	}
	var t uint64
	for i, c := range b {
		t |= uint64(c) << (8 * i)
	}
	hi, lo := bits.Mul64(h^t^uint64(len(b))<<56, m)
	h = hi ^ lo
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

const chunkSize = 1 << 22

// arena stores byte strings, length-prefixed, in large chunks. A reference
// is chunk<<32 | offset. Chunks can be dropped once no longer needed.
type arena struct {
	chunks [][]byte
	base   int // index of chunks[0] (dropped chunks are not kept)
	bytes  int64
}

func (a *arena) add(b []byte) uint64 {
	need := binary.MaxVarintLen64 + len(b)
	if len(a.chunks) == 0 || cap(a.chunks[len(a.chunks)-1])-len(a.chunks[len(a.chunks)-1]) < need {
		// Chunks grow from 512 bytes to chunkSize, so that many small arenas
		// (the compact store's leaf shards) stay small.
		size := 512
		if len(a.chunks) > 0 {
			size = min(2*cap(a.chunks[len(a.chunks)-1]), chunkSize)
		}
		if need > size {
			size = need
		}
		a.chunks = append(a.chunks, make([]byte, 0, size))
	}
	ci := len(a.chunks) - 1
	c := a.chunks[ci]
	ref := uint64(a.base+ci)<<32 | uint64(len(c))
	c = binary.AppendUvarint(c, uint64(len(b)))
	c = append(c, b...)
	a.chunks[ci] = c
	a.bytes += int64(len(b))
	return ref
}

func (a *arena) get(ref uint64) []byte {
	c := a.chunks[int(ref>>32)-a.base]
	off := int(uint32(ref))
	n, k := binary.Uvarint(c[off:])
	return c[off+k : off+k+int(n)]
}

// reset empties the arena, keeping its last chunk (the largest).
func (a *arena) reset() {
	if n := len(a.chunks); n > 0 {
		last := a.chunks[n-1][:0]
		clear(a.chunks)
		a.chunks = append(a.chunks[:0], last)
	}
	a.base, a.bytes = 0, 0
}

// dropBefore frees every chunk before the one holding ref.
func (a *arena) dropBefore(ref uint64) {
	ci := int(ref>>32) - a.base
	if ci <= 0 {
		return
	}
	for i := 0; i < ci; i++ {
		a.chunks[i] = nil
	}
	a.chunks = a.chunks[ci:]
	a.base += ci
}

// exactSet is an open-addressing hash set of state ids whose encodings live
// in an arena; it compares full encodings, so it never confuses two states.
// A slot holds the low 32 bits of the state's hash, which also choose the
// slot, above its id+1 (0: empty): a probe reads an encoding only where
// those bits match, and growing the table needs nothing else (while it
// has at most 2^32 slots, which 32-bit ids never need).
type exactSet struct {
	table []uint64
	n     int
}

// slotTag is the part of a slot that holds the hash's low 32 bits.
const slotTag = 0xffffffff00000000

// insert finds the encoding b, whose hash is h; if it is not there, it
// takes id, which the caller then gives its place in the arena (refs).
func (s *exactSet) insert(h uint64, b []byte, id uint32, a *arena, refs []uint64) (uint32, bool) {
	if s.n*4 >= len(s.table)*3 {
		s.grow()
	}
	mask := uint64(len(s.table) - 1)
	tag := h << 32
	for i := h & mask; ; i = (i + 1) & mask {
		e := s.table[i]
		if e == 0 {
			s.table[i] = tag | uint64(id+1)
			s.n++
			return id, true
		}
		if e&slotTag == tag {
			if old := uint32(e) - 1; bytes.Equal(a.get(refs[old]), b) {
				return old, false
			}
		}
	}
}

// has reports whether the encoding b with hash h is in the set.
func (s *exactSet) has(h uint64, b []byte, a *arena, refs []uint64) bool {
	if len(s.table) == 0 {
		return false
	}
	mask := uint64(len(s.table) - 1)
	tag := h << 32
	for i := h & mask; ; i = (i + 1) & mask {
		e := s.table[i]
		if e == 0 {
			return false
		}
		if e&slotTag == tag && bytes.Equal(a.get(refs[uint32(e)-1]), b) {
			return true
		}
	}
}

func (s *exactSet) grow() {
	size := 1 << 16
	if len(s.table) > 0 {
		size = 2 * len(s.table)
	}
	s.table = rehash(s.table, size, func(e uint64) int { return int(e>>32) & (size - 1) })
}

// reset empties the set, keeping its table.
func (s *exactSet) reset() {
	clear(s.table)
	s.n = 0
}

// regrow returns an open-addressing table of nonzero uint32 entries twice
// the size of table (first entries if table is empty), with every
// entry of table placed again by its hash.
func regrow(table []uint32, first int, hash func(e uint32) uint64) []uint32 {
	size := first
	if len(table) > 0 {
		size = len(table) * 2
	}
	return rehash(table, size, func(e uint32) int { return int(hash(e) & uint64(size-1)) })
}

// rehash returns a table of size slots holding the nonzero entries of
// table, each placed by linear probing (wrapping around) from home(e).
func rehash[T uint32 | uint64](table []T, size int, home func(e T) int) []T {
	t := make([]T, size)
	for _, e := range table {
		if e == 0 {
			continue
		}
		i := home(e)
		for t[i] != 0 {
			if i++; i == size {
				i = 0
			}
		}
		t[i] = e
	}
	return t
}

func (s *exactSet) memBytes() int64 { return int64(len(s.table)) * 8 }

// fpSet is an open-addressing set of 64-bit fingerprints (0 is stored as
// 1), with the state id of each slot when withIDs is set.
type fpSet struct {
	table   []uint64
	ids     []uint32
	withIDs bool
	n       int
}

// insert adds fp for state id; for a fingerprint already there it returns
// the stored id (0 without ids) and false.
func (s *fpSet) insert(fp uint64, id uint32) (uint32, bool) {
	if fp == 0 {
		fp = 1
	}
	if s.n*4 >= len(s.table)*3 {
		s.grow()
	}
	mask := uint64(len(s.table) - 1)
	for i := fp & mask; ; i = (i + 1) & mask {
		switch s.table[i] {
		case 0:
			s.table[i] = fp
			if s.withIDs {
				s.ids[i] = id
			}
			s.n++
			return id, true
		case fp:
			if s.withIDs {
				return s.ids[i], false
			}
			return 0, false
		}
	}
}

// has reports whether fingerprint fp is in the set.
func (s *fpSet) has(fp uint64) bool {
	if fp == 0 {
		fp = 1
	}
	if len(s.table) == 0 {
		return false
	}
	mask := uint64(len(s.table) - 1)
	for i := fp & mask; ; i = (i + 1) & mask {
		switch s.table[i] {
		case 0:
			return false
		case fp:
			return true
		}
	}
}

func (s *fpSet) grow() {
	size := 1 << 16
	if len(s.table) > 0 {
		size = len(s.table) * 2
	}
	t := make([]uint64, size)
	var ids []uint32
	if s.withIDs {
		ids = make([]uint32, size)
	}
	mask := uint64(size - 1)
	for j, fp := range s.table {
		if fp == 0 {
			continue
		}
		i := fp & mask
		for t[i] != 0 {
			i = (i + 1) & mask
		}
		t[i] = fp
		if s.withIDs {
			ids[i] = s.ids[j]
		}
	}
	s.table, s.ids = t, ids
}

func (s *fpSet) memBytes() int64 { return int64(len(s.table))*8 + int64(len(s.ids))*4 }

// Store is the visited set of a search together with the encodings of the
// states still to be expanded. States get consecutive ids in the order
// they are added, which is the breadth-first queue order. A parallel or
// distributed explorer would implement Store with a sharded or locked set
// (and fork the model per worker: properties.Checker.Fork); the search
// itself only needs these operations.
type Store interface {
	// Add stores state b, whose hash is h, unless it was seen before; it
	// returns whether it was new and its id (for a state seen before, its
	// id if the store keeps ids: ExactStore always, FingerprintStore with
	// IDs set).
	Add(h uint64, b []byte) (id uint32, fresh bool)
	// Has reports whether state b (hash h) was seen.
	Has(h uint64, b []byte) bool
	// State returns the encoding of state id, which must not be released.
	State(id int) []byte
	// Release says that states below id are expanded: their encodings are
	// no longer needed (the store may free them; the set keeps them).
	Release(id int)
	// Len is the number of states seen.
	Len() int
	// MemBytes is the memory the store holds.
	MemBytes() int64
	// GrowBytes is what the next insertion would allocate at once (a
	// table doubling), 0 if it allocates nothing large.
	GrowBytes() uint64
}

// ExactStore keeps full state encodings: no two states are ever merged.
type ExactStore struct {
	ar   arena
	set  exactSet
	refs []uint64 // per state id: arena reference
}

// Add implements Store.
func (s *ExactStore) Add(h uint64, b []byte) (uint32, bool) {
	old, fresh := s.set.insert(h, b, uint32(len(s.refs)), &s.ar, s.refs)
	if fresh {
		s.refs = append(s.refs, s.ar.add(b))
	}
	return old, fresh
}

// Reset empties the store, keeping its table and the arena's last chunk
// for the states added next.
func (s *ExactStore) Reset() {
	s.set.reset()
	s.refs = s.refs[:0]
	s.ar.reset()
}

// Has implements Store.
func (s *ExactStore) Has(h uint64, b []byte) bool { return s.set.has(h, b, &s.ar, s.refs) }

// State implements Store.
func (s *ExactStore) State(id int) []byte { return s.ar.get(s.refs[id]) }

// Release implements Store: the exact set compares against every stored
// encoding, so nothing is freed.
func (s *ExactStore) Release(int) {}

// Len implements Store.
func (s *ExactStore) Len() int { return len(s.refs) }

// MemBytes implements Store.
func (s *ExactStore) MemBytes() int64 {
	return s.set.memBytes() + s.ar.bytes + int64(cap(s.refs))*8
}

// GrowBytes implements Store.
func (s *ExactStore) GrowBytes() uint64 {
	if s.set.n*4 < len(s.set.table)*3 {
		return 0
	}
	return uint64(len(s.set.table)) * 2 * 8
}

// FingerprintStore keeps 64-bit fingerprints in the set and the encodings
// of unexpanded states only. With IDs set (before the first Add) it also
// keeps each fingerprint's state id, 4 more bytes per table slot, so that
// Add can name the state a duplicate is. With NoStates it keeps no
// encodings at all (State is then unavailable): for searches that can
// regenerate a state, as DFS does from its parent.
type FingerprintStore struct {
	IDs      bool
	NoStates bool
	ar       arena
	set      fpSet
	refs     []uint64
}

// Add implements Store.
func (s *FingerprintStore) Add(h uint64, b []byte) (uint32, bool) {
	s.set.withIDs = s.IDs
	id, fresh := s.set.insert(h, uint32(len(s.refs)))
	if fresh {
		var ref uint64
		if !s.NoStates {
			ref = s.ar.add(b)
		}
		s.refs = append(s.refs, ref)
	}
	return id, fresh
}

// Has implements Store.
func (s *FingerprintStore) Has(h uint64, _ []byte) bool { return s.set.has(h) }

// State implements Store.
func (s *FingerprintStore) State(id int) []byte { return s.ar.get(s.refs[id]) }

// Release implements Store: arena chunks before state id are freed.
func (s *FingerprintStore) Release(id int) { s.ar.dropBefore(s.refs[id]) }

// Len implements Store.
func (s *FingerprintStore) Len() int { return len(s.refs) }

// MemBytes implements Store.
func (s *FingerprintStore) MemBytes() int64 { return s.set.memBytes() + int64(cap(s.refs))*8 }

// GrowBytes implements Store.
func (s *FingerprintStore) GrowBytes() uint64 {
	if s.set.n*4 < len(s.set.table)*3 {
		return 0
	}
	if s.IDs {
		return uint64(len(s.set.table)) * 2 * 12
	}
	return uint64(len(s.set.table)) * 2 * 8
}
