package explore

import (
	"errors"
	"slices"
)

// SegmentStore is an exact visited set over tree compression (see
// treestore.go) for a search that keeps its states in a store of its own
// (the distributed workers): each distinct segment is stored once in the
// leaf table, each distinct pair of ids once in the pair table, and a
// state is the 64-bit key at its tree's root, exact (equal keys, equal
// encodings), kept per state id; the set maps keys to ids. A state costs
// its key and a slot of the set, plus the segments and pairs it does not
// share, instead of its whole encoding. The encoding of a state is
// rebuilt from its key (State), together with the ids of its segments,
// which a LeafUser model takes as they are (Leaves). One goroutine at a
// time may use it.
type SegmentStore struct {
	t     tree
	c     treeCache
	set   fpSet       // mix64 of the root key (a bijection: exact) -> state id
	low   [2]int64    // the ids of the states whose mixed key is 0 or 1 (fpSet keeps 0 as 1), -1 if none
	keys  big[uint64] // by state id
	ids   []uint32    // scratch
	ref   treeRef     // the state State rebuilt last
	sc    *succCache  // the states stored or met lately (from succCacheFrom states on): a hit needs neither the tree nor the set
	owner uint64
	lref  treeRef // the state LeafIDs was given last (enc, ends, ids)
}

// ErrStoreFull is returned when a table of the tree store has no room for
// another entry.
var ErrStoreFull = errors.New("a table of the tree store is full (2^26 distinct segments or pairs in one of its 64 shards)")

// NewSegmentStore returns an empty store for states of k segments, with a
// number of its own among the searches and stores of the process (the
// owner a LeafUser is given with the ids).
func NewSegmentStore(k int) *SegmentStore {
	s := &SegmentStore{owner: storeSerial.Add(1), low: [2]int64{-1, -1}}
	s.t.k = max(k, 1)
	s.set.withIDs = true
	return s
}

// Add stores state b, whose hash is h and whose segments end at ends (one end per segment,
// ascending, the last len(b)), unless it was stored before; it returns the
// state's id and whether it is new. The state rebuilt last by State is
// used to find the ids of the segments and subtrees it shares with b
// without looking them up. An error says that ends do not split b into
// the store's number of segments, or that the store is full.
func (s *SegmentStore) Add(h uint64, b []byte, ends []int) (uint32, bool, error) {
	if s.sc == nil && s.keys.n >= succCacheFrom {
		s.sc = newSuccCache(succCacheBits, succCacheRing)
	}
	if s.sc != nil {
		if e := s.sc.find(h, b); e != nil {
			return e.li, false, nil // (compared in full: exact)
		}
	}
	k, err := s.intern(b, ends)
	if err != nil {
		return 0, false, err
	}
	id := uint32(s.keys.n)
	f := mix64(k)
	if f <= 1 {
		if old := s.low[f]; old >= 0 {
			s.cache(h, b, uint32(old))
			return uint32(old), false, nil
		}
		s.low[f] = int64(id)
	} else if old, fresh := s.set.insert(f, id); !fresh {
		s.cache(h, b, old)
		return old, false, nil
	}
	s.cache(h, b, id)
	s.keys.add(k)
	return id, true, nil
}

// cache notes that state b (hash h) has id.
func (s *SegmentStore) cache(h uint64, b []byte, id uint32) {
	if s.sc != nil {
		s.sc.add(h, b, id, 0)
	}
}

// State returns the encoding of state id, valid until the next call of
// State.
func (s *SegmentStore) State(id int) []byte {
	s.t.load(&s.ref, s.keys.at(id))
	return s.ref.enc
}

// intern interns the segments and subtrees of state b (segments ending at
// ends, as for Add) without storing the state, and returns its root key.
// An error as for Add.
func (s *SegmentStore) intern(b []byte, ends []int) (uint64, error) {
	if err := splits(b, ends, s.t.k); err != nil {
		return 0, err
	}
	k, ids, ok := s.t.key(b, ends, s.ids, &s.ref, &s.c)
	s.ids = ids
	if !ok {
		return 0, ErrStoreFull
	}
	return k, nil
}

// splits checks that ends split b into k segments.
func splits(b []byte, ends []int, k int) error {
	if len(ends) != k || ends[len(ends)-1] != len(b) || !slices.IsSorted(ends) || ends[0] < 0 {
		return errors.New("the segments given do not split the state into the store's segments")
	}
	return nil
}

// LeafIDs interns the segments of state b (ending at ends, as for Add) in
// the leaf table alone, neither the state nor its subtrees, and returns
// their ids, valid until the next call: a state kept outside the store (a
// distributed worker's states that another owns) is given to a LeafUser
// with the ids of this store (and Owner). The segments b shares with the
// state given last are not looked up again. An error as for Add.
func (s *SegmentStore) LeafIDs(b []byte, ends []int) ([]uint32, error) {
	if err := splits(b, ends, s.t.k); err != nil {
		return nil, err
	}
	r := &s.lref
	ids, ok := s.t.leafIDs(b, ends, s.ids, r, &s.c)
	if !ok {
		s.ids, r.valid = ids, false
		return nil, ErrStoreFull
	}
	s.ids = ids
	r.enc, r.ends, r.ids = append(r.enc[:0], b...), append(r.ends[:0], ends...), append(r.ids[:0], ids...)
	r.valid = true
	return r.ids, nil
}

// Owner is the store's number among the searches and stores of the
// process (as Leaves gives it).
func (s *SegmentStore) Owner() uint64 { return s.owner }

// Leaves returns the store's owner number and the leaf ids and segment
// ends of the state State rebuilt last (for LeafUser.UseLeaves), valid
// until the next call of State.
func (s *SegmentStore) Leaves() (owner uint64, ids []uint32, ends []int) {
	return s.owner, s.ref.ids, s.ref.ends
}

// Len is the number of states stored.
func (s *SegmentStore) Len() int { return s.keys.n }

// MemBytes estimates the memory the store holds.
func (s *SegmentStore) MemBytes() int64 {
	return s.t.memBytes() + s.set.memBytes() + s.keys.memBytes(8) + int64(cap(s.c.lbytes)) + s.sc.memBytes()
}
