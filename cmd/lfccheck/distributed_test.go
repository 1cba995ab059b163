package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"lfccheck/internal/racebuild"
)

// TestMain runs the test binary as a local worker of check --distributed
// when it is started as one (the CLI starts its own program again, which
// in a test is this binary), and as the command itself under testMainEnv.
// testMainEnv set makes the test binary the lfccheck command.
const testMainEnv = "LFCCHECK_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(distChildEnv) != "" {
		os.Exit(runEnv(os.Args[1:], os.Stdout, os.Stderr, nil))
	}
	if os.Getenv(testMainEnv) != "" {
		main() // (the fault-injection suite runs the command as processes)
	}
	os.Exit(m.Run())
}

// distKeys are the parts of check --json that the distributed search must
// give as the breadth-first search does.
var distKeys = []string{"verdict", "property", "message", "states", "transitions", "depth", "levels", "level_partial",
	"trace", "sleep_sets", "sleep_sets_skipped", "sleep_sets_note", "stubborn_states", "stubborn_left_out", "statistics", "properties"}

func distCheckJSON(t *testing.T, args ...string) (int, map[string]any) {
	t.Helper()
	code, out, errs := runCLI(append(append([]string{"check"}, args...), "--json")...)
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%v: exit %d: %v\n%s%s", args, code, err, out, errs)
	}
	return code, m
}

// TestDistributedSameAsCheck compares check --distributed 1, 2 and 4 with
// the ordinary check on claims that pass, variants that fail (a
// transition's violation, a deadlock, one found in a level where the
// search with sleep sets starts again without them), and replays the
// counterexamples written.
func TestDistributedSameAsCheck(t *testing.T) {
	cases := [][]string{
		{"--protocol", "mcast", "--nodes", "3", "--packets", "1"},
		{"--variant", "no-credit-return", "--nodes", "2", "--credits", "1", "--packets", "1"},
		{"--protocol", "mcast", "--tree", "chain", "--nodes", "4", "--credits", "1", "--packets", "1"},
		{"--variant", "no-drain", "--nodes", "2", "--packets", "3", "--send-buffers", "1", "--reply", "on", "--upcalls-allowed", "off"},
	}
	ns := []string{"1", "2", "4"}
	if testing.Short() {
		ns = []string{"2"}
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			wantCode, want := distCheckJSON(t, args...)
			for _, n := range ns {
				tf := filepath.Join(t.TempDir(), "cex.json")
				code, got := distCheckJSON(t, append(args, "--distributed", n, "--trace-out", tf)...)
				if code != wantCode {
					t.Fatalf("--distributed %s: exit %d, want %d", n, code, wantCode)
				}
				for _, k := range distKeys {
					if g, w := fmt.Sprint(got[k]), fmt.Sprint(want[k]); g != w {
						t.Fatalf("--distributed %s: %s %s, want %s", n, k, g, w)
					}
				}
				d, _ := got["distributed"].(map[string]any)
				if d == nil || fmt.Sprint(d["workers"]) != n {
					t.Fatalf("--distributed %s: %v", n, got["distributed"])
				}
				// Workers that send keep sent sets; one sends nothing.
				if ss, ok := d["sent_set_bytes"].(float64); !ok || (n == "1") != (ss == 0) {
					t.Fatalf("--distributed %s: sent_set_bytes %v", n, d["sent_set_bytes"])
				}
				// One worker shares with none.
				if sh, ok := d["states_shared"].(float64); !ok || n == "1" && sh != 0 {
					t.Fatalf("--distributed %s: states_shared %v", n, d["states_shared"])
				}
				// Owners leave states to the worker that reached them
				// first (on these trees, every search with more than one).
				if sl, ok := d["states_left"].(float64); !ok || (n == "1") != (sl == 0) {
					t.Fatalf("--distributed %s: states_left %v", n, d["states_left"])
				}
				if got["verdict"] == "fail" {
					code, out, errs := runCLI("replay", tf)
					if code != 0 || !strings.Contains(out, "reproduced: ") {
						t.Fatalf("--distributed %s: replay exit %d:\n%s%s", n, code, out, errs)
					}
				}
			}
		})
	}
	// The text report is the check's, with a line more.
	code, out, errs := runCLI("check", "--protocol", "mcast", "--nodes", "3", "--packets", "1", "--distributed", "2")
	if code != 0 || !strings.Contains(out, "verdict: pass") || !strings.Contains(out, "\ndistributed: 2 worker processes, states owned by hash; ") ||
		!strings.Contains(out, " bytes sent per state (") || !strings.Contains(out, "; sent sets ") ||
		!strings.Contains(out, " states expanded by a worker that does not own them (") || !strings.Contains(out, " left to the worker that reached them first, ") {
		t.Fatalf("exit %d:\n%s%s", code, out, errs)
	}
}

// TestDistributedBadInput: a clear line and exit 2, within the time
// allowed and without a worker left running.
func TestDistributedBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--distributed", "0"}, "--distributed must be between 1 and 256, got 0"},
		{[]string{"--distributed", "100000"}, "--distributed must be between 1 and 256"},
		{[]string{"--distributed", "-3"}, "--distributed"},
		{[]string{"--distributed", "2", "--fingerprint", "--checkpoint", "ck"}, "checkpoints need the exact store: drop --fingerprint"},
		{[]string{"--distributed", "2", "--frontier"}, "--frontier is not distributed"},
		{[]string{"--distributed", "2", "--search", "dfs"}, "breadth-first: not with --search dfs"},
		{[]string{"--distributed", "2", "--resume", "ck"}, "give --checkpoint DIR, not --resume"},
		{[]string{"--distributed", "2", "--liveness-graph"}, "keeps no state graph"},
		{[]string{"--distributed", "2", "--peers", "a:1"}, "not with --peers"},
		{[]string{"--rank", "1"}, "--rank and --listen need --peers"},
		{[]string{"--peers", "127.0.0.1:1,127.0.0.1:2"}, "--peers needs --rank"},
		{[]string{"--peers", "nohostport", "--rank", "0"}, `--peers: "nohostport" is not HOST:PORT`},
		{[]string{"--peers", "127.0.0.1:1", "--rank", "3"}, "rank 3 is not one of the 1 peers"},
		{[]string{"--peers", "127.0.0.1:0,127.0.0.1:1", "--rank", "0", "--connect-timeout", "1s"}, "worker 1 (127.0.0.1:1): no answer within 1s"},
		{[]string{"--peers", "127.0.0.1:1,127.0.0.1:0", "--rank", "1", "--connect-timeout", "1s"}, "no hello from the coordinator (rank 0, 127.0.0.1:1) within 1s"},
	} {
		start := time.Now()
		code, out, errs := runCLI(append([]string{"check", "--protocol", "mcast", "--nodes", "3", "--packets", "1"}, tc.args...)...)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", tc.args, code, out, errs, tc.want)
		}
		if el := time.Since(start); el > 10*time.Second {
			t.Errorf("%v: took %s", tc.args, el)
		}
	}
	// A work-sharing switch that is neither on nor off.
	t.Setenv(distShareEnv, "x")
	code, out, errs := runCLI("check", "--protocol", "mcast", "--nodes", "3", "--packets", "1", "--distributed", "2")
	if code != 2 || out != "" || errs != "lfccheck: $LFCCHECK_DIST_SHARE is \"x\": give 0 (no sharing) or 1\n" {
		t.Errorf("%s=x: exit %d, stdout %q, stderr %q", distShareEnv, code, out, errs)
	}
	os.Unsetenv(distShareEnv)
	t.Setenv(distDelegateEnv, "2")
	code, out, errs = runCLI("check", "--protocol", "mcast", "--nodes", "3", "--packets", "1", "--distributed", "2")
	if code != 2 || out != "" || errs != "lfccheck: $LFCCHECK_DIST_DELEGATE is \"2\": give 0 (each worker expands the states it owns) or 1\n" {
		t.Errorf("%s=2: exit %d, stdout %q, stderr %q", distDelegateEnv, code, out, errs)
	}
	os.Unsetenv(distDelegateEnv)
	// Liveness on the state graph.
	code, _, errs = runCLI("check", "--protocol", "intr", "--distributed", "2")
	if code != 2 || !strings.Contains(errs, "keeps no state graph, which") {
		t.Errorf("intr: exit %d, %q", code, errs)
	}
}

// TestDistributedWorkerCrash kills a worker in the middle of a search: one
// error line, exit 2, no hang, no worker process left.
func TestDistributedWorkerCrash(t *testing.T) {
	var mu sync.Mutex
	var pids []int
	distStarted = func(pid int) {
		mu.Lock()
		pids = append(pids, pid)
		mu.Unlock()
		if len(pids) == 1 {
			go func() {
				time.Sleep(700 * time.Millisecond)
				syscall.Kill(pid, syscall.SIGKILL)
			}()
		}
	}
	defer func() { distStarted = nil }()
	start := time.Now()
	var out, errs bytes.Buffer
	code := run([]string{"check", "--protocol", "mcast", "--nodes", "3", "--packets", "2", "--distributed", "3"}, &out, &errs)
	if code != 2 || strings.Count(errs.String(), "\n") != 1 || !strings.Contains(errs.String(), "worker 1 (process ") || !strings.Contains(errs.String(), "killed") {
		t.Fatalf("exit %d after %s:\n%s%s", code, time.Since(start), out.String(), errs.String())
	}
	t.Log(strings.TrimSpace(errs.String()))
	mu.Lock()
	defer mu.Unlock()
	if len(pids) != 2 {
		t.Fatalf("%d workers started, want 2", len(pids))
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("worker process %d is still running", pid)
		}
	}
}

// TestDistributedLimits: the limits end a distributed search as
// incomplete (exit 3), the depth limit exactly where check stops.
func TestDistributedLimits(t *testing.T) {
	base := []string{"--protocol", "mcast", "--nodes", "3", "--packets", "2", "--distributed", "2", "--por", "off"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--timeout", "200ms"}, "time limit 200ms reached"},
		// Over before the workers are through the first level (or
		// before they start it): still a time limit, never an error.
		{[]string{"--timeout", "1ms"}, "time limit 1ms reached"},
		{[]string{"--max-depth", "5"}, "depth limit 5 reached with 80 states unexplored"},
		{[]string{"--max-states", "1000"}, "state limit 1000 reached"},
	} {
		start := time.Now()
		code, m := distCheckJSON(t, append(base, tc.args...)...)
		if code != 3 || m["verdict"] != "incomplete" || !strings.Contains(fmt.Sprint(m["reason"]), tc.want) {
			t.Errorf("%v: exit %d, %v: %v", tc.args, code, m["verdict"], m["reason"])
		}
		if el := time.Since(start); el > 20*time.Second {
			t.Errorf("%v: took %s", tc.args, el)
		}
	}
}

// TestDistributedTimeLimitWhileCheckpointing: with a checkpoint at every
// level, the time limit often passes while one is written; the search
// still ends as incomplete (exit 3), never with the write's error (it
// did in 3 of 9 runs of these limits before the checkpoint commands ran
// without the time limit).
func TestDistributedTimeLimitWhileCheckpointing(t *testing.T) {
	for _, limit := range []string{"20ms", "40ms", "60ms", "80ms", "100ms", "150ms", "250ms", "400ms"} {
		dir := filepath.Join(t.TempDir(), "ckpt")
		code, m := distCheckJSON(t, "--protocol", "mcast", "--nodes", "3", "--packets", "2", "--por", "off", "--distributed", "2",
			"--timeout", limit, "--checkpoint", dir, "--checkpoint-every", "1ns")
		if code != 3 || m["verdict"] != "incomplete" || !strings.Contains(fmt.Sprint(m["reason"]), "time limit "+limit+" reached") {
			t.Errorf("--timeout %s: exit %d, %v: %v", limit, code, m["verdict"], m["reason"])
		}
	}
}

// TestDistributedCheckpointAfterCrash: a search with checkpoints at every
// level loses a worker; the same command run again continues from the
// newest checkpoint and ends as a search in one go does (states,
// transitions, levels, verdict), then removes the checkpoint.
func TestDistributedCheckpointAfterCrash(t *testing.T) {
	args := []string{"--protocol", "mcast", "--nodes", "3", "--packets", "2"}
	if racebuild.Enabled {
		// A search of 137,094 states takes ~18 s a run under the race
		// detector; this one (18,798 states, 16 levels, ending in the
		// chain's deadlock) ~3 s, still long after the first
		// checkpoint (100 ms).
		args = []string{"--protocol", "mcast", "--tree", "chain", "--nodes", "4", "--packets", "2"}
	}
	wantCode, want := distCheckJSON(t, args...)
	dir := filepath.Join(t.TempDir(), "ckpt")
	args = append(args, "--distributed", "3", "--checkpoint", dir, "--checkpoint-every", "100ms")
	killed := false
	distStarted = func(pid int) {
		if !killed {
			killed = true
			go func() {
				// Once a checkpoint is there.
				for start := time.Now(); time.Since(start) < 20*time.Second; time.Sleep(5 * time.Millisecond) {
					if _, err := os.Stat(filepath.Join(dir, "dist.json")); err == nil {
						break
					}
				}
				syscall.Kill(pid, syscall.SIGKILL)
			}()
		}
	}
	code, out, errs := runCLI(append([]string{"check"}, args...)...)
	distStarted = nil
	if code != 2 || !strings.Contains(errs, "killed") {
		t.Fatalf("exit %d:\n%s%s", code, out, errs)
	}
	meta, err := os.ReadFile(filepath.Join(dir, "dist.json"))
	if err != nil {
		t.Fatalf("no checkpoint after the crash: %v", err)
	}
	code, got := distCheckJSON(t, args...)
	if code != wantCode {
		t.Fatalf("exit %d, want %d: %v", code, wantCode, got)
	}
	for _, k := range []string{"verdict", "property", "trace", "states", "transitions", "depth", "levels", "sleep_sets_skipped", "stubborn_states", "stubborn_left_out", "statistics"} {
		if g, w := fmt.Sprint(got[k]), fmt.Sprint(want[k]); g != w {
			t.Fatalf("%s %s, want %s (resumed from %s)", k, g, w, meta)
		}
	}
	ck := got["distributed"].(map[string]any)["checkpoint"].(map[string]any)
	if ck["resumed"] != true || ck["kept"] != false {
		t.Fatalf("checkpoint %v", ck)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Fatalf("left in the checkpoint directory: %v", left)
	}
	t.Logf("resumed from %s", bytes.TrimSpace(meta))
}

// TestDistributedProfile runs docs/distributed.md's profiling command:
// with LFCCHECK_DIST_PROFILE set, each worker process writes its CPU
// profile (gzip-compressed, as pprof writes them) and where its time went.
func TestDistributedProfile(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(distProfileEnv, dir)
	code, out, errs := runCLI("check", "--protocol", "mcast", "--nodes", "3", "--packets", "1", "--distributed", "2")
	if code != exitPass {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	for r := range 2 {
		// (Rank 0 runs in this test's process, which may profile itself
		// already: its times say so.)
		times, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("times-%d.txt", r)))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{fmt.Sprintf("rank: %d of 2\n", r), "\nexpand: ", "\nreceive: ", "\noutside expand", "\nper level, ms expanding own states / in expand: "} {
			if !strings.Contains(string(times), want) {
				t.Fatalf("times-%d.txt has no %q:\n%s", r, want, times)
			}
		}
		if r == 0 && strings.Contains(string(times), "cpu profile: not written") {
			continue
		}
		prof, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("cpu-%d.pprof", r)))
		if err != nil || len(prof) < 2 || prof[0] != 0x1f || prof[1] != 0x8b {
			t.Fatalf("cpu-%d.pprof: %d bytes, %v", r, len(prof), err)
		}
	}
	if testing.Short() {
		return
	}
	// The document's second command: pprof reads the worker's profile
	// (the workers are this test binary started again).
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pout, err := exec.Command("go", "tool", "pprof", "-top", exe, filepath.Join(dir, "cpu-1.pprof")).CombinedOutput()
	if err != nil || !strings.Contains(string(pout), "Type: cpu") {
		t.Fatalf("go tool pprof: %v\n%s", err, pout)
	}
}
