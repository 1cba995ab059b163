package mcast_test

import (
	"math/rand"
	"sort"
	"testing"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols/internal/checktest"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/topology"
	"lfccheck/protocols/ucast"
	"lfccheck/traces"
)

// randomTopology draws 1 to 3 groups over p nodes (possibly overlapping),
// each member with a random tree of its group.
func randomTopology(rng *rand.Rand, p int) *topology.TopologySpec {
	spec := &topology.TopologySpec{}
	groups := 1 + rng.Intn(2)
	for g := 0; g < groups; g++ {
		perm := rng.Perm(p)
		members := perm[:2+rng.Intn(p-1)]
		sort.Ints(members)
		name := string(rune('a' + g))
		spec.Groups = append(spec.Groups, topology.GroupSpec{Name: name, Members: members})
		for _, root := range members {
			// a random tree: each other member hangs below one already
			// placed, usually the last (deep trees forward, and their
			// partitions fill)
			order := rng.Perm(len(members))
			placed := []int{root}
			var edges [][2]int
			for _, i := range order {
				if m := members[i]; m != root {
					parent := placed[len(placed)-1]
					if rng.Intn(3) == 0 {
						parent = placed[rng.Intn(len(placed))]
					}
					edges = append(edges, [2]int{parent, m})
					placed = append(placed, m)
				}
			}
			spec.Trees = append(spec.Trees, topology.TreeSpec{Group: name, Root: root, Edges: edges})
		}
	}
	return spec
}

// TestDependencyGraphAgainstExplorer checks the buffer dependency graph's
// claim on random small topologies: when the graph is acyclic, exhaustive
// search finds no deadlock; when the search finds one, its wait-for cycle
// is a cycle of the graph (every wait is an edge). Both outcomes must
// occur often enough for the test to mean something.
func TestDependencyGraphAgainstExplorer(t *testing.T) {
	checktest.NotUnderRace(t) // over 2 minutes for 40 runs under -race
	rng := rand.New(rand.NewSource(7))
	runs := 100
	if testing.Short() {
		runs = 40
	}
	acyclic, deadlocks, compared := 0, 0, 0
	for i := 0; i < runs; i++ {
		p := 3
		if rng.Intn(3) == 0 {
			p = 4
		}
		spec := randomTopology(rng, p)
		prm := mcast.Defaults()
		prm.Topology = spec
		prm.Tree = ""
		cfg := model.Config{Protocol: "mcast", Nodes: p, Params: prm, Properties: []string{"deadlock"}}
		topo, err := topology.Build(spec, p)
		if err != nil {
			t.Fatal(err)
		}
		g := topology.Dependencies(topo, p)
		ck, err := properties.Build(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r, err := explore.BFS(ck, explore.Options{MaxStates: 100_000})
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict == explore.Incomplete {
			continue
		}
		compared++
		if g.Acyclic {
			acyclic++
			if r.Verdict != explore.Pass {
				t.Fatalf("run %d: the graph is acyclic but the search finds %v\n%+v", i, r.Violation, spec)
			}
			continue
		}
		if r.Verdict != explore.Fail {
			continue // a cycle is necessary, not sufficient
		}
		deadlocks++
		o, _, err := traces.RunCodes(ck, r.Trace, r.Loop)
		if err != nil {
			t.Fatal(err)
		}
		w := o.Final
		cyc := ucast.WaitForCycle(w)
		if cyc == nil {
			t.Fatalf("run %d: a deadlock without a wait-for cycle\n%s", i, w.Format())
		}
		edges := topology.DependencyEdges(topo, p)
		for k, e := range cyc {
			pred := cyc[(k+len(cyc)-1)%len(cyc)].From
			if _, ok := edges[[3]int{int(pred), int(e.From), int(e.To)}]; !ok {
				t.Fatalf("run %d: the wait %d->%d (holding a packet from %d) is no edge of the dependency graph\n%+v", i, e.From, e.To, pred, spec)
			}
		}
	}
	t.Logf("%d topologies compared: %d acyclic (no deadlock found), %d deadlocks on graph cycles", compared, acyclic, deadlocks)
	if acyclic < runs/5 || deadlocks < runs/20 {
		t.Fatalf("too few acyclic graphs (%d) or deadlocks (%d) among %d runs", acyclic, deadlocks, runs)
	}
}
