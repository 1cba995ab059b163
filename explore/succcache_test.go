package explore_test

import (
	"fmt"
	"testing"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/protocols"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/ucast"
)

// cacheSettings are the successor cache settings the tests compare: none
// (first, the reference), the default size on every level, and a tiny
// cache (8 entries, 16 KiB) whose entries and bytes are replaced all
// the time.
var cacheSettings = []struct {
	from int
	bits uint
	ring int
}{{-1, 0, 0}, {0, 0, 0}, {0, 3, 16 << 10}}

// TestSuccCacheKeepsResults runs searches with the workers' successor
// caches on every level (default and tiny) and with none, with one worker
// and three, and
// requires identical results: verdict, counts of states and transitions,
// depth and counterexample (passes, a deadlock, invariant and step
// violations). A search cut by a state limit is compared with one worker
// only (with more, the transitions counted before the cut depend on
// their timing).
func TestSuccCacheKeepsResults(t *testing.T) {
	variant := func(c model.Config, v string) model.Config { c.Variant = v; return c }
	cases := []struct {
		cfg   model.Config
		limit int64
	}{
		{mcast.Config("binary", 4, 1, 1), 60_000},
		{mcast.Config("binary", 3, 1, 2), 0},
		{mcast.Config("chain", 4, 1, 1), 0},
		{mcast.Config("chain", 5, 1, 1), 0},
		{variant(mcast.Config("binary", 4, 1, 1), "early-release"), 0},
		{ucast.Config(3, 1, 1), 0},
		{variant(ucast.Config(3, 1, 2), ucast.NoCreditReturn), 0},
		{variant(ucast.Config(3, 1, 2), ucast.NoCreditCheck), 0},
	}
	if testing.Short() {
		// CI runs the short tests under the race detector.
		cases[0].limit, cases[1].cfg = 10_000, mcast.Config("binary", 3, 1, 1)
	}
	for _, c := range cases {
		want := map[int]string{}
		for _, cache := range cacheSettings {
			for _, workers := range []int{1, 3} {
				if c.limit > 0 && workers > 1 {
					continue
				}
				restore := explore.SetSuccCache(cache.from, cache.bits, cache.ring)
				ck, err := protocols.Build(c.cfg)
				if err != nil {
					restore()
					t.Fatal(err)
				}
				r, err := explore.BFS(ck, explore.Options{MaxStates: c.limit, Workers: workers})
				restore()
				if err != nil {
					t.Fatal(err)
				}
				got := fmt.Sprintf("%s %d states %d transitions depth %d trace %v", r.Verdict, r.Stats.States, r.Stats.Transitions, r.Stats.Depth, r.Trace)
				if r.Violation != nil {
					got += " " + r.Violation.Error()
				}
				if w, ok := want[0]; !ok {
					want[0] = got
				} else if got != w {
					t.Fatalf("%s with the cache %+v, %d workers: %s\nwithout: %s", c.cfg.Params.Describe(), cache, workers, got, w)
				}
			}
		}
		t.Logf("%s: %.70s", c.cfg.Params.Describe(), want[0])
	}
}

// torus is a toy model with back edges (unlike LFC's protocols, whose
// successors are almost never states of earlier levels): states (x, y)
// mod n, actions x+1, y+1 and x-1, and a bad state to reach.
type torus struct{ n, badX, badY byte }

type torusBad struct{}

func (torusBad) Error() string        { return "bad state" }
func (torusBad) PropertyName() string { return "toy" }

func (t torus) Initial() ([]byte, error) { return []byte{0, 0}, nil }

func (t torus) Successors(s []byte, visit func(uint32, []byte, error) bool) error {
	x, y := s[0], s[1]
	for code, next := range [][2]byte{{(x + 1) % t.n, y}, {x, (y + 1) % t.n}, {(x + t.n - 1) % t.n, y}} {
		var err error
		if next == [2]byte{t.badX, t.badY} {
			err = torusBad{}
		}
		if !visit(uint32(code), next[:], err) {
			return nil
		}
	}
	return nil
}

func (t torus) NewWorker() explore.Model { return t }

// TestSuccCacheBackEdges is TestSuccCacheKeepsResults on a model whose
// successors are often states of earlier levels, which a cache entry
// must not be taken for (its level entry is gone).
func TestSuccCacheBackEdges(t *testing.T) {
	for _, m := range []torus{{n: 70, badX: 200}, {n: 70, badX: 41, badY: 23}} {
		want := ""
		for _, cache := range cacheSettings {
			for _, workers := range []int{1, 3} {
				for range 3 {
					restore := explore.SetSuccCache(cache.from, cache.bits, cache.ring)
					r, err := explore.BFS(m, explore.Options{Workers: workers})
					restore()
					if err != nil {
						t.Fatal(err)
					}
					got := fmt.Sprintf("%s %d states %d transitions depth %d trace %v", r.Verdict, r.Stats.States, r.Stats.Transitions, r.Stats.Depth, r.Trace)
					if want == "" {
						want = got
					} else if got != want {
						t.Fatalf("%+v with the cache %+v, %d workers: %s\nwithout: %s", m, cache, workers, got, want)
					}
				}
			}
		}
		t.Log(want)
	}
}
