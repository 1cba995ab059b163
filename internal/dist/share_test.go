package dist

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"lfccheck/explore"
)

// graphModel is a model over named states with a sleep set per transition
// (a Sleeper) whose invariant fails in one state, bad (a FreshChecker).
// The states whose names start with slow take that long to expand.
type graphModel struct {
	g        map[string][]graphEdge
	bad      string
	slow     string
	pause    time.Duration
	deferred bool
	last     string
	lastZ    uint64
}

type graphEdge struct {
	to string
	z  uint64 // the successor's sleep set
}

type badState struct{}

func (badState) Error() string        { return "the bad state" }
func (badState) PropertyName() string { return "not-bad" }

func (m *graphModel) Initial() ([]byte, error) { return []byte("I"), nil }
func (m *graphModel) DeferStateChecks()        { m.deferred = true }
func (m *graphModel) SleepOff() string         { return "" }
func (m *graphModel) SuccSleep() uint64        { return m.lastZ }

func (m *graphModel) CheckFresh() error {
	if m.last == m.bad {
		return badState{}
	}
	return nil
}

func (m *graphModel) Successors(state []byte, visit func(uint32, []byte, error) bool) error {
	return m.SuccessorsAsleep(state, 0, visit)
}

func (m *graphModel) SuccessorsAsleep(state []byte, z uint64, visit func(uint32, []byte, error) bool) error {
	if m.slow != "" && strings.HasPrefix(string(state), m.slow) {
		time.Sleep(m.pause)
	}
	for i, e := range m.g[string(state)] {
		if z&(1<<uint(i)) != 0 {
			if !visit(uint32(i), nil, nil) {
				return nil
			}
			continue
		}
		m.last, m.lastZ = e.to, e.z
		var err error
		if !m.deferred && e.to == m.bad {
			err = badState{}
		}
		if !visit(uint32(i), []byte(e.to), err) {
			return nil
		}
	}
	return nil
}

// ownedBy returns a state name starting with base that rank r of n owns.
func ownedBy(base string, r, n int) string {
	for k := 0; ; k++ {
		if s := fmt.Sprintf("%s.%d", base, k); owner(explore.Hash([]byte(s)), n) == r {
			return s
		}
	}
}

// runGraph runs a distributed search of two workers, each with a model
// of its own made by m.
func runGraph(t *testing.T, m func() explore.Model, slow time.Duration, front bool) (explore.Result, Info) {
	t.Helper()
	return runWorkers(t, []explore.Model{m(), m()}, Options{testSlow: slow, testFront: front})
}

// TestFailedStateNotSentAgain: a state whose invariant fails where a
// worker first sends it (in a level) must not be sent later in that level,
// even by a transition whose sleep set clears bits of the first one's:
// its owner, which then stores it unchecked, would not offer its own
// smaller key for it. I reaches 100 slow states of rank 1 (F...), then
// pw (rank 1) and p1, p2 (rank 0), which all reach the bad state S
// (rank 1); p2's sleep set clears a bit of p1's. Breadth-first search
// reports S by pw, whose key is the smallest; rank 1 comes to pw after
// rank 0's batch with S.
func TestFailedStateNotSentAgain(t *testing.T) {
	bad := ownedBy("S", 1, 2)
	g := map[string][]graphEdge{}
	var init []graphEdge
	for k := range 100 {
		f := ownedBy(fmt.Sprintf("F%d", k), 1, 2)
		init = append(init, graphEdge{to: f})
		g[f] = []graphEdge{{to: fmt.Sprintf("G%d", k)}}
	}
	pw, p1, p2 := ownedBy("pw", 1, 2), ownedBy("p1", 0, 2), ownedBy("p2", 0, 2)
	g["I"] = append(init, graphEdge{to: pw}, graphEdge{to: p1}, graphEdge{to: p2})
	g[pw] = []graphEdge{{to: bad}}
	g[p1] = []graphEdge{{to: bad, z: 1<<5 | 1<<6}}
	g[p2] = []graphEdge{{to: bad, z: 1 << 5}}
	model := func() explore.Model {
		return &graphModel{g: g, bad: bad, slow: "F", pause: 3 * time.Millisecond}
	}
	want, err := explore.BFS(model(), explore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want.Verdict != explore.Fail || fmt.Sprint(want.Trace) != "[100 0]" {
		t.Fatalf("breadth-first search: %s, trace %v (the test's graph is wrong)", want.Verdict, want.Trace)
	}
	for _, share := range []bool{false, true} {
		for _, front := range []bool{false, true} {
			if !share && front {
				continue
			}
			got, _ := runWorkers(t, []explore.Model{model(), model()}, Options{testSlow: time.Microsecond, testFront: front, NoShare: !share})
			if g, w := fmt.Sprint(got.Verdict, got.Trace, got.Stats.Transitions, got.Stats.States), fmt.Sprint(want.Verdict, want.Trace, want.Stats.Transitions, want.Stats.States); g != w {
				t.Errorf("sharing %v (the first states left: %v): %s, breadth-first search %s", share, front, g, w)
			}
		}
	}
}

// TestGiveAwayBounded: a worker gives away at most about shareBytes of
// states at once, the last ones in the order of their paths, with their
// paths, and stops before them.
func TestGiveAwayBounded(t *testing.T) {
	w := newWorker(&graphModel{}, 0, 2)
	st := new(explore.ExactStore)
	w.store = plainStates{st}
	const n, size = 1000, 10 << 10 // 10 MB of states left
	for i := range n {
		e := []byte(fmt.Sprintf("%0*d", size, i))
		st.Add(explore.Hash(e), e)
		w.fpath = append(w.fpath, appendIdx(nil, uint32(i)))
		w.order = append(w.order, int32(i))
	}
	w.stealable, w.next, w.end, w.depth = true, 10, n, 3
	out := w.giveAway(3)
	if len(out.b) > shareBytes+shareBytes/8 {
		t.Errorf("gave away %d bytes at once, more than about %d", len(out.b), shareBytes)
	}
	d := dec{b: out.b}
	k := d.count()
	if k < 100 || w.end != n-k {
		t.Fatalf("gave away %d states, the worker stops at %d", k, w.end)
	}
	for j := range k {
		p, e := d.bytes(), d.bytes()
		if i := w.end + j; string(p) != string(w.fpath[i]) || string(e) != fmt.Sprintf("%0*d", size, i) {
			t.Fatalf("state %d given away is not the %d-th left", j, i)
		}
	}
	if d.err != nil || len(d.b) != 0 {
		t.Fatalf("malformed reply: %v, %d bytes left", d.err, len(d.b))
	}
	// Not sharing, or not expanding: nothing, and to ask again only a
	// worker that shares and has not started on the level.
	for _, c := range []struct {
		share, stealable bool
		depth            int64
		want             string
	}{
		{false, true, 3, "\x00\x00"},
		{false, false, 4, "\x00\x00"},
		{true, false, 3, "\x00\x00"}, // done with its own
		{true, false, 4, "\x00\x01"}, // not started on depth 4
	} {
		w.share, w.stealable = c.share, c.stealable
		if out := w.giveAway(c.depth); string(out.b) != c.want {
			t.Errorf("sharing %v, in its loop %v, at depth 3, asked for depth %d: %q, want %q", c.share, c.stealable, c.depth, out.b, c.want)
		}
	}
}

// TestTakeWaitsForLevelStart: a worker done with its states of a level
// before another has started on it asks that one again until it has.
// Rank 1 owns the 200 slow states of depth 1 and starts each level 20 ms
// late (testSlow); rank 0 owns 5 and is done with them before.
func TestTakeWaitsForLevelStart(t *testing.T) {
	g := map[string][]graphEdge{}
	for k := range 200 {
		g["I"] = append(g["I"], graphEdge{to: ownedBy(fmt.Sprintf("F%d", k), 1, 2)})
	}
	for k := range 5 {
		g["I"] = append(g["I"], graphEdge{to: ownedBy(fmt.Sprintf("E%d", k), 0, 2)})
	}
	model := func() explore.Model {
		return &graphModel{g: g, slow: "F", pause: time.Millisecond}
	}
	want, err := explore.BFS(model(), explore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, info := runGraph(t, model, 2*time.Millisecond, false)
	if g, w := fmt.Sprint(got.Verdict, got.Stats.States, got.Stats.Transitions, got.Stats.Levels), fmt.Sprint(want.Verdict, want.Stats.States, want.Stats.Transitions, want.Stats.Levels); g != w {
		t.Fatalf("%s, breadth-first search %s", g, w)
	}
	if info.StatesShared == 0 {
		t.Errorf("no state shared")
	}
}

// TestNotesMalformed: a batch or a note that names this worker or one out
// of range as its sender, and a note about a state this worker never
// sent, are errors, not a panic.
func TestNotesMalformed(t *testing.T) {
	w := newWorker(&graphModel{}, 0, 2)
	w.store = plainStates{new(explore.ExactStore)}
	for _, from := range []uint64{0, 2, 1 << 40} {
		var b enc
		b.u(from)
		if err := w.store1(b.b); err == nil {
			t.Errorf("a batch from worker %d: no error", from)
		}
		n := enc{b: []byte{opNotes}}
		n.u(from)
		n.u(1)
		n.u(1)
		n.u(0)
		if _, err := w.control(directCtx, n.b); err == nil {
			t.Errorf("notes from worker %d: no error", from)
		}
	}
	n := enc{b: []byte{opNotes}}
	n.u(1)
	n.u(1)
	n.u(7) // (nothing was sent)
	n.u(0)
	if _, err := w.control(directCtx, n.b); err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	err := w.takeNotes()
	w.mu.Unlock()
	if err == nil {
		t.Error("a note about a state never sent: no error")
	}
}

// directCtx is the context of a test's call of a worker's control: as the
// coordinator's of its own worker.
var directCtx = context.WithValue(context.Background(), direct{}, true)
