package explore

import "errors"

// treeIDs is the visited set of the on-the-fly liveness search for models
// that split their states into segments (Segmenter): the states are kept
// as trees of shared segments, as the breadth-first search's exact store
// keeps them (treestore.go), each under a dense id with its root key, so
// that a state is read back by rebuilding it from its tree. It costs the
// root key (8 bytes) and a slot of the table from root keys to ids (about
// 5 bytes) per state, besides the shared segments and subtrees. It
// implements Store for one goroutine; Add and Has must be called while
// the model's Segments describes b (right after Initial, or in visit).
type treeIDs struct {
	sg    Segmenter
	tr    tree
	keys  []uint64 // per id: its root key
	table []uint32 // id+1 by root key, linear probing; 0 empty
	ends  []int
	ids   []uint32
	ref   treeRef // the state State read back last
	full  bool    // a table of the tree is full
}

func newTreeIDs(sg Segmenter, init []byte) (*treeIDs, error) {
	t := &treeIDs{sg: sg}
	t.ends = sg.Segments(nil)
	t.tr.k = len(t.ends)
	if t.tr.k == 0 || t.ends[len(t.ends)-1] != len(init) {
		return nil, errors.New("explore: the model's segments do not cover its initial state")
	}
	return t, nil
}

func (t *treeIDs) key(b []byte) (uint64, bool) {
	t.ends = t.sg.Segments(t.ends[:0])
	if len(t.ends) != t.tr.k || t.ends[len(t.ends)-1] != len(b) {
		return 0, false
	}
	k, ids, ok := t.tr.key(b, t.ends, t.ids, &t.ref, nil)
	t.ids = ids
	return k, ok
}

// find returns the slot of root key k: the entry there is its id+1, or 0.
func (t *treeIDs) find(k uint64) int {
	mask := uint64(len(t.table) - 1)
	for i := mix64(k) & mask; ; i = (i + 1) & mask {
		if e := t.table[i]; e == 0 || t.keys[e-1] == k {
			return int(i)
		}
	}
}

// Add implements Store (h is not used: the root key identifies the state).
func (t *treeIDs) Add(_ uint64, b []byte) (uint32, bool) {
	k, ok := t.key(b)
	if !ok {
		t.full = true
		return 0, false
	}
	if len(t.keys)*4 >= len(t.table)*3 {
		t.table = regrow(t.table, 1<<16, func(e uint32) uint64 { return mix64(t.keys[e-1]) })
	}
	i := t.find(k)
	if e := t.table[i]; e != 0 {
		return e - 1, false
	}
	t.keys = append(t.keys, k)
	t.table[i] = uint32(len(t.keys))
	return uint32(len(t.keys) - 1), true
}

// Has implements Store.
func (t *treeIDs) Has(_ uint64, b []byte) bool {
	k, ok := t.key(b)
	return ok && len(t.table) > 0 && t.table[t.find(k)] != 0
}

// State implements Store: the encoding is valid until the next call.
func (t *treeIDs) State(id int) []byte {
	t.tr.load(&t.ref, t.keys[id])
	return t.ref.enc
}

func (t *treeIDs) Release(int) {}

func (t *treeIDs) Len() int { return len(t.keys) }

func (t *treeIDs) MemBytes() int64 {
	return t.tr.memBytes() + int64(cap(t.keys))*8 + int64(len(t.table))*4
}

func (t *treeIDs) GrowBytes() uint64 {
	if len(t.keys)*4 < len(t.table)*3 {
		return 0
	}
	return uint64(max(len(t.table)*2, 1<<16)) * 4
}
