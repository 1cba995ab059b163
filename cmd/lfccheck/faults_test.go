package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCarefulProtocolsFailUnderLoss: every protocol built on LFC's
// reliable links fails once a packet may be lost, with a counterexample
// that shows the loss, and the trace replays.
func TestCarefulProtocolsFailUnderLoss(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"ucast", "mcast", "recov", "gsb"} {
		trace := filepath.Join(dir, p+".json")
		code, out, errs := runCLI("check", "--protocol", p, "--faults", "loss:1", "-q", "--trace-out", trace)
		if code != 1 || !strings.Contains(out, "verdict: FAIL") {
			t.Errorf("%s under loss: exit %d\n%s%s", p, code, out, errs)
			continue
		}
		if !strings.Contains(out, ". lose ") || !strings.Contains(out, "faults left: loss:1 -> loss:0") {
			t.Errorf("%s: the counterexample does not show the loss:\n%s", p, out)
		}
		for _, want := range []string{"reduction: off: link faults are on", "stubborn sets: off: link faults are on", "symmetry: off"} {
			if p == "ucast" && !strings.Contains(out, want) {
				t.Errorf("%s: no line %q in\n%s", p, want, out)
			}
		}
		data, err := os.ReadFile(trace)
		if err != nil || !strings.Contains(string(data), `"faults": "loss:1"`) || !strings.Contains(string(data), `"lose `) {
			t.Errorf("%s: trace %s (%v)", p, data, err)
		}
		code, out, errs = runCLI("replay", trace)
		if code != 0 || !strings.Contains(out, "reproduced: credit-conservation violated at step 2") {
			t.Errorf("%s: replay exit %d\n%s%s", p, code, out, errs)
		}
	}
	// Without faults: as before.
	if code, out, _ := runCLI("check", "--protocol", "ucast", "--nodes", "2", "--faults", "none", "-q"); code != 0 || strings.Contains(out, "faults") {
		t.Errorf("--faults none: exit %d\n%s", code, out)
	}
}

// TestFaultsFlagErrors: a bad --faults value is one line naming the
// problem and exit code 2.
func TestFaultsFlagErrors(t *testing.T) {
	for _, c := range []struct{ value, want string }{
		{"", "--faults is empty"},
		{"loss", "want KIND:N"},
		{"flip:1", `unknown fault kind "flip"`},
		{"loss:0", "1..16"},
		{"loss:-2", "1..16"},
		{"loss:100000", "1..16"},
		{"loss:1,loss:1", "given twice"},
		{"loss@0->7:1", "link 0->7 out of range for 2 nodes"},
		{"loss@1->1:1", "no link from node 1 to itself"},
	} {
		code, out, errs := runCLI("check", "--protocol", "ucast", "--nodes", "2", "--faults", c.value, "-q")
		if code != 2 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("--faults %q: exit %d, stderr %q (want one line with %q), stdout %q", c.value, code, errs, c.want, out)
		}
	}
}
