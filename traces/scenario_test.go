package traces_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "lfccheck/protocols" // registers the protocols
	"lfccheck/traces"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files of the scenario tests")

// TestScenarios drives the model step by step through every
// testdata/*.scenario file (format: traces.Scenario), evaluates its expect
// checks, and compares the rendered steps, changes, violation and final
// state with the .golden file beside it. Run with
// -rewrite to regenerate the golden files after an intended change.
func TestScenarios(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.scenario")
	if len(files) == 0 {
		t.Fatal("no scenarios")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := traces.ParseScenario(path, string(data))
			if err != nil {
				t.Fatal(err)
			}
			_, o, errs := sc.Run()
			for _, err := range errs {
				t.Error(err)
			}
			var buf bytes.Buffer
			traces.WriteText(&buf, o)
			golden := strings.TrimSuffix(path, ".scenario") + ".golden"
			if *rewrite {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -rewrite to create it)", err)
			}
			if got := buf.String(); got != string(want) {
				t.Fatalf("output differs from %s (run with -rewrite after an intended change):\n--- got\n%s\n--- want\n%s", golden, got, want)
			}
		})
	}
}

// Bad scenarios are rejected with the file and line.
func TestScenarioParseErrors(t *testing.T) {
	for _, c := range [][2]string{
		{"host 0 launch\n", "s:1: the config line must come first"},
		{"config protocol=ucast nodes=2\nconfig protocol=ucast\n", "s:2: a second config line"},
		{"config protocol=ucast nodes=2 color=red\n", `s:1: protocol ucast has no parameter "color"`},
		{"config protocol=ucast nodes=2\nexpect sunshine\n", `s:2: unknown check "sunshine"`},
		{"config protocol=ucast nodes=2\nexpect state\n", "s:2: expect state needs an argument"},
		{"config protocol=ucast nodes=2\nexpect ok now\n", "s:2: expect ok takes no argument"},
		{"# nothing\n", "s: no config line"},
	} {
		if _, err := traces.ParseScenario("s", c[0]); err == nil || !strings.HasPrefix(err.Error(), c[1]) {
			t.Errorf("%q: got %v, want %q", c[0], err, c[1])
		}
	}
	// Failing checks are reported with their line.
	sc, err := traces.ParseScenario("s", "config protocol=ucast nodes=2\nexpect terminal\nhost 0 launch\nexpect violated fifo\nexpect disabled host 1 launch\n")
	if err != nil {
		t.Fatal(err)
	}
	_, _, errs := sc.Run()
	if len(errs) != 3 || !strings.HasPrefix(errs[0].Error(), "s:2: after 0 actions: enabled: host 0 launch, host 1 launch") ||
		!strings.HasPrefix(errs[1].Error(), "s:4:") || !strings.HasPrefix(errs[2].Error(), "s:5:") {
		t.Fatalf("%v", errs)
	}
}
