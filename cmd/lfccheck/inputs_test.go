package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lfccheck/protocols"
)

// usageFails runs args and wants exit 2 with one stderr line containing
// want, and nothing on standard output.
func usageFails(t *testing.T, want string, args ...string) {
	t.Helper()
	code, out, errs := runCLI(args...)
	if code != 2 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, want) {
		t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", args, code, out, errs, want)
	}
}

// Every integer flag of every command reads plain decimal: found from the
// help, so that a flag added later cannot slip back to pflag's integers
// (which read 010 as 8).
func TestIntegerFlagsArePlainDecimal(t *testing.T) {
	n := 0
	for _, f := range helpFlags(t, "int", "int64", "uint") {
		for _, v := range []string{"010", "0x2", "-1", "+3", "1_0"} {
			usageFails(t, `for "`+f.flag+`" flag`, f.cmd, f.flag, v)
		}
		n++
	}
	if n < 8 {
		t.Fatalf("found only %d integer flags in the help", n)
	}
	// Protocol parameters and settings with numbers, and sweep's node lists.
	usageFails(t, `--credits 0x2: "0x2" is not a decimal number`, "check", "--credits", "0x2")
	usageFails(t, `--credits 010: "010" has a leading zero`, "check", "--credits", "010")
	usageFails(t, `--flow 0:1:02`, "check", "--flow", "0:1:02")
	usageFails(t, `cast "0:01"`, "check", "--protocol", "mcast", "--cast", "0:01")
	usageFails(t, `--nodes "010"`, "sweep", "--nodes", "010")
	usageFails(t, `--shard: "01/4"`, "check", "--search", "dfs", "--shard", "01/4")
	// The documented accepted form still works.
	if code, _, errs := runCLI("check", "--nodes", "2", "--credits", "2", "--max-depth", "100", "-q"); code != 0 {
		t.Errorf("plain decimal refused: %d %s", code, errs)
	}
}

func TestMaxMemoryRefusesNonSizes(t *testing.T) {
	for _, v := range []string{"NaN", "Inf", "+Inf", "1e9", "-8GiB", "8XiB", "08GiB", "1.GiB", ".5GiB", "8 GiB", "0x10MiB", "512KiB"} {
		usageFails(t, "--max-memory", "check", "--max-memory", v, "-q")
	}
	for _, v := range []string{"8GiB", "0.5GiB", "3000000", "2PiB"} {
		if _, err := parseBytes(v); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
}

// No output ever lands on an input, and two outputs never share a file:
// refused before any search, the input unchanged.
func TestOutputsNeverOverwriteInputs(t *testing.T) {
	dir := t.TempDir()
	topo := filepath.Join(dir, "my.topo")
	orig, err := os.ReadFile("../../examples/overlap-small.topo")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(topo, orig, 0o644)
	os.Symlink(topo, filepath.Join(dir, "link.topo"))
	tr := filepath.Join(dir, "t.json")
	if code, _, errs := runCLI("check", "--protocol", "ucast", "--variant", "no-credit-check", "--nodes", "2", "--packets", "2", "--property", "pool-bound", "-q", "--trace-out", tr); code != 1 {
		t.Fatalf("making a trace: %d %s", code, errs)
	}
	trace, _ := os.ReadFile(tr)
	mc := []string{"check", "--protocol", "mcast", "--topology", topo, "-q"}
	usageFails(t, "refusing to overwrite an input", append(mc, "--trace-out", topo)...)
	os.Symlink(dir, filepath.Join(dir, "alias"))
	usageFails(t, "refusing to overwrite an input", append(mc, "--svg", filepath.Join(dir, "alias", "my.topo"))...)
	usageFails(t, "is a symbolic link", append(mc, "--svg", filepath.Join(dir, "link.topo"))...)
	usageFails(t, "refusing to overwrite an input", append(mc, "--html", filepath.Join(dir, ".", "my.topo"))...)
	usageFails(t, "are the same file", "check", "-q", "--svg", filepath.Join(dir, "s.out"), "--trace-out", filepath.Join(dir, "s.out"))
	os.Mkdir(filepath.Join(dir, "ck"), 0o755)
	usageFails(t, "refusing to overwrite an input", "check", "-q", "--checkpoint", filepath.Join(dir, "ck"), "--trace-out", filepath.Join(dir, "ck", "search.ckpt"))
	usageFails(t, "refusing to overwrite an input", "show", "--svg", tr, tr)
	usageFails(t, "refusing to overwrite an input", "show", "--html", tr, tr)
	usageFails(t, "refusing to overwrite an input", "trees", "--topology", topo, "--svg", topo)
	if b, _ := os.ReadFile(topo); !bytes.Equal(b, orig) {
		t.Error("the topology file was changed")
	}
	if b, _ := os.ReadFile(tr); !bytes.Equal(b, trace) {
		t.Error("the trace file was changed")
	}
	if _, err := os.Stat(filepath.Join(dir, "s.out")); err == nil {
		t.Error("an output was written despite the clash")
	}
}

// A run without a counterexample removes the previous run's outputs and
// says so; --json names the trace written, or the files removed.
func TestStaleOutputsRemoved(t *testing.T) {
	dir := t.TempDir()
	tr, svg := filepath.Join(dir, "cex.json"), filepath.Join(dir, "cex.svg")
	bad := []string{"check", "--protocol", "ucast", "--variant", "no-credit-check", "--nodes", "2", "--packets", "2", "--property", "pool-bound", "-q", "--trace-out", tr, "--svg", svg}
	code, out, _ := runCLI(append(bad, "--json")...)
	var m map[string]any
	if code != 1 || json.Unmarshal([]byte(out), &m) != nil || m["trace_file"] != tr {
		t.Fatalf("failing check: exit %d, trace_file %v", code, m["trace_file"])
	}
	code, out, _ = runCLI("check", "--nodes", "2", "-q", "--trace-out", tr, "--svg", svg)
	if code != 0 || !strings.Contains(out, "removed "+tr+", left by an earlier run") || !strings.Contains(out, "removed "+svg) {
		t.Fatalf("passing check: exit %d\n%s", code, out)
	}
	for _, f := range []string{tr, svg} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s stayed", f)
		}
	}
	runCLI(bad...)
	code, out, _ = runCLI("check", "--nodes", "2", "-q", "--trace-out", tr, "--json")
	m = nil
	if code != 0 || json.Unmarshal([]byte(out), &m) != nil || m["trace_file"] != nil {
		t.Fatalf("passing check --json: exit %d\n%s", code, out)
	}
	if r, _ := m["removed_files"].([]any); len(r) != 1 || r[0] != tr {
		t.Errorf("removed_files = %v, want [%s]", m["removed_files"], tr)
	}
}

// A loop_start on a trace whose run ends with a safety violation is
// refused: it names no loop that closes.
func TestReplayRefusesALoopThatDoesNotClose(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.json")
	runCLI("check", "--protocol", "ucast", "--variant", "no-credit-check", "--nodes", "2", "--packets", "2", "--property", "pool-bound", "-q", "--trace-out", tr)
	var f map[string]any
	data, _ := os.ReadFile(tr)
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	for _, ls := range []int{1, 2} {
		f["loop_start"] = ls
		b, _ := json.Marshal(f)
		forged := filepath.Join(dir, "forged.json")
		os.WriteFile(forged, b, 0o644)
		usageFails(t, "only a liveness counterexample has a loop", "replay", forged)
	}
	// A real lasso whose loop_start is moved no longer closes.
	lasso := filepath.Join(dir, "lasso.json")
	if code, _, errs := runCLI("check", "--protocol", "ucast", "--variant", "credit-bounce", "--nodes", "2", "--flow", "0:1:2", "--property", "eventual-delivery", "-q", "--trace-out", lasso); code != 1 {
		t.Fatalf("lasso: %d %s", code, errs)
	}
	data, _ = os.ReadFile(lasso)
	f = nil
	json.Unmarshal(data, &f)
	f["loop_start"] = f["loop_start"].(float64) - 1
	b, _ := json.Marshal(f)
	os.WriteFile(lasso, b, 0o644)
	usageFails(t, "does not return to the state", "replay", lasso)
}

// merge believes nothing a search of that kind could not have said.
func TestMergeValidatesShards(t *testing.T) {
	dir := t.TempDir()
	ok := []string{"check", "--protocol", "mcast", "--nodes", "3", "-q", "--search", "random", "--walks", "5", "--max-depth", "30", "--json"}
	shard := func(name string, extra ...string) (string, map[string]any) {
		code, out, errs := runCLI(append(ok, extra...)...)
		if code != 3 {
			t.Fatalf("%v: exit %d %s", extra, code, errs)
		}
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(out), 0o644)
		var m map[string]any
		json.Unmarshal([]byte(out), &m)
		return p, m
	}
	s0, m0 := shard("s0.json", "--shard", "0/3")
	s1, _ := shard("s1.json", "--shard", "1/3")
	forge := func(name string, m map[string]any, key string, v any) string {
		c := map[string]any{}
		for k, x := range m {
			c[k] = x
		}
		c[key] = v
		b, _ := json.Marshal(c)
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		return p
	}
	if code, out, _ := runCLI("merge", s0, s1); code != 3 || !strings.Contains(out, "no violation found by 2 shards") {
		t.Fatalf("a good merge: exit %d\n%s", code, out)
	}
	passed := forge("pass.json", m0, "verdict", "pass")
	delete(m0, "reason")
	usageFails(t, "never prove anything", "merge", passed, s1)
	usageFails(t, `verdict "maybe"`, "merge", forge("maybe.json", m0, "verdict", "maybe"), s1)
	usageFails(t, "both shard 0/3", "merge", s0, s1, s0)
	usageFails(t, "one N", "merge", s0, forge("n4.json", m0, "shard", "1/4"))
	usageFails(t, "share a seed", "merge", s0, forge("seed.json", m0, "seed", 7), s1)
	usageFails(t, "share a depth", "merge", s0, forge("depth.json", m0, "max_depth", 31))
	usageFails(t, `search "sideways"`, "merge", forge("search.json", m0, "search", "sideways"))
	usageFails(t, "without the property", "merge", forge("fail.json", m0, "verdict", "fail"))
	// An unsharded exhaustive pass is believed; two copies of it are not.
	code, out, _ := runCLI("check", "--protocol", "mcast", "--nodes", "3", "-q", "--search", "dfs", "--json")
	dfs := filepath.Join(dir, "dfs.json")
	os.WriteFile(dfs, []byte(out), 0o644)
	if code != 0 {
		t.Fatalf("dfs: %d", code)
	}
	if code, out, _ := runCLI("merge", dfs); code != 0 || !strings.Contains(out, "verdict: pass") {
		t.Errorf("merging a complete DFS: exit %d\n%s", code, out)
	}
	usageFails(t, "both unsharded", "merge", dfs, dfs)
}

// merge believes a failure only if it could be one: a property of the
// configuration checked, whose counterexample replays to it; and counts
// only if no count is negative (a forged shard gave "FAIL: no-such-prop
// violated", "counterexample: 0 steps", negative sums and "0 walks").
func TestMergeChecksFailuresAndCounts(t *testing.T) {
	dir := t.TempDir()
	a2 := []string{"check", "--protocol", "mcast", "--topology", "../../examples/overlap-a2.topo",
		"--cast", "g1/0:1", "--cast", "g2/3:1", "--cast", "g3/6:1", "-q", "--search", "random", "--walks", "20", "--max-depth", "100", "--json"}
	shard := func(name string, code int, extra ...string) (string, map[string]any) {
		c, out, errs := runCLI(append(a2, extra...)...)
		if c != code {
			t.Fatalf("%v: exit %d, want %d: %s", extra, c, code, errs)
		}
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(out), 0o644)
		var m map[string]any
		json.Unmarshal([]byte(out), &m)
		return p, m
	}
	fail, mf := shard("fail.json", 1, "--shard", "0/2")
	if mf["verdict"] != "fail" || len(mf["trace"].([]any)) == 0 {
		t.Fatalf("the failing shard: %v %v", mf["verdict"], mf["trace"])
	}
	c, out, _ := runCLI(append(a2, "--shard", "1/2")...)
	other := filepath.Join(dir, "other.json")
	os.WriteFile(other, []byte(out), 0o644)
	if c != 1 && c != 3 {
		t.Fatalf("the other shard: exit %d", c)
	}
	c, out, errs := runCLI("check", "--protocol", "mcast", "--nodes", "3", "-q", "--search", "random", "--walks", "5", "--max-depth", "30", "--json", "--shard", "1/2")
	var mo map[string]any
	if json.Unmarshal([]byte(out), &mo); c != 3 {
		t.Fatalf("a correct configuration's shard: exit %d %s", c, errs)
	}
	forge := func(name string, m map[string]any, edits ...any) string {
		c := map[string]any{}
		for k, x := range m {
			c[k] = x
		}
		for i := 0; i < len(edits); i += 2 {
			if edits[i+1] == nil {
				delete(c, edits[i].(string))
			} else {
				c[edits[i].(string)] = edits[i+1]
			}
		}
		b, _ := json.Marshal(c)
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		return p
	}
	// (Each file is checked alone before the files are compared.)
	trace := mf["trace"].([]any)
	for _, c := range []struct {
		file, want string
	}{
		{forge("prop.json", mf, "property", "no-such-prop"), "verdict fail of no-such-prop, which is not a property checked on"},
		{forge("goal.json", mf, "property", "fifo"), "is not one of fifo: the trace records \"fifo\", but replay violates deadlock"},
		{forge("notrace.json", mf, "trace", nil), "verdict fail of deadlock without a counterexample, and the initial state does not violate it"},
		{forge("short.json", mf, "trace", trace[:len(trace)-1]), "is not one of deadlock: the trace records deadlock, but no property was violated"},
		{forge("long.json", mf, "trace", append(append([]any{}, trace...), trace[0])), "does not replay"},
		{forge("step.json", mf, "trace", append([]any{"bogus action"}, trace[1:]...)), "does not replay"},
		{forge("message.json", mf, "message", "made up"), "the trace records the message \"made up\""},
		{forge("incfail.json", mo, "verdict", "fail", "property", "deadlock"), "verdict fail of deadlock without a counterexample"},
		{forge("states.json", mo, "states", -5), "states -5: a count is never negative"},
		{forge("walks.json", mo, "walks", -3), "walks -3: a count is never negative"},
		{forge("coverage.json", mo, "coverage", -1), "coverage -1: a count is never negative"},
		{forge("transitions.json", mo, "transitions", -1), "transitions -1: a count is never negative"},
		{forge("depth.json", mo, "depth", -1), "depth -1: a count is never negative"},
		{forge("levels.json", mo, "levels", []any{1, -2}), "levels: -2 states at depth 1"},
		{forge("elapsed.json", mo, "elapsed_s", -0.5), "elapsed_s -0.5: a count is never negative"},
		{forge("huge.json", mo, "states", int64(math.MaxInt64)), "its counts overflow"},
	} {
		args := []string{"merge", c.file}
		if strings.HasSuffix(c.file, "huge.json") {
			args = append(args, forge("huge2.json", mo, "states", int64(math.MaxInt64), "shard", "0/2"))
		}
		usageFails(t, filepath.Base(args[len(args)-1])+": ", args...)
		usageFails(t, c.want, args...)
	}
	mdfs := map[string]any{}
	c, out, _ = runCLI("check", "--protocol", "mcast", "--nodes", "3", "-q", "--search", "dfs", "--json")
	json.Unmarshal([]byte(out), &mdfs)
	if c != 0 {
		t.Fatalf("dfs: exit %d", c)
	}
	usageFails(t, "3 walks from a dfs search, which takes none", "merge", forge("dfswalks.json", mdfs, "walks", 3))
	// The genuine ones merge.
	if code, out, _ := runCLI("merge", fail, other); code != 1 || !strings.Contains(out, "verdict: FAIL: deadlock violated") ||
		!strings.Contains(out, fmt.Sprintf("counterexample: %d steps", len(trace))) {
		t.Fatalf("merge: exit %d\n%s", code, out)
	}
}

// --search random without --walks walks until a limit ends it.
func TestRandomWalksUntilALimit(t *testing.T) {
	code, out, errs := runCLI("check", "--protocol", "mcast", "--nodes", "3", "--search", "random", "--max-depth", "40", "--max-states", "300", "-q")
	if code != 3 || !strings.Contains(out, "state limit 300 reached after") || !strings.Contains(out, "random walks never prove anything") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	stop := make(chan struct{})
	close(stop)
	var o, e bytes.Buffer
	if code := runEnv([]string{"check", "--search", "random", "--max-depth", "20", "-q"}, &o, &e, stop); code != 3 || !strings.Contains(o.String(), "interrupted after 0 walks") {
		t.Fatalf("interrupted: exit %d\n%s%s", code, o.String(), e.String())
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, out, _ := runCLI(args...)
		if code != 0 || !strings.HasPrefix(out, "lfccheck ") || !strings.Contains(out, "build ") {
			t.Errorf("%v: exit %d %q", args, code, out)
		}
	}
	code, out, _ := runCLI("check", "--nodes", "2", "-q", "--json")
	var m struct {
		Version *versionInfo `json:"version"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &m) != nil || m.Version == nil || m.Version.Go == "" || m.Version.Build == "" {
		t.Errorf("check --json has no version: %s", out)
	}
	usageFails(t, "unexpected argument", "version", "extra")
}

// Help states the defaults the code uses: a documented parameter default,
// set explicitly, leaves the parameters at their defaults; --workers
// prints one default; sweep's help shows the real grids.
func TestHelpDefaultsAreTheCodes(t *testing.T) {
	for _, d := range protocols.All() {
		for _, s := range d.Params {
			if s.Default == "" {
				continue
			}
			p := d.NewParams()
			if err := p.Set(s.Key, s.Default); err != nil {
				// A default that depends on others ("max(1, C/2)") is
				// described, not a value.
				if !strings.ContainsAny(s.Default, "( ") {
					t.Errorf("%s --%s: documented default %q is not a value: %v", d.Name, s.Key, s.Default, err)
				}
				continue
			}
			def := d.NewParams()
			if _, err := def.Resolve(0); err != nil {
				t.Fatal(err)
			}
			if _, err := p.Resolve(0); err != nil {
				t.Errorf("%s --%s %s: %v", d.Name, s.Key, s.Default, err)
				continue
			}
			if got, want := p.Describe(), def.Describe(); got != want {
				// Given explicitly, a parameter may be shown (a tree
				// family conflicts with a topology file): the searches
				// must then agree.
				states := func(args ...string) string {
					_, out, _ := runCLI(append([]string{"check", "--protocol", d.Name, "-q", "--json", "--workers", "1", "--max-states", "5000"}, args...)...)
					var m map[string]any
					json.Unmarshal([]byte(out), &m)
					return fmt.Sprint(m["verdict"], m["states"], m["transitions"])
				}
				if a, b := states(), states("--"+s.Key, s.Default); a != b {
					t.Errorf("%s --%s: documented default %q is not the code's: %s searches %s, not %s", d.Name, s.Key, s.Default, got, b, a)
				}
			}
		}
	}
	_, help, _ := runCLI("help", "check")
	for _, l := range strings.Split(help, "\n") {
		if strings.Contains(l, "--workers") && strings.Count(l, "default") != 2 { // "by default" and "(default N)"
			t.Errorf("--workers help: %s", l)
		}
	}
	_, help, _ = runCLI("help", "sweep")
	for _, d := range protocols.All() {
		for _, s := range d.Sweep {
			if !strings.Contains(help, s.Key+"="+s.Value) {
				t.Errorf("sweep help lacks %s's grid %s=%s", d.Name, s.Key, s.Value)
			}
		}
	}
}

// An interrupt before a sweep begins: the summary says each series was not
// run, not that none of its sizes passed.
func TestSweepSummaryAfterInterrupt(t *testing.T) {
	stop := make(chan struct{})
	close(stop)
	var o, e bytes.Buffer
	code := runEnv([]string{"sweep", "--protocol", "ucast", "--nodes", "2-3", "-q"}, &o, &e, stop)
	if code != 3 || !strings.Contains(o.String(), "not run (interrupted)") || strings.Contains(o.String(), " none") {
		t.Fatalf("exit %d\n%s", code, o.String())
	}
}

// Waiting for a FIFO to be written ends at the first interrupt.
func TestInterruptWhileWaitingForAFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "in.json")
	if err := mkfifo(fifo); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	stop := make(chan struct{})
	close(stop)
	var o, e bytes.Buffer
	if code := runEnv([]string{"replay", fifo}, &o, &e, stop); code != 2 || !strings.Contains(e.String(), "interrupted while waiting") {
		t.Fatalf("exit %d %q", code, e.String())
	}
}
