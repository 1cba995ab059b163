package topology

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// # Deadlock freedom for one workload: how many packets can block where
//
// The buffer dependency graph (depgraph.go) proves deadlock freedom for
// every C and K when it is acyclic. When it has a cycle, a deadlock still
// needs the cycle's partitions to be full of packets that wait, and a
// workload may not have enough packets for that. Prove decides, for given
// credits C, CREDIT_REFRESH R and multicasts (K_t packets on each tree t),
// whether that can happen.
//
// Assumptions (the proof refuses configurations that break them):
//
//  1. MCAST's correct protocol (no broken variant).
//  2. R <= C. With R > C credits owed below the threshold may never be
//     returned, a starvation that needs no cycle.
//  3. Hosts drain: every packet copied to a host is eventually processed
//     and its buffer freed. The host library (reply, drain) and kept
//     packets (keep) break this, and so do explicit work lists (with
//     fetch-and-add requests); such configurations are undecided.
//
// Unicast traffic (flows), the send pool's size and the host buffers' are
// covered: the argument never uses them.
//
// The argument. Take a reachable state where no action is enabled but
// work remains (a deadlock). Then
//
//   - every link is empty (a delivery would be enabled), every host queue
//     is empty (the host would process its head: assumption 3) and so every
//     received packet has been copied to its host (a copy would be enabled);
//   - a receive buffer that is copied and has no forward pending is
//     released in the step that completed it, so every occupied buffer
//     holds a multicast packet with a forward pending to some child U of
//     its NI in the packet's tree, queued among the blocked sends to U;
//   - a blocked send to U means no credit for U (credits only grow when
//     credits arrive, and arriving credits first serve the blocked sends);
//   - something remains: a packet not yet launched waits for a send packet,
//     which is held by a blocked send, or a launched packet is held in a
//     buffer or a blocked send. So some NI A has a blocked send to some B.
//
// Let F be the set of partitions "A at B" such that A has a blocked send to
// B. For each, credit conservation over the ordered pair A->B reads: A's
// credits for B (0) + packets in flight (0) + B's occupied buffers from A
// + credits B owes A + credits in flight back (0) = C. B owes fewer than R
// credits (it sends an explicit credit packet as soon as it owes R), so B
// holds at least N = C - R + 1 packets from A, each (as above) waiting to
// forward to a child U with "B at U" in F, along an edge of the dependency
// graph of the trees the workload uses. F is finite and every member has a
// successor in F: F contains a cycle Z, every partition of which holds at
// least N blocked packets at once.
//
// Hence a deadlock needs a cycle Z of the workload's dependency graph and
// a reachable state in which every partition of Z holds N blocked
// packets. Prove refutes that in two steps:
//
//  1. Per partition: a packet of tree t can be held in "S at T" only if S
//     is T's parent in t and T forwards (has children in t), and it is held
//     in at most one buffer there. So at most cap = sum of K_t over those
//     trees can block in "S at T". A partition with cap < N is in no such
//     Z: remove it.
//  2. Per strongly connected component X of what remains (every such Z lies
//     in one): one packet of tree t is held, at once, at the NIs that have
//     received it and not yet sent it to every child. An NI that holds it
//     has a child that has not received it, and nothing below that child
//     has; the most partitions of X a packet of t can occupy at once, f_t,
//     follows by a pass over t (at each NI: the children's best sums, plus
//     one for the NI if it is in X and that beats leaving its weakest child
//     out). A chain's packet is held in one place; a branching tree's in
//     several. A cycle Z of length L in X then holds at most
//     sum over t of K_t * min(f_t, L) blocked packets and needs N * L. If
//     that falls short for every L from X's shortest cycle to |X|, no cycle
//     of X can fill.
//
// If every component is refuted, no deadlock is reachable: deadlock-free
// for this workload. Otherwise the answer is undecided (a cycle that may
// fill is necessary, not sufficient, for a deadlock), with the shortest
// cycle of a component that may fill and the counts that do not refute it.
//
// A chain's dependency graph is one cycle of P partitions, each packet
// blocks in one place, and P*K packets exist: chains are deadlock-free when
// K < N = C - R + 1, for any P. With R = 1 that is C > K; with the default
// R = max(1, C/2) and C >= 4 it is stronger (a chain of 4 NIs with C=4,
// R=2 and K=3 deadlocks with 3 packets in every partition and one credit
// owed in each).

// Workload is what the proof needs of a configuration: credits, refresh
// and the multicasts on each tree.
type Workload struct {
	Credits int
	Refresh int
	// Packets is the number of multicasts every tree carries when Casts
	// is empty (every member of every group multicasts on its tree).
	Packets int
	Casts   []Cast
	// Unicast is the number of unicast packets (flows): covered, and
	// reported only.
	Unicast int
	// Uncovered lists features of the configuration that the argument
	// does not cover; when there are any the proof is not attempted.
	Uncovered []string
}

// Verdicts of a Proof.
const (
	DeadlockFree = "deadlock-free"
	Undecided    = "undecided"
)

// Proof is the workload-aware analysis of a topology.
type Proof struct {
	Verdict string `json:"verdict"` // DeadlockFree or Undecided
	Reason  string `json:"reason"`
	Credits int    `json:"credits"`
	Refresh int    `json:"refresh"`
	// Need is C - R + 1: the blocked packets every partition of a
	// deadlock's cycle holds at least (0 when R > C).
	Need       int `json:"need"`
	Multicasts int `json:"multicasts"` // multicast packets in the workload
	Unicasts   int `json:"unicasts"`
	TreesUsed  int `json:"trees_used"`
	// Partitions and Edges of the dependency graph of the trees used;
	// Holding counts the partitions where Need packets can block.
	Partitions int `json:"partitions"`
	Edges      int `json:"edges"`
	// Cyclic is set when that graph has a cycle (then it is the count that
	// proves, if anything does).
	Cyclic  bool `json:"graph_cyclic"`
	Holding int  `json:"partitions_holding_need"`
	// Components is the number of cyclic strongly connected components of
	// the graph of those partitions; Filling those that the count does
	// not refute.
	Components int `json:"cyclic_components"`
	Filling    int `json:"filling_components"`
	// Component describes the component whose cycle is shown: one that
	// may fill (undecided), or else the one closest to filling.
	Component *ComponentCount `json:"component,omitempty"`
	// Cycle is a shortest cycle of Component, with the packets that can
	// block in each of its partitions.
	Cycle       []CycleCount `json:"cycle,omitempty"`
	Assumptions []string     `json:"assumptions"`
	Uncovered   []string     `json:"uncovered,omitempty"`
}

// ComponentCount is the count for one strongly connected component.
type ComponentCount struct {
	Partitions int `json:"partitions"`
	// ShortestCycle is its shortest cycle's length (a lower bound, 3,
	// when the component is too large to search: Exact is false).
	ShortestCycle int  `json:"shortest_cycle"`
	Exact         bool `json:"shortest_exact"`
	// Blocked is the most packets that can block in a cycle of length
	// Length of the component at once; Needed is Need times Length. The
	// component may fill when Blocked >= Needed for some length: Length
	// is such a length if there is one, else ShortestCycle.
	Length  int  `json:"length"`
	Blocked int  `json:"blocked_max"`
	Needed  int  `json:"needed"`
	Fills   bool `json:"may_fill"`
	// Cycles is the number of simple cycles step 3 checked part by part
	// (0: none) when the count above allowed a cycle. With ByCycles set
	// it refuted every one, and Shortfall is the part of the cycle shown
	// that too few packets can fill; otherwise the cycle shown is one no
	// part refutes, and Length, Blocked and Needed count it.
	Cycles    int        `json:"cycles_checked,omitempty"`
	ByCycles  bool       `json:"refuted_by_cycles,omitempty"`
	Shortfall *Shortfall `json:"shortfall,omitempty"`
}

// CycleCount is one step of a cycle with the packets that can block in
// its partition "From at At".
type CycleCount struct {
	CycleStep
	Packets int `json:"packets"`
}

// proofAssumptions are printed with every proof.
var proofAssumptions = []string{
	"MCAST's correct protocol",
	"CREDIT_REFRESH <= C (owed credits are returned)",
	"hosts drain: every packet copied to a host is processed and its buffer freed (no host library, no kept packets)",
}

// ProofCovers reports whether the proof covers a parameter of an MCAST
// configuration, and if not, why.
func ProofCovers(key string) (bool, string) {
	switch key {
	case "credits", "packets", "refresh", "host-buffers", "send-buffers", "flow", "tree", "topology", "cast":
		return true, ""
	case "reply", "drain", "upcalls-allowed":
		return false, "LFC's host library (" + key + "): a host that must reply from an upcall, or drains, need not keep processing"
	case "keep":
		return false, "kept packets (keep): hosts may hold buffers indefinitely"
	case "work", "server":
		return false, "an explicit work list (" + key + "): per-node order and fetch-and-add requests"
	}
	return false, "parameter " + key
}

// Prove decides deadlock freedom of topology t over p nodes for workload w.
func Prove(t *Topology, p int, w Workload) (Proof, error) {
	trees := topologyTrees(t)
	counts := make([]int, len(trees))
	if len(w.Casts) == 0 {
		for i := range counts {
			counts[i] = w.Packets
		}
	}
	for i, c := range w.Casts {
		ti, err := t.CastTree(c)
		if err != nil {
			return Proof{}, fmt.Errorf("cast %d (%s): %v", i+1, c, err)
		}
		counts[ti] += c.Count
	}
	return ProveTrees(p, trees, counts, w), nil
}

// ProveFamily is Prove for the broadcast group of p nodes with one tree of
// family fam per node (p up to MaxStaticNodes).
func ProveFamily(fam string, p int, w Workload) (Proof, error) {
	if p < 2 || p > MaxStaticNodes {
		return Proof{}, fmt.Errorf("nodes must be in 2..%d, got %d", MaxStaticNodes, p)
	}
	trees, err := FamilyTrees(fam, p)
	if err != nil {
		return Proof{}, err
	}
	return ProveFamilyTrees(p, trees, w)
}

// ProveFamilyTrees is ProveFamily for the trees FamilyTrees returned: tree
// r is rooted at node r.
func ProveFamilyTrees(p int, trees []TreeEdges, w Workload) (Proof, error) {
	if len(trees) != p {
		return Proof{}, fmt.Errorf("want one tree per node, got %d trees for %d nodes", len(trees), p)
	}
	counts := make([]int, p)
	if len(w.Casts) == 0 {
		for i := range counts {
			counts[i] = w.Packets
		}
	}
	for i, c := range w.Casts {
		if c.Group != "" && c.Group != "all" {
			return Proof{}, fmt.Errorf("cast %d (%s): no group %q (a tree family's group is \"all\")", i+1, c, c.Group)
		}
		if c.Root < 0 || c.Root >= p {
			return Proof{}, fmt.Errorf("cast %d (%s): node %d is not a member of any group", i+1, c, c.Root)
		}
		counts[c.Root] += c.Count
	}
	return ProveTrees(p, trees, counts, w), nil
}

// maxGirthWork bounds the breadth-first searches for a component's
// shortest cycle (vertices times edges).
const maxGirthWork = 100_000_000

// ProveTrees is Prove for trees given by their edges over p nodes, with
// counts[t] multicasts on tree t.
func ProveTrees(p int, trees []TreeEdges, counts []int, w Workload) Proof {
	pr := Proof{Credits: w.Credits, Refresh: w.Refresh, Unicasts: w.Unicast,
		Assumptions: proofAssumptions, Uncovered: w.Uncovered}
	for t, k := range counts {
		if k > 0 && t < len(trees) {
			pr.Multicasts += k
			pr.TreesUsed++
		}
	}
	if w.Refresh <= w.Credits {
		pr.Need = w.Credits - w.Refresh + 1
	}
	switch {
	case len(w.Uncovered) > 0:
		pr.Verdict = Undecided
		pr.Reason = "the argument does not cover " + strings.Join(w.Uncovered, "; ") + "; check with 'lfccheck check'"
		return pr
	case w.Credits < 1:
		pr.Verdict = Undecided
		pr.Reason = "no credits"
		return pr
	case w.Refresh > w.Credits:
		pr.Verdict = Undecided
		pr.Reason = fmt.Sprintf("CREDIT_REFRESH %d > C=%d: credits owed below the threshold may never be returned (a starvation without any cycle); the argument needs refresh <= credits", w.Refresh, w.Credits)
		return pr
	}
	need := pr.Need

	// Vertices: the partitions where a used tree forwards, numbered
	// compactly; cap is the packets that can block there.
	n := p * p
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = -1
	}
	var vid []int32 // compact -> From*p+At
	var capv []int
	vertex := func(x int) int32 {
		if idx[x] < 0 {
			idx[x] = int32(len(vid))
			vid = append(vid, int32(x))
			capv = append(capv, 0)
		}
		return idx[x]
	}
	parent := make([]int32, p)
	for i := range parent {
		parent[i] = -1
	}
	counted := make([]int32, p) // 1 + the tree that last forwarded at the node
	// each calls fn for every forwarding of a used tree: tree ti forwards
	// at b from parent a to c (first: b's first child in ti).
	each := func(fn func(ti, a, b, c int, first bool)) {
		for ti := range trees {
			if counts[ti] <= 0 {
				continue
			}
			es := trees[ti].Edges
			for _, e := range es {
				parent[e[1]] = int32(e[0])
			}
			for _, e := range es {
				if b := e[0]; parent[b] >= 0 {
					first := counted[b] != int32(ti+1)
					counted[b] = int32(ti + 1)
					fn(ti, int(parent[b]), b, e[1], first)
				}
			}
			for _, e := range es {
				parent[e[1]] = -1
			}
		}
	}
	// Two passes (counted is reset between them): number the vertices, add up cap and count each row's
	// edges; then fill the rows.
	var rowLen []int32
	each(func(ti, a, b, c int, first bool) {
		u := vertex(a*p + b)
		vertex(b*p + c)
		if first {
			capv[u] += counts[ti]
		}
		for len(rowLen) < len(vid) {
			rowLen = append(rowLen, 0)
		}
		rowLen[u]++
	})
	nv := len(vid)
	off := make([]int32, nv+1)
	for v := 0; v < nv; v++ {
		off[v+1] = off[v]
		if v < len(rowLen) {
			off[v+1] += rowLen[v]
		}
	}
	rowLen = nil
	clear(counted)
	to := make([]int32, off[nv])
	via := make([]int32, off[nv])
	fill := append([]int32(nil), off[:nv]...)
	each(func(ti, a, b, c int, _ bool) {
		u := idx[a*p+b]
		to[fill[u]], via[fill[u]] = idx[b*p+c], int32(ti)
		fill[u]++
	})
	to, via = dedupEdges(nv, off, to, via) // rows of distinct edges
	pr.Partitions, pr.Edges = nv, len(to)
	keep := make([]bool, nv)
	for v := range keep {
		keep[v] = capv[v] >= need
		if keep[v] {
			pr.Holding++
		}
	}

	all := make([]bool, nv)
	for v := range all {
		all[v] = true
	}
	for _, c := range sccsCount(sccs(nv, off, to, all)) {
		pr.Cyclic = pr.Cyclic || c >= 2
	}
	comp := sccs(nv, off, to, keep) // component id per vertex, -1 if none
	members := map[int32][]int32{}
	for v := 0; v < nv; v++ {
		if comp[v] >= 0 {
			members[comp[v]] = append(members[comp[v]], int32(v))
		}
	}
	var ids []int32
	for id, ms := range members {
		if len(ms) >= 2 {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return members[ids[i]][0] < members[ids[j]][0] })
	pr.Components = len(ids)
	if len(ids) == 0 {
		pr.Verdict = DeadlockFree
		if !pr.Cyclic {
			pr.Reason = "the dependency graph of the trees the workload uses is acyclic"
		} else {
			pr.Reason = fmt.Sprintf("the partitions where %s can block form no cycle", plural(need, "packet"))
		}
		return pr
	}
	// f_t per (tree, component): the most partitions of the component one
	// packet of tree t occupies at once.
	inComp := func(u int32) int32 {
		if u < 0 || !keep[u] {
			return -1
		}
		return comp[u]
	}
	type tf struct{ tree, f int }
	perComp := map[int32][]tf{}
	var touched []int32
	children := make([][]int32, p)
	order := make([]int32, 0, p)
	f := make([]int, p)
	for ti := range trees {
		if counts[ti] <= 0 || len(trees[ti].Edges) == 0 {
			continue
		}
		for _, e := range trees[ti].Edges {
			parent[e[1]] = int32(e[0])
			children[e[0]] = append(children[e[0]], int32(e[1]))
		}
		root := trees[ti].Edges[0][0]
		for steps := 0; parent[root] >= 0 && steps <= p; steps++ {
			root = int(parent[root]) // (at most p steps up a tree)
		}
		// which components the tree touches
		touched = touched[:0]
		for _, e := range trees[ti].Edges {
			b := e[0]
			if parent[b] < 0 {
				continue
			}
			if c := inComp(idx[int(parent[b])*p+b]); c >= 0 && !slices.Contains(touched, c) {
				touched = append(touched, c)
			}
		}
		path := true // no node has two children: a packet is held in one place
		for _, e := range trees[ti].Edges {
			path = path && len(children[e[0]]) <= 1
		}
		if len(touched) > 0 && path {
			for _, c := range touched {
				perComp[c] = append(perComp[c], tf{ti, 1})
			}
		} else if len(touched) > 0 {
			order = append(order[:0], int32(root))
			for h := 0; h < len(order); h++ {
				order = append(order, children[order[h]]...)
			}
			for _, c := range touched {
				held := heldAtOnce(order, children, f, func(x int32) bool {
					return parent[x] >= 0 && inComp(idx[int(parent[x])*p+int(x)]) == c
				})
				perComp[c] = append(perComp[c], tf{ti, held})
			}
		}
		for _, e := range trees[ti].Edges {
			parent[e[1]] = -1
			children[e[0]] = children[e[0]][:0]
		}
	}
	// Per component: shortest cycle, then the count.
	var best *ComponentCount
	var bestCycle []int32
	bs := newBFS(nv)
	var cycles *cycleCheck    // step 3, made when needed
	byCycles, byComps := 0, 0 // cycles and components step 3 refuted
	for _, id := range ids {
		ms := members[id]
		cc := &ComponentCount{Partitions: len(ms)}
		ecount := 0
		for _, v := range ms {
			for e := off[v]; e < off[v+1]; e++ {
				if inComp(to[e]) == id {
					ecount++
				}
			}
		}
		in := func(x int32) bool { return inComp(x) == id }
		var cyc []int32
		cc.Exact = len(ms)*ecount <= maxGirthWork || ecount == len(ms)
		if ecount == len(ms) {
			// As many edges as vertices in a strongly connected
			// component: it is one cycle (chains' graphs). Walk it.
			for v := ms[0]; len(cyc) == 0 || v != ms[0]; {
				e := off[v]
				for !in(to[e]) {
					e++
				}
				cyc = append(cyc, e)
				v = to[e]
			}
		} else {
			cyc = bs.shortestCycle(ms, off, to, in, cc.Exact)
		}
		cc.ShortestCycle = len(cyc)
		if !cc.Exact {
			cc.ShortestCycle = 3 // a lower bound: no tree forwards a packet back to its sender
		}
		fs := perComp[id]
		bound := func(l int) int {
			s := 0
			for _, x := range fs {
				s += counts[x.tree] * min(x.f, l)
			}
			return s
		}
		// bound(l) - need*l is concave in l: try the shortest cycle, the
		// component's size and every breakpoint between.
		cand := []int{cc.ShortestCycle, len(ms)}
		for _, x := range fs {
			if x.f > cc.ShortestCycle && x.f < len(ms) {
				cand = append(cand, x.f)
			}
		}
		sort.Ints(cand)
		cc.Length = cc.ShortestCycle
		cc.Blocked, cc.Needed = bound(cc.Length), need*cc.Length
		for _, l := range cand {
			if b := bound(l); b >= need*l {
				cc.Length, cc.Blocked, cc.Needed, cc.Fills = l, b, need*l, true
				break
			}
		}
		if cc.Fills && cc.Exact {
			if cycles == nil {
				cycles = newCycleCheck(p, need, trees, counts, vid, endless(nv, off, to, keep))
			}
			if v := cycles.cycles(ms, off, to, in); v.done {
				cc.Cycles = v.checked
				if v.survivor == nil {
					cc.Fills, cc.ByCycles = false, true
					byCycles += v.checked
					byComps++
					var z []int32
					for _, e := range cyc {
						z = append(z, edgeTail(off, e))
					}
					cc.Shortfall, _ = cycles.refute(z)
				} else {
					cyc = v.survivor
					cc.Length, cc.Blocked, cc.Needed = len(cyc), v.blocked, need*len(cyc)
				}
			}
		}
		if cc.Fills {
			pr.Filling++
		}
		// Show a filling component with the shortest cycle, else the one
		// closest to filling.
		better := best == nil ||
			cc.Fills && !best.Fills ||
			cc.Fills == best.Fills && cc.Fills && cc.ShortestCycle < best.ShortestCycle ||
			cc.Fills == best.Fills && !cc.Fills && cc.Needed-cc.Blocked < best.Needed-best.Blocked
		if better {
			best, bestCycle = cc, cyc
		}
	}
	pr.Component = best
	for _, e := range bestCycle {
		from := edgeTail(off, e)
		x := int(vid[from])
		a, b := x/p, x%p
		c := int(vid[to[e]]) % p
		pr.Cycle = append(pr.Cycle, CycleCount{CycleStep: CycleStep{From: a, At: b, To: c, Tree: trees[via[e]].Name}, Packets: capv[from]})
	}
	if pr.Filling == 0 {
		pr.Verdict = DeadlockFree
		which := fmt.Sprintf("each of the %d cyclic components", pr.Components)
		if pr.Components == 1 {
			which = "the one cyclic component"
		}
		pr.Reason = fmt.Sprintf("no cycle can fill: in %s of the partitions where %s can block, fewer packets can block at once than %d times the length of any of its cycles", which, plural(need, "packet"), need)
		if byCycles > 0 {
			counted := ""
			if n := pr.Components - byComps; n > 0 {
				counted = fmt.Sprintf(" (in %d of the %d cyclic components the count over the whole component refutes them)", n, pr.Components)
			}
			which := "the only cycle"
			if byCycles > 1 {
				which = fmt.Sprintf("each of the %d cycles", byCycles)
			}
			pr.Reason = fmt.Sprintf("no cycle can fill: %s of the partitions where %s can block has partitions where fewer packets can block at once than a deadlock needs there%s",
				which, plural(need, "packet"), counted)
		}
		return pr
	}
	pr.Verdict = Undecided
	pr.Reason = fmt.Sprintf("%d of %d cyclic components may fill: a cycle of %d partitions can hold %d blocked packets, and a deadlock needs %d (%d in each); a cycle that can fill is necessary, not sufficient: search with 'lfccheck check'",
		pr.Filling, pr.Components, best.Length, best.Blocked, best.Needed, need)
	return pr
}
