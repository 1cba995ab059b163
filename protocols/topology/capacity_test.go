package topology_test

import (
	"strings"
	"testing"

	"lfccheck/protocols/topology"
)

// Chains: one cycle of P partitions, each packet blocked in one place, so
// deadlock-free exactly when K < C-R+1 (the proof's threshold), at any P.
func TestProveChains(t *testing.T) {
	for p := 3; p <= 40; p += 37 / 4 {
		for c := 1; c <= 5; c++ {
			for r := 1; r <= c; r++ {
				for k := 1; k <= 5; k++ {
					pr, err := topology.ProveFamily("chain", p, topology.Workload{Credits: c, Refresh: r, Packets: k})
					if err != nil {
						t.Fatal(err)
					}
					want := topology.Undecided
					if k < c-r+1 {
						want = topology.DeadlockFree
					}
					if pr.Verdict != want || pr.Need != c-r+1 || !pr.Cyclic {
						t.Fatalf("chain P=%d C=%d R=%d K=%d: %s (need %d), want %s: %s", p, c, r, k, pr.Verdict, pr.Need, want, pr.Reason)
					}
					if want == topology.Undecided && (len(pr.Cycle) != p || pr.Component.Blocked != p*k || pr.Component.Needed != p*(c-r+1)) {
						t.Fatalf("chain P=%d C=%d R=%d K=%d: cycle of %d, counts %+v", p, c, r, k, len(pr.Cycle), pr.Component)
					}
				}
			}
		}
	}
}

// A branching tree holds one packet in several partitions at once, and the
// count must say so. The ring of partitions 2 at 0, 0 at 1, 1 at 2 is
// closed by three trees on 6 nodes; the tree of 3 (3->2->0, 0->1, 0->4,
// 1->5) can hold one packet at 0, waiting to send to 4, and at 1, waiting
// to send to 5: two partitions of the ring (f = 2), the chains one each.
// With C=2 (2 blocked packets a partition, 6 for the ring), two packets on
// the tree of 3 and one on each chain can block 2*2+1+1 = 6: the count
// over the component does not refute it (counting each packet once would
// have said 4). Step 3 does: those two places wait on 4 and 5, leaves
// whose buffers drain, so in a deadlock the tree of 3 holds nothing in 0
// at 1, which the chain of 0 alone cannot fill.
func TestProveBranching(t *testing.T) {
	trees := []topology.TreeEdges{
		{Name: "of 3", Edges: [][2]int{{3, 2}, {2, 0}, {0, 1}, {1, 5}, {0, 4}}},
		{Name: "of 0", Edges: [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}}},
		{Name: "of 1", Edges: [][2]int{{1, 2}, {2, 0}, {0, 3}, {3, 4}, {4, 5}}},
	}
	w := topology.Workload{Credits: 2, Refresh: 1}
	pr := topology.ProveTrees(6, trees, []int{2, 1, 1}, w)
	if c := pr.Component; pr.Verdict != topology.DeadlockFree || c == nil || c.Blocked != 6 || c.Needed != 6 || !c.ByCycles || len(pr.Cycle) != 3 ||
		c.Shortfall == nil || c.Shortfall.Trees[0] != "of 0" || c.Shortfall.Needed != 2 || c.Shortfall.Blocked != 1 {
		t.Fatalf("%s: %s %+v", pr.Verdict, pr.Reason, pr.Component)
	}
	pr = topology.ProveTrees(6, trees, []int{1, 1, 1}, w)
	if pr.Verdict != topology.DeadlockFree || pr.Component == nil || pr.Component.Blocked != 4 {
		t.Fatalf("%s: %s %+v", pr.Verdict, pr.Reason, pr.Component)
	}
}

func TestProveRefuses(t *testing.T) {
	pr, err := topology.ProveFamily("binary", 8, topology.Workload{Credits: 2, Refresh: 3, Packets: 1})
	if err != nil || pr.Verdict != topology.Undecided || pr.Need != 0 || !strings.Contains(pr.Reason, "CREDIT_REFRESH 3 > C=2") {
		t.Fatalf("refresh > C: %+v %v", pr, err)
	}
	pr, err = topology.ProveFamily("binary", 8, topology.Workload{Credits: 2, Refresh: 1, Packets: 1, Uncovered: []string{"kept packets"}})
	if err != nil || pr.Verdict != topology.Undecided || !strings.Contains(pr.Reason, "does not cover kept packets") {
		t.Fatalf("uncovered: %+v %v", pr, err)
	}
	if _, err := topology.ProveFamily("chain", 8, topology.Workload{Credits: 1, Refresh: 1, Casts: []topology.Cast{{Group: "g", Root: 0, Count: 1}}}); err == nil {
		t.Fatal("a cast on a group the family does not have")
	}
	for _, k := range []string{"keep", "reply", "drain", "upcalls-allowed", "work", "server", "something-new"} {
		if ok, why := topology.ProofCovers(k); ok || why == "" {
			t.Errorf("%s: covered %v (%q)", k, ok, why)
		}
	}
}
