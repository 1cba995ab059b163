package explore

import (
	"bytes"
	"math/bits"
	"sync"
	"sync/atomic"
)

// The compact exact store of the breadth-first search (tree compression,
// as in LTSmin's tree tables). A model that implements Segmenter splits
// every state encoding into the same number k of segments (for LFC: one
// per node, the node and its outgoing links). Each distinct segment is
// stored once, in the leaf table, under a 32-bit id; a balanced binary
// tree over the k leaf ids is stored bottom-up in the pair table, each
// distinct pair of ids once under an id of its own; a state is the pair of
// ids at its root, a 64-bit key. States share their unchanged segments and
// subtrees, so a state costs a slot of the visited set (8 bytes, the
// key's hash, see rootTable), plus the few pairs and leaves it does not
// share; its key and its parent's id go to a temporary file, read back
// only to rebuild a trace (column.go). The key identifies the state
// exactly: equal keys mean equal encodings, and the encoding is rebuilt
// from the key.
//
// In fingerprint mode the key is instead the state's 64-bit hash, and the
// encodings of the states still to be expanded are kept beside it.
//
// All tables are split into shards by hash, each with its own lock, so the
// workers of a parallel search share them without a global lock.

const (
	shardBits = 6
	nShards   = 1 << shardBits
	localBits = 32 - shardBits
	maxLocal  = 1<<localBits - 1
)

// mix64 is a 64-bit finalizer (murmur3's) used to hash keys.
func mix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

// pairTable interns 64-bit keys as 32-bit ids (shard << localBits | index).
type pairTable struct {
	sh [nShards]pairShard
}

type pairShard struct {
	mu    sync.Mutex
	slots []uint32 // index+1; 0 is empty
	keys  []uint64 // by index
	_     [72]byte // 128 bytes a shard: two shards' fields never share a cache line, however the array is aligned
}

// intern returns the id of k, adding it if new; ok is false when the
// shard is full (more than 2^26 keys).
func (t *pairTable) intern(k uint64) (id uint32, ok bool) {
	h := mix64(k)
	si := uint32(h >> (64 - shardBits))
	s := &t.sh[si]
	s.mu.Lock()
	if len(s.keys)*5 >= len(s.slots)*4 {
		s.slots = regrowByHalf(s.slots, 1<<6, func(e uint32) uint64 { return mix64(s.keys[e-1]) })
	}
	size := len(s.slots)
	for i := home32(h, size); ; {
		e := s.slots[i]
		if e == 0 {
			if len(s.keys) >= maxLocal {
				s.mu.Unlock()
				return 0, false
			}
			if len(s.keys) == cap(s.keys) {
				// A quarter more, not twice: the keys are most of the
				// pair table.
				s.keys = append(make([]uint64, 0, cap(s.keys)+cap(s.keys)/4+1<<5), s.keys...)
			}
			s.keys = append(s.keys, k)
			n := uint32(len(s.keys))
			s.slots[i] = n
			s.mu.Unlock()
			return si<<localBits | (n - 1), true
		}
		if s.keys[e-1] == k {
			s.mu.Unlock()
			return si<<localBits | (e - 1), true
		}
		if i++; i == size {
			i = 0
		}
	}
}

// home32 is the first slot to probe for hash h (whose top bits chose the
// shard) in a table of size slots.
func home32(h uint64, size int) int { return int(uint64(uint32(h)) * uint64(size) >> 32) }

// regrowByHalf returns an open-addressing table (linear probing from
// home32) of nonzero uint32 entries half as big again as table (first
// entries if table is empty), with every entry of table placed again by
// its hash. The tables that use it grow when 80% full, so they are
// between 53% and 80% full.
func regrowByHalf(table []uint32, first int, hash func(e uint32) uint64) []uint32 {
	size := max(first, len(table)+len(table)/2)
	return rehash(table, size, func(e uint32) int { return home32(hash(e), size) })
}

// get returns the key of id.
func (t *pairTable) get(id uint32) uint64 {
	s := &t.sh[id>>localBits]
	s.mu.Lock()
	k := s.keys[id&maxLocal]
	s.mu.Unlock()
	return k
}

func (t *pairTable) memBytes() int64 {
	var n int64
	for i := range t.sh {
		s := &t.sh[i]
		s.mu.Lock()
		n += int64(len(s.slots))*4 + int64(cap(s.keys))*8
		s.mu.Unlock()
	}
	return n
}

// leafTable interns byte strings as 32-bit ids.
type leafTable struct {
	sh [nShards]leafShard
}

type leafShard struct {
	mu     sync.Mutex
	slots  []uint32
	hashes []uint64
	refs   []uint64
	ar     arena
	_      [72]byte // 192 bytes: a cache line at least between two shards' fields
}

func (t *leafTable) intern(b []byte) (id uint32, ok bool) {
	h := Hash(b)
	si := uint32(h >> (64 - shardBits))
	s := &t.sh[si]
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.refs)*5 >= len(s.slots)*4 {
		s.slots = regrowByHalf(s.slots, 1<<5, func(e uint32) uint64 { return s.hashes[e-1] })
	}
	size := len(s.slots)
	for i := home32(h, size); ; {
		e := s.slots[i]
		if e == 0 {
			if len(s.refs) >= maxLocal {
				return 0, false
			}
			s.refs = append(s.refs, s.ar.add(b))
			s.hashes = append(s.hashes, h)
			s.slots[i] = uint32(len(s.refs))
			return si<<localBits | uint32(len(s.refs)-1), true
		}
		if s.hashes[e-1] == h && bytes.Equal(s.ar.get(s.refs[e-1]), b) {
			return si<<localBits | (e - 1), true
		}
		if i++; i == size {
			i = 0
		}
	}
}

// appendTo appends the bytes of leaf id to dst.
func (t *leafTable) appendTo(dst []byte, id uint32) []byte {
	s := &t.sh[id>>localBits]
	s.mu.Lock()
	dst = append(dst, s.ar.get(s.refs[id&maxLocal])...)
	s.mu.Unlock()
	return dst
}

func (t *leafTable) memBytes() int64 {
	var n int64
	for i := range t.sh {
		s := &t.sh[i]
		s.mu.Lock()
		n += int64(len(s.slots))*4 + int64(cap(s.hashes)+cap(s.refs))*8 + s.ar.bytes
		s.mu.Unlock()
	}
	return n
}

// tree builds and reads the trees of k leaves.
type tree struct {
	k      int
	leaves leafTable
	pairs  pairTable
}

// treeRef is a state whose tree is known (the state a worker expands): a
// successor's segments and subtrees equal to the reference's at the same
// place reuse its ids instead of looking them up.
type treeRef struct {
	enc   []byte
	ends  []int    // segment ends in enc
	ids   []uint32 // leaf ids
	keys  []uint64 // interned subtrees in pre-order: their pair keys
	nodes []uint32 // and ids
	valid bool
}

// treeCache is a worker's small direct-mapped cache of leaves and pairs it
// interned recently: hits need no lock and touch no shared memory, which
// keeps workers from contending for the hot shards.
type treeCache struct {
	leaves [1 << 12]leafHit
	lbytes []byte
	pairs  [1 << 13]pairHit
}

type leafHit struct {
	h        uint64
	id       uint32
	off, end int32
}

type pairHit struct {
	k  uint64
	id uint32
	ok bool
}

func (c *treeCache) leaf(t *tree, b []byte) (uint32, bool) {
	if c == nil {
		return t.leaves.intern(b)
	}
	h := Hash(b)
	e := &c.leaves[h&(1<<12-1)]
	if e.end > e.off && e.h == h && bytes.Equal(c.lbytes[e.off:e.end], b) {
		return e.id, true
	}
	id, ok := t.leaves.intern(b)
	if ok {
		if len(c.lbytes)+len(b) > 1<<20 {
			c.lbytes = c.lbytes[:0]
			c.leaves = [1 << 12]leafHit{}
			e = &c.leaves[h&(1<<12-1)]
		}
		*e = leafHit{h: h, id: id, off: int32(len(c.lbytes)), end: int32(len(c.lbytes) + len(b))}
		c.lbytes = append(c.lbytes, b...)
	}
	return id, ok
}

func (c *treeCache) pair(t *tree, k uint64) (uint32, bool) {
	if c == nil {
		return t.pairs.intern(k)
	}
	e := &c.pairs[mix64(k)&(1<<13-1)]
	if e.ok && e.k == k {
		return e.id, true
	}
	id, ok := t.pairs.intern(k)
	if ok {
		*e = pairHit{k: k, id: id, ok: true}
	}
	return id, ok
}

// key interns the segments of b (ends are their end offsets) and returns
// the state's root key; ref, when valid, is a state to share ids with,
// c (if not nil) the worker's cache, and ids is scratch.
func (t *tree) key(b []byte, ends []int, ids []uint32, ref *treeRef, c *treeCache) (uint64, []uint32, bool) {
	ids, ok := t.leafIDs(b, ends, ids, ref, c)
	if !ok {
		return 0, ids, false
	}
	pos := 0
	k, ok := t.node(ids, ref, c, &pos)
	return k, ids, ok
}

// leafIDs interns the segments of b (ending at ends) in the leaf table,
// appending their ids to ids[:0]; ref and c as for key. It reports false
// when the table is full.
func (t *tree) leafIDs(b []byte, ends []int, ids []uint32, ref *treeRef, c *treeCache) ([]uint32, bool) {
	ids = ids[:0]
	start := 0
	for i, e := range ends {
		seg := b[start:e]
		if ref != nil && ref.valid {
			rs := 0
			if i > 0 {
				rs = ref.ends[i-1]
			}
			if bytes.Equal(seg, ref.enc[rs:ref.ends[i]]) {
				ids = append(ids, ref.ids[i])
				start = e
				continue
			}
		}
		id, ok := c.leaf(t, seg)
		if !ok {
			return ids, false
		}
		ids = append(ids, id)
		start = e
	}
	return ids, true
}

// node returns the key of the subtree over ids (a leaf id for one leaf);
// pos numbers the interned subtrees in pre-order.
func (t *tree) node(ids []uint32, ref *treeRef, c *treeCache, pos *int) (uint64, bool) {
	if len(ids) == 1 {
		return uint64(ids[0]), true
	}
	m := len(ids) / 2
	l, ok1 := t.sub(ids[:m], ref, c, pos)
	r, ok2 := t.sub(ids[m:], ref, c, pos)
	return uint64(l)<<32 | uint64(r), ok1 && ok2
}

func (t *tree) sub(ids []uint32, ref *treeRef, c *treeCache, pos *int) (uint32, bool) {
	if len(ids) == 1 {
		return ids[0], true
	}
	p := *pos
	*pos++
	k, ok := t.node(ids, ref, c, pos)
	if !ok {
		return 0, false
	}
	if ref != nil && ref.valid && ref.keys[p] == k {
		return ref.nodes[p], true
	}
	return c.pair(t, k)
}

// load rebuilds into r the state with root key k over t.k leaves.
func (t *tree) load(r *treeRef, k uint64) {
	r.enc, r.ends, r.ids, r.keys, r.nodes = r.enc[:0], r.ends[:0], r.ids[:0], r.keys[:0], r.nodes[:0]
	t.loadNode(r, k, t.k)
	r.valid = true
}

func (t *tree) loadNode(r *treeRef, k uint64, n int) {
	if n == 1 {
		t.loadLeaf(r, uint32(k))
		return
	}
	m := n / 2
	t.loadSub(r, uint32(k>>32), m)
	t.loadSub(r, uint32(k), n-m)
}

func (t *tree) loadSub(r *treeRef, id uint32, n int) {
	if n == 1 {
		t.loadLeaf(r, id)
		return
	}
	k := t.pairs.get(id)
	r.keys = append(r.keys, k)
	r.nodes = append(r.nodes, id)
	t.loadNode(r, k, n)
}

func (t *tree) loadLeaf(r *treeRef, id uint32) {
	r.enc = t.leaves.appendTo(r.enc, id)
	r.ends = append(r.ends, len(r.enc))
	r.ids = append(r.ids, id)
}

func (t *tree) memBytes() int64 { return t.leaves.memBytes() + t.pairs.memBytes() }

// big is an append-only array in fixed chunks: appending never copies it
// (no doubling of a huge slice), and reads need no lock while nobody
// appends.
type big[T any] struct {
	chunks [][]T
	n      int
}

const bigBits = 16

func (a *big[T]) add(v T) {
	if a.n>>bigBits == len(a.chunks) {
		a.chunks = append(a.chunks, make([]T, 1<<bigBits))
	}
	a.chunks[a.n>>bigBits][a.n&(1<<bigBits-1)] = v
	a.n++
}

func (a *big[T]) at(i int) T { return a.chunks[i>>bigBits][i&(1<<bigBits-1)] }

func (a *big[T]) memBytes(size int) int64 { return int64(len(a.chunks)) << bigBits * int64(size) }

// A level entry is a state first found in the level being expanded. Its
// id is assigned when the level is committed, in the order of minKey, so
// that ids (and with them traces and counts) do not depend on which
// worker found a state first.
type lvlEntry struct {
	root   uint64 // the state's key
	minKey uint64 // parent id << 32 | successor index, smallest so far
	sleep  uint64 // with sleep sets: the intersection of those its transitions gave it
}

// meet intersects the entry's sleep set with z. Workers meet an entry
// from the lock of its shard and from their successor caches, so it is
// atomic; it writes only when the set shrinks, so that the many
// transitions that change nothing leave the entry's cache line alone.
func (e *lvlEntry) meet(z uint64) {
	if atomic.LoadUint64(&e.sleep)&^z != 0 {
		atomic.AndUint64(&e.sleep, z)
	}
}

// lvlAux is what a level entry needs in fingerprint mode (where its
// encoding is) and when the state graph is recorded (its id), kept apart
// so that entries of the exact store are smaller.
type lvlAux struct {
	enc  uint64 // the arena reference of the encoding
	encW uint32 // the worker whose arena holds it
	id   uint32 // assigned at commit
}

// The level buffer's chunks: the first lvlGeo hold 1K, 2K, ..., 32K
// entries (so that a small search allocates little), the rest 64K each,
// up to 2^31 entries.
const (
	lvlBits   = 16
	lvlBase   = 10
	lvlGeo    = lvlBits - lvlBase
	lvlGeoEnd = 1<<lvlBits - 1<<lvlBase // entries in the first lvlGeo chunks
	lvlMax    = 1 << 31
	lvlChunks = lvlGeo + (lvlMax-lvlGeoEnd)>>lvlBits + 1
)

// lvlPos returns the chunk holding entry i and the entry's index in it.
func lvlPos(i uint32) (c int, off uint32) {
	if i < lvlGeoEnd {
		c = bits.Len32(i>>lvlBase+1) - 1
		return c, i - (1<<c-1)<<lvlBase
	}
	j := i - lvlGeoEnd
	return lvlGeo + int(j>>lvlBits), j & (1<<lvlBits - 1)
}

// lvlSize is the number of entries of chunk c.
func lvlSize(c int) int {
	if c < lvlGeo {
		return 1 << (lvlBase + c)
	}
	return 1 << lvlBits
}

// levelBuf holds the entries of one level; workers add to it
// concurrently.
type levelBuf struct {
	// n is written at every fresh state by every worker; the chunk
	// pointers are read at every probe of a level entry, so they keep
	// off n's cache line.
	_      [64]byte
	n      atomic.Int64
	_      [56]byte
	mu     sync.Mutex
	chunks [lvlChunks]atomic.Pointer[[]lvlEntry]
	auxs   [lvlChunks]atomic.Pointer[[]lvlAux]
}

// add reserves an entry; ok is false past 2^31 entries.
func (l *levelBuf) add() (uint32, *lvlEntry, bool) {
	i := l.n.Add(1) - 1
	if i >= lvlMax {
		return 0, nil, false
	}
	c, off := lvlPos(uint32(i))
	return uint32(i), &chunk(&l.chunks[c], c, &l.mu)[off], true
}

// chunk returns chunk c at p, made under mu if there is none yet.
func chunk[T any](p *atomic.Pointer[[]T], c int, mu *sync.Mutex) []T {
	s := p.Load()
	if s == nil {
		mu.Lock()
		if s = p.Load(); s == nil {
			e := make([]T, lvlSize(c))
			s = &e
			p.Store(s)
		}
		mu.Unlock()
	}
	return *s
}

func (l *levelBuf) at(i uint32) *lvlEntry {
	c, off := lvlPos(i)
	return &(*l.chunks[c].Load())[off]
}

// aux returns entry i's lvlAux (fingerprint mode, state graph).
func (l *levelBuf) aux(i uint32) *lvlAux {
	c, off := lvlPos(i)
	return &chunk(&l.auxs[c], c, &l.mu)[off]
}

func (l *levelBuf) len() int { return int(min(l.n.Load(), lvlMax)) }

// rootTable is the visited set of states' keys. Its slots are 64 bits:
// for a state of the level being expanded, lvlSlot|entry (the level
// entry holds the key); for a state of an earlier level, the key's hash
// (mix64 is a bijection, so the hash identifies the key) less the shard
// bits its shard already implies, with usedBit set. When the search
// records the state graph (keys != nil), the hash's low 32 bits give way
// to the state's id, and a hash match is confirmed with the key by id.
// So a lookup compares slots in place and follows no pointer for states of
// earlier levels, and without the graph the keys of those states are
// needed only to rebuild traces (they go to a column, see column.go).
//
// Slots are linear-probed from a home computed from the hash's bits 32
// to 57 (kept in every slot, so growing reads no key), and a shard grows
// by a quarter when it is 85% full: between 68% and 85% full, 9.4 to 11.8
// bytes per state. (Probes compare slots in place, a few cache lines
// even at 85%.)
type rootTable struct {
	sh   [nShards]rootShard
	keys *big[uint64] // key by state id when the graph is recorded, else nil
	lvl  *levelBuf
}

const (
	lvlSlot  = 1 << 63
	usedBit  = 1 << 58
	hashBits = 1<<58 - 1
	idBits   = 1<<32 - 1
	tagBits  = 26 // bits 32..57 of the hash place a slot
	// lvlFlag marks a level entry in the values insert returns; other
	// values are a state id+1 (graph recorded) or 1.
	lvlFlag = 1 << 31
)

type rootShard struct {
	mu    sync.Mutex
	slots []uint64
	n     int
	_     [88]byte // 128 bytes, as pairShard
}

// home is the first slot to probe for hash (or committed slot value) h in
// a table of size slots.
func home(h uint64, size int) int {
	return int((h & hashBits >> 32) * uint64(size) >> tagBits)
}

// slotOf is the slot value of a state of an earlier level with hash h and
// the given id.
func (t *rootTable) slotOf(h uint64, id uint32) uint64 {
	if t.keys == nil {
		return usedBit | h&hashBits
	}
	return usedBit | h&hashBits&^idBits | uint64(id)
}

// insert looks up k; a new key gets a level entry with minKey pk and
// sleep set z, and z is intersected with a level entry's. It
// returns the value for k (lvlFlag|entry for a state of this level, else
// its id+1 with the graph recorded, else 1) and whether k was new; ok is
// false when the level buffer is full.
func (t *rootTable) insert(k, pk, z uint64) (v uint32, fresh, ok bool) {
	h := mix64(k)
	s := &t.sh[h>>(64-shardBits)]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n*20 >= len(s.slots)*17 {
		t.grow(s)
	}
	size := len(s.slots)
	want := usedBit | h&hashBits
	mask := uint64(hashBits)
	if t.keys != nil {
		mask &^= idBits
	}
	for i := home(h, size); ; {
		e := s.slots[i]
		switch {
		case e == 0:
			li, ent, ok := t.lvl.add()
			if !ok {
				return 0, false, false
			}
			*ent = lvlEntry{root: k, minKey: pk, sleep: z}
			s.slots[i] = lvlSlot | uint64(li)
			s.n++
			return lvlFlag | li, true, true
		case e&lvlSlot != 0:
			if ent := t.lvl.at(uint32(e)); ent.root == k {
				if pk < ent.minKey {
					ent.minKey = pk
				}
				ent.meet(z)
				return lvlFlag | uint32(e), false, true
			}
		case (e^want)&(mask|usedBit) == 0:
			if t.keys == nil {
				return 1, false, true
			}
			if t.keys.at(int(e&idBits)) == k {
				return uint32(e&idBits) + 1, false, true
			}
		}
		if i++; i == size {
			i = 0
		}
	}
}

// grow makes the shard's table a quarter bigger (at least 64 slots).
func (t *rootTable) grow(s *rootShard) {
	size := max(1<<6, len(s.slots)+len(s.slots)/4)
	s.slots = rehash(s.slots, size, func(e uint64) int {
		if e&lvlSlot != 0 {
			return home(mix64(t.lvl.at(uint32(e)).root), size)
		}
		return home(e, size)
	})
}

// commit replaces the slot value of level entry li, key k, by that of a
// state of an earlier level with the given id. Only one goroutine runs
// it, while no worker inserts.
func (t *rootTable) commit(k uint64, li, id uint32) {
	h := mix64(k)
	s := &t.sh[h>>(64-shardBits)]
	size := len(s.slots)
	for i := home(h, size); ; {
		if s.slots[i] == lvlSlot|uint64(li) {
			s.slots[i] = t.slotOf(h, id)
			return
		}
		if i++; i == size {
			i = 0
		}
	}
}

// clear empties the table (frontier search: the level just committed is
// not kept), keeping its memory for the next level.
func (t *rootTable) clear() {
	for i := range t.sh {
		clear(t.sh[i].slots)
		t.sh[i].n = 0
	}
}

func (t *rootTable) memBytes() int64 {
	var n int64
	for i := range t.sh {
		n += int64(len(t.sh[i].slots)) * 8
	}
	return n
}
