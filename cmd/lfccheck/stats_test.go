package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
)

// searchTotals are the statistics of check --json that count the whole
// search: a search resumed from a checkpoint (one process, the disk
// search, a distributed one) and one distributed over several workers
// give them as the search in one go does. (elapsed_s, states_per_s,
// peak_heap_bytes, store_bytes, disk_bytes and the step cache's counts
// measure the process that printed them, and the distributed block its
// workers' traffic: they are not compared.)
var searchTotals = []string{"verdict", "property", "message", "trace", "states", "transitions", "depth", "levels", "level_partial",
	"sleep_sets", "sleep_sets_skipped", "stubborn_sets", "stubborn_states", "stubborn_left_out", "statistics"}

// statNum is the number a field of check --json holds (0 if none).
func statNum(m map[string]any, k string) float64 {
	v, _ := m[k].(float64)
	return v
}

// protocolStat is the value of the protocol's statistic name in m.
func protocolStat(m map[string]any, name string) float64 {
	ss, _ := m["statistics"].([]any)
	for _, s := range ss {
		if s, _ := s.(map[string]any); s["name"] == name {
			v, _ := s["value"].(float64)
			return v
		}
	}
	return -1
}

// The statistics of a search are those of the whole search however it
// ran: in one go, cut by --max-depth with --checkpoint and continued with
// --resume, as a disk search cut and continued, distributed over two
// workers, and distributed, cut with --checkpoint and continued. The
// configurations have stubborn sets on that leave steps out both before
// and after the cut (so the counts must be carried over a checkpoint and
// summed over the workers), MCAST's forwarded-packets statistic counts
// forwards on both sides, and the second fails (a deadlock) after the
// cut, so the counts stop at the violation.
func TestStatisticsAcrossResumes(t *testing.T) {
	for _, c := range []struct {
		flags []string
		code  int
		cut   string
	}{
		{[]string{"--protocol", "mcast", "--nodes", "4", "--cast", "0:1", "--cast", "1:1"}, exitPass, "10"},
		{[]string{"--protocol", "mcast", "--tree", "chain", "--nodes", "3"}, exitFail, "5"},
	} {
		t.Run(fmt.Sprint(c.flags), func(t *testing.T) {
			want := checkJSON(t, c.code, c.flags...)
			if statNum(want, "stubborn_left_out") == 0 || protocolStat(want, "forwarded-packets") <= 0 {
				t.Fatalf("in one go: stubborn sets left out %v steps, forwarded-packets %v: the test needs both", want["stubborn_left_out"], protocolStat(want, "forwarded-packets"))
			}
			compare := func(how string, got map[string]any) {
				t.Helper()
				for _, k := range searchTotals {
					if g, w := fmt.Sprint(got[k]), fmt.Sprint(want[k]); g != w {
						t.Errorf("%s: %s %s, in one go %s", how, k, g, w)
					}
				}
			}
			// cut checks that the search stopped at the cut had counted
			// some of the statistics, not all (the rest comes after).
			cut := func(how string, m map[string]any) {
				t.Helper()
				for _, k := range []string{"stubborn_states", "stubborn_left_out"} {
					if v := statNum(m, k); v <= 0 || v >= statNum(want, k) {
						t.Fatalf("%s, cut at depth %s: %s %v (in one go %v)", how, c.cut, k, v, want[k])
					}
				}
				if v := protocolStat(m, "forwarded-packets"); v <= 0 || v >= protocolStat(want, "forwarded-packets") {
					t.Fatalf("%s, cut at depth %s: forwarded-packets %v (in one go %v)", how, c.cut, v, protocolStat(want, "forwarded-packets"))
				}
			}

			dir := filepath.Join(t.TempDir(), "ckpt")
			cut("--checkpoint", checkJSON(t, exitIncomplete, append([]string{"--checkpoint", dir, "--max-depth", c.cut}, c.flags...)...))
			compare("--resume", checkJSON(t, c.code, "--resume", dir))

			disk := filepath.Join(t.TempDir(), "visited")
			cut("--disk-visited", checkJSON(t, exitIncomplete, append([]string{"--disk-visited", disk, "--max-depth", c.cut}, c.flags...)...))
			compare("--disk-visited continued", checkJSON(t, c.code, append([]string{"--disk-visited", disk}, c.flags...)...))

			dist := append(slices.Clone(c.flags), "--distributed", "2")
			compare("--distributed 2", checkJSON(t, c.code, dist...))

			dck := filepath.Join(t.TempDir(), "dckpt")
			cut("--distributed 2 --checkpoint", checkJSON(t, exitIncomplete, append([]string{"--checkpoint", dck, "--max-depth", c.cut}, dist...)...))
			compare("--distributed 2 --checkpoint continued", checkJSON(t, c.code, append([]string{"--checkpoint", dck}, dist...)...))
		})
	}
}

// Sleep sets (on where the stubborn sets are off) skip transitions on both
// sides of a cut; their count, and the protocol's statistics, are the
// whole search's after a resume and over distributed workers. (The disk
// search uses no sleep sets: TestDiskVisitedCLI compares it with
// --sleep-sets off.)
func TestSleepStatisticsAcrossResumes(t *testing.T) {
	flags := []string{"--protocol", "mcast", "--nodes", "4", "--cast", "0:1", "--cast", "1:1", "--por", "off"}
	want := checkJSON(t, exitPass, flags...)
	if want["sleep_sets"] != true || statNum(want, "sleep_sets_skipped") == 0 {
		t.Fatalf("in one go: sleep sets %v, %v skipped: the test needs some", want["sleep_sets"], want["sleep_sets_skipped"])
	}
	compare := func(how string, got map[string]any) {
		t.Helper()
		for _, k := range searchTotals {
			if g, w := fmt.Sprint(got[k]), fmt.Sprint(want[k]); g != w {
				t.Errorf("%s: %s %s, in one go %s", how, k, g, w)
			}
		}
	}
	dir := filepath.Join(t.TempDir(), "ckpt")
	m := checkJSON(t, exitIncomplete, append([]string{"--checkpoint", dir, "--max-depth", "10"}, flags...)...)
	if v := statNum(m, "sleep_sets_skipped"); v <= 0 || v >= statNum(want, "sleep_sets_skipped") {
		t.Fatalf("cut at depth 10: %v skipped (in one go %v)", v, want["sleep_sets_skipped"])
	}
	compare("--resume", checkJSON(t, exitPass, "--resume", dir))
	dist := append(slices.Clone(flags), "--distributed", "2")
	compare("--distributed 2", checkJSON(t, exitPass, dist...))
	dck := filepath.Join(t.TempDir(), "dckpt")
	checkJSON(t, exitIncomplete, append([]string{"--checkpoint", dck, "--max-depth", "10"}, dist...)...)
	compare("--distributed 2 --checkpoint continued", checkJSON(t, exitPass, append([]string{"--checkpoint", dck}, dist...)...))
}
