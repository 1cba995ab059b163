package explore

// The recorded state graph (liveness on the graph) is the largest thing a
// liveness search keeps: a few hundred million edges at tens of millions
// of states. Its arrays grow in fixed blocks, so that growing never copies
// (a slice that doubles needs the old and the new array at once). An
// edge's action code and a state's labels take few distinct values (kinds
// times nodes times peers, times renamings with symmetry; a few bits per
// property), so each is stored as an index into the values the graph has
// met: one byte while there are at most 256, two while at most 65,536,
// the values themselves beyond.

const blockBits = 16

// blocks is an array of T that grows in blocks of 1<<blockBits.
type blocks[T uint8 | uint16 | uint32 | uint64 | int64] struct {
	b [][]T
	n int64
}

func (a *blocks[T]) add(v T) {
	if a.n&(1<<blockBits-1) == 0 && a.n>>blockBits == int64(len(a.b)) {
		// The first block grows by appending, so that a small graph
		// stays small; the others are allocated whole.
		size := 1 << blockBits
		if len(a.b) == 0 {
			size = 64
		}
		a.b = append(a.b, make([]T, 0, size))
	}
	blk := &a.b[a.n>>blockBits]
	*blk = append(*blk, v)
	a.n++
}

func (a *blocks[T]) at(i int64) T { return a.b[i>>blockBits][i&(1<<blockBits-1)] }

func (a *blocks[T]) bytes() int64 {
	var size int64
	switch any(T(0)).(type) {
	case uint8:
		size = 1
	case uint16:
		size = 2
	case uint32:
		size = 4
	default:
		size = 8
	}
	var n int64
	for _, b := range a.b {
		n += int64(cap(b))
	}
	return n * size
}

// widen returns a's values converted by f into blocks of a wider type,
// emptying a block by block, so that only one block is held twice.
func widen[S, T uint8 | uint16 | uint32 | uint64](a *blocks[S], f func(S) T) *blocks[T] {
	w := &blocks[T]{b: make([][]T, 0, len(a.b)), n: a.n}
	for i, blk := range a.b {
		nb := make([]T, len(blk), cap(blk))
		for j, v := range blk {
			nb[j] = f(v)
		}
		w.b = append(w.b, nb)
		a.b[i] = nil
	}
	*a = blocks[S]{}
	return w
}

// dictTab stores a sequence of values with few distinct ones (the edges'
// action codes, the states' labels) as indices into dict, the distinct
// values met: in small while there are at most 256 of them, in mid while
// at most 65,536, and the values themselves in wide beyond.
type dictTab[V uint32 | uint64] struct {
	small blocks[uint8]
	mid   blocks[uint16]
	dict  []V
	pos   map[V]int32 // value -> index in dict
	wide  *blocks[V]
}

func (d *dictTab[V]) add(v V) {
	if d.wide != nil {
		d.wide.add(v)
		return
	}
	i, ok := d.pos[v]
	if !ok {
		switch len(d.dict) {
		case 1 << 16:
			d.wide = widen(&d.mid, func(i uint16) V { return d.dict[i] })
			d.dict, d.pos = nil, nil
			d.wide.add(v)
			return
		case 1 << 8:
			d.mid = *widen(&d.small, func(i uint8) uint16 { return uint16(i) })
		}
		if d.pos == nil {
			d.pos = map[V]int32{}
		}
		i = int32(len(d.dict))
		d.pos[v] = i
		d.dict = append(d.dict, v)
	}
	if len(d.dict) > 1<<8 {
		d.mid.add(uint16(i))
	} else {
		d.small.add(uint8(i))
	}
}

// index returns the index into dict of value e (not once wide).
func (d *dictTab[V]) index(e int64) int {
	if len(d.dict) > 1<<8 {
		return int(d.mid.at(e))
	}
	return int(d.small.at(e))
}

func (d *dictTab[V]) at(e int64) V {
	if d.wide != nil {
		return d.wide.at(e)
	}
	return d.dict[d.index(e)]
}

func (d *dictTab[V]) bytes() int64 {
	b := d.small.bytes() + d.mid.bytes() + int64(len(d.dict))*(8+16)
	if d.wide != nil {
		b += d.wide.bytes()
	}
	return b
}

// graph is the recorded state graph in compressed sparse rows: the edges
// of state v are those from off[v] to off[v+1], with targets to and
// action codes code; lab holds the states' labels.
type graph struct {
	off     blocks[int64]
	to      blocks[uint32]
	code    dictTab[uint32]
	lab     dictTab[uint64]
	labeler Labeler
}

func (g *graph) bytes() int64 {
	return g.off.bytes() + g.to.bytes() + g.code.bytes() + g.lab.bytes()
}

func (g *graph) n() int { return int(g.off.n) - 1 }

// edges is the number of edges recorded.
func (g *graph) edges() int64 { return g.to.n }

// edgesOf returns the range of edge indices of state v.
func (g *graph) edgesOf(v uint32) (int64, int64) {
	return g.off.at(int64(v)), g.off.at(int64(v) + 1)
}

// addEdge records an edge of the state being added.
func (g *graph) addEdge(to, code uint32) {
	g.to.add(to)
	g.code.add(code)
}
