package dist

import (
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"

	"lfccheck/explore"
	"lfccheck/properties"
	"lfccheck/protocols/mcast"
)

// leafSpy is a checker that checks the numbers of segments a worker gives
// it (explore.LeafUser): equal numbers under one owner must be equal
// bytes, and each must be the segment of the state expanded next.
type leafSpy struct {
	*properties.Checker
	seen   map[[2]uint64]string
	owner  uint64
	ids    []uint32
	ends   []int
	next   bool
	calls  int
	states int
	bad    string
}

func (s *leafSpy) UseLeaves(owner uint64, ids []uint32, ends []int) {
	s.Checker.UseLeaves(owner, ids, ends)
	s.owner, s.ids, s.ends, s.next = owner, slices.Clone(ids), slices.Clone(ends), true
}

func (s *leafSpy) check(state []byte) {
	s.states++
	if !s.next {
		return
	}
	s.next = false
	s.calls++
	if len(s.ends) == 0 || s.ends[len(s.ends)-1] != len(state) {
		s.bad = fmt.Sprintf("segment ends %v for a state of %d bytes", s.ends, len(state))
		return
	}
	st := 0
	for j, id := range s.ids {
		seg := string(state[st:s.ends[j]])
		k := [2]uint64{s.owner, uint64(id)}
		if old, ok := s.seen[k]; ok && old != seg && s.bad == "" {
			s.bad = fmt.Sprintf("segment %d of owner %x is %q and %q", id, s.owner, old, seg)
		}
		s.seen[k] = seg
		st = s.ends[j]
	}
}

func (s *leafSpy) Successors(state []byte, visit func(uint32, []byte, error) bool) error {
	s.check(state)
	return s.Checker.Successors(state, visit)
}

func (s *leafSpy) SuccessorsAsleep(state []byte, z uint64, visit func(uint32, []byte, error) bool) error {
	s.check(state)
	return s.Checker.SuccessorsAsleep(state, z, visit)
}

// TestLeaves: the workers of a distributed search give the model the
// numbers of the segments of the states they expand, faithfully, and the
// search's result is one process's.
func TestLeaves(t *testing.T) {
	cfg := mcast.Config("binary", 3, 1, 1)
	ck, err := properties.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := explore.BFS(ck, explore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := summary(r, ck)
	const n = 2
	spies := make([]*leafSpy, n)
	lis := make([]net.Listener, n)
	peers := make([]string, n)
	for i := range n {
		c, err := properties.Build(cfg)
		if err != nil {
			t.Fatal(err)
		}
		spies[i] = &leafSpy{Checker: c, seen: map[[2]uint64]string{}}
		if lis[i], err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		peers[i] = lis[i].Addr().String()
	}
	var (
		wg   sync.WaitGroup
		res  explore.Result
		errs = make([]error, n)
	)
	for i := range n {
		wg.Go(func() {
			r, _, err := Run(spies[i], Options{Rank: i, Peers: peers, Listener: lis[i]})
			errs[i] = err
			if i == 0 {
				res = r
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("worker %d: %v", i, err)
		}
	}
	if s := summary(res, spies[0].Checker); s != want {
		t.Fatalf("2 workers:\n%s\nbreadth-first search:\n%s", s, want)
	}
	for i, s := range spies {
		if s.bad != "" {
			t.Fatalf("worker %d: %s", i, s.bad)
		}
		// Every state expanded comes with its segments (the counterexample
		// is rebuilt by a replayer of its own).
		if s.states == 0 || s.calls != s.states {
			t.Fatalf("worker %d: %d of %d states expanded came with their segments", i, s.calls, s.states)
		}
	}
}
