package main

import (
	"encoding/json"
	"strings"
	"testing"

	"lfccheck/internal/racebuild"
)

// check --frontier: on a layered state graph the same search as without
// it, with no state stored twice; on one that is not layered (C=4) the
// same verdict, with the states stored twice counted, the rest being the
// full search's distinct states; refused where it cannot run. Under the
// race detector, on smaller configurations (2,576 and 7,838 states, not
// 171,461 and 72,060).
func TestFrontierCLI(t *testing.T) {
	configs := [][]string{
		{"--protocol", "mcast", "--nodes", "3", "--packets", "2"},
		{"--protocol", "mcast", "--nodes", "2", "--credits", "4", "--packets", "6"},
	}
	if racebuild.Enabled {
		configs = [][]string{
			{"--protocol", "mcast", "--nodes", "3", "--packets", "1"},
			{"--protocol", "mcast", "--nodes", "2", "--credits", "4", "--packets", "4"},
		}
		t.Logf("race detector: smaller configurations; the test without -race checks the larger ones")
	}
	for _, flags := range configs {
		full := checkJSON(t, exitPass, flags...)
		m := checkJSON(t, exitPass, append([]string{"--frontier"}, flags...)...)
		f, _ := m["frontier"].(map[string]any)
		if f["checked"] != true || m["states"].(float64)-f["duplicates"].(float64) != full["states"].(float64) {
			t.Errorf("%v: full %v states, frontier %v states, %v", flags, full["states"], m["states"], m["frontier"])
		}
		if f["duplicates"] == 0.0 && (m["transitions"] != full["transitions"] || m["depth"] != full["depth"]) {
			t.Errorf("%v: layered, but full %v transitions depth %v, frontier %v depth %v", flags, full["transitions"], full["depth"], m["transitions"], m["depth"])
		}
	}
	// A search that fails counts no duplicates: null, not 0.
	m := checkJSON(t, exitFail, "--frontier", "--protocol", "mcast", "--tree", "chain", "--nodes", "4")
	if f, _ := m["frontier"].(map[string]any); f["checked"] != false || f["duplicates"] != nil {
		t.Errorf("a failing frontier search: %v", m["frontier"])
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--frontier", "--fingerprint"}, "exact store"},
		{[]string{"--frontier", "--search", "random", "--walks", "10", "--max-depth", "10"}, "breadth-first"},
		{[]string{"--frontier", "--protocol", "mcast", "--variant", "credit-bounce", "--tree", "chain", "--nodes", "2", "--cast", "0:2"}, "runs all end, and mcast credit-bounce does not declare that"},
		{[]string{"--frontier", "--liveness-graph"}, "not with --liveness-graph"},
		{[]string{"--frontier", "--protocol", "fa"}, "which eventual-reply checks on: leave it out with --property"},
	} {
		code, out, errs := runCLI(append([]string{"check", "-q"}, c.args...)...)
		if code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", c.args, code, out, errs)
		}
	}
}

// sweep --frontier reports the distinct states of a sweep without it,
// with the states stored twice where the graph is not layered (C=4 K=6),
// and refuses a grid it cannot search.
func TestFrontierSweep(t *testing.T) {
	grid := []string{"sweep", "--nodes", "2-3", "--credits", "1,4", "--packets", "1", "--json", "-q"}
	decode := func(args ...string) []map[string]any {
		code, out, errs := runCLI(args...)
		var m struct{ Results []map[string]any }
		if code != exitPass || json.Unmarshal([]byte(out), &m) != nil {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errs)
		}
		return m.Results
	}
	full, front := decode(grid...), decode(append(grid, "--frontier")...)
	if len(full) != 4 || len(front) != 4 {
		t.Fatalf("%d and %d results", len(full), len(front))
	}
	for i := range full {
		if full[i]["states"] != front[i]["states"] || front[i]["duplicates"] == nil {
			t.Errorf("%v P=%v: %v states, --frontier %v (%v stored twice)", full[i]["series"], full[i]["nodes"], full[i]["states"], front[i]["states"], front[i]["duplicates"])
		}
	}
	if !testing.Short() {
		// Without stubborn sets, whose reduced graph is another one.
		m := decode("sweep", "--nodes", "2", "--credits", "4", "--packets", "6", "--json", "-q", "--frontier", "--por", "off")
		if m[0]["states"] != 72060.0 || m[0]["duplicates"] != 37240.0 {
			t.Errorf("not layered: %v", m[0])
		}
	}
	for _, args := range [][]string{
		{"sweep", "--frontier", "--fingerprint"},
		{"sweep", "--frontier", "--variant", "credit-bounce", "--nodes", "2"},
	} {
		if code, out, errs := runCLI(args...); code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
}
