package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// check --step-cache on gives the search's results without it (the same
// states, transitions, depth and verdict), with its counts in JSON; off
// is the default; another value is one error line, exit 2.
func TestStepCacheFlag(t *testing.T) {
	run := func(args ...string) map[string]any {
		code, out, errs := runCLI(append([]string{"check", "--protocol", "mcast", "--nodes", "3", "-q", "--json"}, args...)...)
		var m map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &m) != nil {
			t.Fatalf("%v: exit %d: %s %s", args, code, out, errs)
		}
		return m
	}
	def, on, off := run(), run("--step-cache", "on", "--workers", "2"), run("--step-cache", "off")
	for _, k := range []string{"verdict", "states", "transitions", "depth"} {
		if on[k] != off[k] || def[k] != off[k] {
			t.Errorf("%s: %v with the step cache, %v without, %v by default", k, on[k], off[k], def[k])
		}
	}
	if on["step_cache"] != true || on["step_cache_hits"].(float64) == 0 || on["step_cache_misses"].(float64) == 0 || on["step_cache_bytes"].(float64) == 0 || on["step_cache_check_hits"].(float64) == 0 {
		t.Errorf("on: %v, %v hits, %v misses, %v bytes, %v check hits", on["step_cache"], on["step_cache_hits"], on["step_cache_misses"], on["step_cache_bytes"], on["step_cache_check_hits"])
	}
	for _, m := range []map[string]any{def, off} {
		if m["step_cache"] != false || m["step_cache_hits"].(float64) != 0 || m["step_cache_misses"].(float64) != 0 || m["step_cache_check_hits"].(float64) != 0 {
			t.Errorf("off: %v, %v hits, %v misses, %v check hits", m["step_cache"], m["step_cache_hits"], m["step_cache_misses"], m["step_cache_check_hits"])
		}
	}
	code, _, errs := runCLI("check", "--step-cache", "maybe", "-q")
	if code != 2 || !strings.Contains(errs, "--step-cache must be on or off") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("--step-cache maybe: exit %d, %q", code, errs)
	}
}
