package explore

// LeafInterner gives byte strings (a state's segments) 32-bit ids, equal
// ids for equal bytes, for a search that does not keep its states in the
// tree store (the distributed workers) but expands them with a LeafUser:
// it is the tree store's table of leaves with a direct-mapped cache in
// front. Owner is its number among all searches of the process (the owner
// passed to UseLeaves). One goroutine at a time may call Intern.
type LeafInterner struct {
	t     tree
	c     treeCache
	owner uint64
}

// NewLeafInterner returns an empty interner with a number of its own.
func NewLeafInterner() *LeafInterner {
	return &LeafInterner{owner: storeSerial.Add(1)}
}

// Owner is the interner's number, unique among the searches and
// interners of the process.
func (l *LeafInterner) Owner() uint64 { return l.owner }

// Intern returns the id of seg; ok is false when the table is full.
func (l *LeafInterner) Intern(seg []byte) (id uint32, ok bool) { return l.c.leaf(&l.t, seg) }

// MemBytes estimates the memory the interner holds.
func (l *LeafInterner) MemBytes() int64 { return l.t.leaves.memBytes() + int64(cap(l.c.lbytes)) }
