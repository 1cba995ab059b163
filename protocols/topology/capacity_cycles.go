package topology

import (
	"fmt"
	"sort"
	"strings"
)

// Step 3 of the proof: cycle by cycle, part by part.
//
// Step 2 counts the packets a whole component can hold against the length
// of a cycle; but a deadlock's cycle Z needs N blocked packets in every one
// of its partitions, and some partitions can hold packets of few trees
// only. For any set S of partitions of Z, the packets held in S at once
// number at most the sum over trees t of K_t * g_t(S), where g_t(S) is the
// most partitions of S one packet of t occupies at once (the pass of step
// 2, over S), and a deadlock needs N * |S| of them. So Z cannot fill if
// some S falls short. For each set T of trees, the tightest S with only
// trees of T able to block in it is S_T, the partitions of Z that only
// trees of T feed; Prove tries every T (among the trees that feed Z: all
// their sets when they are few, else the trees of each partition, of each
// pair of partitions, and all of them). With chains (g_t = 1) that is
// Hall's condition for giving every partition its N packets, exact.
//
// A packet blocked in a deadlock also waits on a partition of F (its
// forward to a child U has no credit: "B at U" is in F), and every member
// of F waits on another: F lies within R, the partitions where N packets
// can block from which such waiting can go on for ever (the greatest set
// of them each with a successor in the set). So a tree feeds a partition
// "A at B" of Z (can block there) only if A is B's parent in it and B
// forwards to some child U with "B at U" in R; and one of its packets is
// held at an NI for g_t only if so.
//
// When step 2 cannot refute a component, Prove enumerates its simple
// cycles (a deadlock's cycle is one: every partition with a blocked send
// waits on another, so they contain a simple cycle, every partition of
// which holds N) and refutes each this way, up to maxCycles cycles and
// maxSimpleCycleWork steps; past those bounds the component may fill, as before.
// A cycle that no part refutes is shown instead of the shortest one: it is
// the one a deadlock search should aim at.

// Bounds of the cycle-by-cycle step.
const (
	maxCycles          = 20_000
	maxSimpleCycleWork = 20_000_000
	// maxAllSets: with at most this many trees feeding a cycle, every set
	// of them is tried.
	maxAllSets = 10
)

// Shortfall is a part of a cycle that too few packets can fill: only the
// trees Trees can block in its Partitions, at most Blocked packets at
// once, and a deadlock needs Needed.
type Shortfall struct {
	Partitions []Partition `json:"partitions"`
	Trees      []string    `json:"trees"`
	Blocked    int         `json:"blocked_max"`
	Needed     int         `json:"needed"`
}

func (s *Shortfall) String() string {
	var ps []string
	for _, p := range s.Partitions {
		ps = append(ps, p.String())
	}
	who := "the tree " + s.Trees[0]
	if len(s.Trees) > 1 {
		who = "the trees " + strings.Join(s.Trees, ", ")
	}
	return fmt.Sprintf("only packets of %s can block in %s: at most %d at once, and a deadlock needs %d there",
		who, strings.Join(ps, ", "), s.Blocked, s.Needed)
}

// treeShape is a used tree's parent, children and breadth-first order.
type treeShape struct {
	parent   []int32 // -1: root or not in the tree
	children [][]int32
	order    []int32
}

// heldAtOnce is the pass of steps 2 and 3 over a tree: the most partitions
// "parent(x) at x" with in(x) one packet of the tree occupies at once. A
// node that holds the packet has a child it has not sent it to, and
// nothing below that child holds it; f is scratch, one entry per node.
func heldAtOnce(order []int32, children [][]int32, f []int, in func(x int32) bool) int {
	for i := len(order) - 1; i >= 0; i-- {
		x := order[i]
		cs := children[x]
		if len(cs) == 0 {
			f[x] = 0
			continue
		}
		sum, low := 0, -1
		for _, ch := range cs {
			sum += f[ch]
			if low < 0 || f[ch] < low {
				low = f[ch]
			}
		}
		wgt := 0
		if in(x) {
			wgt = 1
		}
		f[x] = sum + max(0, wgt-low)
	}
	return f[order[0]]
}

// endless returns R (see above) over the compact vertices: the vertices
// with keep set, less those that have no successor left, repeatedly.
func endless(nv int, off, to []int32, keep []bool) []bool {
	r := append([]bool(nil), keep...)
	succ := make([]int32, nv) // successors in r
	rev := make([][]int32, nv)
	var queue []int32
	for v := 0; v < nv; v++ {
		if !r[v] {
			continue
		}
		for e := off[v]; e < off[v+1]; e++ {
			if w := to[e]; r[w] {
				succ[v]++
				rev[w] = append(rev[w], int32(v))
			}
		}
		if succ[v] == 0 {
			queue = append(queue, int32(v))
		}
	}
	for len(queue) > 0 {
		v := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		r[v] = false
		for _, u := range rev[v] {
			if succ[u]--; succ[u] == 0 && r[u] {
				queue = append(queue, u)
			}
		}
	}
	return r
}

// cycleCheck refutes cycles part by part (step 3).
type cycleCheck struct {
	p      int
	need   int
	trees  []TreeEdges
	counts []int
	vid    []int32 // compact vertex -> From*p+At
	live   []bool  // per From*p+At: in R
	shapes []*treeShape
	f      []int
	inS    []bool // per From*p+At: in the set being counted
	work   int
}

func newCycleCheck(p, need int, trees []TreeEdges, counts []int, vid []int32, r []bool) *cycleCheck {
	c := &cycleCheck{p: p, need: need, trees: trees, counts: counts, vid: vid, live: make([]bool, p*p),
		shapes: make([]*treeShape, len(trees)), f: make([]int, p), inS: make([]bool, p*p)}
	for v, in := range r {
		c.live[vid[v]] = in
	}
	for ti, tr := range trees {
		if counts[ti] <= 0 || len(tr.Edges) == 0 {
			continue
		}
		s := &treeShape{parent: make([]int32, p), children: make([][]int32, p)}
		for i := range s.parent {
			s.parent[i] = -1
		}
		for _, e := range tr.Edges {
			s.parent[e[1]] = int32(e[0])
			s.children[e[0]] = append(s.children[e[0]], int32(e[1]))
		}
		root := int32(tr.Edges[0][0])
		for steps := 0; s.parent[root] >= 0 && steps <= p; steps++ {
			root = s.parent[root]
		}
		s.order = append(s.order, root)
		for h := 0; h < len(s.order) && len(s.order) <= p; h++ {
			s.order = append(s.order, s.children[s.order[h]]...)
		}
		c.shapes[ti] = s
	}
	return c
}

// waits reports whether a packet of the tree s held at b can wait there
// for ever: b forwards it to a child U with "b at U" in R.
func (c *cycleCheck) waits(s *treeShape, b int32) bool {
	for _, u := range s.children[b] {
		if c.live[int(b)*c.p+int(u)] {
			return true
		}
	}
	return false
}

// feeders lists the used trees that can block in the partition x
// (From*p+At) in a deadlock: From is At's parent there and At forwards to
// a child through a partition of R.
func (c *cycleCheck) feeders(x int32) []int {
	a, b := int32(int(x)/c.p), int32(int(x)%c.p)
	var ts []int
	for ti, s := range c.shapes {
		if s != nil && s.parent[b] == a && c.waits(s, b) {
			ts = append(ts, ti)
		}
	}
	return ts
}

// held is the sum over the trees ts of K_t * g_t(S), S marked in inS.
func (c *cycleCheck) held(ts []int) int {
	n := 0
	for _, ti := range ts {
		s := c.shapes[ti]
		c.work += len(s.order)
		n += c.counts[ti] * heldAtOnce(s.order, s.children, c.f, func(x int32) bool {
			return s.parent[x] >= 0 && c.inS[int(s.parent[x])*c.p+int(x)] && c.waits(s, x)
		})
	}
	return n
}

// refute returns a part of the cycle z (compact vertices) that too few
// packets can fill, or nil. Its Blocked and Needed are for the whole
// cycle when nothing refutes it.
func (c *cycleCheck) refute(z []int32) (*Shortfall, int) {
	feed := make([]uint64, len(z)) // per partition of z: its trees, as bits of idx
	var idx []int                  // the trees that feed z
	pos := map[int]int{}
	for i, v := range z {
		for _, ti := range c.feeders(c.vid[v]) {
			k, ok := pos[ti]
			if !ok {
				k = len(idx)
				pos[ti] = k
				idx = append(idx, ti)
			}
			if k < 63 {
				feed[i] |= 1 << k
			}
		}
	}
	if len(idx) == 0 || len(idx) > 63 {
		return nil, 0 // (not counted part by part)
	}
	all := uint64(1)<<len(idx) - 1
	var sets []uint64
	if len(idx) <= maxAllSets {
		for t := uint64(1); t <= all; t++ {
			sets = append(sets, t)
		}
	} else {
		seen := map[uint64]bool{}
		for i := range z {
			for j := i; j < len(z); j++ {
				if t := feed[i] | feed[j]; !seen[t] {
					seen[t] = true
					sets = append(sets, t)
				}
			}
		}
		if !seen[all] {
			sets = append(sets, all)
		}
	}
	whole := 0
	for _, t := range sets {
		var ts []int
		for k, ti := range idx {
			if t&(1<<k) != 0 {
				ts = append(ts, ti)
			}
		}
		size := 0
		for i, v := range z {
			if feed[i]&^t == 0 {
				c.inS[c.vid[v]] = true
				size++
			}
		}
		if size == 0 {
			continue
		}
		held := c.held(ts)
		for _, v := range z {
			c.inS[c.vid[v]] = false
		}
		if t == all {
			whole = held
		}
		if held < c.need*size {
			sf := &Shortfall{Blocked: held, Needed: c.need * size}
			for i, v := range z {
				if feed[i]&^t == 0 {
					x := int(c.vid[v])
					sf.Partitions = append(sf.Partitions, Partition{From: x / c.p, At: x % c.p})
				}
			}
			for _, ti := range ts {
				sf.Trees = append(sf.Trees, c.trees[ti].Name)
			}
			return sf, 0
		}
	}
	return nil, whole
}

// cycleVerdict is step 3's outcome for one component.
type cycleVerdict struct {
	done     bool    // every simple cycle was checked, or one survived
	checked  int     // cycles checked
	survivor []int32 // the edges of a cycle nothing refutes, if any
	blocked  int     // its count (sum of K_t * g_t over it)
}

// cycles enumerates the simple cycles of the component ms (membership in)
// and refutes each part by part, stopping at the first it cannot refute
// or at the bounds.
func (c *cycleCheck) cycles(ms []int32, off, to []int32, in func(int32) bool) cycleVerdict {
	var v cycleVerdict
	rank := map[int32]int{}
	sorted := append([]int32(nil), ms...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	for i, x := range sorted {
		rank[x] = i
	}
	onPath := map[int32]bool{}
	var path, edges []int32
	type frame struct{ v, e int32 }
	for si, s := range sorted {
		// Cycles whose least vertex is s: paths from s through greater
		// vertices back to s.
		stack := []frame{{s, off[s]}}
		path, edges = append(path[:0], s), edges[:0]
		onPath[s] = true
		for len(stack) > 0 {
			if c.work++; c.work > maxSimpleCycleWork || v.checked >= maxCycles {
				clear(onPath)
				return v
			}
			fr := &stack[len(stack)-1]
			if fr.e >= off[fr.v+1] {
				onPath[fr.v] = false
				stack = stack[:len(stack)-1]
				path = path[:len(path)-1]
				if len(edges) > 0 {
					edges = edges[:len(edges)-1]
				}
				continue
			}
			e := fr.e
			fr.e++
			w := to[e]
			if !in(w) || rank[w] < si {
				continue
			}
			if w == s {
				v.checked++
				if sf, held := c.refute(path); sf == nil {
					v.done, v.blocked = true, held
					v.survivor = append(append([]int32(nil), edges...), e)
					clear(onPath)
					return v
				}
				continue
			}
			if onPath[w] {
				continue
			}
			onPath[w] = true
			path, edges = append(path, w), append(edges, e)
			stack = append(stack, frame{w, off[w]})
		}
	}
	v.done = true
	return v
}
