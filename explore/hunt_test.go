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
