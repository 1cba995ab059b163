package traces_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lfccheck/model"
	"lfccheck/protocols"
	"lfccheck/traces"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files of the scenario tests")

// parseScenario reads a scenario: '#' comments, one "config key=value ..."
// line in the key=value form of model.ParseSettings, then one action per
// line.
func parseScenario(data string) (model.Config, []string, error) {
	var cfg model.Config
	var acts []string
	sawConfig := false
	for i, line := range strings.Split(data, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "config "); ok {
			sawConfig = true
			set, err := model.SplitSettings(rest)
			if err == nil {
				cfg, err = model.ParseSettings(set)
			}
			if err != nil {
				return cfg, nil, fmt.Errorf("line %d: %v", i+1, err)
			}
			continue
		}
		acts = append(acts, line)
	}
	if !sawConfig {
		return cfg, nil, fmt.Errorf("no config line")
	}
	return cfg, acts, nil
}

// TestScenarios drives the model step by step through every
// testdata/*.scenario file and compares the rendered steps, changes,
// violation and final state with the .golden file beside it. Run with
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
			cfg, names, err := parseScenario(string(data))
			if err != nil {
				t.Fatal(err)
			}
			ck, err := protocols.Build(cfg)
			if err != nil {
				t.Fatal(err)
			}
			acts, err := traces.ParseActions(ck.Sys, names)
			if err != nil {
				t.Fatal(err)
			}
			o, err := traces.Run(ck, acts)
			if err != nil {
				t.Fatal(err)
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
