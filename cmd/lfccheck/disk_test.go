package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"lfccheck/explore"
)

// diskSame is what check --disk-visited must share with check
// --sleep-sets off (it uses no sleep sets).
func diskSame(m map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"verdict", "states", "transitions", "depth", "levels", "stubborn_states", "stubborn_left_out", "statistics", "property", "message", "trace"} {
		out[k] = m[k]
	}
	return out
}

// check --disk-visited, with --disk-keys exact (the default) and
// fingerprint: the search of --sleep-sets off (a pass and a deadlock
// whose counterexample replays); cut short at a depth limit it keeps its
// files, and the same command without the limit continues from there to
// the same result and removes them; refused (exit 2, one line) where it
// cannot run, and on damaged files.
func TestDiskVisitedCLI(t *testing.T) {
	for _, c := range []struct {
		flags []string
		code  int
	}{
		{[]string{"--protocol", "mcast", "--tree", "binary", "--nodes", "3", "--packets", "1"}, exitPass},
		{[]string{"--protocol", "mcast", "--tree", "chain", "--nodes", "4", "--credits", "1", "--packets", "1"}, exitFail},
		{[]string{"--protocol", "mcast", "--tree", "binary", "--nodes", "3", "--packets", "1", "--disk-keys", "fingerprint"}, exitPass},
		{[]string{"--protocol", "mcast", "--tree", "chain", "--nodes", "4", "--credits", "1", "--packets", "1", "--disk-keys", "fingerprint"}, exitFail},
	} {
		fp := slices.Contains(c.flags, "fingerprint")
		plain := slices.DeleteFunc(slices.Clone(c.flags), func(f string) bool { return f == "--disk-keys" || f == "fingerprint" })
		want := checkJSON(t, c.code, append([]string{"--sleep-sets", "off"}, plain...)...)
		dir := filepath.Join(t.TempDir(), "visited")
		m := checkJSON(t, exitIncomplete, append([]string{"--disk-visited", dir, "--max-depth", "6"}, c.flags...)...)
		d, _ := m["disk"].(map[string]any)
		if d["kept"] != true || d["saved_depth"] != 6.0 {
			t.Fatalf("%v: cut short: %v", c.flags, m["disk"])
		}
		trace := filepath.Join(t.TempDir(), "trace.json")
		m = checkJSON(t, c.code, append([]string{"--disk-visited", dir, "--trace-out", trace}, c.flags...)...)
		if diff := cmp.Diff(diskSame(want), diskSame(m)); diff != "" {
			t.Errorf("%v: --disk-visited differs from --sleep-sets off (-want +got):\n%s", c.flags, diff)
		}
		d, _ = m["disk"].(map[string]any)
		if d["resumed"] != true || d["resumed_at_depth"] != 6.0 || d["kept"] != false {
			t.Errorf("%v: resumed: %v", c.flags, m["disk"])
		}
		// The mode is named, and with fingerprints the chance of a state
		// missed is given.
		keys := "exact"
		if fp {
			keys = "fingerprint"
		}
		if p, _ := d["omission_probability"].(float64); d["keys"] != keys || m["fingerprint"] != fp || fp != (p > 0 && p < 1e-9) {
			t.Errorf("%v: keys %v, fingerprint %v, omission probability %v", c.flags, d["keys"], m["fingerprint"], d["omission_probability"])
		}
		if c.code == exitPass {
			code, out, _ := runCLI(append([]string{"check", "--disk-visited", t.TempDir()}, c.flags...)...)
			verdict := "verdict: pass (every property holds over the complete state space)"
			if fp {
				verdict = "verdict: pass (fingerprints: every property holds over the states explored; the probability that a state was missed, two states sharing a fingerprint, is at most about "
			}
			if code != exitPass || !strings.Contains(out, verdict) {
				t.Errorf("%v: exit %d, want a line starting %q:\n%s", c.flags, code, verdict, out)
			}
		}
		if left, _ := os.ReadDir(dir); len(left) > 0 {
			t.Errorf("%v: %d files left in %s", c.flags, len(left), dir)
		}
		if c.code == exitFail {
			if code, out, errs := runCLI("replay", trace); code != exitPass || !strings.Contains(out, "as recorded") {
				t.Errorf("replay: exit %d\n%s%s", code, out, errs)
			}
		}
	}
	if _, help, _ := runCLI("help", "check"); !strings.Contains(help, "--disk-keys string") || !strings.Contains(help, "exact (the states' encodings") {
		t.Errorf("help check does not describe --disk-keys:\n%s", help)
	}
	// Damaged files, and another search's files.
	flags := []string{"--protocol", "mcast", "--tree", "binary", "--nodes", "3", "--packets", "1"}
	dir := t.TempDir()
	checkJSON(t, exitIncomplete, append([]string{"--disk-visited", dir, "--max-depth", "5"}, flags...)...)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "-q", "--disk-visited", dir, "--protocol", "mcast", "--tree", "binary", "--nodes", "3", "--packets", "2"}, "holds the checkpoint of another search: config"},
		{[]string{"check", "-q", "--disk-visited", dir, "--fingerprint"}, "drop --fingerprint"},
		{[]string{"check", "-q", "--disk-visited", dir, "--frontier"}, "not with --frontier"},
		{[]string{"check", "-q", "--disk-visited", dir, "--workers", "2"}, "one worker"},
		{[]string{"check", "-q", "--disk-visited", dir, "--checkpoint", t.TempDir()}, "not with --checkpoint"},
		{[]string{"check", "-q", "--disk-visited", dir, "--search", "dfs"}, "breadth-first"},
		{[]string{"check", "-q", "--disk-visited", dir, "--protocol", "fa"}, "which eventual-reply checks on: leave it out with --property"},
		{[]string{"check", "-q", "--disk-visited", dir, "--liveness-graph"}, "not with --liveness-graph"},
		{[]string{"check", "-q", "--disk-visited", ""}, "--disk-visited is empty: give a directory"},
		{append([]string{"check", "-q", "--disk-visited", dir, "--disk-keys", "fingerprint"}, flags...), "holds the visited set of a search with exact keys, this one asks for fingerprint"},
		{[]string{"check", "-q", "--disk-visited", dir, "--disk-keys", "fp"}, "--disk-keys is exact or fingerprint"},
		{[]string{"check", "-q", "--disk-keys", "fingerprint"}, "give --disk-visited DIR too"},
	} {
		code, out, errs := runCLI(c.args...)
		if code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", c.args, code, out, errs)
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "visited-") {
			os.Truncate(filepath.Join(dir, e.Name()), 3)
			break
		}
	}
	code, out, errs := runCLI(append([]string{"check", "-q", "--disk-visited", dir}, flags...)...)
	if code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "visited-") {
		t.Errorf("a file cut short: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	os.Remove(filepath.Join(dir, explore.DiskManifest))
	if left, _ := os.ReadDir(dir); len(left) == 0 {
		t.Errorf("the files of a search cut short are gone")
	}
}

// TestFingerprintPassSaysSo: a pass over the in-memory store of
// fingerprints is not called a proof over the complete state space.
func TestFingerprintPassSaysSo(t *testing.T) {
	code, out, _ := runCLI("check", "--protocol", "ucast", "--nodes", "2", "--fingerprint")
	want := "verdict: pass (fingerprints: every property holds over the states explored; the probability that a state was missed, two states sharing a fingerprint, is about "
	if code != exitPass || !strings.Contains(out, want) || strings.Contains(out, "complete state space") {
		t.Errorf("exit %d, want a line starting %q and no claim of the complete state space:\n%s", code, want, out)
	}
}

// TestFingerprintSweepSaysSo: sweep and suite with --fingerprint do not
// call their passes verified over the complete state space.
func TestFingerprintSweepSaysSo(t *testing.T) {
	code, out, _ := runCLI("sweep", "--fingerprint", "--protocol", "ucast", "--nodes", "2")
	if code != exitPass || !strings.Contains(out, "largest size passed with fingerprints (--fingerprint: not a proof") || strings.Contains(out, "verified") {
		t.Errorf("sweep --fingerprint: exit %d:\n%s", code, out)
	}
	_, out, _ = runCLI("suite", "--fingerprint", "--max-states", "1")
	if first, _, _ := strings.Cut(out, "\n"); strings.Contains(first, "complete state space") || !strings.Contains(first, "fingerprints") {
		t.Errorf("suite --fingerprint: %q", first)
	}
}
