package mcast_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The SPIN comparison script runs on one small configuration and prints
// its row with both tools agreeing on the verdict; without spin installed
// it says so and exits 0 (the test is skipped then, as in CI).
func TestSPINComparisonScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds lfccheck and a pan verifier")
	}
	out, err := exec.Command("bash", "promela/compare.sh", "binary:3:1:1").CombinedOutput()
	if err != nil {
		t.Fatalf("compare.sh: %v\n%s", err, out)
	}
	if _, err := exec.LookPath("spin"); err != nil {
		if !strings.Contains(string(out), "spin is not installed") {
			t.Fatalf("without spin: %s", out)
		}
		t.Skip("spin is not installed")
	}
	if !strings.Contains(string(out), "50516") || !strings.Contains(string(out), "50514") {
		t.Errorf("want SPIN's 50516 states next to lfccheck's 50514 unreduced:\n%s", out)
	}
}
