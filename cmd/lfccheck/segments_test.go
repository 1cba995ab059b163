package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// check --engine segments gives the checker's results on the space of
// --por off --sleep-sets off with one worker (states, transitions,
// depth, levels, verdict, statistics), says so in its output, and its
// counterexamples replay.
func TestEngineSegments(t *testing.T) {
	run := func(want int, args ...string) map[string]any {
		t.Helper()
		code, out, errs := runCLI(append([]string{"check", "-q", "--json"}, args...)...)
		var m map[string]any
		if code != want || json.Unmarshal([]byte(out), &m) != nil {
			t.Fatalf("%v: exit %d, want %d: %s %s", args, code, want, out, errs)
		}
		return m
	}
	for _, c := range []struct {
		args []string
		exit int
	}{
		{[]string{"--protocol", "mcast", "--nodes", "3", "--tree", "chain", "--credits", "2"}, 0},
		{[]string{"--protocol", "mcast", "--nodes", "4", "--tree", "chain"}, 1},
		{[]string{"--protocol", "ucast", "--nodes", "3"}, 0},
		{[]string{"--protocol", "ucast", "--variant", "no-credit-return", "--nodes", "2", "--property", "credit-conservation"}, 1},
		{[]string{"--protocol", "ucast", "--variant", "blocked-lifo", "--nodes", "2", "--packets", "3", "--property", "fifo"}, 1},
		// The absolute form: the symmetry reduction off, or no rotations
		// (a cast from one root; GSB, with reachability goals; flows whose
		// renaming is a rotation by 2 only).
		{[]string{"--protocol", "mcast", "--nodes", "3", "--symmetry", "off"}, 0},
		{[]string{"--protocol", "mcast", "--nodes", "4", "--cast", "0:2"}, 0},
		{[]string{"--protocol", "gsb"}, 0},
		{[]string{"--protocol", "gsb", "--variant", "no-holdback", "--nodes", "3", "--property", "total-order"}, 1},
		{[]string{"--protocol", "ucast", "--nodes", "4", "--flow", "0:1:1", "--flow", "1:0:1", "--flow", "2:3:1", "--flow", "3:2:1"}, 0},
	} {
		seg := run(c.exit, append([]string{"--engine", "segments"}, c.args...)...)
		ckArgs := []string{"--workers", "1", "--por", "off", "--sleep-sets", "off"}
		if seg["symmetry"] == false {
			ckArgs = append(ckArgs, "--symmetry", "off")
		}
		ck := run(c.exit, append(ckArgs, c.args...)...)
		keys := []string{"verdict", "property", "states", "transitions", "depth", "levels", "statistics", "trace"}
		if c.exit != 0 {
			keys = []string{"verdict", "property", "message", "depth"} // where in the level the search stops may differ
		}
		for _, k := range keys {
			if fmt.Sprint(seg[k]) != fmt.Sprint(ck[k]) {
				t.Errorf("%v: %s %v with --engine segments, %v with the checker", c.args, k, seg[k], ck[k])
			}
		}
		if seg["engine"] != "segments" || ck["engine"] != "checker" || seg["stubborn_sets"] != false || seg["sleep_sets"] != false || seg["workers"] != 1.0 {
			t.Errorf("%v: engine %v / %v, stubborn sets %v, sleep sets %v, workers %v", c.args, seg["engine"], ck["engine"], seg["stubborn_sets"], seg["sleep_sets"], seg["workers"])
		}
		// Its tables: every transition looked up or run, fewer run than
		// looked up where it passes.
		ids, entries, hits, misses := seg["segment_ids"], seg["segment_memo_entries"], seg["segment_memo_hits"], seg["segment_memo_misses"]
		if _, has := ck["segment_ids"]; has || ids == nil || entries == nil || misses == nil || ids.(float64) < 2 || entries.(float64) < 1 ||
			c.exit == 0 && (hits == nil || hits.(float64)+misses.(float64) != seg["transitions"].(float64) || hits.(float64) < misses.(float64)) {
			t.Errorf("%v: segments %v, memo entries %v, hits %v, misses %v, transitions %v (checker: %v)", c.args, ids, entries, hits, misses, seg["transitions"], ck["segment_ids"])
		}
		if c.exit == 1 && len(seg["trace"].([]any)) != len(ck["trace"].([]any)) {
			t.Errorf("%v: a counterexample of %d steps, the checker's %d", c.args, len(seg["trace"].([]any)), len(ck["trace"].([]any)))
		}
	}
	// A counterexample file replays; the text says which search ran.
	trace := filepath.Join(t.TempDir(), "t.json")
	code, out, errs := runCLI("check", "--protocol", "mcast", "--nodes", "4", "--tree", "chain", "--engine", "segments", "--trace-out", trace)
	if code != 1 || !strings.Contains(out, "over segment ids (--engine segments)") || !strings.Contains(out, "stubborn sets: off: --engine segments explores every enabled step") {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	if code, out, errs := runCLI("replay", trace); code != 0 || !strings.Contains(out, "reproduced: deadlock violated") {
		t.Errorf("replay: exit %d: %s %s", code, out, errs)
	}
	// Limits make it incomplete (exit 3).
	for _, lim := range [][]string{{"--max-states", "100"}, {"--max-depth", "5"}} {
		m := run(3, append([]string{"--protocol", "mcast", "--nodes", "3", "--engine", "segments"}, lim...)...)
		if m["verdict"] != "incomplete" || !strings.Contains(fmt.Sprint(m["reason"]), "limit") {
			t.Errorf("%v: %v, %v", lim, m["verdict"], m["reason"])
		}
		if lim[0] == "--max-states" && m["states"] != 100.0 {
			t.Errorf("%v: %v states", lim, m["states"])
		}
	}
}

// What --engine segments does not take is one error line, exit 2.
func TestEngineSegmentsRefuses(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--engine", "fast"}, "--engine must be checker or segments"},
		{[]string{"--engine", "segments", "--workers", "2"}, "not with --workers 2"},
		{[]string{"--engine", "segments", "--por", "on"}, "not with --por on"},
		{[]string{"--engine", "segments", "--sleep-sets", "on"}, "not with --sleep-sets on"},
		{[]string{"--engine", "segments", "--step-cache", "on"}, "not with --step-cache on"},
		{[]string{"--engine", "segments", "--fingerprint"}, "not with --fingerprint"},
		{[]string{"--engine", "segments", "--frontier"}, "not with --frontier"},
		{[]string{"--engine", "segments", "--search", "dfs"}, "not with --search dfs"},
		{[]string{"--engine", "segments", "--distributed", "2"}, "not with --distributed"},
		{[]string{"--engine", "segments", "--protocol", "mcast", "--nodes", "9"}, "at most 8 nodes"},
		{[]string{"--engine", "segments", "--protocol", "intr"}, "liveness on the state graph"},
		{[]string{"--engine", "segments", "--protocol", "imc"}, "reads the links (Quiet)"},
	} {
		code, out, errs := runCLI(append([]string{"check", "-q"}, c.args...)...)
		if code != 2 || out != "" || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, %q %q; want exit 2 and one line with %q", c.args, code, out, errs, c.want)
		}
	}
}
