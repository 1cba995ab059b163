package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"lfccheck/internal/racebuild"
)

func runCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestSuiteRunsAsExpected(t *testing.T) {
	if racebuild.Enabled {
		suiteUnderRace(t)
		return
	}
	if !testing.Short() {
		// TestREADMECommands runs the README's "lfccheck -q", the same
		// suite, and checks it with checkSuite: the suite runs once.
		t.Skip("the suite runs in TestREADMECommands (lfccheck -q) outside -short")
	}
	code, out, _ := runCLI("-q")
	checkSuite(t, code, out)
}

// checkSuite checks the exit code and output of the built-in suite run in
// full ("lfccheck -q"): exit 0, every check as expected and complete.
func checkSuite(t *testing.T, code int, out string) {
	t.Helper()
	m := regexp.MustCompile(`\n(\d+) checks: (\d+) as expected, 0 unexpected, 0 incomplete\n$`).FindStringSubmatch(out)
	if code != 0 || m == nil || m[1] != m[2] || strings.Count(out, "  ok\n") != atoi(m[1]) || atoi(m[1]) < 100 {
		t.Errorf("suite: exit %d, output:\n%s", code, out)
	}
}

// suiteUnderRace is TestSuiteRunsAsExpected under the race detector, where
// the whole suite takes minutes (its two largest checks store 1.6 million
// states between them): every check runs, on the default workers, up to
// a state limit; none may be unexpected, at most a third may stop at the
// limit (and only there: 44 of 147 at 5,000 states; 32 at 20,000, which
// takes three times as long), and the others must end as expected.
func suiteUnderRace(t *testing.T) {
	const limit = 5_000
	t.Logf("race detector: the suite with --max-states %d; the test without -race runs it in full", limit)
	code, out, _ := runCLI("-q", "--max-states", strconv.Itoa(limit))
	m := regexp.MustCompile(`\n(\d+) checks: (\d+) as expected, 0 unexpected, (\d+) incomplete\n$`).FindStringSubmatch(out)
	if m == nil || code != exitFor(0, atoi(m[3])) {
		t.Fatalf("suite exit %d:\n%s", code, out)
	}
	checks, ok, incomplete := atoi(m[1]), atoi(m[2]), atoi(m[3])
	limited := strings.Count(out, "incomplete (state)")
	if incomplete != limited || incomplete > checks/3 || ok != checks-incomplete || strings.Count(out, "  ok\n") != ok || ok < 40 {
		t.Fatalf("%d checks, %d as expected, %d incomplete (%d at the state limit):\n%s", checks, ok, incomplete, limited, out)
	}
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}

func TestCheckPassJSON(t *testing.T) {
	// Without stubborn sets: the pins are of the symmetry reduction.
	code, out, errs := runCLI("check", "--nodes", "2", "--credits", "1", "--packets", "2", "--json", "-q", "--por", "off")
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"protocol", "variant", "config", "verdict", "states", "transitions", "depth", "elapsed_s"} {
		if _, ok := m[k]; !ok {
			t.Fatalf("JSON lacks %q: %s", k, out)
		}
	}
	if m["verdict"] != "pass" || m["states"].(float64) != 87 || m["symmetry"] != true || m["symmetry_group"].(float64) != 2 {
		t.Fatalf("got %v", m)
	}
	levels, _ := m["levels"].([]any)
	sum := 0.0
	for _, v := range levels {
		sum += v.(float64)
	}
	if len(levels) != int(m["depth"].(float64))+1 || sum != 87 {
		t.Fatalf("levels %v for %v states to depth %v", levels, m["states"], m["depth"])
	}
	cfg := m["config"].(map[string]any)
	if cfg["nodes"].(float64) != 2 || cfg["refresh"].(float64) != 1 {
		t.Fatalf("config %v", cfg)
	}
}

// The text output's levels line: the widest level, and for a search cut
// short the level it stopped in and the growth of the one before.
func TestLevelsLine(t *testing.T) {
	args := []string{"check", "--protocol", "mcast", "--tree", "binary", "--nodes", "3", "--credits", "1", "--packets", "1", "-q", "--por", "off"}
	for _, c := range []struct {
		extra []string
		code  int
		want  string
	}{
		{nil, 0, "levels: 22 (depth 0 to 21), the widest 353 states at depth 11\n"},
		{[]string{"--max-states", "1000"}, 3, "levels: 11 (depth 0 to 10), the widest 277 states at depth 9; the search stopped while expanding the level at depth 9 (247 states of depth 10 stored so far); depth 9 had 277 states, 1.39 times depth 8 (the JSON output lists every level)\n"},
		// Stopped in level 9 before it stored a state of level 10 (the
		// limit is the states of levels 0 to 9), and stopped before it.
		{[]string{"--max-states", "753"}, 3, "the search stopped while expanding the level at depth 9 (0 states of depth 10 stored so far); depth 9 had 277 states"},
		{[]string{"--max-depth", "9"}, 3, "levels: 10 (depth 0 to 9), the widest 277 states at depth 9; the search stopped before expanding the level at depth 9; depth 9 had 277 states"},
		{[]string{"--max-depth", "5"}, 3, "levels: 6 (depth 0 to 5), the widest 39 states at depth 5; the search stopped before expanding the level at depth 5; depth 5 had 39 states, 2.05 times depth 4 (the JSON output lists every level)\n"},
	} {
		code, out, errs := runCLI(append(append([]string(nil), args...), c.extra...)...)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Fatalf("%v: exit %d, want %d and %q:\n%s%s", c.extra, code, c.code, c.want, out, errs)
		}
	}
}

func TestVariantFailsAndTraceReplays(t *testing.T) {
	dir := t.TempDir()
	tf := filepath.Join(dir, "cex.json")
	code, out, _ := runCLI("check", "--variant", "blocked-lifo", "--nodes", "2", "--credits", "1", "--packets", "3",
		"--json", "-q", "--trace-out", tf)
	if code != 1 {
		t.Fatalf("exit %d: %s", code, out)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if m["verdict"] != "fail" || m["property"] != "fifo" || len(m["trace"].([]any)) == 0 {
		t.Fatalf("got %v", m)
	}
	code, out, errs := runCLI("replay", tf)
	if code != 0 || !strings.Contains(out, "reproduced: fifo violated at step") {
		t.Fatalf("replay exit %d:\n%s%s", code, out, errs)
	}
	// Text output shows the numbered trace.
	code, out, _ = runCLI("check", "--variant", "no-credit-return", "--nodes", "2", "--credits", "1", "--packets", "1", "-q")
	if code != 1 || !strings.Contains(out, "  1. host") || !strings.Contains(out, "verdict: FAIL: ") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestReplayDetectsTamperedTrace(t *testing.T) {
	dir := t.TempDir()
	tf := filepath.Join(dir, "cex.json")
	if code, out, _ := runCLI("check", "--variant", "no-credit-return", "--nodes", "2", "--credits", "1", "--packets", "1", "-q", "--trace-out", tf); code != 1 {
		t.Fatalf("exit %d: %s", code, out)
	}
	data, _ := os.ReadFile(tf)
	// Same actions under the correct protocol: replays, but no violation.
	fixed := strings.Replace(string(data), `"variant": "no-credit-return"`, `"variant": "correct"`, 1)
	os.WriteFile(tf, []byte(fixed), 0o644)
	if code, out, _ := runCLI("replay", tf); code != 1 || !strings.Contains(out, "NOT reproduced") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// Bad input: one line on stderr naming the problem, exit 2, nothing on stdout.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	good := `{"format":"lfccheck-trace/1","config":{"protocol":"ucast","variant":"correct","nodes":2,"credits":1,"packets":1},"actions":["host 0 launch"]}`
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, "unknown command"},
		{[]string{"check", "--protocol", "tcp"}, `unknown protocol "tcp"`},
		{[]string{"check", "--variant", "nope"}, `unknown ucast variant "nope"`},
		{[]string{"check", "--nodes", "1"}, "nodes must be in 2..64, got 1"},
		{[]string{"check", "--nodes", "1000"}, "nodes must be in 2..64"},
		{[]string{"check", "--credits", "0"}, "--credits 0: must be in 1..64, got 0"},
		{[]string{"check", "--packets", "-1"}, `--packets -1: "-1" is not a decimal number`},
		{[]string{"check", "--packets", "070"}, `--packets 070: "070" has a leading zero`},
		{[]string{"check", "--packets", "65"}, "--packets 65: must be in 0..64"},
		{[]string{"check", "--nodes", "x"}, "invalid argument"},
		{[]string{"check", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"check", "--flow", "0:5:1"}, "node out of range"},
		{[]string{"check", "--flow", "0-1"}, "want SRC:DST:COUNT"},
		{[]string{"check", "--property", "liveness"}, `unknown property "liveness"`},
		{[]string{"check", "--max-memory", "lots"}, "--max-memory"},
		{[]string{"check", "--trace-out", filepath.Join(dir, "nodir", "t.json")}, "does not exist"},
		{[]string{"check", "--host-buffers", "0"}, "must be in 1..255, got 0"},
		{[]string{"check", "--send-buffers", "0"}, "must be in 1..255, got 0"},
		{[]string{"check", "--refresh", "0"}, "must be in 1..64, got 0"},
		{[]string{"check", "--packets", "0"}, "nothing to send"},
		{[]string{"check", "--packets", "2", "--flow", "0:1:1"}, "give packets or flows, not both"},
		{[]string{"check", "--variant", ""}, "--variant is empty"},
		{[]string{"check", "--protocol", "mcast", "--tree", ""}, "--tree is empty: give a tree family"},
		{[]string{"check", "--credits", "1", "--credits", "2"}, "--credits given 2 times"},
		{[]string{"check", "--max-memory", "10"}, "at least 1MiB"},
		{[]string{"suite", "--timeout", "-1s"}, "must not be negative"},
		{[]string{"sweep", "--timeout", "-1s"}, "must not be negative"},
		{[]string{"sweep", "--protocol", "ucast", "--tree", "chain"}, "protocol ucast has no parameter --tree"},
		{[]string{"sweep", "--packets", "0"}, "nothing to send"},
		{[]string{"sweep", "--variant", ""}, "--variant is empty"},
		{[]string{"help", "nope"}, "unknown topic"},
		{[]string{"replay", "/dev/zero"}, "larger than"},
		{[]string{"check", "--protocol", "mcast", "--topology", "/dev/zero"}, "larger than"},
		{[]string{"replay"}, "want exactly one trace file"},
		{[]string{"replay", filepath.Join(dir, "missing.json")}, "no such file"},
		{[]string{"replay", write("empty.json", "")}, "empty file"},
		{[]string{"replay", write("garbage.json", "{\n  \"format\": lfc\n}")}, "line 2, column"},
		{[]string{"replay", write("fmt.json", `{"format":"other","actions":[]}`)}, `format is "other"`},
		{[]string{"replay", write("act.json", strings.Replace(good, "host 0 launch", "host 7 launch", 1))}, "step 1: node 7 out of range"},
		{[]string{"replay", write("dis.json", strings.Replace(good, "host 0 launch", "deliver 0->1", 1))}, `step 1 ("deliver 0->1"): not enabled`},
		{[]string{"replay", write("cfg.json", strings.Replace(good, `"credits":1`, `"credits":0`, 1))}, "config: credits must be"},
		{[]string{"replay", write("unk.json", strings.Replace(good, `"actions"`, `"extra":1,"actions"`, 1))}, "unknown field"},
	}
	for _, c := range cases {
		code, out, errs := runCLI(c.args...)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "lfccheck: ") || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line containing %q", c.args, code, out, errs, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "nodir")); err == nil {
		t.Error("a directory was created")
	}
}

func TestLimitIsIncomplete(t *testing.T) {
	code, out, _ := runCLI("check", "--nodes", "3", "--max-states", "100", "-q")
	if code != 3 || !strings.Contains(out, "INCOMPLETE") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	code, out, _ = runCLI("check", "--nodes", "3", "--max-depth", "4", "-q", "--json")
	if code != 3 || !strings.Contains(out, `"verdict": "incomplete"`) {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestPassWritesNoTraceFile(t *testing.T) {
	tf := filepath.Join(t.TempDir(), "t.json")
	if code, _, _ := runCLI("check", "--nodes", "2", "-q", "--trace-out", tf); code != 0 {
		t.Fatal(code)
	}
	if _, err := os.Stat(tf); err == nil {
		t.Fatal("a passing check wrote a trace file")
	}
}

func TestListShowsVariants(t *testing.T) {
	code, out, _ := runCLI("list")
	for _, w := range []string{"ucast", "no-credit-check", "blocked-lifo", "no-credit-return", "credit-conservation", "caught by fifo"} {
		if code != 0 || !strings.Contains(out, w) {
			t.Fatalf("list lacks %q:\n%s", w, out)
		}
	}
	code, out, _ = runCLI("list", "--json")
	var v []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || len(v) == 0 {
		t.Fatalf("list --json: %d %s", code, out)
	}
}

func TestProgressLineOnLongRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("takes several seconds")
	}
	var out, errb bytes.Buffer
	code := run([]string{"check", "--nodes", "3", "--credits", "1", "--packets", "2", "--max-states", "400000", "--progress-every", "20ms"}, &out, &errb)
	if code != 3 || !strings.Contains(errb.String(), "progress: ") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	for _, v := range []string{"0", "-1s"} {
		code, _, errs := runCLI("check", "--progress-every", v)
		if code != 2 || !strings.Contains(errs, "--progress-every must be positive") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("--progress-every %s: exit %d, %q", v, code, errs)
		}
	}
}

func TestMulticastCheckAndTrees(t *testing.T) {
	code, out, _ := runCLI("check", "--protocol", "mcast", "--nodes", "4", "--credits", "1", "--tree", "chain", "--packets", "1", "-q", "--json")
	var m map[string]any
	if code != 1 || json.Unmarshal([]byte(out), &m) != nil || m["property"] != "deadlock" || len(m["wait_for_cycle"].([]any)) != 4 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	code, out, _ = runCLI("check", "--protocol", "mcast", "--topology", "../../examples/overlap-small.topo",
		"--cast", "g1/0:1", "--cast", "g2/2:1", "--cast", "g3/4:1", "-q")
	if code != 1 || !strings.Contains(out, "wait-for cycle (App. A.1):") || !strings.Contains(out, "ni 2 holds m0#1 (root 0, number 1)") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	code, out, _ = runCLI("trees", "--nodes", "64", "--tree", "binary")
	if code != 0 || !strings.Contains(out, "L_used/L_av = 0.508") || !strings.Contains(out, "conclusion: deadlock-free") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	code, out, _ = runCLI("trees", "--nodes", "5", "--tree", "chain", "--dot")
	if code != 0 || !strings.HasPrefix(out, "digraph") || !strings.Contains(out, "t0_n0 -> t0_n1") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	code, out, _ = runCLI("trees", "--nodes", "8", "--tree", "binomial", "--json")
	if code != 0 || !strings.Contains(out, `"global_inverse_condition": true`) {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestBadTopologyInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.topo")
	os.WriteFile(bad, []byte("nodes 4\ngroup all 0 1 2 3\ntree all 0 0->1 1->2 2->1\ntree all * binary\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--protocol", "mcast", "--topology", bad}, bad + ":3: group \"all\", tree of root 0: node 1 has two parents"},
		{[]string{"trees", "--topology", bad}, bad + ":3:"},
		{[]string{"check", "--protocol", "mcast", "--topology", filepath.Join(dir, "none.topo")}, "no such file"},
		{[]string{"check", "--protocol", "mcast", "--tree", "bushy"}, `unknown tree family "bushy"`},
		{[]string{"check", "--protocol", "mcast", "--cast", "x"}, "want [GROUP/]ROOT:COUNT"},
		{[]string{"check", "--protocol", "mcast", "--cast", "9:1"}, "not a member of any group"},
		{[]string{"check", "--protocol", "mcast", "--nodes", "5", "--topology", "../../examples/overlap-small.topo"}, "disagrees"},
		{[]string{"check", "--protocol", "ucast", "--tree", "binary"}, "protocol ucast has no parameter --tree"},
		{[]string{"trees", "--nodes", "3000"}, "nodes must be in 2..64 (and up to 2048"},
	} {
		code, out, errs := runCLI(c.args...)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line containing %q", c.args, code, out, errs, c.want)
		}
	}
}

func TestSweep(t *testing.T) {
	// Limits apply to each check exactly: one state is never a complete
	// search, and the series stop there.
	code, out, _ := runCLI("sweep", "--nodes", "2-4", "--credits", "1", "--packets", "1", "--tree", "binary,chain", "-q", "--max-states", "1")
	if code != 3 || strings.Count(out, "incomplete") != 2 || strings.Count(out, "skipped") != 4 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	code, out, _ = runCLI("sweep", "--nodes", "2-4", "--credits", "1", "--packets", "1", "--tree", "chain", "-q", "--json")
	var v struct {
		Results []map[string]any
		Summary []map[string]any
	}
	if code != 1 || json.Unmarshal([]byte(out), &v) != nil || len(v.Results) != 3 || len(v.Summary) != 1 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if v.Summary[0]["largest_nodes_passed"].(float64) != 2 || v.Summary[0]["first_failure"] != "P=3: deadlock" {
		t.Fatalf("summary %v", v.Summary)
	}
	// A series stops at its first incomplete size.
	code, out, _ = runCLI("sweep", "--nodes", "3-4", "--credits", "1", "--packets", "2", "--tree", "binary", "-q", "--timeout", "1ms")
	if code != 3 || !strings.Contains(out, "incomplete") || !strings.Contains(out, "skipped") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// A liveness counterexample is a lasso: printed with its loop marked,
// written with loop_start, and replayed by re-executing the loop; a trace
// whose loop does not close, or that lost its loop, does not reproduce.
func TestLivenessLassoWritesAndReplays(t *testing.T) {
	dir := t.TempDir()
	tf := filepath.Join(dir, "lasso.json")
	args := []string{"check", "--protocol", "ucast", "--variant", "credit-bounce", "--nodes", "2", "--flow", "0:1:2",
		"--property", "eventual-delivery", "-q"}
	code, out, errs := runCLI(append(args, "--trace-out", tf)...)
	for _, want := range []string{
		"verdict: FAIL: eventual-delivery violated: the goal never holds from step 1 on: steps 6-7 repeat for ever, a fair loop",
		"counterexample (a lasso: 5 steps, then steps 6-7 for ever):",
		"     -- loop: steps 6-7 repeat for ever --\n  6. deliver 1->0",
		"weak fairness of link 1->0: taken at step 6",
		"reduction: ample sets with cycles: an enabled \"host {node} process\" step is explored alone",
		"liveness: eventual-delivery on the recorded state graph",
		"state at the start and end of the loop (after steps 5 and 7):",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("exit %d, output lacks %q:\n%s%s", code, want, out, errs)
		}
	}
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	var f map[string]any
	data, _ := os.ReadFile(tf)
	if err := json.Unmarshal(data, &f); err != nil || f["format"] != "lfccheck-trace/2" || f["loop_start"] != 6.0 {
		t.Fatalf("trace file: %v\n%s", err, data)
	}
	code, out, errs = runCLI("replay", tf)
	if code != 0 || !strings.Contains(out, "reproduced: eventual-delivery violated on a fair run that repeats steps 6-7 for ever, as recorded") {
		t.Fatalf("replay exit %d:\n%s%s", code, out, errs)
	}
	// JSON result: loop_start and the fairness explanation.
	code, out, _ = runCLI(append(args, "--json")...)
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil || code != 1 || m["loop_start"] != 6.0 ||
		m["format"] != "lfccheck-result/1" || len(m["fairness"].([]any)) == 0 || m["graph_bytes"].(float64) <= 0 {
		t.Fatalf("exit %d, %v:\n%s", code, err, out)
	}
	for _, tc := range []struct {
		name, from, to string
		code           int
		want           string
	}{
		{"loop does not close", `"loop_start": 6`, `"loop_start": 5`, 2, "the loop (steps 5-7) does not return to the state after step 4"},
		{"loop out of range", `"loop_start": 6`, `"loop_start": 9`, 2, "loop_start 9 is not a step of the 7 actions"},
		{"loop in a version 1 file", `"lfccheck-trace/2"`, `"lfccheck-trace/1"`, 2, "loop_start needs format"},
		{"loop dropped", `"loop_start": 6,`, ``, 1, "NOT reproduced"},
	} {
		bad := filepath.Join(dir, "bad.json")
		os.WriteFile(bad, []byte(strings.Replace(string(data), tc.from, tc.to, 1)), 0o644)
		code, out, errs := runCLI("replay", bad)
		if code != tc.code || !strings.Contains(out+errs, tc.want) {
			t.Errorf("%s: exit %d, want %d with %q:\n%s%s", tc.name, code, tc.code, tc.want, out, errs)
		}
	}
}

// lfccheck list names each property's kind and each action kind's fairness.
func TestListShowsKindsAndFairness(t *testing.T) {
	code, out, _ := runCLI("list")
	for _, want := range []string{
		"eventual-delivery    every launched packet is eventually delivered to every destination host, on every fair run [always eventually]",
		`"deliver {peer}->{node}": weak, one class per "link {peer}->{node}"`,
		`"host {node} launch": none`,
		"caught by eventual-delivery: lfccheck check --protocol ucast --variant credit-bounce",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("exit %d, list lacks %q:\n%s", code, want, out)
		}
	}
}

// Pictures: check --svg/--html write the counterexample's chart and
// viewer; show draws a saved trace; bad paths and bad traces are usage
// errors, and a pass writes no picture.
func TestPictures(t *testing.T) {
	dir := t.TempDir()
	svg, page, tf := filepath.Join(dir, "c.svg"), filepath.Join(dir, "c.html"), filepath.Join(dir, "c.json")
	args := []string{"check", "--variant", "no-credit-return", "--nodes", "2", "--credits", "1", "--packets", "1", "-q"}
	code, out, errs := runCLI(append(args, "--svg", svg, "--html", page, "--trace-out", tf)...)
	if code != 1 {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	for _, f := range []string{svg, page} {
		b, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(b), "violated: credit-conservation") {
			t.Fatalf("%s: %v %.200s", f, err, b)
		}
	}
	code, out, _ = runCLI("show", "--svg", "-", tf)
	if code != 0 || !strings.HasPrefix(out, "<svg") {
		t.Fatalf("show --svg -: exit %d %.100s", code, out)
	}
	code, out, _ = runCLI("show", tf)
	if code != 0 || !strings.Contains(out, "  1. host 0 launch") {
		t.Fatalf("show: exit %d %s", code, out)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"format": "lfccheck-trace/2"`), 0o644)
	for _, a := range [][]string{
		{"show", "--html", filepath.Join(dir, "x.html"), bad},
		{"show", "--svg", "-", "--html", "-", tf},
		append(args, "--svg", filepath.Join(dir, "missing", "x.svg")),
		append(args, "--svg", "-", "--json"),
	} {
		code, out, errs := runCLI(a...)
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || errs == "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", a, code, out, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.html")); err == nil {
		t.Error("a viewer was written for a corrupt trace")
	}
	pass := filepath.Join(dir, "pass.svg")
	if code, _, _ := runCLI("check", "--nodes", "2", "--packets", "1", "-q", "--svg", pass); code != 0 {
		t.Fatalf("pass: exit %d", code)
	}
	if _, err := os.Stat(pass); err == nil {
		t.Error("a pass wrote a chart")
	}
	code, out, _ = runCLI("trees", "--nodes", "4", "--tree", "binary", "--svg", "-")
	if code != 0 || !strings.HasPrefix(out, "<svg") || !strings.Contains(out, "tree of 3 in all") {
		t.Fatalf("trees --svg -: exit %d %.200s", code, out)
	}
}

// Hunts: DFS and random walks find App. A.2's deadlock with replayable
// counterexamples; shards and walks never pass; merge combines shards.
func TestSearchStrategiesAndMerge(t *testing.T) {
	dir := t.TempDir()
	a2 := []string{"check", "--protocol", "mcast", "--topology", "../../examples/overlap-a2.topo",
		"--cast", "g1/0:1", "--cast", "g2/3:1", "--cast", "g3/6:1", "-q"}
	for _, extra := range [][]string{
		{"--search", "dfs"},
		{"--search", "dfs", "--seed", "3", "--shard", "1/4"},
		{"--search", "random", "--walks", "50", "--max-depth", "100", "--seed", "2"},
	} {
		tf := filepath.Join(dir, "t.json")
		code, out, errs := runCLI(append(append(a2, extra...), "--trace-out", tf)...)
		if code != 1 || !strings.Contains(out, "verdict: FAIL: deadlock violated") {
			t.Fatalf("%v: exit %d\n%s%s", extra, code, out, errs)
		}
		if code, out, _ := runCLI("replay", tf); code != 0 || !strings.Contains(out, "reproduced: deadlock") {
			t.Fatalf("%v: the counterexample does not replay: %s", extra, out)
		}
	}
	// A complete DFS passes; a shard or random walks over a correct
	// configuration are incomplete (exit 3).
	ok := []string{"check", "--protocol", "mcast", "--nodes", "3", "-q"}
	if code, out, _ := runCLI(append(ok, "--search", "dfs")...); code != 0 {
		t.Fatalf("complete DFS: exit %d\n%s", code, out)
	}
	var files []string
	for i := 0; i < 3; i++ {
		f := filepath.Join(dir, fmt.Sprintf("s%d.json", i))
		code, out, _ := runCLI(append(ok, "--search", "random", "--walks", "20", "--max-depth", "60", "--shard", fmt.Sprintf("%d/3", i), "--json")...)
		if code != 3 {
			t.Fatalf("shard %d: exit %d\n%s", i, code, out)
		}
		os.WriteFile(f, []byte(out), 0o644)
		files = append(files, f)
	}
	code, out, _ := runCLI(append([]string{"merge"}, files...)...)
	if code != 3 || !strings.Contains(out, "no violation found by 3 shards") {
		t.Fatalf("merge: exit %d\n%s", code, out)
	}
	// A failing shard makes the merge fail.
	_, out, _ = runCLI(append(a2, "--search", "random", "--walks", "20", "--max-depth", "100", "--shard", "0/2", "--json")...)
	fail := filepath.Join(dir, "fail.json")
	os.WriteFile(fail, []byte(out), 0o644)
	_, out, _ = runCLI(append(a2, "--search", "random", "--walks", "20", "--max-depth", "100", "--shard", "1/2", "--json")...)
	other := filepath.Join(dir, "other.json")
	os.WriteFile(other, []byte(out), 0o644)
	if code, out, _ := runCLI("merge", other, fail); code != 1 || !strings.Contains(out, "verdict: FAIL: deadlock violated") {
		t.Fatalf("merge with a failing shard: exit %d\n%s", code, out)
	}
	if code, _, errs := runCLI("merge", fail, files[0]); code != 2 || !strings.Contains(errs, "another configuration") {
		t.Fatalf("merging different configurations: exit %d %s", code, errs)
	}
	// The shard index from the environment of a Kubernetes Indexed Job.
	t.Setenv("JOB_COMPLETION_INDEX", "2")
	if code, out, _ := runCLI(append(ok, "--search", "random", "--walks", "5", "--max-depth", "30", "--shard", "env/3", "--json")...); code != 3 || !strings.Contains(out, `"shard": "2/3"`) {
		t.Fatalf("--shard env/3: exit %d\n%s", code, out)
	}
	for _, bad := range [][]string{
		{"--search", "random", "--walks", "5"},            // no depth bound
		{"--search", "sideways"},                          // unknown
		{"--seed", "4"},                                   // seed with bfs
		{"--search", "dfs", "--shard", "4/4"},             // index out of range
		{"--search", "dfs", "--walks", "3"},               // walks with dfs
		{"--search", "dfs", "--property", "race-1", "-q"}, // not a property of mcast
	} {
		if code, _, errs := runCLI(append(ok, bad...)...); code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q", bad, code, errs)
		}
	}
	// Liveness that needs the graph: bfs only.
	if code, _, errs := runCLI("check", "--protocol", "fa", "--search", "dfs", "-q"); code != 2 || !strings.Contains(errs, "eventual-reply needs the state graph") {
		t.Errorf("dfs with graph liveness: exit %d %q", code, errs)
	}
}

// --symmetry: on by default where the configuration has a symmetry, off
// on request (every state stored, the same verdict), and anything else is
// a usage error.
func TestSymmetryFlag(t *testing.T) {
	states := func(args ...string) (float64, map[string]any) {
		// Without stubborn sets, which change the counts pinned here.
		code, out, errs := runCLI(append([]string{"check", "--protocol", "mcast", "--nodes", "3", "-q", "--json", "--por", "off"}, args...)...)
		var m map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &m) != nil {
			t.Fatalf("%v: exit %d: %s %s", args, code, out, errs)
		}
		return m["states"].(float64), m
	}
	on, m := states()
	if on != 2576 || m["symmetry"] != true || m["symmetry_group"].(float64) != 3 {
		t.Errorf("default: %v states, symmetry %v group %v", on, m["symmetry"], m["symmetry_group"])
	}
	off, m := states("--symmetry", "off")
	if off != 7696 || m["symmetry"] != false || !strings.Contains(m["symmetry_note"].(string), "--symmetry=off") {
		t.Errorf("--symmetry off: %v states, %v %v", off, m["symmetry"], m["symmetry_note"])
	}
	code, _, errs := runCLI("check", "--symmetry", "maybe", "-q")
	if code != 2 || !strings.Contains(errs, "--symmetry must be on or off") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("--symmetry maybe: exit %d, %q", code, errs)
	}
}

// --sleep-sets: on by default in a breadth-first search (the same states,
// fewer transitions, the number left out in the JSON), off on request,
// off with a reason in a depth-first one, and anything else is a usage
// error.
func TestSleepSetsFlag(t *testing.T) {
	run := func(args ...string) map[string]any {
		// Without stubborn sets, which turn sleep sets off.
		code, out, errs := runCLI(append([]string{"check", "--protocol", "mcast", "--nodes", "3", "-q", "--json", "--por", "off"}, args...)...)
		var m map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &m) != nil {
			t.Fatalf("%v: exit %d: %s %s", args, code, out, errs)
		}
		return m
	}
	on, off := run(), run("--sleep-sets", "off")
	if on["states"] != off["states"] || on["sleep_sets"] != true || off["sleep_sets"] != false ||
		on["transitions"].(float64)+on["sleep_sets_skipped"].(float64) != off["transitions"].(float64) ||
		on["sleep_sets_skipped"].(float64) == 0 || !strings.Contains(off["sleep_sets_note"].(string), "--sleep-sets=off") {
		t.Errorf("on: %v states, %v transitions, %v %v %q; off: %v, %v, %v %q", on["states"], on["transitions"], on["sleep_sets"],
			on["sleep_sets_skipped"], on["sleep_sets_note"], off["states"], off["transitions"], off["sleep_sets"], off["sleep_sets_note"])
	}
	if dfs := run("--search", "dfs"); dfs["sleep_sets"] != false || !strings.Contains(dfs["sleep_sets_note"].(string), "breadth-first") {
		t.Errorf("dfs: %v %q", dfs["sleep_sets"], dfs["sleep_sets_note"])
	}
	code, _, errs := runCLI("check", "--sleep-sets", "maybe", "-q")
	if code != 2 || !strings.Contains(errs, "--sleep-sets must be on or off") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("--sleep-sets maybe: exit %d, %q", code, errs)
	}
}
