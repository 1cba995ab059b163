package topology

import (
	"fmt"
	"io"
	"strings"

	"lfccheck/model"
)

// Check is the outcome of a per-tree condition, with a witness when it fails.
type Check struct {
	Holds   bool   `json:"holds"`
	Witness string `json:"witness,omitempty"`
}

// TreeReport describes one tree.
type TreeReport struct {
	Group     string   `json:"group"`
	Root      int      `json:"root"`
	Depth     int      `json:"depth"`
	MaxFanout int      `json:"max_fanout"`
	Edges     [][2]int `json:"edges"`
	// Condition: at every member, the parent is closer than every child
	// (App. A.1), with distances on the group's ring.
	Condition Check `json:"distance_condition"`
	// Inverse: the parent is farther than every child (the binomial form).
	Inverse Check `json:"inverse_condition"`
}

// Report is the static analysis of a topology.
type Report struct {
	Nodes  int          `json:"nodes"`
	Groups []GroupInfo  `json:"groups"`
	Trees  []TreeReport `json:"trees"`
	// Overlap names a node that belongs to two groups, if any.
	Overlap string `json:"overlap,omitempty"`
	// GlobalCondition / GlobalInverse: the condition (or its inverse) holds
	// for every tree of every group with the ring distance over all nodes,
	// which covers cycles across overlapping groups too.
	GlobalCondition bool `json:"global_distance_condition"`
	GlobalInverse   bool `json:"global_inverse_condition"`
	LinksUsed       int  `json:"links_used"`
	LinksAvailable  int  `json:"links_available"`
	// LinkRatio is L_used/L_av of Table 5.2: the fraction of the P(P-1)
	// directed NI-to-NI links that some tree forwards on.
	LinkRatio float64 `json:"link_ratio"`
	// Dependencies is the buffer dependency graph (see Dependencies).
	Dependencies DepGraph `json:"dependency_graph"`
	// DeadlockFree is set when the dependency graph is acyclic (which
	// every form of App. A.1's condition implies); Conclusion says why or
	// why not.
	DeadlockFree bool   `json:"deadlock_free_by_condition"`
	Conclusion   string `json:"conclusion"`
}

// GroupInfo lists a group's members.
type GroupInfo struct {
	Name    string `json:"name"`
	Members []int  `json:"members"`
}

// Analyze computes the static report of a topology over p nodes.
func Analyze(t *Topology, p int) Report {
	r := Report{Nodes: p, LinksAvailable: p * (p - 1), GlobalCondition: true, GlobalInverse: true}
	member := make([]string, p)
	for _, g := range t.Groups {
		r.Groups = append(r.Groups, GroupInfo{Name: g.Name, Members: groupInts(&g)})
		for _, m := range g.Members {
			if member[m] != "" && r.Overlap == "" {
				r.Overlap = fmt.Sprintf("node %d is in groups %q and %q", m, member[m], g.Name)
			}
			member[m] = g.Name
		}
	}
	used := make([]bool, p*p)
	allCond, allInv := true, true
	for i := range t.Trees {
		tr := &t.Trees[i]
		g := &t.Groups[tr.Group]
		ints := groupInts(g)
		n := len(ints)
		groupDist := func(a, b int) int { return (indexOf(ints, b) - indexOf(ints, a) + n) % n }
		ringDist := func(a, b int) int { return (b - a + p) % p }
		rep := TreeReport{Group: g.Name, Root: int(tr.Root)}
		var depth func(x model.NodeID, d int)
		depth = func(x model.NodeID, d int) {
			if d > rep.Depth {
				rep.Depth = d
			}
			if len(tr.Children[x]) > rep.MaxFanout {
				rep.MaxFanout = len(tr.Children[x])
			}
			for _, c := range tr.Children[x] {
				rep.Edges = append(rep.Edges, [2]int{int(x), int(c)})
				used[int(x)*p+int(c)] = true
				depth(c, d+1)
			}
		}
		depth(tr.Root, 0)
		rep.Condition = condition(tr, groupDist, false)
		rep.Inverse = condition(tr, groupDist, true)
		allCond = allCond && rep.Condition.Holds
		allInv = allInv && rep.Inverse.Holds
		r.GlobalCondition = r.GlobalCondition && condition(tr, ringDist, false).Holds
		r.GlobalInverse = r.GlobalInverse && condition(tr, ringDist, true).Holds
		r.Trees = append(r.Trees, rep)
	}
	for _, u := range used {
		if u {
			r.LinksUsed++
		}
	}
	if r.LinksAvailable > 0 {
		r.LinkRatio = float64(r.LinksUsed) / float64(r.LinksAvailable)
	}
	r.Dependencies = Dependencies(t, p)
	const note = " (the condition is sufficient, not necessary)"
	switch {
	case r.Dependencies.Acyclic || len(r.Dependencies.Cycle) > 0:
		r.DeadlockFree, r.Conclusion = conclude(r.Dependencies, r.Overlap)
		if r.DeadlockFree && r.GlobalCondition {
			r.Conclusion += "; App. A.1's distance condition holds too"
		}
	case r.GlobalCondition:
		r.DeadlockFree = true
		r.Conclusion = "deadlock-free: in every tree every node's parent is closer on the ring of all nodes than its children (App. A.1)"
	case r.GlobalInverse:
		r.DeadlockFree = true
		r.Conclusion = "deadlock-free: in every tree every node's parent is farther on the ring of all nodes than its children (inverse form of App. A.1)"
	case r.Overlap == "" && allCond:
		r.DeadlockFree = true
		r.Conclusion = "deadlock-free: groups are disjoint and within each group every parent is closer than its children (App. A.1)"
	case r.Overlap == "" && allInv:
		r.DeadlockFree = true
		r.Conclusion = "deadlock-free: groups are disjoint and within each group every parent is farther than its children (inverse form of App. A.1)"
	case r.Overlap != "" && (allCond || allInv):
		r.Conclusion = "no guarantee: each group meets the condition on its own ring, but groups overlap (" + r.Overlap +
			") and App. A.1 covers one group only; overlapping groups can deadlock (App. A.2). Check with 'lfccheck check'" + note
	default:
		r.Conclusion = "no guarantee: the distance condition and its inverse both fail for some tree; check with 'lfccheck check'" + note
	}
	return r
}

// condition checks App. A.1's condition at every non-root node of tr:
// dist(parent, g) < dist(g, c) for every child c (or > with inverse).
func condition(tr *Tree, dist func(a, b int) int, inverse bool) Check {
	for g, par := range tr.Parent {
		if par < 0 {
			continue
		}
		dp := dist(par, g)
		for _, c := range tr.Children[g] {
			dc := dist(g, int(c))
			if (!inverse && dp >= dc) || (inverse && dp <= dc) {
				rel := "not closer"
				if inverse {
					rel = "not farther"
				}
				return Check{Witness: fmt.Sprintf("node %d: parent %d at distance %d is %s than child %d at distance %d",
					g, par, dp, rel, c, dc)}
			}
		}
	}
	return Check{Holds: true}
}

func holds(c Check) string {
	if c.Holds {
		return "holds"
	}
	return "fails (" + c.Witness + ")"
}

// WriteText prints a report; with edges set it lists every tree's edges.
func WriteText(w io.Writer, r Report, edges bool) {
	fmt.Fprintf(w, "topology: %d nodes, %d groups, %d trees\n", r.Nodes, len(r.Groups), len(r.Trees))
	for _, g := range r.Groups {
		fmt.Fprintf(w, "group %s: %s\n", g.Name, joinInts(g.Members, " "))
	}
	for _, t := range r.Trees {
		fmt.Fprintf(w, "tree of %d in %s: depth %d, max fanout %d; distance condition %s; inverse %s\n",
			t.Root, t.Group, t.Depth, t.MaxFanout, holds(t.Condition), holds(t.Inverse))
		if edges {
			var es []string
			for _, e := range t.Edges {
				es = append(es, fmt.Sprintf("%d->%d", e[0], e[1]))
			}
			fmt.Fprintf(w, "  edges: %s\n", strings.Join(es, " "))
		}
	}
	fmt.Fprintf(w, "links used: %d of %d directed NI-to-NI links (L_used/L_av = %.3f)\n", r.LinksUsed, r.LinksAvailable, r.LinkRatio)
	writeDeps(w, r.Dependencies)
	fmt.Fprintf(w, "conclusion: %s\n", r.Conclusion)
}

// WriteDOT prints the trees as a Graphviz digraph, one cluster per tree;
// the tree edges on a cycle of the buffer dependency graph are red.
func WriteDOT(w io.Writer, t *Topology) {
	onCycle := cycleEdges(t)
	fmt.Fprintln(w, "digraph lfc_trees {")
	fmt.Fprintln(w, "  node [shape=circle];")
	for i, tr := range t.Trees {
		g := t.Groups[tr.Group]
		fmt.Fprintf(w, "  subgraph cluster_%d {\n    label=%s;\n", i, dotQuote(fmt.Sprintf("tree of %d in %s", tr.Root, g.Name)))
		for _, m := range g.Members {
			attr := ""
			if m == tr.Root {
				attr = " [style=bold]"
			}
			fmt.Fprintf(w, "    t%d_n%d [label=\"%d\"]%s;\n", i, m, m, attr)
		}
		for p, cs := range tr.Children {
			for _, c := range cs {
				attr := ""
				if onCycle[[3]int{i, p, int(c)}] {
					attr = " [color=red, penwidth=2]"
				}
				fmt.Fprintf(w, "    t%d_n%d -> t%d_n%d%s;\n", i, p, i, c, attr)
			}
		}
		fmt.Fprintln(w, "  }")
	}
	fmt.Fprintln(w, "}")
}

// cycleEdges marks the tree edges (tree, from, to) on a cycle of t's
// buffer dependency graph: the forwarding each step of the cycle names.
func cycleEdges(t *Topology) map[[3]int]bool {
	p := 0
	for _, g := range t.Groups {
		for _, m := range g.Members {
			p = max(p, int(m)+1)
		}
	}
	out := map[[3]int]bool{}
	for _, st := range Dependencies(t, p).Cycle {
		for i, tr := range t.Trees {
			if fmt.Sprintf("of %d in %s", tr.Root, t.Groups[tr.Group].Name) == st.Tree {
				out[[3]int{i, st.At, st.To}] = true
			}
		}
	}
	return out
}

// dotQuote renders s as a DOT double-quoted string: backslashes, quotes and
// line breaks are escaped.
func dotQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`)
	return `"` + r.Replace(s) + `"`
}

func joinInts(xs []int, sep string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, sep)
}
