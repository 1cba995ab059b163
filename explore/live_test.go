package explore

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// lts is a hand-made labelled transition system: states are bytes, state 0
// is initial, every edge carries an action code.
type lts struct {
	edges  map[byte][]ledge
	labels map[byte]uint64 // bit 0: trigger, bit 1: goal (property 0)
	cur    byte
}

type ledge struct {
	code uint32
	to   byte
}

func (m *lts) Initial() ([]byte, error) { return []byte{0}, nil }

func (m *lts) Successors(s []byte, visit func(uint32, []byte, error) bool) error {
	m.cur = s[0]
	for _, e := range m.edges[s[0]] {
		if !visit(e.code, []byte{e.to}, nil) {
			return nil
		}
	}
	return nil
}

func (m *lts) Labels() uint64 { return m.labels[m.cur] }

const (
	goal    = 2
	trigger = 1
)

// Action codes of the hand-made models and their classes.
const (
	spin = iota // no fairness
	progress
	other
)

func liveOpts(fair map[uint32]int, classes []FairClass, fromInitial bool) Options {
	return liveOptsStutter(fair, classes, fromInitial, false)
}

func liveOptsStutter(fair map[uint32]int, classes []FairClass, fromInitial, stutter bool) Options {
	return Options{Live: &Live{
		Stutter: stutter,
		Props:   []LiveProp{{Name: "toy-live", FromInitial: fromInitial}},
		Classes: classes,
		ClassOf: func(c uint32) int {
			if k, ok := fair[c]; ok {
				return k
			}
			return -1
		},
	}}
}

var weakProgress = map[uint32]int{progress: 0}

func TestLivenessVerdicts(t *testing.T) {
	weak := []FairClass{{Name: "progress"}}
	strong := []FairClass{{Name: "progress", Strong: true}}
	cases := []struct {
		name    string
		m       *lts
		classes []FairClass
		fair    map[uint32]int
		want    Verdict
		loop    int // expected loop length of a failure (0: ends in a terminal state)
	}{
		{
			// 0 spins for ever while "progress" to the goal stays enabled:
			// the cycle starves a weakly fair action, so it is no
			// counterexample.
			name: "starving a weakly fair action",
			m: &lts{edges: map[byte][]ledge{0: {{spin, 0}, {progress, 1}}, 1: {{spin, 1}}},
				labels: map[byte]uint64{1: goal}},
			classes: weak, fair: weakProgress, want: Pass,
		},
		{
			name: "the same cycle without fairness",
			m: &lts{edges: map[byte][]ledge{0: {{spin, 0}, {progress, 1}}, 1: {{spin, 1}}},
				labels: map[byte]uint64{1: goal}},
			classes: weak, fair: map[uint32]int{}, want: Fail, loop: 1,
		},
		{
			// The cycle 0 -> 2 -> 0 passes through 2, where progress is
			// disabled: weak fairness does not force it (counterexample),
			// strong fairness does (no counterexample).
			name: "progress enabled only now and then, weak",
			m: &lts{edges: map[byte][]ledge{0: {{spin, 2}, {progress, 1}}, 2: {{spin, 0}}, 1: {{spin, 1}}},
				labels: map[byte]uint64{1: goal}},
			classes: weak, fair: weakProgress, want: Fail, loop: 2,
		},
		{
			name: "progress enabled only now and then, strong",
			m: &lts{edges: map[byte][]ledge{0: {{spin, 2}, {progress, 1}}, 2: {{spin, 0}}, 1: {{spin, 1}}},
				labels: map[byte]uint64{1: goal}},
			classes: strong, fair: weakProgress, want: Pass,
		},
		{
			// Progress is never enabled on the cycle 2 -> 3 -> 2: a fair
			// counterexample under any fairness.
			name: "progress never enabled on the cycle",
			m: &lts{edges: map[byte][]ledge{0: {{spin, 2}, {progress, 1}}, 2: {{spin, 3}}, 3: {{spin, 2}}, 1: {{spin, 1}}},
				labels: map[byte]uint64{1: goal}},
			classes: strong, fair: weakProgress, want: Fail, loop: 2,
		},
		{
			name: "a terminal state without the goal",
			m: &lts{edges: map[byte][]ledge{0: {{progress, 1}, {other, 2}}, 1: {{spin, 1}}},
				labels: map[byte]uint64{1: goal}},
			classes: weak, fair: weakProgress, want: Fail, loop: 0,
		},
		{
			// A cycle where the weakly fair class is taken, but only to
			// come back: fair, and the goal is never reached.
			name: "fair but useless progress",
			m: &lts{edges: map[byte][]ledge{0: {{progress, 2}}, 2: {{progress, 0}, {other, 1}}, 1: {{spin, 1}}},
				labels: map[byte]uint64{1: goal}},
			classes: weak, fair: weakProgress, want: Fail, loop: 2,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := BFS(tc.m, liveOpts(tc.fair, tc.classes, true))
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict != tc.want {
				t.Fatalf("verdict %s, want %s (%+v)", r.Verdict, tc.want, r)
			}
			if r.Verdict == Fail {
				if r.Loop != tc.loop {
					t.Errorf("loop of %d steps, want %d: trace %v", r.Loop, tc.loop, r.Trace)
				}
				if msg := checkLasso(tc.m, r, tc.classes, tc.fair, true); msg != "" {
					t.Error(msg)
				}
			}
		})
	}
}

func TestLeadsToStartsAtTheTrigger(t *testing.T) {
	// 0 -> 1 (trigger) -> 2 <-> 3, goal at 4 reachable from 3 by an
	// unfair action only; before the trigger the goal is not due.
	m := &lts{edges: map[byte][]ledge{0: {{spin, 0}, {other, 1}}, 1: {{other, 2}}, 2: {{other, 3}}, 3: {{other, 2}, {spin, 4}}, 4: {{spin, 4}}},
		labels: map[byte]uint64{1: trigger, 4: goal}}
	fair := map[uint32]int{other: 0}
	r, err := BFS(m, liveOpts(fair, []FairClass{{Name: "other"}}, false))
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != Fail || r.Loop != 2 {
		t.Fatalf("want a lasso with a 2-step loop, got %+v", r)
	}
	if msg := checkLasso(m, r, []FairClass{{Name: "other"}}, fair, false); msg != "" {
		t.Fatal(msg)
	}
	// Without the trigger nothing is due.
	m.labels[1] = 0
	if r, _ := BFS(m, liveOpts(fair, []FairClass{{Name: "other"}}, false)); r.Verdict != Pass {
		t.Fatalf("no trigger: want pass, got %+v", r)
	}
}

// With Stutter a run may stop where only unfair actions are enabled: a
// host that never polls.
func TestStutterEndsARun(t *testing.T) {
	m := &lts{edges: map[byte][]ledge{0: {{spin, 1}}, 1: {{progress, 2}}, 2: {{spin, 2}}},
		labels: map[byte]uint64{2: goal}}
	for _, stutter := range []bool{false, true} {
		r, err := BFS(m, liveOptsStutter(map[uint32]int{}, nil, true, stutter))
		if err != nil {
			t.Fatal(err)
		}
		want := map[bool]Verdict{false: Pass, true: Fail}[stutter]
		if r.Verdict != want || (stutter && (r.Loop != 0 || len(r.Trace) != 0)) {
			t.Fatalf("stutter=%v: got %+v, want %s", stutter, r, want)
		}
	}
}

func TestAcyclicPromiseBroken(t *testing.T) {
	m := &lts{edges: map[byte][]ledge{0: {{spin, 1}}, 1: {{spin, 0}}}}
	opt := liveOpts(nil, nil, true)
	opt.Live.Acyclic = true
	if _, err := BFS(m, opt); err == nil || !strings.Contains(err.Error(), "acyclic") {
		t.Fatalf("want an internal error about the broken promise, got %v", err)
	}
}

func TestLivenessRespectsLimits(t *testing.T) {
	m := &lts{edges: map[byte][]ledge{0: {{spin, 1}}, 1: {{spin, 0}}}}
	opt := liveOpts(nil, nil, true)
	opt.MaxStates = 1
	r, err := BFS(m, opt)
	if err != nil || r.Verdict != Incomplete {
		t.Fatalf("state limit: want incomplete, got %+v, %v", r, err)
	}
	opt = liveOpts(nil, nil, true)
	opt.MaxMemory = 1
	if r, err := BFS(m, opt); err != nil || r.Verdict != Incomplete {
		t.Fatalf("memory limit: want incomplete, got %+v, %v", r, err)
	}
}

// TestLivenessAgainstBruteForce compares the verdicts on random small
// graphs with a brute-force search over every set of states: a fair run
// on which the goal never holds after the trigger exists exactly when some
// set S of states without the goal, strongly connected by its inner edges,
// reachable through goal-free states from a triggered goal-free state, has
// an inner edge and meets every class (a weakly fair class enabled in all
// of S, a strongly fair class enabled in any of S, is taken by an inner
// edge), or such a terminal state is reachable.
func TestLivenessAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	fails, iters := 0, 3000
	if testing.Short() {
		iters = 600
	}
	for iter := 0; iter < iters; iter++ {
		_, m, classes, fair, fromInit, stutter := randomLiveCase(rng, 6)
		r, err := BFS(m, liveOptsStutter(fair, classes, fromInit, stutter))
		if err != nil {
			t.Fatal(err)
		}
		want := bruteForce(m, classes, fair, fromInit, stutter)
		if (r.Verdict == Fail) != want {
			t.Fatalf("iteration %d: verdict %s, brute force says violated=%v\nmodel %v labels %v fair %v fromInit %v",
				iter, r.Verdict, want, m.edges, m.labels, fair, fromInit)
		}
		if r.Verdict == Fail {
			fails++
			if msg := checkLassoStutter(m, r, classes, fair, fromInit, stutter); msg != "" {
				t.Fatalf("iteration %d: %s\nmodel %v labels %v fair %v stutter %v", iter, msg, m.edges, m.labels, fair, stutter)
			}
		}
	}
	if fails < iters/10 {
		t.Fatalf("only %d of the random graphs violate the property: the test exercises too little", fails)
	}
}

// closure returns the states reached from start (included) by edges into
// states ok accepts.
func closure(m *lts, start []byte, ok func(byte) bool) map[byte]bool {
	seen := map[byte]bool{}
	for _, v := range start {
		seen[v] = true
	}
	q := append([]byte(nil), start...)
	for len(q) > 0 {
		v := q[0]
		q = q[1:]
		for _, e := range m.edges[v] {
			if ok(e.to) && !seen[e.to] {
				seen[e.to] = true
				q = append(q, e.to)
			}
		}
	}
	return seen
}

func reachable(m *lts) map[byte]bool {
	return closure(m, []byte{0}, func(byte) bool { return true })
}

// quiescent: no action with a fairness class is enabled in v.
func quiescent(m *lts, v byte, fair map[uint32]int) bool {
	for _, e := range m.edges[v] {
		if _, f := fair[e.code]; f {
			return false
		}
	}
	return true
}

func bruteForce(m *lts, classes []FairClass, fair map[uint32]int, fromInit, stutter bool) bool {
	reach := reachable(m)
	bad := func(v byte) bool { return reach[v] && m.labels[v]&goal == 0 }
	var states []byte
	for v := range reach {
		states = append(states, v)
	}
	// Goal-free states reachable from a start through goal-free states.
	var starts []byte
	for _, v := range states {
		if bad(v) && ((fromInit && v == 0) || (!fromInit && m.labels[v]&trigger != 0)) {
			starts = append(starts, v)
		}
	}
	from := closure(m, starts, bad)
	for v := range from {
		if len(m.edges[v]) == 0 || (stutter && quiescent(m, v, fair)) {
			return true
		}
	}
	for set := 1; set < 1<<8; set++ {
		in := func(v byte) bool { return set&(1<<v) != 0 }
		ok := true
		var members []byte
		for v := 0; v < 8; v++ {
			if in(byte(v)) {
				if !from[byte(v)] {
					ok = false
				}
				members = append(members, byte(v))
			}
		}
		if !ok || !stronglyConnected(m, members, in) {
			continue
		}
		taken := func(k int) bool {
			for _, v := range members {
				for _, e := range m.edges[v] {
					if c, f := fair[e.code]; f && c == k && in(e.to) {
						return true
					}
				}
			}
			return false
		}
		if starved(m, members, taken, classes, fair) != "" {
			ok = false
		}
		if ok {
			return true
		}
	}
	return false
}

// stronglyConnected: every member reaches every member by a non-empty
// path of inner edges.
func stronglyConnected(m *lts, members []byte, in func(byte) bool) bool {
	for _, s := range members {
		// Successors of s within the set, then everything they reach.
		var next []byte
		for _, e := range m.edges[s] {
			if in(e.to) {
				next = append(next, e.to)
			}
		}
		seen := closure(m, next, in)
		for _, t := range members {
			if !seen[t] {
				return false
			}
		}
	}
	return true
}

// checkLasso replays a liveness counterexample on the hand-made model: it
// follows existing edges, the loop returns to its first state, the goal
// never holds from the trigger on, and the loop is fair.
func checkLasso(m *lts, r Result, classes []FairClass, fair map[uint32]int, fromInit bool) string {
	return checkLassoStutter(m, r, classes, fair, fromInit, false)
}

func checkLassoStutter(m *lts, r Result, classes []FairClass, fair map[uint32]int, fromInit, stutter bool) string {
	path := []byte{0}
	for i, c := range r.Trace {
		cur := path[len(path)-1]
		found := false
		for _, e := range m.edges[cur] {
			if e.code == c {
				path = append(path, e.to)
				found = true
				break
			}
		}
		if !found {
			return fmt.Sprintf("step %d: no edge %d from state %d", i+1, c, cur)
		}
	}
	last := path[len(path)-1]
	loopStart := len(path) - 1 - r.Loop
	if r.Loop == 0 && len(m.edges[last]) != 0 && !(stutter && quiescent(m, last, fair)) {
		return fmt.Sprintf("no loop, but a run cannot stay in state %d", last)
	}
	if r.Loop > 0 && path[loopStart] != last {
		return fmt.Sprintf("the loop does not return: starts at %d, ends at %d (path %v)", path[loopStart], last, path)
	}
	start := -1
	for i := len(path) - 1; i >= 0; i-- {
		if m.labels[path[i]]&goal != 0 {
			break
		}
		if (fromInit && i == 0) || (!fromInit && m.labels[path[i]]&trigger != 0) {
			start = i
		}
	}
	if start < 0 {
		return fmt.Sprintf("no triggered state without the goal after which the goal never holds (path %v)", path)
	}
	if r.Loop == 0 {
		return ""
	}
	taken := func(k int) bool {
		for _, c := range r.Trace[len(r.Trace)-r.Loop:] {
			if k2, f := fair[c]; f && k2 == k {
				return true
			}
		}
		return false
	}
	if name := starved(m, path[loopStart:len(path)-1], taken, classes, fair); name != "" {
		return fmt.Sprintf("the loop is unfair to %s (path %v, loop %d)", name, path, r.Loop)
	}
	return ""
}

// starved returns the first class that a run visiting states for ever and
// taking the classes taken accepts treats unfairly (a weakly fair class
// enabled in all of them, or a strongly fair one enabled in any, never
// taken), or "".
func starved(m *lts, states []byte, taken func(k int) bool, classes []FairClass, fair map[uint32]int) string {
	for k, fc := range classes {
		enabledAll, enabledAny := true, false
		for _, v := range states {
			en := false
			for _, e := range m.edges[v] {
				if c, f := fair[e.code]; f && c == k {
					en = true
				}
			}
			enabledAll = enabledAll && en
			enabledAny = enabledAny || en
		}
		if !taken(k) && ((!fc.Strong && enabledAll) || (fc.Strong && enabledAny)) {
			return fc.Name
		}
	}
	return ""
}
