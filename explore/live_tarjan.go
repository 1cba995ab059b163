package explore

// tarjan is the scratch space of an iterative decomposition into strongly
// connected components, in Pearce's space-efficient form of Tarjan's
// algorithm: one number per state (rindex) instead of an index, a lowlink,
// an on-stack flag and a component. rindex is 0 for a state not visited;
// while a state is open it holds the lowest index it reaches (indices
// count the open states from 1); once its component is complete it holds
// the component's number, counted down from n, which is larger than every
// open index, so a complete state never lowers another's.
type tarjan struct {
	rindex []int32
	stack  []uint32 // open states whose component is not complete
	calls  []tframe
	index  int32 // the next index
	c      int32 // the next component's number
	n      int32 // the first component's number
}

type tframe struct {
	v    uint32
	e    int64
	root bool
}

// reset prepares t for a graph of n states: every state when nodes is
// nil, else only the given ones (the only ones the next runs visit).
func (t *tarjan) reset(n int, nodes []uint32) {
	if len(t.rindex) != n {
		t.rindex = make([]int32, n)
	} else if nodes == nil {
		clear(t.rindex)
	}
	for _, v := range nodes {
		t.rindex[v] = 0
	}
	t.index, t.c, t.n = 1, int32(n), int32(n)
}

// visited reports whether v has been visited since the last reset.
func (t *tarjan) visited(v uint32) bool { return t.rindex[v] != 0 }

// comp returns the number of v's component in the order components were
// emitted (0 first), or -1 while v is not in a complete component.
func (t *tarjan) comp(v uint32) int32 {
	if r := t.rindex[v]; r != 0 && r >= t.c {
		return t.n - r
	}
	return -1
}

// run decomposes the part of the subgraph induced by in that is reachable
// from root, calling emit with each component after every component it
// reaches; during the call the component's states have their number
// (comp). emit's argument is valid only during the call.
func (t *tarjan) run(lc *liveCheck, root uint32, in func(uint32) bool, emit func([]uint32) error) error {
	visit := func(v uint32) {
		t.rindex[v] = t.index
		t.index++
		lo, _ := lc.edges(v)
		t.calls = append(t.calls, tframe{v, lo, true})
	}
	visit(root)
	for len(t.calls) > 0 {
		if err := lc.tick(); err != nil {
			return err
		}
		f := &t.calls[len(t.calls)-1]
		v := f.v
		if _, hi := lc.edges(v); f.e < hi {
			w := lc.to(v, f.e)
			f.e++
			if !in(w) {
				continue
			}
			if t.rindex[w] == 0 {
				visit(w)
			} else if t.rindex[w] < t.rindex[v] {
				t.rindex[v], f.root = t.rindex[w], false
			}
			continue
		}
		root := f.root
		t.calls = t.calls[:len(t.calls)-1]
		if len(t.calls) > 0 {
			if p := &t.calls[len(t.calls)-1]; t.rindex[v] < t.rindex[p.v] {
				t.rindex[p.v], p.root = t.rindex[v], false
			}
		}
		if !root {
			t.stack = append(t.stack, v)
			continue
		}
		t.index--
		i := len(t.stack)
		for i > 0 && t.rindex[v] <= t.rindex[t.stack[i-1]] {
			i--
			t.index--
		}
		t.stack = append(t.stack, v)
		c := t.stack[i:]
		for _, w := range c {
			t.rindex[w] = t.c
		}
		if err := emit(c); err != nil {
			return err
		}
		t.c--
		t.stack = t.stack[:i]
	}
	return nil
}
