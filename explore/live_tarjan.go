package explore

// tarjan is the scratch space of an iterative Tarjan decomposition.
type tarjan struct {
	index, low []int32
	onStack    []bool
	stack      []uint32
	calls      []tframe
	counter    int32
}

type tframe struct {
	v uint32
	e int64
}

// reset prepares t for a graph of n states: every state when nodes is
// nil, else only the given ones (the only ones the next runs visit).
func (t *tarjan) reset(n int, nodes []uint32) {
	if t.index == nil {
		t.index, t.low, t.onStack = make([]int32, n), make([]int32, n), make([]bool, n)
	}
	if nodes == nil {
		for i := range t.index {
			t.index[i] = -1
		}
	}
	for _, v := range nodes {
		t.index[v] = -1
	}
	t.counter = 0
}

// run decomposes the part of the subgraph induced by in that is reachable
// from root, calling emit with each component after every component it
// reaches. emit's argument is valid only during the call.
func (t *tarjan) run(lc *liveCheck, root uint32, in func(uint32) bool, emit func([]uint32) error) error {
	visit := func(v uint32) {
		t.index[v], t.low[v] = t.counter, t.counter
		t.counter++
		t.stack = append(t.stack, v)
		t.onStack[v] = true
		lo, _ := lc.edges(v)
		t.calls = append(t.calls, tframe{v, lo})
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
			if t.index[w] < 0 {
				visit(w)
			} else if t.onStack[w] && t.index[w] < t.low[v] {
				t.low[v] = t.index[w]
			}
			continue
		}
		t.calls = t.calls[:len(t.calls)-1]
		if len(t.calls) > 0 {
			if p := t.calls[len(t.calls)-1].v; t.low[v] < t.low[p] {
				t.low[p] = t.low[v]
			}
		}
		if t.low[v] != t.index[v] {
			continue
		}
		i := len(t.stack) - 1
		for t.stack[i] != v {
			i--
		}
		c := t.stack[i:]
		for _, w := range c {
			t.onStack[w] = false
		}
		if err := emit(c); err != nil {
			return err
		}
		t.stack = t.stack[:i]
	}
	return nil
}
