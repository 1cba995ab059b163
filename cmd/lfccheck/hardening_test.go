package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"lfccheck/protocols"
)

// Trace files written by earlier versions replay, reproducing the recorded
// violation, message and every recorded step.
func TestOldTraceFilesReplay(t *testing.T) {
	files, _ := filepath.Glob("testdata/v1/*.json")
	if len(files) < 5 {
		t.Fatalf("found %d old traces", len(files))
	}
	for _, f := range files {
		code, out, errs := runCLI("replay", f)
		if code != 0 || !strings.Contains(out, "reproduced: ") {
			t.Errorf("%s: exit %d\n%s%s", f, code, out, errs)
		}
	}
}

// Replay compares the whole recorded outcome: an edited message or step is
// reported, exit 1.
func TestReplayComparesWholeOutcome(t *testing.T) {
	data, err := os.ReadFile("testdata/v1/ucast-no-credit-return.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, c := range []struct{ from, to, want string }{
		{"want C = 1\"", "want C = 2\"", "records the message"},
		{`"host 1 queue: [] -\u003e [u0#1]"`, `"host 1 queue: [] -\u003e []"`, "step 3 differs"},
		{`"property": "credit-conservation"`, `"property": "fifo"`, `records "fifo"`},
	} {
		edited := strings.Replace(string(data), c.from, c.to, 1)
		if edited == string(data) {
			t.Fatalf("%q not found in the trace", c.from)
		}
		p := filepath.Join(dir, "t.json")
		os.WriteFile(p, []byte(edited), 0o644)
		code, out, _ := runCLI("replay", p)
		if code != 1 || !strings.Contains(out, "NOT reproduced") || !strings.Contains(out, c.want) {
			t.Errorf("%s: exit %d\n%s", c.want, code, out)
		}
	}
}

// Every command 'lfccheck list' prints for a broken variant, run as
// printed, fails with the property the list names.
func TestListedCommandsCatchTheirVariants(t *testing.T) {
	_, out, _ := runCLI("list", "--json")
	var ps []struct {
		Name     string
		Variants []struct {
			Name    string
			Catches string `json:"caught_by"`
			Example string
		}
	}
	if err := json.Unmarshal([]byte(out), &ps); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range ps {
		for _, v := range p.Variants {
			if v.Catches == "" {
				continue
			}
			n++
			args := strings.Fields(v.Example)
			if args[0] != "lfccheck" || strings.ContainsAny(v.Example, "'\"") {
				t.Fatalf("%s: command %q is not plain", v.Name, v.Example)
			}
			code, out, errs := runCLI(append(args[1:], "--json", "-q")...)
			var m map[string]any
			if code != 1 || json.Unmarshal([]byte(out), &m) != nil || m["property"] != v.Catches {
				t.Errorf("%s: %s: exit %d, want fail %s\n%s%s", v.Name, v.Example, code, v.Catches, out, errs)
			}
		}
	}
	if n < 5 {
		t.Fatalf("only %d variant commands listed", n)
	}
	// The listed configuration is the one the suite runs.
	for _, sc := range suite() {
		if !strings.HasPrefix(sc.claim.Expect, "fail ") || !strings.Contains(sc.claim.Doc, "broken variant") {
			continue
		}
		cmd, err := commandFor(sc.claim.Config)
		if err != nil || !strings.Contains(out, cmd) {
			t.Errorf("suite check %s: command %q (%v) is not listed", sc.name, cmd, err)
		}
	}
}

// --trace-out never replaces what is not a regular file, honours '-',
// writes 0644, and a failed write still prints the result first.
func TestTraceOutSafety(t *testing.T) {
	dir := t.TempDir()
	args := []string{"check", "--variant", "no-credit-return", "--nodes", "2", "-q", "--trace-out"}
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	ro := filepath.Join(dir, "ro.json")
	os.WriteFile(ro, []byte("keep"), 0o444)
	for _, p := range []string{link, ro, dir, "/dev/full", "/dev/stdout", filepath.Join(dir, "missing", "t.json")} {
		code, out, errs := runCLI(append(args, p)...)
		if code != 2 || out != "" || !strings.Contains(errs, "--trace-out") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", p, code, out, errs)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Error("the symlink's target was replaced")
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Error("the symlink was replaced")
	}
	if b, _ := os.ReadFile(ro); string(b) != "keep" {
		t.Error("a read-only file was replaced")
	}
	good := filepath.Join(dir, "t.json")
	if code, _, errs := runCLI(append(args, good)...); code != 1 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if st, err := os.Stat(good); err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("trace file: %v %v", st, err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".lfccheck-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
	// With the trace on standard output, the report goes to standard
	// error, so that the trace can be piped (as JSON alone).
	code, out, errs := runCLI(append(args, "-")...)
	var piped map[string]any
	if code != 1 || !strings.Contains(errs, "verdict: FAIL") || json.Unmarshal([]byte(out), &piped) != nil || piped["format"] != "lfccheck-trace/2" {
		t.Fatalf("--trace-out -: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	// The directory becomes unwritable during the search: the result is
	// printed, then the error, exit 2.
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	f := filepath.Join(sub, "t.json")
	os.Mkdir(f, 0o755) // a directory where the file should go, created "later"
	var o, e bytes.Buffer
	code = runEnvAfterCheck(t, append(args, filepath.Join(sub, "later.json")), &o, &e, func() { os.Remove(sub + "/t.json"); os.RemoveAll(sub) })
	if code != 2 || !strings.Contains(o.String(), "verdict: FAIL") || !strings.Contains(e.String(), "--trace-out") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, o.String(), e.String())
	}
	// Trace JSON is readable: no HTML escaping of "->".
	b, _ := os.ReadFile(good)
	if !strings.Contains(string(b), "deliver 0->1") || strings.Contains(string(b), `\u003e`) {
		t.Errorf("trace JSON escapes: %s", b)
	}
}

// runEnvAfterCheck runs args after calling prepare between the option
// checks and the write: it removes the output directory first, which
// CheckOutput accepted.
func runEnvAfterCheck(t *testing.T, args []string, o, e *bytes.Buffer, remove func()) int {
	t.Helper()
	beforeWrite = remove
	defer func() { beforeWrite = nil }()
	return run(args, o, e)
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// A failing standard output is an error, not a silent exit 0.
func TestStdoutWriteErrors(t *testing.T) {
	var e bytes.Buffer
	code := run([]string{"check", "--nodes", "2", "-q"}, failWriter{}, &e)
	if code != 2 || !strings.Contains(e.String(), "writing standard output") {
		t.Fatalf("exit %d, stderr %q", code, e.String())
	}
}

// Help works for every command, topic and exit codes.
func TestHelp(t *testing.T) {
	for _, c := range commands {
		code, out, _ := runCLI(c, "--help")
		if code != 0 || out == "" {
			t.Errorf("%s --help: exit %d, %q", c, code, out)
		}
		code, out2, _ := runCLI("help", c)
		if c != "help" && (code != 0 || out2 != out) {
			t.Errorf("help %s differs from %s --help", c, c)
		}
	}
	code, out, _ := runCLI("help", "exit-codes")
	if code != 0 || !strings.Contains(out, "interrupted") {
		t.Fatalf("help exit-codes: %d %s", code, out)
	}
	code, out, _ = runCLI("help", "liveness")
	if code != 0 || !strings.Contains(out, "loop_start") {
		t.Fatalf("help liveness: %d %s", code, out)
	}
	_, _, errs := runCLI("frobnicate")
	for _, c := range commands {
		if !strings.Contains(errs, c) {
			t.Errorf("unknown command error lacks %s: %s", c, errs)
		}
	}
}

// MCAST flows add unicast traffic to the multicasts instead of replacing
// them.
func TestMulticastFlowsAddToMulticasts(t *testing.T) {
	code, out, _ := runCLI("check", "--protocol", "mcast", "--flow", "1:2:1", "-q", "--json")
	var m map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &m) != nil || m["states"].(float64) < 1000 {
		t.Fatalf("exit %d: %s", code, out)
	}
}

// Limits are exact: a run that stores at most the limit passes, one that
// needs more is incomplete with exactly the limit stored.
func TestExactStateLimit(t *testing.T) {
	run := func(limit string) map[string]any {
		_, out, _ := runCLI("check", "--nodes", "2", "--packets", "1", "-q", "--json", "--por", "off", "--max-states", limit)
		var m map[string]any
		json.Unmarshal([]byte(out), &m)
		return m
	}
	if m := run("16"); m["verdict"] != "pass" {
		t.Errorf("16 states (the whole space, one per orbit of the two renamings): %v", m["verdict"])
	}
	if m := run("15"); m["verdict"] != "incomplete" || m["states"].(float64) > 15 {
		t.Errorf("15 states: %v %v", m["verdict"], m["states"])
	}
	if m := run("3"); m["verdict"] != "incomplete" || m["states"].(float64) > 3 {
		t.Errorf("3 states: %v %v", m["verdict"], m["states"])
	}
}

// buildCLI builds the lfccheck binary into dir and returns its path.
func buildCLI(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "lfccheck")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// interruptCLI runs the binary bin with args, sends it SIGINT after
// wait, and returns its standard output: it must exit 3.
func interruptCLI(t *testing.T, bin string, wait time.Duration, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(wait)
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("%s: exit %v, stdout %s, stderr %s", args[0], err, o.String(), e.String())
	}
	return o.String()
}

// SIGINT during a long check: verdict incomplete (interrupted), statistics,
// the JSON object, exit 3.
func TestInterruptPrintsResult(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildCLI(t, t.TempDir())
	o := interruptCLI(t, bin, 1500*time.Millisecond, "check", "--nodes", "4", "--packets", "2", "--json", "-q")
	var m map[string]any
	if json.Unmarshal([]byte(o), &m) != nil || m["verdict"] != "incomplete" || !strings.HasPrefix(m["reason"].(string), "interrupted") || m["states"].(float64) < 1000 {
		t.Fatalf("stdout %s", o)
	}
	// The suite prints the rows it finished and ends as incomplete.
	if o := interruptCLI(t, bin, 2*time.Second, "suite", "-q"); !strings.Contains(o, "interrupted") || !strings.Contains(o, "  ok\n") {
		t.Fatalf("suite:\n%s", o)
	}
}

var _ = protocols.All

// The memory budget holds within a few percent.
func TestMemoryBudget(t *testing.T) {
	// The whole search (546,154 states) peaks near 16 MiB of heap with the
	// compact store, so an 8 MiB budget must cut it, well before the end.
	code, out, _ := runCLI("check", "--nodes", "3", "--packets", "2", "--max-memory", "8MiB", "-q", "--json")
	var m map[string]any
	if code != 3 || json.Unmarshal([]byte(out), &m) != nil || !strings.HasPrefix(m["reason"].(string), "memory limit") {
		t.Fatalf("exit %d: %s", code, out)
	}
	if peak := m["peak_heap_bytes"].(float64); peak > 1.1*8*(1<<20) {
		t.Fatalf("peak heap %.0f bytes, more than 10%% over the 8 MiB budget", peak)
	}
}
