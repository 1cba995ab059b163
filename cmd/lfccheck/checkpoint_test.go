package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"lfccheck/explore"
	"lfccheck/internal/racebuild"
)

// checkJSON runs check with --json -q and decodes the result.
func checkJSON(t *testing.T, wantCode int, args ...string) map[string]any {
	t.Helper()
	code, out, errs := runCLI(append([]string{"check", "--json", "-q"}, args...)...)
	var m map[string]any
	if code != wantCode || json.Unmarshal([]byte(out), &m) != nil {
		t.Fatalf("check %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, wantCode, out, errs)
	}
	return m
}

// sameSearch is what a search stopped and resumed must share with one run
// in one go.
func sameSearch(m map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"verdict", "states", "transitions", "depth", "levels", "sleep_sets", "sleep_sets_skipped", "sleep_sets_note", "stubborn_states", "stubborn_left_out", "statistics", "property", "message", "trace"} {
		out[k] = m[k]
	}
	return out
}

// A search stopped by a limit with --checkpoint and continued twice with
// --resume (another number of workers, then without the limit) ends as
// the same search run in one go, for a pass and for a deadlock with its
// counterexample; the checkpoint is kept while the search is incomplete
// and removed with the verdict. Under the race detector the pass is of
// one packet per node (2,576 states, not 171,461).
func TestCheckpointResumeCLI(t *testing.T) {
	packets := "2"
	if racebuild.Enabled {
		packets = "1"
		t.Logf("race detector: the pass with --packets 1; the test without -race checks --packets 2")
	}
	for _, c := range []struct {
		flags []string
		code  int
	}{
		{[]string{"--protocol", "mcast", "--nodes", "3", "--packets", packets}, exitPass},
		{[]string{"--protocol", "mcast", "--tree", "chain", "--nodes", "4"}, exitFail},
	} {
		want := sameSearch(checkJSON(t, c.code, c.flags...))
		dir := filepath.Join(t.TempDir(), "ckpt")
		m := checkJSON(t, exitIncomplete, append([]string{"--checkpoint", dir, "--max-depth", "5"}, c.flags...)...)
		ck, _ := m["checkpoint"].(map[string]any)
		if ck["kept"] != true || ck["depth"] != 5.0 || ck["states"] != m["states"] {
			t.Fatalf("stopped: %v", m["checkpoint"])
		}
		if m["transitions"].(float64) < m["states"].(float64)-1 {
			t.Errorf("stopped at the depth limit: %v transitions for %v states", m["transitions"], m["states"])
		}
		m = checkJSON(t, exitIncomplete, append([]string{"--resume", dir, "--max-depth", "9", "--workers", "1"}, c.flags...)...)
		if ck, _ := m["checkpoint"].(map[string]any); ck["kept"] != true || ck["depth"] != 9.0 || ck["resumed_depth"] != 5.0 {
			t.Fatalf("resumed and stopped: %v", m["checkpoint"])
		}
		// --resume alone takes the search's flags from the checkpoint.
		m = checkJSON(t, c.code, "--resume", dir, "--workers", "2")
		if diff := cmp.Diff(want, sameSearch(m)); diff != "" {
			t.Errorf("%v: resumed search differs (-in one go +resumed):\n%s", c.flags, diff)
		}
		if ck, _ := m["checkpoint"].(map[string]any); ck["kept"] != false {
			t.Errorf("after the verdict: %v", m["checkpoint"])
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the checkpoint directory is left after the verdict: %v", err)
		}
	}
}

// A resumed search keeps what the states before the checkpoint showed:
// GSB's goal held-back is reached only before depth 26 to 28, and a
// resumed search still passes. --resume with some of the search's flags
// given takes the others from the checkpoint; repeated flags (--cast) and
// a topology file named relative to the directory of the first run
// resume from another directory. Under the race detector, GSB stops at
// depth 27 only, and the graph that is not layered is of K=4 (6,587
// states, not 72,060).
func TestCheckpointResumeKeepsCLI(t *testing.T) {
	depths, packets, states := []string{"26", "27", "28"}, "6", 72060.0
	if racebuild.Enabled {
		depths, packets, states = []string{"27"}, "4", 6587.0
		t.Logf("race detector: GSB stopped at depth 27 only, and K=4 for the restart; the test without -race checks depths 26 to 28 and K=6")
	}
	gsb := []string{"--protocol", "gsb"}
	want := sameSearch(checkJSON(t, exitPass, gsb...))
	for _, d := range depths {
		dir := filepath.Join(t.TempDir(), "ckpt")
		checkJSON(t, exitIncomplete, append([]string{"--checkpoint", dir, "--checkpoint-every", "1ns", "--max-depth", d}, gsb...)...)
		m := checkJSON(t, exitPass, "--resume", dir, "--nodes", "3")
		if diff := cmp.Diff(want, sameSearch(m)); diff != "" {
			t.Errorf("gsb stopped at depth %s: resumed search differs (-in one go +resumed):\n%s", d, diff)
		}
	}
	topo, err := filepath.Rel(".", filepath.Join("..", "..", "examples", "overlap-small.topo"))
	if err != nil {
		t.Fatal(err)
	}
	flags := []string{"--protocol", "mcast", "--topology", topo, "--cast", "g1/0:1", "--cast", "g2/2:1"}
	want = sameSearch(checkJSON(t, exitPass, flags...))
	dir := filepath.Join(t.TempDir(), "ckpt")
	checkJSON(t, exitIncomplete, append([]string{"--checkpoint", dir, "--max-depth", "4"}, flags...)...)
	t.Chdir(t.TempDir())
	if diff := cmp.Diff(want, sameSearch(checkJSON(t, exitPass, "--resume", dir))); diff != "" {
		t.Errorf("%v: resumed search differs (-in one go +resumed):\n%s", flags, diff)
	}
	// A resumed search that meets a graph that is not layered starts again
	// without sleep sets, and says that it dropped the checkpoint.
	flags = []string{"--protocol", "mcast", "--nodes", "2", "--credits", "4", "--packets", packets, "--por", "off"}
	checkJSON(t, exitIncomplete, append([]string{"--checkpoint", "ck", "--max-depth", "6"}, flags...)...)
	m := checkJSON(t, exitPass, "--resume", "ck")
	if ck, _ := m["checkpoint"].(map[string]any); ck["restarted"] != true || ck["resumed"] != false || m["states"] != states {
		t.Errorf("resumed and restarted: %v states, %v", m["states"], m["checkpoint"])
	}
}

// A search that ends with a verdict whose result cannot be written keeps
// its checkpoint, and says so in its one error line, so that --resume
// gives the result again; written, it removes it. The checkpoint notes
// --checkpoint-every for the resumed search, and the properties are
// compared as a set.
func TestCheckpointDelivered(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b", "ckpt")
	flags := []string{"--protocol", "mcast", "--nodes", "3", "--property", "fifo", "--property", "deadlock", "--por", "off"}
	checkJSON(t, exitIncomplete, append([]string{"--checkpoint", dir, "--checkpoint-every", "1ns", "--max-depth", "5"}, flags...)...)
	h, err := explore.ReadCheckpoint(dir)
	if err != nil || !strings.Contains(h.Note, `"--checkpoint-every=1ns"`) {
		t.Errorf("the checkpoint's note: %q, %v", h.Note, err)
	}
	var e bytes.Buffer
	code := run([]string{"check", "-q", "--resume", dir, "--property", "deadlock", "--property", "fifo"}, failWriter{}, &e)
	if code != exitUsage || strings.Count(e.String(), "\n") != 1 || !strings.Contains(e.String(), "writing standard output: no space left on device; the checkpoint in "+dir+" is kept") {
		t.Fatalf("exit %d, stderr %q", code, e.String())
	}
	// Not quiet: the progress lines say what was resumed.
	code, out, errs := runCLI("check", "--json", "--resume", dir)
	var m map[string]any
	if code != exitPass || json.Unmarshal([]byte(out), &m) != nil || !strings.Contains(errs, "progress: resumed the checkpoint in "+dir+" at depth 21 (2576 states)") {
		t.Fatalf("resumed again: exit %d\n%s%s", code, out, errs)
	}
	if ck, _ := m["checkpoint"].(map[string]any); ck["kept"] != false || m["states"] != 2576.0 {
		t.Errorf("resumed again: %v states, %v", m["states"], m["checkpoint"])
	}
	// The directories the search made are removed with the checkpoint.
	if _, err := os.Stat(filepath.Dir(filepath.Dir(dir))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the directories made for the checkpoint are left: %v", err)
	}
	// A search that wrote no checkpoint has none to keep.
	e.Reset()
	code = run([]string{"check", "-q", "--checkpoint", dir, "--nodes", "2"}, failWriter{}, &e)
	if code != exitUsage || strings.Contains(e.String(), "kept") {
		t.Errorf("exit %d, stderr %q", code, e.String())
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the checkpoint directory is left: %v", err)
	}
}

// Checkpoints that cannot be made or used as asked: one error line, exit 2.
func TestCheckpointErrorsCLI(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ckpt")
	flags := []string{"check", "--protocol", "mcast", "--nodes", "3", "-q", "--por", "off"}
	if code, _, errs := runCLI(append(flags, "--packets", "2", "--checkpoint", dir, "--max-depth", "5")...); code != exitIncomplete {
		t.Fatalf("exit %d: %s", code, errs)
	}
	state := filepath.Join(dir, "search.ckpt")
	good, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--packets", "1", "--resume", dir}, "holds the checkpoint of another search: config.packets 2 there, 1 here"},
		{[]string{"--resume", dir, "--sleep-sets", "off"}, `sleep_sets "on" there, "off" here`},
		{[]string{"--resume", dir, "--property", "fifo"}, "properties"},
		{[]string{"--checkpoint", dir}, "already holds a checkpoint: continue it with --resume"},
		{[]string{"--checkpoint", dir, "--resume", dir}, "not both"},
		{[]string{"--resume", dir, "--fingerprint"}, "exact store"},
		{[]string{"--resume", dir, "--search", "dfs"}, "breadth-first"},
		{[]string{"--checkpoint-every", "1m"}, "--checkpoint-every needs --checkpoint or --resume"},
		{[]string{"--resume", dir, "--checkpoint-every", "0s"}, "must be positive"},
		{[]string{"--resume", filepath.Join(dir, "none")}, "none: no such directory"},
		{[]string{"--resume", t.TempDir()}, "holds no checkpoint"},
		{[]string{"--resume", ""}, "--resume is empty: give a directory"},
		{[]string{"--checkpoint", ""}, "--checkpoint is empty: give a directory"},
		{[]string{"--resume", dir, "--max-states", "100"}, "more than the state limit 100"},
		{[]string{"--resume", dir, "--max-depth", "4"}, "past the depth limit 4"},
		{[]string{"--property", "fifo", "--property", "fifo"}, `property "fifo" given twice`},
		{[]string{"--resume", dir, "--nodes", "4"}, "config.nodes 3 there, 4 here"},
		{[]string{"--checkpoint", filepath.Join(t.TempDir(), "g"), "--liveness-graph"}, "state graph"},
		{[]string{"--resume", dir, "--max-depth", "7", "corrupt"}, "is corrupt"},
	} {
		args := c.args
		if args[len(args)-1] == "corrupt" {
			args = args[:len(args)-1]
			os.WriteFile(state, good[:len(good)-9], 0o644)
		}
		if args[0] != "--packets" {
			args = append([]string{"--packets", "2"}, args...)
		}
		code, out, errs := runCLI(append(append([]string(nil), flags...), args...)...)
		if code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q (want %q)", c.args, code, out, errs, c.want)
		}
	}
	// --resume alone reads the checkpoint's flags first.
	for _, bad := range [][]byte{nil, []byte("LFCCKPT1 garbage")} {
		os.WriteFile(state, bad, 0o644)
		code, out, errs := runCLI("check", "--resume", dir)
		if code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "not an lfccheck checkpoint, or is corrupt") {
			t.Errorf("--resume alone, %q: exit %d, stdout %q, stderr %q", bad, code, out, errs)
		}
	}
	if code, out, errs := runCLI("check", "--resume", filepath.Join(dir, "none")); code != exitUsage || out != "" || !strings.Contains(errs, "no such directory") {
		t.Errorf("--resume alone, no checkpoint: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	os.WriteFile(state, good, 0o644)
	if racebuild.Enabled {
		// The search to the end stores 171,461 states: to depth 8 only.
		t.Logf("race detector: the restored checkpoint resumed to depth 8; the test without -race resumes it to the end")
		if code, out, errs := runCLI(append(flags, "--packets", "2", "--resume", dir, "--max-depth", "8")...); code != exitIncomplete || !strings.Contains(out, "checkpoint: resumed at depth 5 ") {
			t.Errorf("the restored checkpoint: exit %d\n%s%s", code, out, errs)
		}
		return
	}
	if code, out, errs := runCLI(append(flags, "--packets", "2", "--resume", dir)...); code != exitPass || !strings.Contains(out, "removed: the search ended with a verdict") {
		t.Errorf("the restored checkpoint: exit %d\n%s%s", code, out, errs)
	}
}

// SIGINT during a search with checkpoints: exit 3 with a checkpoint kept,
// which --resume takes to the end (UCAST P=3 K=2: 438,772 states with
// stubborn sets).
func TestCheckpointInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildCLI(t, t.TempDir())
	dir := filepath.Join(t.TempDir(), "ckpt")
	o := interruptCLI(t, bin, 800*time.Millisecond, "check", "--nodes", "3", "--packets", "2", "--json", "-q", "--checkpoint", dir, "--checkpoint-every", "1ms", "--workers", "1")
	var m map[string]any
	if json.Unmarshal([]byte(o), &m) != nil || !strings.HasPrefix(m["reason"].(string), "interrupted") {
		t.Fatalf("stdout %s", o)
	}
	if ck, _ := m["checkpoint"].(map[string]any); ck["kept"] != true || ck["depth"].(float64) < 1 {
		t.Fatalf("checkpoint %v", m["checkpoint"])
	}
	out, err := exec.Command(bin, "check", "--nodes", "3", "--packets", "2", "--resume", dir, "-q").Output()
	if err != nil || !strings.Contains(string(out), "verdict: pass") || !strings.Contains(string(out), "states: 438772 ") {
		t.Fatalf("resumed: %v\n%s", err, out)
	}
}
