package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSweepFaults: sweep --faults gives every configuration of the grid
// check's link faults: the careful UCAST fails at every size, I_rx
// passes, the series and the JSON name the faults, and a bad or
// out-of-range budget is one line and exit 2.
func TestSweepFaults(t *testing.T) {
	code, out, errs := runCLI("sweep", "--protocol", "ucast", "--nodes", "2-3", "--faults", "loss:1")
	if code != 1 || !strings.Contains(out, "ucast faults=loss:1 ") || strings.Count(out, "fail credit-conservation") != 2 ||
		!strings.Contains(out, "fails at P=2: credit-conservation") {
		t.Errorf("ucast under loss: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runCLI("sweep", "--protocol", "irx", "--nodes", "2", "--packets", "1", "--faults", "loss:1,dup:1", "--json")
	var res struct {
		Results []sweepResult `json:"results"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Results) != 1 ||
		res.Results[0].Faults != "loss:1,dup:1" || res.Results[0].Verdict != "pass" || !strings.Contains(res.Results[0].Series, "faults=loss:1,dup:1") {
		t.Errorf("irx under loss and dup: exit %d\n%s%s", code, out, errs)
	}
	// Without --faults: reliable links, no faults in the series.
	if code, out, _ := runCLI("sweep", "--protocol", "ucast", "--nodes", "2"); code != 0 || strings.Contains(out, "faults") {
		t.Errorf("ucast without faults: exit %d\n%s", code, out)
	}
	for _, c := range []struct{ faults, want string }{
		{"bogus", `--faults bogus: fault "bogus"`},
		{"", "--faults is empty"},
		{"loss@0->2:1", "link 0->2 out of range for 2 nodes"},
	} {
		code, out, errs := runCLI("sweep", "--protocol", "ucast", "--nodes", "2-3", "--faults", c.faults)
		if code != 2 || out != "" || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("--faults %q: exit %d, stdout %q, stderr %q (want one line with %q)", c.faults, code, out, errs, c.want)
		}
	}
}

// TestTreesRefusesFaults: trees answers for buffer cycles on reliable
// links; --faults is refused with the reason, one line, exit 2.
func TestTreesRefusesFaults(t *testing.T) {
	for _, args := range [][]string{
		{"trees", "--nodes", "4", "--credits", "1", "--faults", "loss:1"},
		{"trees", "--nodes", "4", "--faults", "loss:1"},
	} {
		code, out, errs := runCLI(args...)
		if code != 2 || out != "" || !strings.Contains(errs, "--faults is not supported") || !strings.Contains(errs, "reliable links") ||
			strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
}
