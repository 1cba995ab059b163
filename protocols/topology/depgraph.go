package topology

import (
	"fmt"
	"io"

	"lfccheck/model"
)

// # The buffer dependency graph: deadlock freedom for every C and K
//
// Every NI R reserves C receive buffers for each sender S: the partition
// "S at R". A multicast packet that R received from S occupies a buffer of
// S at R until R has copied it to its host and transmitted it to every
// child of R in the packet's tree; transmitting to a child T needs a credit
// of R for T, that is a free buffer of the partition "R at T". So a full
// partition S at R can wait for the partition R at T exactly when some
// tree forwards at R a packet received from S to T. These waits are the
// edges of the buffer dependency graph, whose vertices are the partitions.
//
// Claim: if the graph is acyclic, MCAST cannot deadlock, for any C, any
// number of packets K and any mix of unicast traffic, provided that
//
//  1. hosts keep draining: a packet copied to a host is eventually
//     processed and its host buffer freed (a host that stops processing
//     stalls its senders by design), and
//  2. credits owed are eventually returned: a released buffer's credit
//     reaches its sender explicitly or piggybacked. With CREDIT_REFRESH
//     greater than C, credits owed below the threshold may never be sent,
//     a starvation that has nothing to do with trees (the built-in suite
//     shows it: the unicast refresh>C claim deadlocks); it is a separate
//     cause that this graph does not cover.
//
// Argument: in a state where no action is enabled but work remains, take an
// NI buffer that holds a packet. Its packet is not stuck on the host copy
// (1) nor on credits already released (2), so it waits to transmit to some
// child T for which R has no credit: the partition R at T is full, and so
// every buffer of it holds a packet that is itself waiting, for the same
// reasons, on a partition one edge further. Following these waits through
// a finite graph must revisit a partition: a cycle. Unicast packets and
// packets at their last hop never wait on another partition (they are
// released after the host copy), and roots send from the send pool, not
// from a receive buffer, so they add no edges. Hence an acyclic graph
// admits no deadlock.
//
// The converse does not hold: a cycle is necessary, not sufficient. A chain
// with C=2 and K=1 has a cyclic graph but never fills its partitions. App.
// A.1's distance condition is one way to make the graph acyclic (the ring
// distance of a partition grows along every edge); the graph also covers
// overlapping groups and arbitrary trees.

// Partition is a receive pool partition: the buffers NI At reserves for
// sender From.
type Partition struct {
	From int `json:"from"`
	At   int `json:"at"`
}

func (p Partition) String() string { return fmt.Sprintf("%d at %d", p.From, p.At) }

// CycleStep is one edge of a cycle of the dependency graph: NI At, whose
// partition for From is full, forwards on Tree to To.
type CycleStep struct {
	From int    `json:"from"`
	At   int    `json:"at"`
	To   int    `json:"to"`
	Tree string `json:"tree"`
}

func (s CycleStep) String() string {
	return fmt.Sprintf("ni %d holds a packet from %d and forwards it to %d (tree %s)", s.At, s.From, s.To, s.Tree)
}

// DepGraph is the buffer dependency graph's verdict.
type DepGraph struct {
	Partitions int  `json:"partitions"` // partitions some edge touches
	Edges      int  `json:"edges"`      // distinct edges
	Acyclic    bool `json:"acyclic"`
	// Cycle is a shortest cycle when the graph has one (or, when its
	// cyclic part is too large to search exhaustively, some cycle, and
	// Shortest is false).
	Cycle    []CycleStep `json:"cycle,omitempty"`
	Shortest bool        `json:"shortest,omitempty"`
}

// maxCycleWork bounds the breadth-first searches for a shortest cycle
// (vertices times edges of the cyclic part).
const maxCycleWork = 200_000_000

// TreeEdges is one tree as its parent->child edges, for analyses that
// need no Topology (which bounds node ids by model.MaxNodes).
type TreeEdges struct {
	Name  string // e.g. "of 3 in all"
	Edges [][2]int
}

// Dependencies builds the buffer dependency graph of t over p nodes and
// decides whether it is acyclic, with a shortest cycle when it is not.
func Dependencies(t *Topology, p int) DepGraph {
	return DependenciesOf(p, topologyTrees(t))
}

// topologyTrees lists the edges of t's trees, each named "of ROOT in
// GROUP", in depth-first order from its root.
func topologyTrees(t *Topology) []TreeEdges {
	trees := make([]TreeEdges, len(t.Trees))
	for ti := range t.Trees {
		tr := &t.Trees[ti]
		trees[ti].Name = fmt.Sprintf("of %d in %s", tr.Root, t.Groups[tr.Group].Name)
		var walk func(x model.NodeID)
		walk = func(x model.NodeID) {
			for _, c := range tr.Children[x] {
				trees[ti].Edges = append(trees[ti].Edges, [2]int{int(x), int(c)})
				walk(c)
			}
		}
		walk(tr.Root)
	}
	return trees
}

// FamilyTrees returns the trees of family fam, one rooted at each of p
// nodes, for any p.
func FamilyTrees(fam string, p int) ([]TreeEdges, error) {
	fn, err := family(fam)
	if err != nil {
		return nil, err
	}
	all := make([]int, p)
	for i := range all {
		all[i] = i
	}
	trees := make([]TreeEdges, p)
	for r := 0; r < p; r++ {
		trees[r] = TreeEdges{Name: fmt.Sprintf("of %d in all", r), Edges: familyEdges(fn, all, r)}
	}
	return trees, nil
}

// DependenciesOf is Dependencies for trees given by their edges over p
// nodes.
func DependenciesOf(p int, trees []TreeEdges) DepGraph {
	n := p * p // vertex From*p + At
	// adjacency in compressed rows, with the tree of each edge
	type edge struct {
		from, to int32
		tree     int32
	}
	// Edges, each labelled with a tree that forwards on it; duplicates are
	// dropped below, row by row.
	total := 0
	for ti := range trees {
		total += len(trees[ti].Edges)
	}
	edges := make([]edge, 0, total)
	parent := make([]int, p)
	for ti := range trees {
		for i := range parent {
			parent[i] = -1
		}
		for _, e := range trees[ti].Edges {
			parent[e[1]] = e[0]
		}
		for _, e := range trees[ti].Edges {
			if b, c := e[0], e[1]; parent[b] >= 0 {
				edges = append(edges, edge{int32(parent[b]*p + b), int32(b*p + c), int32(ti)})
			}
		}
	}
	off := make([]int32, n+1)
	for _, e := range edges {
		off[e.from+1]++
	}
	for v := 0; v < n; v++ {
		off[v+1] += off[v]
	}
	to := make([]int32, len(edges))
	via := make([]int32, len(edges))
	fill := append([]int32(nil), off[:n]...)
	for _, e := range edges {
		to[fill[e.from]], via[fill[e.from]] = e.to, e.tree
		fill[e.from]++
	}
	to, via = dedupEdges(n, off, to, via)
	g := DepGraph{Edges: len(to)}
	touched := make([]bool, n)
	for v := 0; v < n; v++ {
		for e := off[v]; e < off[v+1]; e++ {
			touched[v], touched[to[e]] = true, true
		}
	}
	for _, b := range touched {
		if b {
			g.Partitions++
		}
	}
	// Kahn: remove vertices without incoming edges; what remains lies on
	// or between cycles.
	in := make([]int32, n)
	for _, w := range to {
		in[w]++
	}
	var free []int32
	for v := 0; v < n; v++ {
		if in[v] == 0 {
			free = append(free, int32(v))
		}
	}
	removed := make([]bool, n)
	for len(free) > 0 {
		v := free[len(free)-1]
		free = free[:len(free)-1]
		removed[v] = true
		for e := off[v]; e < off[v+1]; e++ {
			if in[to[e]]--; in[to[e]] == 0 {
				free = append(free, to[e])
			}
		}
	}
	var core []int32
	coreEdges := 0
	for v := 0; v < n; v++ {
		if !removed[v] {
			core = append(core, int32(v))
			coreEdges += int(off[v+1] - off[v])
		}
	}
	if len(core) == 0 {
		g.Acyclic = true
		return g
	}
	g.Shortest = true
	functional := true
	for _, v := range core {
		functional = functional && off[v+1]-off[v] == 1
	}
	if functional {
		// Every core vertex has one edge out, so (its edges ending in
		// the core, and each with one at least coming in) one edge in:
		// the core is disjoint cycles (chains' graphs). Walk each.
		var best []int32
		seen := make([]bool, n)
		for _, s := range core {
			if seen[s] {
				continue
			}
			var cyc []int32
			for v := s; !seen[v]; v = to[off[v]] {
				seen[v] = true
				cyc = append(cyc, off[v])
			}
			if best == nil || len(cyc) < len(best) {
				best = cyc
			}
		}
		g.Cycle = cycleSteps(best, off, to, via, p, trees)
		return g
	}
	// A shortest cycle: breadth-first from every core vertex back to
	// itself, within the core; or, if that is too much work, the first
	// cycle found from one core vertex.
	starts := core
	if len(core)*coreEdges > maxCycleWork {
		starts, g.Shortest = core[:1], false
	}
	dist := make([]int32, n)
	par := make([]int32, n) // edge index into to/via that reached the vertex
	for i := range dist {
		dist[i] = -1
	}
	var best []int32 // edge indices of the best cycle
	var touchedV, queue []int32
	for _, s := range starts {
		for _, v := range touchedV {
			dist[v] = -1
		}
		touchedV = append(touchedV[:0], s)
		dist[s] = 0
		queue = append(queue[:0], s)
		found := int32(-1)
		for head := 0; head < len(queue) && found < 0; head++ {
			v := queue[head]
			if best != nil && int(dist[v])+1 >= len(best) {
				break // cannot beat the best cycle
			}
			for e := off[v]; e < off[v+1]; e++ {
				w := to[e]
				if removed[w] {
					continue
				}
				if w == s {
					found = e
					break
				}
				if dist[w] < 0 {
					dist[w], par[w] = dist[v]+1, e
					touchedV = append(touchedV, w)
					queue = append(queue, w)
				}
			}
			if found >= 0 {
				// the edge into s closes the cycle; walk back from its tail
				var rev []int32
				rev = append(rev, found)
				for x := v; x != s; {
					e := par[x]
					rev = append(rev, e)
					x = edgeTail(off, e)
				}
				if best == nil || len(rev) < len(best) {
					best = best[:0]
					for i := len(rev) - 1; i >= 0; i-- {
						best = append(best, rev[i])
					}
				}
			}
		}
	}
	g.Cycle = cycleSteps(best, off, to, via, p, trees)
	return g
}

// cycleSteps names the edges of a cycle of the graph in rows off, to, via
// over vertices From*p+At.
func cycleSteps(edges []int32, off, to, via []int32, p int, trees []TreeEdges) []CycleStep {
	var out []CycleStep
	for _, e := range edges {
		from := edgeTail(off, e)
		a, b := int(from)/p, int(from)%p
		c := int(to[e]) % p
		out = append(out, CycleStep{From: a, At: b, To: c, Tree: trees[via[e]].Name})
	}
	return out
}

// edgeTail finds the vertex whose rows hold edge e (binary search on off).
func edgeTail(off []int32, e int32) int32 {
	lo, hi := 0, len(off)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if off[mid] <= e {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	// off[lo] <= e < off[lo+1]; skip empty rows with the same offset
	for lo+1 < len(off) && off[lo+1] <= e {
		lo++
	}
	return int32(lo)
}

// MaxStaticNodes bounds P for the static analysis of tree families, which
// needs no explicit state (the explorer's bound is model.MaxNodes).
const MaxStaticNodes = 2048

// FamilyReport is the static analysis of one tree family over any number
// of nodes: the buffer dependency graph and what it proves.
type FamilyReport struct {
	Nodes        int      `json:"nodes"`
	Family       string   `json:"family"`
	Dependencies DepGraph `json:"dependency_graph"`
	DeadlockFree bool     `json:"deadlock_free_by_condition"`
	Conclusion   string   `json:"conclusion"`
}

// AnalyzeFamily analyzes the broadcast group of p nodes with one tree of
// family fam per node.
func AnalyzeFamily(fam string, p int) (FamilyReport, error) {
	if p < 2 || p > MaxStaticNodes {
		return FamilyReport{}, fmt.Errorf("nodes must be in 2..%d, got %d", MaxStaticNodes, p)
	}
	trees, err := FamilyTrees(fam, p)
	if err != nil {
		return FamilyReport{}, err
	}
	return AnalyzeFamilyTrees(fam, p, trees), nil
}

// AnalyzeFamilyTrees is AnalyzeFamily for the trees FamilyTrees returned.
func AnalyzeFamilyTrees(fam string, p int, trees []TreeEdges) FamilyReport {
	r := FamilyReport{Nodes: p, Family: fam, Dependencies: DependenciesOf(p, trees)}
	r.DeadlockFree, r.Conclusion = conclude(r.Dependencies, "")
	return r
}

// WriteFamilyText prints a family report.
func WriteFamilyText(w io.Writer, r FamilyReport) {
	fmt.Fprintf(w, "topology: %d nodes, the broadcast group with one %s tree per node\n", r.Nodes, r.Family)
	writeDeps(w, r.Dependencies)
	fmt.Fprintf(w, "conclusion: %s\n", r.Conclusion)
}

// writeDeps prints the dependency graph's verdict and cycle.
func writeDeps(w io.Writer, d DepGraph) {
	fmt.Fprintf(w, "buffer dependency graph: %d partitions, %d edges, ", d.Partitions, d.Edges)
	switch {
	case d.Acyclic:
		fmt.Fprintf(w, "acyclic\n")
	case d.Shortest:
		fmt.Fprintf(w, "shortest cycle (%d partitions):\n", len(d.Cycle))
	default:
		fmt.Fprintf(w, "a cycle (%d partitions; too large to search for a shortest one):\n", len(d.Cycle))
	}
	for _, st := range d.Cycle {
		fmt.Fprintf(w, "  %s\n", st)
	}
}

// conclude states what the dependency graph proves.
func conclude(d DepGraph, overlap string) (bool, string) {
	if d.Acyclic {
		return true, "deadlock-free for every C and K: the buffer dependency graph is acyclic (assuming hosts keep draining and owed credits are returned, i.e. CREDIT_REFRESH <= C)"
	}
	c := fmt.Sprintf("no guarantee: the buffer dependency graph has a cycle of %d partitions that could fill and wait on each other; a cycle is necessary but not sufficient for a deadlock (chains with C=2 and K=1 pass although their graph has one): check with 'lfccheck check'",
		len(d.Cycle))
	if overlap != "" {
		c += "; groups overlap (" + overlap + "), as in App. A.2"
	}
	return false, c
}

// DependencyEdges lists the edges of t's buffer dependency graph over p
// nodes as (A, B, C) triples: a packet from A held at B waits for B's
// credit to C. It maps each to a tree that forwards on it.
func DependencyEdges(t *Topology, p int) map[[3]int]string {
	out := map[[3]int]string{}
	for ti := range t.Trees {
		tr := &t.Trees[ti]
		for b, par := range tr.Parent {
			if par < 0 {
				continue
			}
			for _, c := range tr.Children[b] {
				k := [3]int{par, b, int(c)}
				if _, ok := out[k]; !ok {
					out[k] = fmt.Sprintf("of %d in %s", tr.Root, t.Groups[tr.Group].Name)
				}
			}
		}
	}
	return out
}

// dedupEdges drops duplicate edges of the rows (off, to, via) of an
// n-vertex graph in place, a stamp per target, keeping the first tree of
// each; off is updated.
func dedupEdges(n int, off, to, via []int32) ([]int32, []int32) {
	stamp := make([]int32, n)
	for i := range stamp {
		stamp[i] = -1
	}
	k := int32(0)
	for v := 0; v < n; v++ {
		start := k
		for e := off[v]; e < off[v+1]; e++ {
			if w := to[e]; stamp[w] != int32(v) {
				stamp[w] = int32(v)
				to[k], via[k] = w, via[e]
				k++
			}
		}
		off[v] = start
	}
	off[n] = k
	return to[:k], via[:k]
}
