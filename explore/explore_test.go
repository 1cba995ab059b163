package explore

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// grid is a toy model: states (x, y) with 0 <= x, y <= n, actions x++ and
// y++, and optionally a "bad" state that violates a property.
type grid struct {
	n      byte
	bad    [2]byte
	hasBad bool
	// terminalBad reports (n, n) as a deadlock-like final violation.
	terminalBad bool
}

type violation string

func (v violation) Error() string        { return string(v) }
func (v violation) PropertyName() string { return "toy" }

func (g grid) Initial() ([]byte, error) { return []byte{0, 0}, nil }

func (g grid) Successors(s []byte, visit func(uint32, []byte, error) bool) error {
	x, y := s[0], s[1]
	any := false
	for code, next := range [][2]byte{{x + 1, y}, {x, y + 1}} {
		if next[0] > g.n || next[1] > g.n {
			continue
		}
		any = true
		var err error
		if g.hasBad && next == g.bad {
			err = violation("bad state")
		}
		if !visit(uint32(code), next[:], err) {
			return nil
		}
	}
	if !any && g.terminalBad {
		return violation("stuck")
	}
	return nil
}

func TestPassCountsEveryState(t *testing.T) {
	for _, fp := range []bool{false, true} {
		r, err := BFS(grid{n: 9}, Options{Fingerprint: fp})
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != Pass || r.Stats.States != 100 || r.Stats.Depth != 18 || r.Stats.Transitions != 180 {
			t.Fatalf("fingerprint=%v: %+v", fp, r)
		}
	}
}

func TestFailGivesShortestTrace(t *testing.T) {
	r, err := BFS(grid{n: 9, bad: [2]byte{3, 2}, hasBad: true}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != Fail || len(r.Trace) != 5 {
		t.Fatalf("want fail with a 5-step trace, got %v %v", r.Verdict, r.Trace)
	}
	x, y := 0, 0
	for _, c := range r.Trace {
		if c == 0 {
			x++
		} else {
			y++
		}
	}
	if x != 3 || y != 2 {
		t.Fatalf("trace leads to (%d,%d), want (3,2)", x, y)
	}
}

func TestFinalViolation(t *testing.T) {
	r, err := BFS(grid{n: 3, terminalBad: true}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != Fail || len(r.Trace) != 6 || r.Violation.Error() != "stuck" {
		t.Fatalf("got %v %v %v", r.Verdict, r.Trace, r.Violation)
	}
}

func TestLimitsAreIncomplete(t *testing.T) {
	for name, opt := range map[string]Options{
		"states":  {MaxStates: 10},
		"depth":   {MaxDepth: 5},
		"timeout": {Timeout: time.Nanosecond},
		"memory":  {MaxMemory: 1},
	} {
		r, err := BFS(grid{n: 200}, opt)
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != Incomplete || r.Reason == "" {
			t.Fatalf("%s: want incomplete with a reason, got %v %q", name, r.Verdict, r.Reason)
		}
	}
	// A limit that is not reached does not make the result incomplete.
	r, _ := BFS(grid{n: 3}, Options{MaxStates: 1000, MaxDepth: 100, Timeout: time.Hour})
	if r.Verdict != Pass {
		t.Fatalf("got %v %s", r.Verdict, r.Reason)
	}
}

type broken struct{ grid }

func (broken) Successors([]byte, func(uint32, []byte, error) bool) error {
	return errors.New("decode failed")
}

func TestInternalErrorIsNotAVerdict(t *testing.T) {
	if _, err := BFS(broken{}, Options{}); err == nil {
		t.Fatal("a model failure was not reported as an error")
	}
}

func TestArenaDropKeepsLiveEntries(t *testing.T) {
	var a arena
	big := make([]byte, chunkSize/3)
	var refs []uint64
	for i := 0; i < 10; i++ {
		big[0] = byte(i)
		refs = append(refs, a.add(big))
	}
	a.dropBefore(refs[7])
	for i := 7; i < 10; i++ {
		if got := a.get(refs[i]); got[0] != byte(i) || len(got) != len(big) {
			t.Fatalf("entry %d damaged after drop", i)
		}
	}
}

func TestHashIsFixed(t *testing.T) {
	// Fingerprints must not change between runs or releases unnoticed:
	// pinned values.
	if h := Hash([]byte("lfccheck")); h != 0x8c520b519e9d2da3 {
		t.Fatalf("Hash(\"lfccheck\") = %#x, pinned 0x8c520b519e9d2da3", h)
	}
	if h := Hash(nil); h != 0x1c5267aae7e9b3ed {
		t.Fatalf("Hash(nil) = %#x, pinned 0x1c5267aae7e9b3ed", h)
	}
	if Hash([]byte{1, 2, 3}) == Hash([]byte{1, 2, 3, 0}) {
		t.Fatal("length not mixed into the hash")
	}
}

// forkGrid is grid with workers: every worker gets a copy.
type forkGrid struct{ grid }

func (g forkGrid) NewWorker() Model { return g }

// Results do not depend on the number of workers: the same counts, and
// the same counterexample, for a pass, a violation on a transition and a
// violation in a terminal state, in both stores and at every limit that
// is reproducible.
func TestWorkersGiveIdenticalResults(t *testing.T) {
	models := map[string]Model{
		"pass":     forkGrid{grid{n: 60}},
		"bad":      forkGrid{grid{n: 60, bad: [2]byte{40, 17}, hasBad: true}},
		"terminal": forkGrid{grid{n: 30, terminalBad: true}},
	}
	for name, m := range models {
		for _, fp := range []bool{false, true} {
			for _, depth := range []int{0, 25} {
				var want Result
				for w := 1; w <= 4; w++ {
					r, err := BFS(m, Options{Workers: w, Fingerprint: fp, MaxDepth: depth})
					if err != nil {
						t.Fatal(err)
					}
					r.Stats = Stats{States: r.Stats.States, Transitions: r.Stats.Transitions, Depth: r.Stats.Depth, Levels: r.Stats.Levels}
					if w == 1 {
						want = r
						continue
					}
					if r.Verdict != want.Verdict || fmt.Sprint(r.Stats) != fmt.Sprint(want.Stats) || r.Reason != want.Reason || fmt.Sprint(r.Trace) != fmt.Sprint(want.Trace) {
						t.Fatalf("%s fp=%v depth=%d: %d workers give %+v, 1 gives %+v", name, fp, depth, w, r, want)
					}
				}
			}
		}
	}
}

// The state limit is never exceeded, whatever the number of workers.
func TestWorkersKeepTheStateLimit(t *testing.T) {
	for w := 1; w <= 4; w++ {
		r, err := BFS(forkGrid{grid{n: 200}}, Options{Workers: w, MaxStates: 777})
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != Incomplete || r.Stats.States != 777 {
			t.Fatalf("%d workers: %v with %d states", w, r.Verdict, r.Stats.States)
		}
	}
}
