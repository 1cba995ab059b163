// Package topology builds the multicast groups and spanning trees that MCAST
// forwards on (thesis §4.2, Fig. 4.8, 4.9, App. A): the built-in tree
// families, explicit trees from a human-writable topology file, their
// validation, and the static analysis of App. A.1 (the distance condition and
// its inverse form) with the link statistic of Table 5.2, the buffer
// dependency graph (depgraph.go: deadlock freedom for every C and K) and the
// workload-aware proof (capacity.go: deadlock freedom for given credits,
// CREDIT_REFRESH and multicasts, when the graph has cycles).
//
// # Tree families
//
// Every family is defined for root 0 over nodes 0..n-1; the tree of root r
// renames every node i to (i + r) mod n (Fig. 4.9). Within a group, the
// members are renumbered 0..n-1 in increasing order first.
//
//   - binary: LFC's binary tree, heap-ordered: the children of i are 2i+1 and
//     2i+2. (This is the numbering that gives Table 5.2's L_used/L_av = 0.51
//     on 64 nodes.)
//   - binomial: the children of i are i + 2^k for every 2^k below the lowest
//     set bit of i (every 2^k < n for the root), farthest first: a node's
//     parent is farther away than any of its children (App. A.1, Fig. A.1).
//   - chain: the child of i is i+1 (Fig. 4.8).
//   - star: the root's children are all other nodes.
//   - kary:K: the children of i are Ki+1 .. Ki+K.
package topology

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"lfccheck/model"
)

// Families lists the built-in family names (kary takes ":K").
var Families = []string{"binary", "binomial", "chain", "star", "kary:K"}

// childrenFn appends to dst the children of index i in the family's tree
// for root 0 over n nodes.
type childrenFn func(dst []int, i, n int) []int

// family parses a family name.
func family(name string) (childrenFn, error) {
	switch name {
	case "binary":
		return karyChildren(2), nil
	case "chain":
		return karyChildren(1), nil
	case "star":
		return func(c []int, i, n int) []int {
			if i != 0 {
				return c
			}
			for j := 1; j < n; j++ {
				c = append(c, j)
			}
			return c
		}, nil
	case "binomial":
		return func(c []int, i, n int) []int {
			low := n // the root may use every power of two below n
			if i != 0 {
				low = i & -i
			}
			for k := 1 << 30; k >= 1; k >>= 1 {
				if k < low && i+k < n {
					c = append(c, i+k)
				}
			}
			return c
		}, nil
	}
	if rest, ok := strings.CutPrefix(name, "kary:"); ok {
		k, err := model.ParseDecimal(rest)
		if err != nil || k < 1 || k > model.MaxNodes {
			return nil, fmt.Errorf("bad fanout in tree family %q (want kary:K with K in 1..%d)", name, model.MaxNodes)
		}
		return karyChildren(k), nil
	}
	return nil, fmt.Errorf("unknown tree family %q (known: %s)", name, strings.Join(Families, ", "))
}

func karyChildren(k int) childrenFn {
	return func(c []int, i, n int) []int {
		for j := k*i + 1; j <= k*i+k && j < n; j++ {
			c = append(c, j)
		}
		return c
	}
}

// CheckFamily reports whether name is a valid family name.
func CheckFamily(name string) error {
	_, err := family(name)
	return err
}

// familyEdges returns the edges of the family tree rooted at members[r].
func familyEdges(fn childrenFn, members []int, r int) [][2]int {
	n := len(members)
	edges := make([][2]int, 0, n-1)
	// Depth-first, each edge just before its child's subtree: pending
	// (parent, child) pairs on a stack, children pushed in reverse.
	var buf []int
	var stack [][2]int
	push := func(i int) {
		buf = fn(buf[:0], i, n)
		for k := len(buf) - 1; k >= 0; k-- {
			stack = append(stack, [2]int{i, buf[k]})
		}
	}
	push(0)
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		edges = append(edges, [2]int{members[(e[0]+r)%n], members[(e[1]+r)%n]})
		push(e[1])
	}
	return edges
}

// Resolve builds the topology of a configuration: the explicit topology
// spec, or else the broadcast group of all nodes with one tree of family
// tree (default binary) per node.
func Resolve(tree string, spec *TopologySpec, nodes int) (*Topology, error) {
	if spec == nil {
		fam := tree
		if fam == "" {
			fam = "binary"
		}
		if err := CheckFamily(fam); err != nil {
			return nil, err
		}
		all := make([]int, nodes)
		for i := range all {
			all[i] = i
		}
		spec = &TopologySpec{
			Groups: []GroupSpec{{Name: "all", Members: all}},
			Trees:  []TreeSpec{{Group: "all", Root: -1, Family: fam}},
		}
	} else if tree != "" {
		return nil, fmt.Errorf("give a tree family or an explicit topology, not both")
	}
	return Build(spec, nodes)
}

// Build validates a topology specification for p nodes and builds it. A
// TreeSpec with Root -1 and a family applies to every member of its group
// that has no tree of its own. Errors name the group, the tree's root and
// the problem.
func Build(spec *TopologySpec, p int) (*Topology, error) {
	t := &Topology{}
	groupIdx := map[string]int{}
	if len(spec.Groups) == 0 {
		return nil, fmt.Errorf("no groups")
	}
	for _, g := range spec.Groups {
		if g.Name == "" {
			return nil, fmt.Errorf("a group has no name")
		}
		if _, dup := groupIdx[g.Name]; dup {
			return nil, fmt.Errorf("group %q defined twice", g.Name)
		}
		if len(g.Members) < 2 {
			return nil, fmt.Errorf("group %q: needs at least 2 members, has %d", g.Name, len(g.Members))
		}
		ms := append([]int(nil), g.Members...)
		sort.Ints(ms)
		var members []model.NodeID
		for i, m := range ms {
			if m < 0 || m >= p {
				return nil, fmt.Errorf("group %q: node %d out of range 0..%d", g.Name, m, p-1)
			}
			if i > 0 && ms[i-1] == m {
				return nil, fmt.Errorf("group %q: node %d listed twice", g.Name, m)
			}
			members = append(members, model.NodeID(m))
		}
		groupIdx[g.Name] = len(t.Groups)
		t.Groups = append(t.Groups, Group{Name: g.Name, Members: members})
	}
	// Explicit roots first, then "*" families for the remaining members.
	edgesOf := map[[2]int][][2]int{} // (group, root) -> edges
	for _, ts := range spec.Trees {
		gi, ok := groupIdx[ts.Group]
		if !ok {
			return nil, fmt.Errorf("tree of root %s: no group %q", rootName(ts.Root), ts.Group)
		}
		ints := groupInts(&t.Groups[gi])
		if ts.Root == -1 {
			continue
		}
		if ts.Root < 0 || ts.Root >= p {
			return nil, fmt.Errorf("group %q: tree root %d out of range 0..%d", ts.Group, ts.Root, p-1)
		}
		r := indexOf(ints, ts.Root)
		if r < 0 {
			return nil, fmt.Errorf("group %q: root %d of a tree is not a member of the group", ts.Group, ts.Root)
		}
		if _, dup := edgesOf[[2]int{gi, ts.Root}]; dup {
			return nil, fmt.Errorf("group %q: two trees for root %d", ts.Group, ts.Root)
		}
		switch {
		case ts.Family != "" && len(ts.Edges) > 0:
			return nil, fmt.Errorf("group %q, root %d: give a family or edges, not both", ts.Group, ts.Root)
		case ts.Family != "":
			fn, err := family(ts.Family)
			if err != nil {
				return nil, fmt.Errorf("group %q, root %d: %v", ts.Group, ts.Root, err)
			}
			edgesOf[[2]int{gi, ts.Root}] = familyEdges(fn, ints, r)
		default:
			edgesOf[[2]int{gi, ts.Root}] = ts.Edges
		}
	}
	for _, ts := range spec.Trees {
		if ts.Root != -1 {
			continue
		}
		gi := groupIdx[ts.Group]
		fn, err := family(ts.Family)
		if err != nil {
			return nil, fmt.Errorf("group %q: %v", ts.Group, err)
		}
		ints := groupInts(&t.Groups[gi])
		for r, m := range ints {
			if _, has := edgesOf[[2]int{gi, m}]; !has {
				edgesOf[[2]int{gi, m}] = familyEdges(fn, ints, r)
			}
		}
	}
	for gi := range t.Groups {
		for _, m := range t.Groups[gi].Members {
			edges, ok := edgesOf[[2]int{gi, int(m)}]
			if !ok {
				return nil, fmt.Errorf("group %q: no tree for member %d (add a tree line for it, or one with root *)", t.Groups[gi].Name, m)
			}
			tr, err := buildTree(gi, &t.Groups[gi], m, edges, p)
			if err != nil {
				return nil, fmt.Errorf("group %q, tree of root %d: %v", t.Groups[gi].Name, m, err)
			}
			t.Trees = append(t.Trees, tr)
		}
	}
	if len(t.Trees) > 1<<12 {
		return nil, fmt.Errorf("%d trees: too many", len(t.Trees))
	}
	return t, nil
}

func rootName(r int) string {
	if r == -1 {
		return "*"
	}
	return strconv.Itoa(r)
}

func groupInts(g *Group) []int {
	out := make([]int, len(g.Members))
	for i, m := range g.Members {
		out[i] = int(m)
	}
	return out
}

func indexOf(xs []int, x int) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

// buildTree checks that edges form a spanning tree of g rooted at root.
func buildTree(gi int, g *Group, root model.NodeID, edges [][2]int, p int) (Tree, error) {
	tr := Tree{Group: gi, Root: root, Parent: make([]int, p), Children: make([][]model.NodeID, p)}
	in := make([]bool, p)
	for _, m := range g.Members {
		in[m] = true
	}
	const unknown = NotMember - 1 // a member whose parent is not yet known
	for i := range tr.Parent {
		tr.Parent[i] = NotMember
		if in[i] {
			tr.Parent[i] = unknown
		}
	}
	tr.Parent[root] = IsRoot
	seen := map[[2]int]bool{}
	for _, e := range edges {
		a, b := e[0], e[1]
		for _, x := range e {
			if x < 0 || x >= p {
				return tr, fmt.Errorf("edge %d->%d: node %d out of range 0..%d", a, b, x, p-1)
			}
			if !in[x] {
				return tr, fmt.Errorf("edge %d->%d: node %d is not a member of the group", a, b, x)
			}
		}
		if a == b {
			return tr, fmt.Errorf("edge %d->%d: a node cannot be its own child", a, b)
		}
		if seen[e] {
			return tr, fmt.Errorf("duplicate edge %d->%d", a, b)
		}
		seen[e] = true
		if b == int(root) {
			return tr, fmt.Errorf("edge %d->%d: the root cannot have a parent", a, b)
		}
		if tr.Parent[b] >= 0 {
			return tr, fmt.Errorf("node %d has two parents (%d and %d)", b, tr.Parent[b], a)
		}
		tr.Parent[b] = a
		tr.Children[a] = append(tr.Children[a], model.NodeID(b))
	}
	// Every member must be reached from the root.
	reached := make([]bool, p)
	var walk func(n model.NodeID)
	walk = func(n model.NodeID) {
		reached[n] = true
		for _, c := range tr.Children[n] {
			if !reached[c] {
				walk(c)
			}
		}
	}
	walk(root)
	for _, m := range g.Members {
		if reached[m] {
			continue
		}
		if tr.Parent[m] < 0 {
			return tr, fmt.Errorf("not a spanning tree of the group: member %d has no parent", m)
		}
		// An unreached member with a parent lies on a cycle or below one.
		return tr, fmt.Errorf("cycle: member %d is not reached from the root (its parents loop)", m)
	}
	return tr, nil
}
