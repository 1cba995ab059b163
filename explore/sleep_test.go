package explore_test

import (
	"fmt"
	"strings"
	"testing"

	"lfccheck/explore"
)

// grid is a toy model for sleep sets: states (x, y, r), actions x+1 (bit
// 1) and y+1 (bit 2), which are independent; with rec also "x+1,
// recording the new x in r" (bit 8, dependent on x+1: the two orders
// differ in r); with back x-1 (bit 4, dependent on both); with wrap the
// coordinates are taken mod n, else they stop at n-1. Without back and
// wrap, every step adds one to x+y, so the state graph is layered; back
// and wrap make transitions reach states of earlier levels.
type grid struct {
	n               byte
	rec, back, wrap bool
	bad             [2]byte // (x, y) of states that violate the toy property (n, n: none)
	z               uint64  // SuccSleep
}

func (g *grid) Initial() ([]byte, error) { return []byte{0, 0, 0}, nil }

func (g *grid) Successors(s []byte, visit func(uint32, []byte, error) bool) error {
	return g.SuccessorsAsleep(s, 0, visit)
}

func (g *grid) SleepOff() string  { return "" }
func (g *grid) SuccSleep() uint64 { return g.z }
func (g *grid) NewWorker() explore.Model {
	c := *g
	return &c
}

func (g *grid) SuccessorsAsleep(s []byte, z uint64, visit func(uint32, []byte, error) bool) error {
	x, y, r := s[0], s[1], s[2]
	type act struct {
		bit, dep uint64
		next     [3]byte
		ok       bool
	}
	acts := []act{
		{1, 1 | 4 | 8, [3]byte{x + 1, y, r}, x+1 < g.n},
		{2, 2, [3]byte{x, y + 1, r}, y+1 < g.n},
		{4, 1 | 4 | 8, [3]byte{x - 1, y, r}, g.back && x > 0},
		{8, 1 | 4 | 8, [3]byte{x + 1, y, x + 1}, g.rec && x+1 < g.n},
	}
	if g.wrap {
		acts[0].next[0], acts[0].ok = (x+1)%g.n, true
		acts[1].next[1], acts[1].ok = (y+1)%g.n, true
	}
	var before uint64
	for code, a := range acts {
		if !a.ok {
			continue
		}
		if z&a.bit != 0 {
			if !visit(uint32(code), nil, nil) {
				return nil
			}
			continue
		}
		g.z = (z | before) &^ a.dep
		before |= a.bit
		var err error
		if [2]byte{a.next[0], a.next[1]} == g.bad {
			err = torusBad{}
		}
		if !visit(uint32(code), a.next[:], err) {
			return nil
		}
	}
	return nil
}

// TestSleepSets runs the toy grid with and without sleep sets. With x+1
// and y+1 alone, the same states, each reached by one transition only;
// with the recording step too (dependent on x+1), the same states and
// counterexample length with fewer transitions. With back or wrap, a
// transition reaches a state already expanded: the search must notice
// and search again without sleep sets, with the results of a search
// without them. Every pass expands every state once, so the transitions
// explored and left out add up to those of the full search. Results do
// not depend on the number of workers.
func TestSleepSets(t *testing.T) {
	for _, g := range []grid{
		{n: 30, bad: [2]byte{30, 30}},
		{n: 30, bad: [2]byte{17, 12}},
		{n: 20, rec: true, bad: [2]byte{20, 20}},
		{n: 20, rec: true, bad: [2]byte{13, 7}},
		{n: 30, back: true, bad: [2]byte{30, 30}},
		{n: 30, back: true, bad: [2]byte{3, 25}},
		{n: 30, wrap: true, bad: [2]byte{30, 30}},
		{n: 20, wrap: true, rec: true, bad: [2]byte{2, 19}},
	} {
		name := fmt.Sprintf("n=%d rec=%v back=%v wrap=%v bad=%v", g.n, g.rec, g.back, g.wrap, g.bad)
		key := func(r explore.Result) string {
			return fmt.Sprintf("%s, %d states, %d transitions, depth %d, trace %v, %+v", r.Verdict, r.Stats.States, r.Stats.Transitions, r.Stats.Depth, r.Trace, r.Sleep)
		}
		var rs [2]explore.Result
		for i, noSleep := range []bool{false, true} {
			for _, workers := range []int{1, 3} {
				m := g
				r, err := explore.BFS(&m, explore.Options{NoSleep: noSleep, Workers: workers})
				if err != nil {
					t.Fatal(err)
				}
				if workers > 1 && key(r) != key(rs[i]) {
					t.Fatalf("%s: %d workers found %s; one worker %s", name, workers, key(r), key(rs[i]))
				}
				rs[i] = r
			}
		}
		on, off := rs[0], rs[1]
		if on.Verdict != off.Verdict || len(on.Trace) != len(off.Trace) || on.Verdict == explore.Pass && (on.Stats.States != off.Stats.States || on.Stats.Depth != off.Stats.Depth) {
			t.Fatalf("%s: with sleep sets %s, %d states, depth %d, trace %v; without %s, %d, %d, %v", name,
				on.Verdict, on.Stats.States, on.Stats.Depth, on.Trace, off.Verdict, off.Stats.States, off.Stats.Depth, off.Trace)
		}
		switch {
		case g.wrap || g.back:
			if on.Sleep.On || !strings.Contains(on.Sleep.Note, "not layered") || on.Stats.Transitions != off.Stats.Transitions {
				t.Errorf("%s: %+v, %d transitions (without sleep sets %d)", name, on.Sleep, on.Stats.Transitions, off.Stats.Transitions)
			}
		case !on.Sleep.On || on.Sleep.Skipped == 0 || on.Stats.Transitions+on.Sleep.Skipped > off.Stats.Transitions,
			on.Verdict == explore.Pass && on.Stats.Transitions+on.Sleep.Skipped != off.Stats.Transitions:
			t.Errorf("%s: %+v, %d transitions (without sleep sets %d)", name, on.Sleep, on.Stats.Transitions, off.Stats.Transitions)
		case !g.rec && on.Verdict == explore.Pass && on.Stats.Transitions != on.Stats.States-1:
			t.Errorf("%s: %d transitions for %d states", name, on.Stats.Transitions, on.Stats.States)
		}
		t.Logf("%s: %s, %d states, %d transitions with sleep sets (%d left out), %d without; %s", name, on.Verdict,
			on.Stats.States, on.Stats.Transitions, on.Sleep.Skipped, off.Stats.Transitions, on.Sleep.Note)
	}
}
