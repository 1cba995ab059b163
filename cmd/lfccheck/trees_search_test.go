package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lfccheck/protocols/topology"
)

// treesJSON runs trees --json and decodes the answer and the search.
func treesJSON(t *testing.T, args ...string) (int, treesResult) {
	t.Helper()
	code, out, errs := runCLI(append([]string{"trees", "--json"}, args...)...)
	var v treesResult
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v: exit %d, %v, stderr %s\n%.300s", args, code, err, errs, out)
	}
	return code, v
}

// A chain with C <= K deadlocks: trees finds it, prints it, saves it,
// and replay reproduces it.
func TestTreesSearchFindsChainDeadlock(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "chain.json")
	args := []string{"trees", "--tree", "chain", "--nodes", "3", "--credits", "1", "--packets", "1", "--trace-out", trace}
	code, out, errs := runCLI(args...)
	if code != exitFail || errs != "" {
		t.Fatalf("exit %d, stderr %q:\n%s", code, errs, out)
	}
	for _, want := range []string{
		"\nproof: undecided: ", "\nsearch: best-first for a deadlock, most first (then deepest): packets waiting to forward, blocked sends, no credits on the partitions 0 at 1, 1 at 2, 2 at 0\n",
		"search: mcast (correct) nodes=3 credits=1 packets=1 tree=chain", ": deadlock found\n", "counterexample (12 steps):\n",
		"wait-for cycle", "\nanswer: deadlock: the search found a reachable deadlock (12 steps, after ",
		"trace written to " + trace,
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\nanswer: undecided") {
		t.Fatalf("two answers:\n%s", out)
	}
	code, rep, _ := runCLI("replay", trace)
	if code != 0 || !strings.Contains(rep, "reproduced: deadlock violated at step 12, as recorded") {
		t.Fatalf("replay: exit %d:\n%s", code, rep)
	}
	// The JSON: the answer, by whom, and the search with its trace.
	code, v := treesJSON(t, args[1:len(args)-2]...)
	s := v.Search
	if code != exitFail || v.Answer != answerDeadlock || v.AnswerBy != "search" || v.Proof.Verdict != topology.Undecided || s == nil ||
		s.Verdict != "fail" || s.Property != "deadlock" || len(s.Trace) != 12 || len(s.Cycle) != 3 || s.States == 0 || s.Config.Nodes != 3 ||
		!strings.HasPrefix(v.AnswerReason, "the search found a reachable deadlock") {
		t.Fatalf("exit %d: %+v %+v", code, v, s)
	}
	// A run that finds no deadlock removes the stale trace.
	code, out, _ = runCLI("trees", "--tree", "chain", "--nodes", "3", "--credits", "2", "--packets", "1", "--trace-out", trace)
	if _, err := os.Stat(trace); code != exitPass || err == nil || !strings.Contains(out, "removed "+trace) {
		t.Fatalf("exit %d, stat %v:\n%s", code, err, out)
	}
}

// App. A.2's groups deadlock with one credit and one multicast from 0 in
// g1, 3 in g2 and 6 in g3: the search finds the cycle 0 -> 3 -> 6 -> 0.
func TestTreesSearchFindsA2Deadlock(t *testing.T) {
	code, v := treesJSON(t, "--topology", "../../examples/overlap-a2.topo", "--credits", "1", "--cast", "g1/0:1", "--cast", "g2/3:1", "--cast", "g3/6:1")
	s := v.Search
	if code != exitFail || v.Answer != answerDeadlock || s == nil || s.Property != "deadlock" || len(s.Explanation) != 4 {
		t.Fatalf("exit %d: %+v %+v", code, v, s)
	}
	for _, want := range []string{"ni 0 holds", "ni 3 holds", "ni 6 holds"} {
		if !strings.Contains(strings.Join(s.Explanation, "\n"), want) {
			t.Fatalf("explanation lacks %q: %q", want, s.Explanation)
		}
	}
}

// When the proof is undecided and the search runs to its end without a
// deadlock, the answer is deadlock-free by exhaustive search, said as
// such; a limit makes it undecided, with what was tried.
func TestTreesSearchPassesAndStops(t *testing.T) {
	code, out, _ := runCLI("trees", "--tree", "chain", "--nodes", "2", "--credits", "1", "--refresh", "2", "--packets", "1")
	if code != exitPass || !strings.Contains(out, "\nproof: undecided: CREDIT_REFRESH 2 > C=1") ||
		!strings.Contains(out, "search: best-first for a deadlock, most first (then deepest): no cycle to aim at (depth-first order)\n") ||
		!strings.Contains(out, ": complete, no deadlock\n") ||
		!strings.Contains(out, "\nanswer: deadlock-free: by exhaustive search of the full configuration (12 states, stubborn sets: every reachable end state reached;") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	code, v := treesJSON(t, "--tree", "chain", "--nodes", "2", "--credits", "1", "--refresh", "2", "--packets", "1")
	if code != exitPass || v.Answer != topology.DeadlockFree || v.AnswerBy != "search" || v.Search == nil || v.Search.Verdict != "pass" || v.Search.Trace != nil {
		t.Fatalf("exit %d: %+v", code, v)
	}
	// Cut by its time limit (16 nodes with every member of every group
	// casting, far more states than a tenth of a second explores):
	// undecided, with what each phase did and the limits. A phase whose
	// share of the time has passed before it starts (a slow machine, the
	// race detector) is left out, and says so only by its absence.
	code, v = treesJSON(t, "--topology", "../../examples/overlap16.topo", "--credits", "2", "--packets", "1", "--timeout", "100ms")
	if code != exitIncomplete || v.Answer != topology.Undecided || v.AnswerBy != "search" || v.Search == nil || v.Search.Verdict != "incomplete" ||
		v.Search.TimeoutS != 0.1 || !strings.Contains(v.AnswerReason, "the full configuration best first: no deadlock in ") ||
		!strings.Contains(v.AnswerReason, "stopped: time limit ") ||
		!strings.Contains(v.AnswerReason, "would decide it") || v.Search.ElapsedS > 2 {
		t.Fatalf("exit %d: %+v %+v", code, v, v.Search)
	}
	var names []string
	for _, p := range v.Search.Phases {
		names = append(names, p.Phase)
	}
	// The phases in their order, each at most once (the full search at
	// the start and the end), the first always.
	order := []string{"full", "restricted", "walks", "full"}
	i := 0
	for _, n := range names {
		for i < len(order) && order[i] != n {
			i++
		}
		if i == len(order) {
			t.Fatalf("phases %v out of order: %+v", names, v.Search.Phases)
		}
		i++
	}
	if len(names) == 0 || names[0] != "full" {
		t.Fatalf("phases %v: %+v", names, v.Search.Phases)
	}
	for _, p := range v.Search.Phases {
		if p.Phase == "walks" && !strings.Contains(v.AnswerReason, "random walks on it: no deadlock in ") {
			t.Fatalf("the walks phase ran but the reason does not say so: %s", v.AnswerReason)
		}
	}
	// --timeout 0: the proof alone.
	code, v = treesJSON(t, "--tree", "chain", "--nodes", "4", "--credits", "4", "--packets", "3", "--timeout", "0")
	if code != exitIncomplete || v.Answer != topology.Undecided || v.AnswerBy != "proof" || v.Search != nil {
		t.Fatalf("exit %d: %+v", code, v)
	}
	// Beyond the explorer's nodes: the proof alone, saying so.
	code, out, _ = runCLI("trees", "--tree", "chain", "--nodes", "100", "--credits", "1", "--packets", "1")
	if code != exitIncomplete || !strings.HasSuffix(out, "\nsearch: none: the explorer handles at most 64 nodes\n") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	// A proof needs no search.
	code, v = treesJSON(t, "--tree", "chain", "--nodes", "4", "--credits", "2", "--packets", "1")
	if code != exitPass || v.AnswerBy != "proof" || v.Search != nil {
		t.Fatalf("exit %d: %+v", code, v)
	}
}

func TestTreesSearchFlagErrors(t *testing.T) {
	data, err := os.ReadFile("../../examples/overlap-a2.topo")
	if err != nil {
		t.Fatal(err)
	}
	topo := filepath.Join(t.TempDir(), "a2.topo")
	if err := os.WriteFile(topo, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"trees", "--credits", "1", "--timeout", "-1s"}, "--timeout must not be negative"},
		{[]string{"trees", "--credits", "1", "--timeout", "x"}, "--timeout"},
		{[]string{"trees", "--credits", "1", "--timeout", "5"}, "--timeout"},
		{[]string{"trees", "--credits", "1", "--timeout", ""}, "--timeout"},
		{[]string{"trees", "--timeout", "5s"}, "needs a workload"},
		{[]string{"trees", "--trace-out", "x.json"}, "needs a workload"},
		{[]string{"trees", "-q"}, "needs a workload"},
		{[]string{"trees", "--credits", "1", "--max-memory", "lots"}, "--max-memory"},
		{[]string{"trees", "--credits", "1", "--trace-out", "-"}, "--trace-out needs a file"},
		{[]string{"trees", "--credits", "1", "--topology", topo, "--trace-out", topo}, "refusing to overwrite an input"},
		{[]string{"trees", "--credits", "1", "--trace-out", "t.svg", "--svg", "t.svg"}, "--svg"},
	} {
		code, out, errs := runCLI(c.args...)
		if code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line containing %q", c.args, code, out, errs, c.want)
		}
	}
}
