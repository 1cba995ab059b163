package explore

import (
	"reflect"
	"strings"
	"testing"
)

func TestDFSIsExhaustiveAndFindsViolations(t *testing.T) {
	bfs, _ := BFS(grid{n: 9}, Options{})
	for _, seed := range []int64{0, 5} {
		r, err := DFS(grid{n: 9}, Options{}, Hunt{Seed: seed})
		if err != nil || r.Verdict != Pass || r.Stats.States != bfs.Stats.States {
			t.Fatalf("seed %d: %+v %v (BFS: %d states)", seed, r, err, bfs.Stats.States)
		}
	}
	g := grid{n: 9, bad: [2]byte{7, 3}, hasBad: true}
	r, err := DFS(g, Options{}, Hunt{})
	if err != nil || r.Verdict != Fail {
		t.Fatalf("%+v %v", r, err)
	}
	// The trace leads to the bad state.
	x, y := 0, 0
	for _, c := range r.Trace {
		if c == 0 {
			x++
		} else {
			y++
		}
	}
	if x != 7 || y != 3 {
		t.Fatalf("DFS trace %v ends at (%d,%d)", r.Trace, x, y)
	}
	// A shard never passes.
	r, _ = DFS(grid{n: 9}, Options{}, Hunt{Seed: 1, Shard: 1, Shards: 4})
	if r.Verdict != Incomplete || !strings.Contains(r.Reason, "shard 1/4") {
		t.Fatalf("shard: %+v", r)
	}
	// Limits are honest.
	r, _ = DFS(grid{n: 9}, Options{MaxStates: 10}, Hunt{})
	if r.Verdict != Incomplete || r.Stats.States > 10 {
		t.Fatalf("state limit: %+v", r)
	}
	r, _ = DFS(grid{n: 9}, Options{MaxDepth: 5}, Hunt{})
	if r.Verdict != Incomplete || !strings.Contains(r.Reason, "depth limit") {
		t.Fatalf("depth limit: %+v", r)
	}
}

// DFS with a fingerprint store keeps no states: it generates each again
// from its parent's, and finds what the exact search finds.
func TestDFSFingerprintRegeneratesStates(t *testing.T) {
	bfs, _ := BFS(grid{n: 9}, Options{})
	for _, seed := range []int64{0, 5} {
		r, err := DFS(grid{n: 9}, Options{Fingerprint: true}, Hunt{Seed: seed})
		if err != nil || r.Verdict != Pass || r.Stats.States != bfs.Stats.States {
			t.Fatalf("seed %d: %+v %v (BFS: %d states)", seed, r, err, bfs.Stats.States)
		}
	}
	g := grid{n: 9, bad: [2]byte{7, 3}, hasBad: true}
	exact, _ := DFS(g, Options{}, Hunt{})
	fp, err := DFS(g, Options{Fingerprint: true}, Hunt{})
	if err != nil || fp.Verdict != Fail || !reflect.DeepEqual(fp.Trace, exact.Trace) {
		t.Fatalf("fingerprint DFS: %+v %v; exact trace %v", fp, err, exact.Trace)
	}
	// A model that does not generate an action again is an error, not a
	// wrong result.
	if _, err := DFS(&forgetful{grid: grid{n: 4}}, Options{Fingerprint: true}, Hunt{}); err == nil || !strings.Contains(err.Error(), "did not generate action") {
		t.Fatalf("forgetful model: %v", err)
	}
}

// forgetful generates every action once only.
type forgetful struct {
	grid
	seen map[string]bool
}

func (f *forgetful) Successors(state []byte, visit func(uint32, []byte, error) bool) error {
	if f.seen == nil {
		f.seen = map[string]bool{}
	}
	return f.grid.Successors(state, func(code uint32, b []byte, err error) bool {
		k := string(state) + string(rune(code))
		if f.seen[k] {
			return true
		}
		f.seen[k] = true
		return visit(code, b, err)
	})
}

func TestRandomWalks(t *testing.T) {
	g := grid{n: 6, bad: [2]byte{6, 6}, terminalBad: false, hasBad: true}
	r, hs, err := Random(g, Options{MaxDepth: 20}, Hunt{Seed: 3, Walks: 50})
	if err != nil || r.Verdict != Fail || len(r.Trace) != 12 {
		t.Fatalf("%+v %+v %v", r, hs, err)
	}
	again, _, _ := Random(g, Options{MaxDepth: 20}, Hunt{Seed: 3, Walks: 50})
	if !reflect.DeepEqual(again.Trace, r.Trace) {
		t.Fatal("the same seed walked differently")
	}
	r, hs, err = Random(grid{n: 6}, Options{MaxDepth: 20}, Hunt{Seed: 3, Walks: 30})
	if err != nil || r.Verdict != Incomplete || hs.Walks != 30 || hs.Coverage < 13 || hs.Coverage > 49 {
		t.Fatalf("%+v %+v %v", r, hs, err)
	}
	if _, _, err := Random(grid{n: 6}, Options{}, Hunt{Walks: 1}); err == nil {
		t.Fatal("walks without a depth bound")
	}
	// Shards walk different walks.
	a, _, _ := Random(g, Options{MaxDepth: 20}, Hunt{Seed: 9, Walks: 1, Shard: 0, Shards: 2})
	b, _, _ := Random(g, Options{MaxDepth: 20}, Hunt{Seed: 9, Walks: 1, Shard: 1, Shards: 2})
	if reflect.DeepEqual(a.Trace, b.Trace) {
		t.Fatal("two shards took the same walk")
	}
}
