package explore

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// towards is a heuristic on grid states: the closer to (tx, ty), the
// higher.
func towards(tx, ty int) func([]byte) int {
	return func(s []byte) int {
		dx, dy := int(s[0])-tx, int(s[1])-ty
		return -(max(dx, -dx) + max(dy, -dy))
	}
}

// bestFirsts are the two tie orders.
var bestFirsts = map[string]func(Model, Options, func([]byte) int) (Result, error){
	"shallow": BestFirst,
	"deep":    BestFirstDeep,
}

func TestBestFirstIsExhaustive(t *testing.T) {
	for _, g := range []grid{{n: 9}, {n: 30}} {
		bfs, _ := BFS(g, Options{})
		for name, h := range map[string]func([]byte) int{
			"zero":    func([]byte) int { return 0 },
			"towards": towards(int(g.n), 0),
			"sum":     func(s []byte) int { return int(s[0]) + int(s[1]) },
		} {
			for tie, bf := range bestFirsts {
				r, err := bf(g, Options{}, h)
				if err != nil || r.Verdict != Pass || r.Stats.States != bfs.Stats.States || r.Stats.Transitions != bfs.Stats.Transitions {
					t.Fatalf("n=%d %s %s: %+v %v (BFS: %d states, %d transitions)", g.n, name, tie, r, err, bfs.Stats.States, bfs.Stats.Transitions)
				}
			}
		}
	}
}

func TestBestFirstFindsViolations(t *testing.T) {
	g := grid{n: 40, bad: [2]byte{30, 2}, hasBad: true}
	bfs, _ := BFS(g, Options{})
	for tie, bf := range bestFirsts {
		r, err := bf(g, Options{}, towards(30, 2))
		if err != nil || r.Verdict != Fail {
			t.Fatalf("%s: %+v %v", tie, r, err)
		}
		x, y := 0, 0
		for _, c := range r.Trace {
			if c == 0 {
				x++
			} else {
				y++
			}
		}
		if x != 30 || y != 2 || r.Stats.Depth != len(r.Trace) {
			t.Fatalf("%s: trace %v ends at (%d,%d), depth %d", tie, r.Trace, x, y, r.Stats.Depth)
		}
		// Guided, it stores far fewer states than BFS.
		if r.Stats.States*5 > bfs.Stats.States {
			t.Fatalf("%s: best-first stored %d states, BFS %d", tie, r.Stats.States, bfs.Stats.States)
		}
	}
	// With no guidance (a constant heuristic) it is a breadth-first
	// order: it still finds the violation, with a shortest trace.
	r, err := BestFirst(g, Options{}, func([]byte) int { return 0 })
	if err != nil || r.Verdict != Fail || len(r.Trace) != 32 {
		t.Fatalf("constant heuristic: %+v %v", r, err)
	}
	// Deep ties with no guidance go deep first, as DFS does: the first
	// path runs along x to the border and then up (28 states stored: the
	// path and the siblings of its states).
	r, err = BestFirstDeep(grid{n: 9, terminalBad: true}, Options{}, func([]byte) int { return 0 })
	if err != nil || r.Verdict != Fail || r.Stats.States > 28 || len(r.Trace) != 18 {
		t.Fatalf("constant heuristic, deep ties: %+v %v", r, err)
	}
	// A violation of a terminal state.
	for tie, bf := range bestFirsts {
		r, err = bf(grid{n: 5, terminalBad: true}, Options{}, towards(0, 0))
		if err != nil || r.Verdict != Fail || len(r.Trace) != 10 || r.Violation.Error() != "stuck" {
			t.Fatalf("%s terminal: %+v %v", tie, r, err)
		}
	}
}

func TestBestFirstIsDeterministic(t *testing.T) {
	g := grid{n: 40, bad: [2]byte{20, 20}, hasBad: true}
	h := func(s []byte) int { return int(s[0]) % 3 } // many ties
	for tie, bf := range bestFirsts {
		a, _ := bf(g, Options{}, h)
		for i := 0; i < 3; i++ {
			b, _ := bf(g, Options{}, h)
			if a.Verdict != Fail || !reflect.DeepEqual(a.Trace, b.Trace) || a.Stats.States != b.Stats.States || a.Stats.Transitions != b.Stats.Transitions {
				t.Fatalf("%s run %d differs: %v %d, then %v %d", tie, i, a.Trace, a.Stats.States, b.Trace, b.Stats.States)
			}
		}
	}
}

func TestBestFirstLimitsAreHonest(t *testing.T) {
	zero := func([]byte) int { return 0 }
	for name, c := range map[string]struct {
		opt  Options
		want string
	}{
		"states":  {Options{MaxStates: 10}, "state limit 10"},
		"depth":   {Options{MaxDepth: 5}, "depth limit 5"},
		"timeout": {Options{Timeout: time.Nanosecond}, "time limit"},
		"memory":  {Options{MaxMemory: 1}, "memory limit"},
	} {
		for tie, bf := range bestFirsts {
			r, err := bf(grid{n: 200}, c.opt, zero)
			if err != nil || r.Verdict != Incomplete || !strings.Contains(r.Reason, c.want) || !strings.Contains(r.Reason, "best-first") {
				t.Fatalf("%s %s: %+v %v", name, tie, r, err)
			}
			if name == "states" && r.Stats.States > 10 {
				t.Fatalf("%s: state limit exceeded: %d", tie, r.Stats.States)
			}
		}
	}
	stop := make(chan struct{})
	close(stop)
	r, err := BestFirst(grid{n: 200}, Options{Stop: stop}, zero)
	if err != nil || r.Verdict != Incomplete || !strings.HasPrefix(r.Reason, "interrupted") {
		t.Fatalf("stop: %+v %v", r, err)
	}
	// Progress lines, when asked for.
	var prog strings.Builder
	r, err = BestFirstDeep(grid{n: 200}, Options{Progress: &prog, ProgressEvery: time.Nanosecond, MaxStates: 5000}, zero)
	if err != nil || r.Verdict != Incomplete || !strings.HasPrefix(prog.String(), "progress: best-first: ") || !strings.Contains(prog.String(), " to expand, depth ") {
		t.Fatalf("progress: %+v %v %q", r, err, prog.String())
	}
	// Limits not reached leave a complete search.
	r, _ = BestFirst(grid{n: 3}, Options{MaxStates: 1000, MaxDepth: 100, Timeout: time.Hour}, zero)
	if r.Verdict != Pass {
		t.Fatalf("got %v %s", r.Verdict, r.Reason)
	}
	if _, err := BestFirst(grid{n: 3}, Options{Fingerprint: true}, zero); err == nil {
		t.Fatal("a fingerprint store was accepted")
	}
	if _, err := BestFirst(broken{}, Options{}, zero); err == nil {
		t.Fatal("a model failure was not reported as an error")
	}
}
