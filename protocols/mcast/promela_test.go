package mcast_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The SPIN comparison script runs on one small configuration and prints a
// row per form of the Promela model, SPIN and lfccheck agreeing on the
// verdict and, up to SPIN's two end-of-process states, on the states: the
// unfused model against lfccheck without reductions, the fused one
// (-DFUSED=1) against lfccheck with the ample-set fusion alone. Without
// spin installed the script says so and exits 0 (the test is skipped
// then, as in CI).
func TestSPINComparisonScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds lfccheck and two pan verifiers")
	}
	cmd := exec.Command("bash", "promela/compare.sh", "binary:3:1:1")
	// one run of each tool, and pan compiled without optimisation (a
	// tenth of gcc -O2's time; the search is a fraction of a second)
	cmd.Env = append(os.Environ(), "REPEAT=1", "PAN_OPT=-O0", "FORMS=unfused fused")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("compare.sh: %v\n%s", err, out)
	}
	if _, err := exec.LookPath("spin"); err != nil {
		if !strings.Contains(string(out), "spin is not installed") {
			t.Fatalf("without spin: %s", out)
		}
		t.Skip("spin is not installed")
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, "|")
		if len(f) < 9 {
			continue
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		rows[f[1]] = f[1:]
	}
	// columns: config, verdict L / R, verdict S, states L, states R, states S, S-R
	for _, c := range []struct{ config, r, s string }{
		{"binary P=3 C=1 K=1", "50514", "50516"},
		{"binary P=3 C=1 K=1 fused", "7696", "7698"},
	} {
		f, ok := rows[c.config]
		if !ok {
			t.Errorf("no row %q:\n%s", c.config, out)
			continue
		}
		if f[1] != "pass" || f[2] != "pass" || f[4] != c.r || f[5] != c.s || f[6] != "2" {
			t.Errorf("row %q: verdicts %q, %q, states R %s and S %s, S-R %s; want pass, pass, %s, %s, 2:\n%s",
				c.config, f[1], f[2], f[4], f[5], f[6], c.r, c.s, out)
		}
	}
	if u, f := rows["binary P=3 C=1 K=1"], rows["binary P=3 C=1 K=1 fused"]; u != nil && f != nil && u[3] != f[3] {
		t.Errorf("the rows show different lfccheck runs (states L %s and %s)", u[3], f[3])
	}
}
