package explore

// The recorded state graph (liveness on the graph) is the largest thing a
// liveness search keeps: a few hundred million edges at tens of millions
// of states. Its arrays grow in fixed blocks, so that growing never copies
// (a slice that doubles needs the old and the new array at once), and an
// edge's action code is stored as a 16-bit index into the codes the graph
// has met (few: kinds times nodes times peers, times renamings with
// symmetry), falling back to the codes themselves if more than 65,536
// occur.

const blockBits = 16

// blocks is an array of T that grows in blocks of 1<<blockBits.
type blocks[T uint16 | uint32] struct {
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
	var x T
	size := int64(2)
	if any(x) == any(uint32(0)) {
		size = 4
	}
	var n int64
	for _, b := range a.b {
		n += int64(cap(b))
	}
	return n * size
}

// codeTab stores the action codes of the graph's edges.
type codeTab struct {
	narrow blocks[uint16]   // indices into dict, until wide
	dict   []uint32         // the distinct codes met
	pos    map[uint32]int32 // code -> index in dict
	wide   *blocks[uint32]  // the codes themselves, once dict is full
}

func (c *codeTab) add(code uint32) {
	if c.wide != nil {
		c.wide.add(code)
		return
	}
	i, ok := c.pos[code]
	if !ok {
		if len(c.dict) == 1<<16 {
			c.wide = &blocks[uint32]{}
			for e := int64(0); e < c.narrow.n; e++ {
				c.wide.add(c.dict[c.narrow.at(e)])
			}
			c.narrow = blocks[uint16]{}
			c.wide.add(code)
			return
		}
		if c.pos == nil {
			c.pos = map[uint32]int32{}
		}
		i = int32(len(c.dict))
		c.pos[code] = i
		c.dict = append(c.dict, code)
	}
	c.narrow.add(uint16(i))
}

func (c *codeTab) at(e int64) uint32 {
	if c.wide != nil {
		return c.wide.at(e)
	}
	return c.dict[c.narrow.at(e)]
}

func (c *codeTab) bytes() int64 {
	b := c.narrow.bytes() + int64(len(c.dict))*(4+16)
	if c.wide != nil {
		b += c.wide.bytes()
	}
	return b
}

// graph is the recorded state graph in compressed sparse rows: the edges
// of state v are those from off[v] to off[v+1], with targets to and
// action codes code.
type graph struct {
	off     []int64
	to      blocks[uint32]
	code    codeTab
	lab     []uint64
	labeler Labeler
}

func (g *graph) bytes() int64 {
	return int64(cap(g.off))*8 + g.to.bytes() + g.code.bytes() + int64(cap(g.lab))*8
}

func (g *graph) n() int { return len(g.off) - 1 }

// edges is the number of edges recorded.
func (g *graph) edges() int64 { return g.to.n }

// addEdge records an edge of the state being added.
func (g *graph) addEdge(to, code uint32) {
	g.to.add(to)
	g.code.add(code)
}
