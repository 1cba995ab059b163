package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// --liveness-search scc gives the graph analysis's verdict, says so in the
// liveness: line and JSON, and refuses what it cannot run with in one
// line (exit 2).
func TestLivenessSearchOnTheFly(t *testing.T) {
	base := []string{"check", "--protocol", "ucast", "--variant", "credit-bounce", "--nodes", "2", "--flow", "0:1:2", "--property", "eventual-delivery", "-q"}
	for _, search := range []string{"graph", "scc"} {
		code, out, errs := runCLI(append(base, "--liveness-search", search, "--json")...)
		var j struct {
			Verdict, Property, LivenessSearch, LivenessNote string
			OnTheFly                                        int64 `json:"on_the_fly_bytes"`
		}
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatalf("%s: %v\n%s%s", search, err, out, errs)
		}
		if code != exitFail || j.Verdict != "fail" || j.Property != "eventual-delivery" {
			t.Fatalf("%s: exit %d, %+v", search, code, j)
		}
		var raw map[string]any
		json.Unmarshal([]byte(out), &raw)
		if raw["liveness_search"] != search || (search == "scc") != strings.Contains(raw["liveness_note"].(string), "on-the-fly") {
			t.Errorf("%s: liveness_search %v, note %v", search, raw["liveness_search"], raw["liveness_note"])
		}
	}
	for _, bad := range [][]string{
		{"--liveness-search", "nested"},
		{"--liveness-search", "scc", "--fingerprint"},
		{"--liveness-search", "scc", "--frontier"},
		{"--liveness-search", "scc", "--search", "dfs"},
		{"--liveness-search", "scc", "--checkpoint", t.TempDir()},
		{"--liveness-search", "scc", "--workers", "2"},
	} {
		code, _, errs := runCLI(append(base, bad...)...)
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "--liveness-search") {
			t.Errorf("%v: exit %d, %q", bad, code, errs)
		}
	}
	// Nothing on the state graph: the correct protocol checks its
	// always-eventually property on end states.
	code, _, errs := runCLI("check", "--protocol", "ucast", "--nodes", "2", "--flow", "0:1:1", "--liveness-search", "scc", "-q")
	if code != 2 || !strings.Contains(errs, "--liveness-graph") {
		t.Errorf("nothing on the graph: exit %d, %q", code, errs)
	}
}
