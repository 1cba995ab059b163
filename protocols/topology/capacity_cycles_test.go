package topology_test

import (
	"fmt"
	"os"
	"testing"

	"lfccheck/protocols/topology"
)

// A ring of 4 NIs closed by the chains of 0 and 2: the tree of 0 alone
// can block in 0 at 1 and 1 at 2, so with one packet on it and three on
// the other the ring cannot fill, though the ring as a whole could hold
// the four packets a deadlock needs (step 2 allows it; step 3 refutes the
// ring's only cycle by those two partitions). With two packets on each,
// no part falls short and the cycle is shown.
func TestProveCycleParts(t *testing.T) {
	trees := []topology.TreeEdges{
		{Name: "of 0", Edges: [][2]int{{0, 1}, {1, 2}, {2, 3}}},
		{Name: "of 2", Edges: [][2]int{{2, 3}, {3, 0}, {0, 1}}},
	}
	w := topology.Workload{Credits: 1, Refresh: 1}
	pr := topology.ProveTrees(4, trees, []int{1, 3}, w)
	c := pr.Component
	if pr.Verdict != topology.DeadlockFree || c == nil || !c.ByCycles || c.Cycles != 1 || c.Fills || c.Blocked != 4 || c.Needed != 4 || c.Shortfall == nil {
		t.Fatalf("%s: %s %+v", pr.Verdict, pr.Reason, c)
	}
	if got := fmt.Sprint(c.Shortfall); got != "only packets of the tree of 0 can block in 0 at 1, 1 at 2: at most 1 at once, and a deadlock needs 2 there" {
		t.Fatal(got)
	}
	pr = topology.ProveTrees(4, trees, []int{2, 2}, w)
	c = pr.Component
	if pr.Verdict != topology.Undecided || c == nil || c.ByCycles || c.Cycles != 1 || !c.Fills || len(pr.Cycle) != 4 || c.Shortfall != nil {
		t.Fatalf("%s: %s %+v", pr.Verdict, pr.Reason, c)
	}
}

// A tree that passes through a partition of the ring but forwards from
// there only to a leaf off the ring (5->0->1->4) cannot keep a packet
// blocked in it: the partition it would wait on, 1 at 4, is in no cycle
// of full partitions. So it does not help the tree of 0 fill 0 at 1 and
// 1 at 2 (exhaustive search agrees: no deadlock, 45,463 states).
func TestProveCyclePartsWaitForEver(t *testing.T) {
	trees := []topology.TreeEdges{
		{Name: "of 0", Edges: [][2]int{{0, 1}, {1, 2}, {2, 3}}},
		{Name: "of 2", Edges: [][2]int{{2, 3}, {3, 0}, {0, 1}}},
		{Name: "of 5", Edges: [][2]int{{5, 0}, {0, 1}, {1, 4}}},
	}
	pr := topology.ProveTrees(6, trees, []int{1, 2, 1}, topology.Workload{Credits: 1, Refresh: 1})
	c := pr.Component
	if pr.Verdict != topology.DeadlockFree || c == nil || !c.ByCycles || c.Shortfall == nil || len(c.Shortfall.Trees) != 1 || len(c.Shortfall.Partitions) != 2 {
		t.Fatalf("%s: %s %+v %+v", pr.Verdict, pr.Reason, c, c.Shortfall)
	}
}

// App. A.2's groups with every member multicasting once and C=2: the
// 3-cycle 0 at 3, 3 at 6, 6 at 0 needs two blocked packets in each, and
// of the two trees that bring packets from 0 to 3 and forward them there,
// only the tree of 0 in g1 forwards them on along a partition that can
// stay full (3 at 6); the other's forwards drain. So 0 at 3 can keep one.
func TestProveA2TwoCredits(t *testing.T) {
	data, err := os.ReadFile("../../examples/overlap-a2.topo")
	if err != nil {
		t.Fatal(err)
	}
	spec, n, err := topology.ParseFile("overlap-a2.topo", data)
	if err != nil {
		t.Fatal(err)
	}
	topo, err := topology.Build(spec, n)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := topology.Prove(topo, n, topology.Workload{Credits: 2, Refresh: 1, Packets: 1})
	c := pr.Component
	if err != nil || pr.Verdict != topology.DeadlockFree || c == nil || !c.ByCycles || c.Cycles != 1 || c.Shortfall == nil ||
		fmt.Sprint(c.Shortfall) != "only packets of the tree of 0 in g1 can block in 0 at 3: at most 1 at once, and a deadlock needs 2 there" {
		t.Fatalf("%v: %s: %s %+v", err, pr.Verdict, pr.Reason, c)
	}
	// With one credit the cycle fills (a deadlock, found by trees' search).
	pr, _ = topology.Prove(topo, n, topology.Workload{Credits: 1, Refresh: 1, Packets: 1})
	if pr.Verdict != topology.Undecided {
		t.Fatalf("%s: %s", pr.Verdict, pr.Reason)
	}
}
