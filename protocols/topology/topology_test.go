package topology

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"lfccheck/model"
)

func resolve(t *testing.T, fam string, p int) *Topology {
	t.Helper()
	topo, err := Resolve(fam, nil, p)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func edges(tr *Tree) [][2]int {
	var out [][2]int
	var walk func(n model.NodeID)
	walk = func(n model.NodeID) {
		for _, c := range tr.Children[n] {
			out = append(out, [2]int{int(n), int(c)})
			walk(c)
		}
	}
	walk(tr.Root)
	return out
}

func TestFamilyShapes(t *testing.T) {
	cases := []struct {
		fam  string
		p    int
		root int
		want [][2]int
	}{
		{"binary", 7, 0, [][2]int{{0, 1}, {1, 3}, {1, 4}, {0, 2}, {2, 5}, {2, 6}}},
		// Root p's tree renames n to (n+p) mod P (Fig. 4.9).
		{"binary", 7, 3, [][2]int{{3, 4}, {4, 6}, {4, 0}, {3, 5}, {5, 1}, {5, 2}}},
		// Binomial: farthest child first; parents farther than children.
		{"binomial", 8, 0, [][2]int{{0, 4}, {4, 6}, {6, 7}, {4, 5}, {0, 2}, {2, 3}, {0, 1}}},
		{"chain", 4, 2, [][2]int{{2, 3}, {3, 0}, {0, 1}}},
		{"star", 4, 1, [][2]int{{1, 2}, {1, 3}, {1, 0}}},
		{"kary:3", 5, 0, [][2]int{{0, 1}, {1, 4}, {0, 2}, {0, 3}}},
	}
	for _, c := range cases {
		topo := resolve(t, c.fam, c.p)
		tr := &topo.Trees[topo.TreeOf(0, model.NodeID(c.root))]
		if diff := cmp.Diff(c.want, edges(tr)); diff != "" {
			t.Errorf("%s P=%d root %d (-want +got):\n%s", c.fam, c.p, c.root, diff)
		}
	}
}

// App. A.1: binary trees meet the distance condition, binomial trees its
// inverse, for every P; chains meet neither.
func TestDistanceConditions(t *testing.T) {
	for p := 2; p <= 64; p++ {
		b := Analyze(resolve(t, "binary", p), p)
		n := Analyze(resolve(t, "binomial", p), p)
		if !b.GlobalCondition || !b.DeadlockFree {
			t.Fatalf("binary P=%d: condition fails: %+v", p, b.Trees[0].Condition)
		}
		if !n.GlobalInverse || !n.DeadlockFree {
			t.Fatalf("binomial P=%d: inverse condition fails: %+v", p, n.Trees[0].Inverse)
		}
		if p >= 4 && n.GlobalCondition {
			t.Fatalf("binomial P=%d meets the non-inverse condition", p)
		}
		if p >= 3 {
			c := Analyze(resolve(t, "chain", p), p)
			if c.GlobalCondition || c.GlobalInverse || c.DeadlockFree || c.Trees[0].Condition.Witness == "" {
				t.Fatalf("chain P=%d passes a condition", p)
			}
		}
	}
}

// Table 5.2: L_used/L_av is 0.51 for binary trees and 0.02 for chains on
// 64 nodes.
func TestLinkRatioTable52(t *testing.T) {
	b := Analyze(resolve(t, "binary", 64), 64)
	c := Analyze(resolve(t, "chain", 64), 64)
	if b.LinksUsed != 2048 || b.LinksAvailable != 4032 || fmt.Sprintf("%.2f", b.LinkRatio) != "0.51" {
		t.Fatalf("binary: %d/%d = %.3f", b.LinksUsed, b.LinksAvailable, b.LinkRatio)
	}
	if c.LinksUsed != 64 || fmt.Sprintf("%.2f", c.LinkRatio) != "0.02" {
		t.Fatalf("chain: %d/%d = %.3f", c.LinksUsed, c.LinksAvailable, c.LinkRatio)
	}
}

const overlap = `# App. A.2
nodes 9
group g1 0 3 4 5 6
group g2 0 3 6 7 8
group g3 0 1 2 3 6
tree g1 * binary
tree g2 * binary
tree g3 * binary
`

func TestOverlappingGroupsAnalysis(t *testing.T) {
	spec, p, err := ParseFile("a2.topo", []byte(overlap))
	if err != nil {
		t.Fatal(err)
	}
	topo, err := Build(spec, p)
	if err != nil {
		t.Fatal(err)
	}
	r := Analyze(topo, p)
	if len(r.Trees) != 15 || r.Overlap == "" || r.DeadlockFree || !strings.Contains(r.Conclusion, "overlap") {
		t.Fatalf("%+v", r)
	}
	for _, tr := range r.Trees {
		if !tr.Condition.Holds {
			t.Fatalf("tree of %d in %s fails the condition on its group's ring", tr.Root, tr.Group)
		}
	}
	// Fig. A.2: 0's tree in g1 forwards 0->3->6, 3's tree in g2 3->6->0,
	// 6's tree in g3 6->0->3.
	for _, c := range []struct{ g, root, mid, leaf int }{{0, 0, 3, 6}, {1, 3, 6, 0}, {2, 6, 0, 3}} {
		tr := topo.Trees[topo.TreeOf(c.g, model.NodeID(c.root))]
		if tr.Parent[c.mid] != c.root || tr.Parent[c.leaf] != c.mid {
			t.Fatalf("group %d tree of %d lacks path %d->%d->%d", c.g, c.root, c.root, c.mid, c.leaf)
		}
	}
}

func TestExplicitEdges(t *testing.T) {
	spec, p, err := ParseFile("t", []byte("nodes 4\ngroup all 0 1 2 3\ntree all 0 0->2 2->1 0->3\ntree all * chain\n"))
	if err != nil {
		t.Fatal(err)
	}
	topo, err := Build(spec, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := edges(&topo.Trees[topo.TreeOf(0, 0)]); !cmp.Equal(got, [][2]int{{0, 2}, {2, 1}, {0, 3}}) {
		t.Fatalf("explicit tree: %v", got)
	}
	if got := edges(&topo.Trees[topo.TreeOf(0, 1)]); !cmp.Equal(got, [][2]int{{1, 2}, {2, 3}, {3, 0}}) {
		t.Fatalf("* chain tree: %v", got)
	}
}

// Malformed topology files: one error naming the file, the line and the
// problem.
func TestParseErrors(t *testing.T) {
	head := "nodes 4\ngroup all 0 1 2 3\n"
	cases := []struct{ body, want string }{
		{"", "empty topology file"},
		{"group all 0 1\n", "f.topo:1: the first statement must be 'nodes P'"},
		{"nodes 1\n", "f.topo:1: nodes must be a number in 2..64"},
		{"nodes 4\nnodes 4\n", "f.topo:2: nodes given twice"},
		{"nodes 4\nfrob\n", `f.topo:2: unknown statement "frob"`},
		{"nodes 4\ngroup all 0 1 7\n", "f.topo:2: member 7 out of range 0..3"},
		{"nodes 4\ngroup all 0 1 1\n", "f.topo:2: member 1 listed twice"},
		{"nodes 4\ngroup all 0\n", "f.topo:2: group \"all\" needs at least 2 members"},
		{head + "group all 0 1\n", "f.topo:3: group \"all\" already defined on line 2"},
		{head + "tree other 0 binary\n", "f.topo:3: no group \"other\""},
		{head + "tree all 0 binary\n", "f.topo:2: group \"all\": no tree for member 1"},
		{head + "tree all * bushy\n", `f.topo:3: unknown tree family "bushy"`},
		{head + "tree all * kary:0\n", "f.topo:3: bad fanout"},
		{head + "tree all 9 binary\n", "f.topo:3: root 9 out of range 0..3"},
		{"nodes 5\ngroup g 0 1 2\ntree g 4 binary\n", "f.topo:3: group \"g\": root 4 of a tree is not a member of the group"},
		{head + "tree all 0 0->1 1->2 2->3 0->1\ntree all * binary\n", "f.topo:3: group \"all\", tree of root 0: duplicate edge 0->1"},
		{head + "tree all 0 0->1 1->2\ntree all * binary\n", "f.topo:3: group \"all\", tree of root 0: not a spanning tree of the group: member 3 has no parent"},
		{head + "tree all 0 0->1 2->3 3->2\ntree all * binary\n", "f.topo:3: group \"all\", tree of root 0: cycle: member 2"},
		{head + "tree all 0 0->1 2->3 3->2 1->2\ntree all * binary\n", "two parents"},
		{head + "tree all 0 0->1 1->0\n", "the root cannot have a parent"},
		{head + "tree all 0 0->1 2->3\ntree all * binary\n", "f.topo:3: group \"all\", tree of root 0: not a spanning tree of the group: member 2 has no parent"},
		{"nodes 5\ngroup g 0 1 2 3\ntree g 0 0->1 1->4 0->2 0->3\n", "node 4 is not a member of the group"},
		{head + "tree all 0 0->9\n", "f.topo:3: node 9 out of range 0..3"},
		{head + "tree all 0 0-1\n", `f.topo:3: edge "0-1": want PARENT->CHILD`},
		{head + "tree all * 0->1\n", "f.topo:3: edges need a root number, not *"},
		{head + "tree all * binary\ntree all * chain\n", "f.topo:4: group \"all\" root * already has a tree on line 3"},
		{head + "tree all 0 binary extra\n", "f.topo:3: a family tree takes no more words"},
		{head + "tree all 0\n", "f.topo:3: want 'tree GROUP ROOT FAMILY'"},
	}
	for _, c := range cases {
		_, _, err := ParseFile("f.topo", []byte(c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: got %v, want an error containing %q", c.body, err, c.want)
		}
	}
}

// A cycle hidden among members that all have parents is reported as one.
func TestCycleDetected(t *testing.T) {
	spec := &TopologySpec{
		Groups: []GroupSpec{{Name: "g", Members: []int{0, 1, 2, 3}}},
		Trees:  []TreeSpec{{Group: "g", Root: 0, Edges: [][2]int{{0, 1}, {2, 3}, {3, 2}}}, {Group: "g", Root: -1, Family: "binary"}},
	}
	_, err := Build(spec, 4)
	if err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Fatalf("got %v", err)
	}
}

func FuzzParseFile(f *testing.F) {
	f.Add([]byte(overlap))
	f.Add([]byte("nodes 4\ngroup all 0 1 2 3\ntree all 0 0->2 2->1 0->3\ntree all * kary:3\n"))
	f.Add([]byte("nodes 3\ngroup a 0 1 2\ntree a * chain # c\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, p, err := ParseFile("fuzz", data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error: %q", err)
			}
			return
		}
		topo, err := Build(spec, p)
		if err != nil {
			t.Fatalf("parsed file does not build: %v", err)
		}
		Analyze(topo, p)
		for _, tr := range topo.Trees {
			n := len(edges(&tr)) + 1
			if n != len(topo.Groups[tr.Group].Members) {
				t.Fatalf("tree of %d spans %d of %d members", tr.Root, n, len(topo.Groups[tr.Group].Members))
			}
		}
	})
}

// A file that begins with a UTF-8 byte-order mark (as some editors save
// it) parses as the same file without it; it was refused with "the first
// statement must be 'nodes P'". A mark anywhere else is not whitespace.
func TestParseFileByteOrderMark(t *testing.T) {
	want, wp, err := ParseFile("a2.topo", []byte(overlap))
	if err != nil {
		t.Fatal(err)
	}
	got, gp, err := ParseFile("a2.topo", []byte("\ufeff"+overlap))
	if err != nil || gp != wp {
		t.Fatalf("with a byte-order mark: %v (nodes %d, want %d)", err, gp, wp)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("with a byte-order mark (-without +with):\n%s", diff)
	}
	if _, _, err := ParseFile("b.topo", []byte("nodes 4\n\ufeffgroup g 0 1\n")); err == nil || !strings.HasPrefix(err.Error(), "b.topo:2: ") {
		t.Errorf("a mark inside the file: %v", err)
	}
}
