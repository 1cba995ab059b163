package explore

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// randomLTS is a random hand-made model of n states with labels for
// props liveness properties (bit 2j trigger, 2j+1 goal).
func randomLTS(rng *rand.Rand, n, props int) *lts {
	m := &lts{edges: map[byte][]ledge{}, labels: map[byte]uint64{}}
	for v := 0; v < n; v++ {
		deg := rng.Intn(3)
		if v == 0 {
			deg++
		}
		used := map[uint32]bool{}
		for d := 0; d < deg; d++ {
			// Actions are deterministic: one edge per code and state.
			if c := uint32(rng.Intn(4)); !used[c] {
				used[c] = true
				m.edges[byte(v)] = append(m.edges[byte(v)], ledge{c, byte(rng.Intn(n))})
			}
		}
		for j := 0; j < props; j++ {
			if rng.Intn(3) == 0 {
				m.labels[byte(v)] |= 1 << (2*j + 1)
			}
			if rng.Intn(2) == 0 {
				m.labels[byte(v)] |= 1 << (2 * j)
			}
		}
	}
	return m
}

// randomLiveCase draws a random graph of n = 2 to maxN+1 states with one
// liveness property, a weakly and a strongly fair class over its four
// action codes, and whether the goal is due from the initial state and
// runs may stutter.
func randomLiveCase(rng *rand.Rand, maxN int) (n int, m *lts, classes []FairClass, fair map[uint32]int, fromInit, stutter bool) {
	n = 2 + rng.Intn(maxN)
	m = randomLTS(rng, n, 1)
	classes = []FairClass{{Name: "a"}, {Name: "b", Strong: true}}
	fair = map[uint32]int{}
	for c := uint32(0); c < 4; c++ {
		if k := rng.Intn(3) - 1; k >= 0 {
			fair[c] = k
		}
	}
	return n, m, classes, fair, rng.Intn(2) == 0, rng.Intn(3) == 0
}

// TestLiveDFSAgainstGraphAnalysis runs the on-the-fly search and the
// analysis of the recorded graph on random small graphs (weak and strong
// fairness, end states, stuttering, FromInitial): same verdicts, and
// every lasso is a fair run on which the goal never holds; the
// brute-force search confirms.
func TestLiveDFSAgainstGraphAnalysis(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	fails, iters := 0, 3000
	if testing.Short() {
		iters = 600
	}
	for iter := 0; iter < iters; iter++ {
		n, m, classes, fair, fromInit, stutter := randomLiveCase(rng, 10)
		want, err := BFS(m, liveOptsStutter(fair, classes, fromInit, stutter))
		if err != nil {
			t.Fatal(err)
		}
		r, err := LiveDFS(m, liveOptsStutter(fair, classes, fromInit, stutter))
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != want.Verdict {
			t.Fatalf("iteration %d: on the fly %s, graph analysis %s\nmodel %v labels %v fair %v fromInit %v stutter %v",
				iter, r.Verdict, want.Verdict, m.edges, m.labels, fair, fromInit, stutter)
		}
		if n <= 8 { // (the brute force knows states 0 to 7)
			if bf := bruteForce(m, classes, fair, fromInit, stutter); bf != (r.Verdict == Fail) {
				t.Fatalf("iteration %d: on the fly %s, brute force violated=%v", iter, r.Verdict, bf)
			}
		}
		if r.Verdict == Fail {
			fails++
			if msg := checkLassoStutter(m, r, classes, fair, fromInit, stutter); msg != "" {
				t.Fatalf("iteration %d: %s\nmodel %v labels %v fair %v stutter %v trace %v loop %d", iter, msg, m.edges, m.labels, fair, stutter, r.Trace, r.Loop)
			}
		}
	}
	if fails < iters/10 {
		t.Fatalf("only %d of the random graphs violate the property", fails)
	}
}

// With several properties, the violated one is the graph analysis's: the
// first in order that is violated.
func TestLiveDFSReportsTheFirstPropertyViolated(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for iter := 0; iter < 1000; iter++ {
		m := randomLTS(rng, 2+rng.Intn(10), 3)
		opt := func() Options {
			o := liveOpts(map[uint32]int{progress: 0}, []FairClass{{Name: "progress"}}, false)
			o.Live.Props = []LiveProp{{Name: "p0"}, {Name: "p1", FromInitial: true}, {Name: "p2"}}
			return o
		}
		want, err := BFS(m, opt())
		if err != nil {
			t.Fatal(err)
		}
		r, err := LiveDFS(m, opt())
		if err != nil {
			t.Fatal(err)
		}
		name := func(r Result) string {
			if r.Violation == nil {
				return ""
			}
			return r.Violation.PropertyName()
		}
		if r.Verdict != want.Verdict || name(r) != name(want) {
			t.Fatalf("iteration %d: on the fly %s %q, graph analysis %s %q", iter, r.Verdict, name(r), want.Verdict, name(want))
		}
	}
}

func TestLiveDFSHandMade(t *testing.T) {
	weak := []FairClass{{Name: "progress"}}
	strong := []FairClass{{Name: "progress", Strong: true}}
	cases := []struct {
		name    string
		m       *lts
		classes []FairClass
		want    Verdict
		loop    int
	}{
		{"starving a weakly fair action", &lts{edges: map[byte][]ledge{0: {{spin, 0}, {progress, 1}}, 1: {{spin, 1}}}, labels: map[byte]uint64{1: goal}}, weak, Pass, 0},
		{"enabled now and then, weak", &lts{edges: map[byte][]ledge{0: {{spin, 2}, {progress, 1}}, 2: {{spin, 0}}, 1: {{spin, 1}}}, labels: map[byte]uint64{1: goal}}, weak, Fail, 2},
		{"enabled now and then, strong", &lts{edges: map[byte][]ledge{0: {{spin, 2}, {progress, 1}}, 2: {{spin, 0}}, 1: {{spin, 1}}}, labels: map[byte]uint64{1: goal}}, strong, Pass, 0},
		{"a terminal state without the goal", &lts{edges: map[byte][]ledge{0: {{progress, 1}, {other, 2}}, 1: {{spin, 1}}}, labels: map[byte]uint64{1: goal}}, weak, Fail, 0},
		// The fair cycle lies two components downstream of the initial
		// state: the lasso crosses components.
		{"a fair cycle further down", &lts{edges: map[byte][]ledge{0: {{spin, 1}, {progress, 5}}, 1: {{spin, 0}, {other, 2}}, 2: {{other, 3}}, 3: {{other, 2}, {progress, 5}}, 5: {{spin, 5}}}, labels: map[byte]uint64{5: goal}}, weak, Fail, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := LiveDFS(tc.m, liveOpts(weakProgress, tc.classes, true))
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict != tc.want || r.Loop != tc.loop {
				t.Fatalf("verdict %s loop %d, want %s loop %d (%+v)", r.Verdict, r.Loop, tc.want, tc.loop, r)
			}
			if r.Verdict == Fail {
				if msg := checkLasso(tc.m, r, tc.classes, weakProgress, true); msg != "" {
					t.Error(msg)
				}
			}
		})
	}
}

func TestLiveDFSLimitsAndRefusals(t *testing.T) {
	m := &lts{edges: map[byte][]ledge{0: {{spin, 1}}, 1: {{spin, 0}}}}
	opt := liveOpts(nil, nil, true)
	opt.Live.Acyclic = true
	if _, err := LiveDFS(m, opt); err == nil || !strings.Contains(err.Error(), "acyclic") {
		t.Fatalf("want an internal error about the broken promise, got %v", err)
	}
	for name, set := range map[string]func(*Options){
		"states": func(o *Options) { o.MaxStates = 1 },
		"memory": func(o *Options) { o.MaxMemory = 1 },
		"depth":  func(o *Options) { o.MaxDepth = 1 },
		"stop": func(o *Options) {
			c := make(chan struct{})
			close(c)
			o.Stop = c
		},
	} {
		big := &lts{edges: map[byte][]ledge{}, labels: map[byte]uint64{}}
		for v := 0; v < 250; v++ {
			big.edges[byte(v)] = []ledge{{spin, byte(v + 1)}, {other, byte(v / 2)}}
		}
		opt := liveOpts(nil, nil, true)
		set(&opt)
		if r, err := LiveDFS(big, opt); err != nil || r.Verdict != Incomplete {
			t.Errorf("%s limit: want incomplete, got %+v, %v", name, r.Verdict, err)
		}
	}
	for name, set := range map[string]func(*Options){
		"fingerprint": func(o *Options) { o.Fingerprint = true },
		"cover":       func(o *Options) { o.Live.Cover = &Cover{Size: 2} },
		"none":        func(o *Options) { o.Live = nil },
	} {
		opt := liveOpts(nil, nil, true)
		set(&opt)
		if _, err := LiveDFS(m, opt); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
}

// A safety violation anywhere comes before a liveness violation, as with
// the graph analysis.
func TestLiveDFSSafetyFirst(t *testing.T) {
	m := &unsafeLTS{lts{edges: map[byte][]ledge{0: {{spin, 0}, {other, 1}}, 1: {{other, 2}}, 2: {{spin, 2}}}}}
	r, err := LiveDFS(m, liveOpts(nil, nil, true))
	if err != nil || r.Verdict != Fail || r.Violation == nil || r.Violation.PropertyName() != "unsafe" || fmt.Sprint(r.Trace) != "[2 2]" {
		t.Fatalf("want the safety violation after steps [2 2], got %+v, %v", r, err)
	}
}

type unsafeLTS struct{ lts }

type unsafeErr struct{}

func (unsafeErr) Error() string        { return "unsafe" }
func (unsafeErr) PropertyName() string { return "unsafe" }

func (m *unsafeLTS) Successors(s []byte, visit func(uint32, []byte, error) bool) error {
	m.cur = s[0]
	for _, e := range m.edges[s[0]] {
		var err error
		if e.to == 2 {
			err = unsafeErr{}
		}
		if !visit(e.code, []byte{e.to}, err) {
			return nil
		}
	}
	return nil
}
