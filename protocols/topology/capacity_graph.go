package topology

// sccsCount returns the size of each component sccs numbered.
func sccsCount(comp []int32) []int {
	var n []int
	for _, c := range comp {
		if c < 0 {
			continue
		}
		for int(c) >= len(n) {
			n = append(n, 0)
		}
		n[c]++
	}
	return n
}

// sccs numbers the strongly connected components of the subgraph of the
// vertices with keep set (Tarjan, iterative); -1 for the others.
func sccs(nv int, off, to []int32, keep []bool) []int32 {
	comp := make([]int32, nv)
	index := make([]int32, nv)
	low := make([]int32, nv)
	onStack := make([]bool, nv)
	for i := range comp {
		comp[i], index[i] = -1, -1
	}
	var stack []int32
	type frame struct{ v, e int32 }
	var call []frame
	next, ncomp := int32(0), int32(0)
	for s := 0; s < nv; s++ {
		if !keep[s] || index[s] >= 0 {
			continue
		}
		call = append(call[:0], frame{int32(s), off[s]})
		index[s], low[s] = next, next
		next++
		stack = append(stack, int32(s))
		onStack[s] = true
		for len(call) > 0 {
			fr := &call[len(call)-1]
			v := fr.v
			if fr.e < off[v+1] {
				w := to[fr.e]
				fr.e++
				if !keep[w] {
					continue
				}
				if index[w] < 0 {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{w, off[w]})
				} else if onStack[w] && index[w] < low[v] {
					low[v] = index[w]
				}
				continue
			}
			if low[v] == index[v] {
				for {
					x := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[x] = false
					comp[x] = ncomp
					if x == v {
						break
					}
				}
				ncomp++
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				if u := call[len(call)-1].v; low[v] < low[u] {
					low[u] = low[v]
				}
			}
		}
	}
	return comp
}

// bfs holds the breadth-first search state of shortestCycle, indexed by
// compact vertex.
type bfs struct {
	dist, par, seen []int32
	queue           []int32
}

func newBFS(nv int) *bfs {
	b := &bfs{dist: make([]int32, nv), par: make([]int32, nv)}
	for i := range b.dist {
		b.dist[i] = -1
	}
	return b
}

// shortestCycle returns the edges of a shortest cycle among the vertices
// ms (in reports membership): by a breadth-first search from each of them
// with all set, else from the first only (some cycle, not necessarily a
// shortest).
func (b *bfs) shortestCycle(ms []int32, off, to []int32, in func(int32) bool, all bool) []int32 {
	starts := ms
	if !all {
		starts = ms[:1]
	}
	var best []int32
	for _, s := range starts {
		for _, v := range b.seen {
			b.dist[v] = -1
		}
		b.seen = append(b.seen[:0], s)
		b.dist[s] = 0
		b.queue = append(b.queue[:0], s)
		found := false
		for head := 0; head < len(b.queue) && !found; head++ {
			v := b.queue[head]
			if best != nil && int(b.dist[v])+1 >= len(best) {
				break
			}
			for e := off[v]; e < off[v+1]; e++ {
				w := to[e]
				if !in(w) {
					continue
				}
				if w == s {
					var rev []int32
					rev = append(rev, e)
					for x := v; x != s; {
						pe := b.par[x]
						rev = append(rev, pe)
						x = edgeTail(off, pe)
					}
					if best == nil || len(rev) < len(best) {
						best = best[:0]
						for i := len(rev) - 1; i >= 0; i-- {
							best = append(best, rev[i])
						}
					}
					found = true
					break
				}
				if b.dist[w] < 0 {
					b.dist[w], b.par[w] = b.dist[v]+1, e
					b.seen = append(b.seen, w)
					b.queue = append(b.queue, w)
				}
			}
		}
	}
	return best
}
