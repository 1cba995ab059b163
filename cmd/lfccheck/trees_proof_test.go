package main

import (
	"encoding/json"
	"math/rand"
	"sort"
	"strings"
	"testing"

	"lfccheck/explore"
	"lfccheck/internal/racebuild"
	"lfccheck/model"
	"lfccheck/protocols"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/topology"
	"lfccheck/protocols/ucast"
)

// randomSpec draws 1 to 3 groups over p nodes (possibly overlapping), each
// member's tree a family or random edges (usually deep, so that NIs
// forward and partitions fill).
func randomSpec(rng *rand.Rand, p int) *topology.TopologySpec {
	spec := &topology.TopologySpec{}
	fams := []string{"binary", "binomial", "chain", "star", "kary:3"}
	groups := 1 + rng.Intn(3)
	for g := 0; g < groups; g++ {
		members := rng.Perm(p)[:2+rng.Intn(p-1)]
		if g == 0 && rng.Intn(2) == 0 {
			members = rng.Perm(p) // one group of every node, often
		}
		sort.Ints(members)
		name := string(rune('a' + g))
		spec.Groups = append(spec.Groups, topology.GroupSpec{Name: name, Members: members})
		if rng.Intn(3) == 0 {
			spec.Trees = append(spec.Trees, topology.TreeSpec{Group: name, Root: -1, Family: fams[rng.Intn(len(fams))]})
			continue
		}
		// Trees in random order, or, half the time, along one ring of the
		// members (every root's tree follows the ring from the root, as
		// chains do, so that the trees' forwardings close cycles).
		ring := rng.Intn(2) == 0
		cyc := rng.Perm(len(members))
		for ri, root := range members {
			placed := []int{root}
			var edges [][2]int
			order := rng.Perm(len(members))
			if ring {
				at := 0
				for k, x := range cyc {
					if x == ri {
						at = k
					}
				}
				for k := range order {
					order[k] = cyc[(at+k)%len(cyc)]
				}
			}
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

// randomWorkloadConfig draws an MCAST configuration of p nodes: a tree
// family or random groups and trees, C in 1..3, CREDIT_REFRESH mostly the
// default (sometimes any value up to C+1), packets on every tree or casts
// of 1 to 3 packets from some roots, sometimes unicast flows and other
// buffer sizes; at most maxCasts multicast packets when casts are drawn.
// It returns the resolved configuration.
func randomWorkloadConfig(rng *rand.Rand, p, maxCasts int) (model.Config, error) {
	prm := mcast.Defaults()
	var topo *topology.Topology
	var err error
	if rng.Intn(3) == 0 {
		fams := []string{"binary", "binomial", "chain", "chain", "star", "kary:3"}
		prm.Tree = fams[rng.Intn(len(fams))]
		topo, err = topology.Resolve(prm.Tree, nil, p)
	} else {
		prm.Topology = randomSpec(rng, p)
		topo, err = topology.Build(prm.Topology, p)
	}
	if err != nil {
		return model.Config{}, err
	}
	prm.Credits = 1 + rng.Intn(2)
	if rng.Intn(4) == 0 {
		prm.Credits = 3
	}
	switch rng.Intn(4) {
	case 0:
		prm.Refresh = 1 + rng.Intn(prm.Credits+1) // up to C+1: refused
	case 1:
		prm.Refresh = 1
	}
	if rng.Intn(3) == 0 && len(topo.Trees) <= p {
		prm.Packets = 1 + rng.Intn(4)/3
	} else {
		// Casts on most trees of one group, and a few of the others:
		// at most maxCasts packets, so that the search ends.
		main, total := rng.Intn(len(topo.Groups)), 0
		for len(prm.Casts) == 0 {
			for _, t := range topo.Trees {
				if total < maxCasts && (t.Group == main && rng.Intn(4) > 0 || rng.Intn(6) == 0) {
					total++
					g := ""
					if len(topo.Groups) > 1 {
						g = topo.Groups[t.Group].Name
					}
					prm.Casts = append(prm.Casts, topology.Cast{Group: g, Root: int(t.Root), Count: 1 + rng.Intn(4)/3 + rng.Intn(8)/7})
				}
			}
		}
	}
	if rng.Intn(5) == 0 {
		s := rng.Intn(p)
		prm.Flows = []ucast.Flow{{Src: s, Dst: (s + 1 + rng.Intn(p-1)) % p, Count: 1 + rng.Intn(2)}}
	}
	if rng.Intn(5) == 0 {
		prm.SendBuffers = 1
	}
	if rng.Intn(5) == 0 {
		prm.HostBuffers = 2
	}
	n, err := prm.Resolve(p)
	if err != nil {
		return model.Config{}, err
	}
	return model.Config{Protocol: "mcast", Variant: mcast.Correct, Nodes: n, Params: prm}, nil
}

// searchDeadlock searches cfg for a deadlock, exhaustively up to max
// states.
func searchDeadlock(t *testing.T, cfg model.Config, max int64) explore.Result {
	t.Helper()
	cfg.Properties = []string{"deadlock"}
	ck, err := protocols.Build(cfg)
	if err != nil {
		t.Fatalf("%s: %v", cfg.Describe(), err)
	}
	ck.Symmetry = ck.SymmetryOff() == ""
	r, err := explore.BFS(ck, explore.Options{MaxStates: max})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestTreesProofSound compares the workload proof with exhaustive search
// on random topologies and workloads at P <= 4: wherever the proof says
// deadlock-free, the search must find no deadlock. It reports how often
// the proof decides, among the configurations the search passes.
func TestTreesProofSound(t *testing.T) {
	cases, maxStates, p4, maxCasts := 200, int64(100_000), 3, 5
	if testing.Short() {
		// about 3 s under the race detector
		cases, maxStates, p4, maxCasts = 50, 3_000, 1_000_000, 3
	}
	rng := rand.New(rand.NewSource(37))
	var free, freeCyclic, byCycles, undecided, refused, compared, deadlocks, passes, freePasses, incomplete, freeUnverified int
	for i := 0; i < cases; i++ {
		p := 3
		if rng.Intn(p4) == 0 {
			p = 4
		}
		cfg, err := randomWorkloadConfig(rng, p, maxCasts)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		pr, err := proveConfig(cfg, nil)
		if err != nil {
			t.Fatalf("case %d: %s: %v", i, cfg.Describe(), err)
		}
		isFree := pr.Verdict == topology.DeadlockFree
		if isFree && pr.Component != nil && pr.Component.ByCycles {
			byCycles++
		}
		switch {
		case isFree && pr.Cyclic:
			free++
			freeCyclic++
		case isFree:
			free++
		case pr.Need == 0:
			refused++
		default:
			undecided++
		}
		r := searchDeadlock(t, cfg, maxStates)
		switch r.Verdict {
		case explore.Incomplete:
			incomplete++
			if isFree {
				freeUnverified++
			}
			continue
		case explore.Fail:
			deadlocks++
			if isFree {
				t.Errorf("case %d: the proof says deadlock-free, the search finds %s\n  %s\n  %s\n  proof: %s",
					i, r.Violation.PropertyName(), cfg.Describe(), settingsOf(cfg), pr.Reason)
			}
		case explore.Pass:
			passes++
			if isFree {
				freePasses++
			}
		}
		compared++
	}
	t.Logf("%d configurations: proof deadlock-free %d (%d of them with a cyclic dependency graph, %d refuted cycle by cycle), undecided %d, refused (refresh > C) %d",
		cases, free, freeCyclic, byCycles, undecided, refused)
	t.Logf("searches complete %d (incomplete %d, of which %d proved free): %d deadlocks, none proved free; %d pass, %d of them proved (%.0f%%)",
		compared, incomplete, freeUnverified, deadlocks, passes, freePasses, 100*float64(freePasses)/float64(max(passes, 1)))
	if deadlocks < cases/20 || freeCyclic < cases/20 || freePasses < cases/4 {
		t.Fatalf("too few deadlocks (%d), cyclic proofs (%d) or proved passes (%d) among %d configurations for the comparison to mean much", deadlocks, freeCyclic, freePasses, cases)
	}
}

// settingsOf renders cfg's settings as flags.
func settingsOf(cfg model.Config) string {
	var s []string
	for _, st := range cfg.Settings() {
		s = append(s, "--"+st.Key+" "+shellQuote(st.Value))
	}
	return strings.Join(s, " ")
}

// TestTreesProofSuiteClaims runs the proof on every MCAST claim of the
// suite and every broken variant's example: where the suite expects a
// deadlock (or a broken variant), the proof must not say deadlock-free.
func TestTreesProofSuiteClaims(t *testing.T) {
	free, n := 0, 0
	for _, sc := range suite() {
		if sc.static != nil || sc.claim.Config.Protocol != "mcast" {
			continue
		}
		cfg := sc.claim.Config.Clone()
		prm := cfg.Params.(*mcast.Params)
		nodes, err := prm.Resolve(cfg.Nodes)
		if err != nil {
			t.Fatalf("%s: %v", sc.name, err)
		}
		cfg.Nodes = nodes
		pr, err := proveConfig(cfg, nil)
		if err != nil {
			t.Fatalf("%s: %v", sc.name, err)
		}
		n++
		if pr.Verdict == topology.DeadlockFree {
			free++
			if sc.claim.Expect != "pass" {
				t.Errorf("%s: expected %q, the proof says deadlock-free (%s)", sc.name, sc.claim.Expect, pr.Reason)
			}
		}
		t.Logf("%-60s expect %-26s proof %s", sc.name, sc.claim.Expect, pr.Verdict)
	}
	if n < 10 || free == 0 {
		t.Fatalf("%d MCAST checks, %d proved", n, free)
	}
}

// TestTreesProofTargets: the sizes, decided as the argument says.
func TestTreesProofTargets(t *testing.T) {
	big, large := "2048", "1024"
	if testing.Short() {
		big, large = "256", "128" // the race detector makes the largest take seconds
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		// chains: deadlock-free when K < C-R+1, at any P
		{[]string{"--tree", "chain", "--nodes", "12", "--credits", "2", "--packets", "1"}, topology.DeadlockFree},
		{[]string{"--tree", "chain", "--nodes", big, "--credits", "2", "--packets", "1"}, topology.DeadlockFree},
		{[]string{"--tree", "chain", "--nodes", "64", "--credits", "5", "--packets", "4", "--refresh", "1"}, topology.DeadlockFree},
		{[]string{"--tree", "chain", "--nodes", "12", "--credits", "1", "--packets", "1"}, topology.Undecided},
		// C=4 with the default refresh 2: 3 blocked packets fill a
		// partition, and chains of 4 deadlock with K=3
		{[]string{"--tree", "chain", "--nodes", "4", "--credits", "4", "--packets", "3"}, topology.Undecided},
		{[]string{"--topology", "../../examples/overlap-a2.topo", "--credits", "2", "--cast", "g1/0:1", "--cast", "g2/3:1", "--cast", "g3/6:1"}, topology.DeadlockFree},
		{[]string{"--topology", "../../examples/overlap-a2.topo", "--credits", "1", "--cast", "g1/0:1", "--cast", "g2/3:1", "--cast", "g3/6:1"}, topology.Undecided},
		{[]string{"--tree", "binary", "--nodes", large, "--credits", "1"}, topology.DeadlockFree},
		{[]string{"--tree", "chain", "--nodes", "6", "--credits", "1", "--refresh", "2"}, topology.Undecided},
	} {
		// --timeout 0: the proof alone (trees_search_test.go tests the
		// search it would run next).
		code, out, errs := runCLI(append([]string{"trees", "--json", "--timeout", "0"}, c.args...)...)
		var v struct {
			Answer   string          `json:"answer"`
			AnswerBy string          `json:"answer_by"`
			Proof    *topology.Proof `json:"workload_proof"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil || v.Proof == nil {
			t.Fatalf("%v: exit %d, %v, stderr %s\n%.300s", c.args, code, err, errs, out)
		}
		wantCode := exitPass
		if c.want != topology.DeadlockFree {
			wantCode = exitIncomplete
		}
		if v.Answer != c.want || v.Proof.Verdict != c.want || code != wantCode || v.AnswerBy != "proof" {
			t.Errorf("%v: answer %s (exit %d), want %s (exit %d): %s", c.args, v.Answer, code, c.want, wantCode, v.Proof.Reason)
		}
	}
}

func TestTreesWorkloadErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"trees", "--credits", "0"}, "--credits 0: must be in 1..64"},
		{[]string{"trees", "--credits", "01"}, "--credits 01"},
		{[]string{"trees", "--cast", "x"}, "want [GROUP/]ROOT:COUNT"},
		{[]string{"trees", "--nodes", "4", "--cast", "5:1"}, "not a member of any group"},
		{[]string{"trees", "--packets", "1", "--cast", "0:1"}, "give packets or casts, not both"},
		{[]string{"trees", "--packets", "0"}, "nothing to send"},
		{[]string{"trees", "--refresh", "0"}, "--refresh 0"},
		{[]string{"trees", "--credits", "2", "--credits", "3"}, "--credits given 2 times"},
		{[]string{"trees", "--credits", "2", "--dot"}, "give the workload flags without them"},
		{[]string{"trees", "--nodes", "100", "--tree", "chain", "--cast", "70:1"}, "root 70 out of range"},
		{[]string{"trees", "--topology", "../../examples/overlap-a2.topo", "--cast", "g9/0:1"}, `no group "g9"`},
	} {
		code, out, errs := runCLI(c.args...)
		if code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line containing %q", c.args, code, out, errs, c.want)
		}
	}
	// Without workload flags: the static analysis, exit 0, no proof.
	code, out, _ := runCLI("trees", "--nodes", "6", "--tree", "chain", "--json")
	if code != 0 || strings.Contains(out, "workload_proof") || !strings.Contains(out, `"deadlock_free_by_condition": false`) {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	code, out, _ = runCLI("trees", "--nodes", "6", "--tree", "chain", "--credits", "2")
	if code != 0 || !strings.Contains(out, "conclusion: no guarantee") || !strings.Contains(out, "answer: deadlock-free") || !strings.Contains(out, "assuming: ") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// ringConfig draws P = 4 or 5 NIs with a group of every node whose trees
// are chains along one ring, sometimes a second group (chains, binary or
// binomial trees), and casts of 1 to maxCount packets from two roots that close
// the ring and sometimes a third; or, a third of the time, overlap16.topo
// in small (a group of every node with binary trees and two overlapping
// halves on chains) with casts from 2 or 3 roots. These are the workloads
// where counting whole components allows a cycle and the cycle's parts
// decide.
func ringConfig(rng *rand.Rand, maxCount int) (model.Config, error) {
	p := 4 + rng.Intn(2)
	prm := mcast.Defaults()
	all := make([]int, p)
	for i := range all {
		all[i] = i
	}
	spec := &topology.TopologySpec{}
	prm.Credits = 1 + rng.Intn(4)/3
	if rng.Intn(2) == 0 {
		prm.Refresh = 1
	}
	pick := func() topology.Cast {
		g := spec.Groups[rng.Intn(len(spec.Groups))]
		return topology.Cast{Group: g.Name, Root: g.Members[rng.Intn(len(g.Members))], Count: 1 + rng.Intn(maxCount)}
	}
	if rng.Intn(3) == 0 {
		cut := 2 + rng.Intn(p-3) // lo is 0..cut, hi cut-1..p-1: they share two nodes
		spec.Groups = []topology.GroupSpec{{Name: "all", Members: all}, {Name: "lo", Members: all[:cut+1]}, {Name: "hi", Members: all[cut-1:]}}
		spec.Trees = []topology.TreeSpec{{Group: "all", Root: -1, Family: "binary"}, {Group: "lo", Root: -1, Family: "chain"}, {Group: "hi", Root: -1, Family: "chain"}}
		for n := 2 + rng.Intn(2); len(prm.Casts) < n; {
			prm.Casts = append(prm.Casts, pick())
		}
	} else {
		spec.Groups = []topology.GroupSpec{{Name: "r", Members: all}}
		spec.Trees = []topology.TreeSpec{{Group: "r", Root: -1, Family: "chain"}}
		if rng.Intn(2) == 0 {
			sub := rng.Perm(p)[:3+rng.Intn(p-2)]
			sort.Ints(sub)
			fams := []string{"chain", "binary", "binomial"}
			spec.Groups = append(spec.Groups, topology.GroupSpec{Name: "s", Members: sub})
			spec.Trees = append(spec.Trees, topology.TreeSpec{Group: "s", Root: -1, Family: fams[rng.Intn(3)]})
		}
		// Two roots on the ring at least two apart close it; a third
		// cast anywhere.
		a := rng.Intn(p)
		prm.Casts = []topology.Cast{{Group: "r", Root: a, Count: 1 + rng.Intn(maxCount)}, {Group: "r", Root: (a + 2 + rng.Intn(p-3)) % p, Count: 1 + rng.Intn(maxCount)}}
		if rng.Intn(2) == 0 {
			prm.Casts = append(prm.Casts, pick())
		}
	}
	prm.Topology = spec
	n, err := prm.Resolve(p)
	if err != nil {
		return model.Config{}, err
	}
	return model.Config{Protocol: "mcast", Variant: mcast.Correct, Nodes: n, Params: prm}, nil
}

// The proof's cycle-by-cycle step (partitions that too few packets can
// fill) is compared with exhaustive search on ring workloads at P = 4 and
// 5, where it decides often: it never says deadlock-free where the search
// finds a deadlock. Under the race detector, where the searches take
// most of the time, the search runs where step 3 refuted every cycle
// (the proof's claim the test checks) and on one in six of the others
// (which count the deadlocks).
func TestTreesProofCyclesSound(t *testing.T) {
	cases, maxStates := 200, int64(300_000)
	if testing.Short() {
		cases, maxStates = 100, 30_000
	}
	unsearched := 0
	rng := rand.New(rand.NewSource(373))
	byCycles, survived, deadlocks, verified := 0, 0, 0, 0
	for i := 0; i < cases; i++ {
		cfg, err := ringConfig(rng, 3)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		pr, err := proveConfig(cfg, nil)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		c := pr.Component
		if c == nil || c.Cycles == 0 {
			continue // step 3 did not run
		}
		if c.ByCycles {
			byCycles++
		} else {
			survived++
			if racebuild.Enabled && survived%6 != 1 {
				unsearched++
				continue
			}
		}
		r := searchDeadlock(t, cfg, maxStates)
		if r.Verdict == explore.Fail {
			deadlocks++
			if pr.Verdict == topology.DeadlockFree {
				t.Errorf("case %d: the proof refutes every cycle, the search finds a deadlock\n  %s\n  %s\n  proof: %s", i, cfg.Describe(), settingsOf(cfg), pr.Reason)
			}
		}
		if r.Verdict == explore.Pass && c.ByCycles {
			verified++
		}
	}
	t.Logf("%d ring workloads: step 3 refuted every cycle in %d (%d verified by exhaustive search), found a cycle it cannot refute in %d; %d deadlocks, none proved free",
		cases, byCycles, verified, survived, deadlocks)
	if racebuild.Enabled {
		t.Logf("race detector: %d of the workloads with a cycle step 3 cannot refute were not searched; the test without -race searches them all", unsearched)
	}
	if byCycles < cases/20 || verified < cases/40 || deadlocks < cases/40 {
		t.Fatalf("too few cases refuted cycle by cycle (%d, %d verified) or deadlocks (%d) for the comparison to mean much", byCycles, verified, deadlocks)
	}
}
