package explore

import (
	"errors"
	"fmt"
	"math/rand"
	"time"
)

// Bug hunting past the exhaustive frontier. BFS needs its whole frontier in
// memory and finds a deep violation only after every shallower state. DFS
// follows one path at a time (with the same visited stores and limits) and
// finds deep violations after few states; its counterexamples are not
// shortest. Random walks explore without a visited set of states to
// expand, reproducibly from a seed, and report how many distinct states
// they saw. Both can be divided into shards (Hunt.Shard) that independent
// processes run: a swarm. Only an exhaustive DFS that is not a shard can
// report Pass; random walks and shards end as Incomplete unless they find
// a violation.

// Hunt configures DFS and random walks.
type Hunt struct {
	// Seed makes the run reproducible: it orders DFS successors (0 keeps
	// the model's order) and seeds every walk.
	Seed int64
	// Walks is the number of random walks (of this shard); each stops at
	// Options.MaxDepth (required) or at a state without successors. 0
	// walks until a limit of Options ends the search (Timeout, MaxStates,
	// which counts the distinct states the walks saw, MaxMemory or Stop),
	// as the simulation modes of SPIN and TLC run until stopped.
	Walks int
	// Shard I of N: DFS shard I perturbs the successor order with a
	// generator seeded from (Seed, I); random walks are numbered and shard
	// I runs those with number % N == I. N 0 means no sharding.
	Shard, Shards int
}

// HuntStats extend Stats for hunts.
type HuntStats struct {
	Walks    int64   `json:"walks,omitempty"`
	WalksPer float64 `json:"walks_per_s,omitempty"`
	// Coverage is the number of distinct states the walks saw (exact for
	// DFS, by 64-bit fingerprint for walks).
	Coverage int64 `json:"coverage"`
}

// DFS explores m depth first. Without sharding, a search that finishes
// is exhaustive and may Pass; a shard never does.
func DFS(m Model, opt Options, h Hunt) (Result, error) {
	s := &search{m: m, opt: opt, start: time.Now(), store: &ExactStore{}}
	if opt.Fingerprint {
		s.store = &FingerprintStore{NoStates: true} // states are regenerated
	}
	var rng *rand.Rand
	if h.Seed != 0 || h.Shards > 0 {
		rng = rand.New(rand.NewSource(h.Seed*1_000_003 + int64(h.Shard)))
	}
	init, verr := m.Initial()
	s.add(init, noParent, 0)
	if verr != nil {
		return s.fail(verr, nil)
	}
	// The stack holds state ids, not states: a state is stored when it is
	// first generated, and read back from the exact store when it is
	// expanded, so that the stack costs 4 bytes per pending successor
	// instead of a copy of it. A fingerprint store keeps no states: a frame
	// then keeps its own state and its new successors' action codes, and
	// a successor is generated again from it when its turn comes.
	exact, _ := s.store.(*ExactStore)
	type frame struct {
		id    uint32
		kids  []uint32 // successors first stored by this frame's expansion
		codes []uint32 // fingerprint store: their action codes
		state []byte   // fingerprint store: this frame's state
		next  int
	}
	var stack []frame
	var violation error
	var vcode uint32
	var limit string // why the search stopped while storing successors
	expand := func(id uint32, state []byte, depth int) (frame, error) {
		f := frame{id: id}
		err := m.Successors(state, func(code uint32, b []byte, err error) bool {
			s.transitions++
			if err != nil {
				violation, vcode = err, code
				return false
			}
			kid, fresh, lim := s.storeNew(b, id, code)
			if lim != "" {
				limit = lim + " (depth-first: the rest of the graph is unexplored)"
				return false
			}
			if !fresh {
				return true
			}
			f.kids = append(f.kids, kid)
			if exact == nil {
				f.codes = append(f.codes, code)
			}
			return true
		})
		if exact == nil && len(f.kids) > 0 {
			f.state = append([]byte(nil), state...)
		}
		if len(f.kids) > 0 && depth+1 > s.depth {
			s.depth = depth + 1
		}
		if rng != nil && len(f.kids) > 1 && rng.Intn(8) == 0 {
			// A mild perturbation of the model's order: in one state of
			// eight, another successor goes first. Full shuffles wander
			// far from the order in which protocols list useful steps.
			j := 1 + rng.Intn(len(f.kids)-1)
			f.kids[0], f.kids[j] = f.kids[j], f.kids[0]
			if f.codes != nil {
				f.codes[0], f.codes[j] = f.codes[j], f.codes[0]
			}
		}
		return f, err
	}
	// kidState puts the state of f's k-th new successor into buf.
	kidState := func(f *frame, k int, buf []byte) ([]byte, error) {
		if exact != nil {
			// Copied: expanding stores successors, which may move the
			// store's bytes.
			return append(buf[:0], exact.State(int(f.kids[k]))...), nil
		}
		found := false
		err := m.Successors(f.state, func(code uint32, b []byte, err error) bool {
			if code == f.codes[k] && err == nil {
				buf, found = append(buf[:0], b...), true
				return false
			}
			return true
		})
		if err == nil && !found {
			err = fmt.Errorf("explore: the model did not generate action %d again from the same state", f.codes[k])
		}
		return buf, err
	}
	cut := false // a state at MaxDepth was left unexpanded
	f, err := expand(0, init, 0)
	if violation != nil {
		return s.fail(violation, []uint32{vcode})
	}
	if err != nil {
		return s.fail(err, nil)
	}
	if limit != "" {
		return s.finish(Incomplete, limit), nil
	}
	stack = append(stack, f)
	steps := 0
	var buf []byte
	for len(stack) > 0 {
		steps++
		if steps&255 == 0 {
			if r, stop := s.checkLimits(0); stop {
				r.Reason = dfsReason(r.Reason)
				return r, nil
			}
		}
		top := &stack[len(stack)-1]
		if top.next == len(top.kids) {
			stack = stack[:len(stack)-1]
			continue
		}
		k := top.next
		id := top.kids[k]
		top.next++
		if s.opt.MaxDepth > 0 && len(stack) >= s.opt.MaxDepth {
			cut = true // not expanded: the search is cut (reported below)
			continue
		}
		if buf, err = kidState(top, k, buf); err != nil {
			return Result{}, err
		}
		if top.next == len(top.kids) {
			top.state = nil // every successor taken
		}
		nf, err := expand(id, buf, len(stack))
		if violation != nil {
			return s.fail(violation, s.trace(id, []uint32{vcode}))
		}
		if err != nil {
			return s.fail(err, s.trace(id, nil))
		}
		if limit != "" {
			return s.finish(Incomplete, limit), nil
		}
		stack = append(stack, nf)
	}
	if cut {
		return s.finish(Incomplete, fmt.Sprintf("depth limit %d reached (depth-first: states at that depth were not expanded)", s.opt.MaxDepth)), nil
	}
	if h.Shards > 0 {
		return s.finish(Incomplete, fmt.Sprintf("no violation found by DFS shard %d/%d (%d states); a shard never proves anything", h.Shard, h.Shards, s.store.Len())), nil
	}
	return s.finish(Pass, ""), nil
}

func dfsReason(r string) string {
	return firstClause(r) + " (depth-first: the rest of the graph is unexplored)"
}

// Random runs random walks. It never passes: without a violation the
// result is Incomplete with the walks' coverage.
func Random(m Model, opt Options, h Hunt) (Result, HuntStats, error) {
	var hs HuntStats
	if opt.MaxDepth <= 0 {
		return Result{}, hs, errors.New("explore: random walks need a depth bound (Options.MaxDepth)")
	}
	if h.Walks < 0 {
		return Result{}, hs, errors.New("explore: a negative number of random walks")
	}
	s := &search{m: m, opt: opt, start: time.Now(), store: &FingerprintStore{}}
	seen := &fpSet{} // coverage
	init, verr := m.Initial()
	if verr != nil {
		s.add(init, noParent, 0)
		r, err := s.fail(verr, nil)
		return r, hs, err
	}
	type succ struct {
		code  uint32
		state []byte
	}
	var succs []succ
	var buf []byte
	shards := max(h.Shards, 1)
	every := opt.progressEvery()
	lastProgress := time.Now()
	// limits ends the walks at a limit of opt; it is checked every 16
	// walks and every 16 steps of a walk (long walks of large models).
	limits := func() (Result, bool) {
		r, stop := s.checkLimits(0)
		if !stop && opt.MaxStates > 0 && int64(seen.n) >= opt.MaxStates {
			r, stop = s.finish(Incomplete, fmt.Sprintf("state limit %d reached", opt.MaxStates)), true
		}
		if stop {
			r.Reason = fmt.Sprintf("%s after %d walks of depth at most %d (%d distinct states seen); random walks never prove anything", firstClause(r.Reason), hs.Walks, opt.MaxDepth, seen.n)
			hs.Coverage = int64(seen.n)
			r.Stats.States = int64(seen.n)
			if sec := r.Stats.Elapsed.Seconds(); sec > 0 {
				r.Stats.StatesPerSec, hs.WalksPer = float64(seen.n)/sec, float64(hs.Walks)/sec
			}
		}
		return r, stop
	}
	for k := 0; h.Walks == 0 || k < h.Walks; k++ {
		if k&15 == 0 {
			if r, stop := limits(); stop {
				return r, hs, nil
			}
			if opt.Progress != nil && time.Since(lastProgress) >= every {
				lastProgress = time.Now()
				sec := time.Since(s.start).Seconds()
				fmt.Fprintf(opt.Progress, "progress: %d random walks, %d distinct states seen, %.0f walks/s, heap %s, %s\n",
					hs.Walks, seen.n, float64(hs.Walks)/sec, FormatBytes(s.sampleMemory(false)), time.Since(s.start).Round(time.Second))
			}
		}
		walk := int64(k*shards + h.Shard)
		rng := rand.New(rand.NewSource(h.Seed*1_000_003 + walk))
		state := append(buf[:0], init...)
		var trace []uint32
		seen.insert(Hash(state), 0)
		for depth := 0; depth < opt.MaxDepth; depth++ {
			if depth&15 == 15 {
				if r, stop := limits(); stop {
					return r, hs, nil
				}
			}
			succs = succs[:0]
			var violation error
			var vcode uint32
			err := m.Successors(state, func(code uint32, b []byte, err error) bool {
				s.transitions++
				if err != nil {
					violation, vcode = err, code
					return false
				}
				succs = append(succs, succ{code, append([]byte(nil), b...)})
				return true
			})
			if violation != nil || err != nil {
				if violation != nil {
					err, trace = violation, append(trace, vcode)
				}
				r, ferr := s.failTrace(err, trace)
				hs.Walks++
				hs.Coverage = int64(seen.n)
				r.Stats.States = int64(seen.n)
				if sec := r.Stats.Elapsed.Seconds(); sec > 0 {
					r.Stats.StatesPerSec, hs.WalksPer = float64(seen.n)/sec, float64(hs.Walks)/sec
				}
				return r, hs, ferr
			}
			if len(succs) == 0 {
				break
			}
			pick := succs[rng.Intn(len(succs))]
			trace = append(trace, pick.code)
			state = append(state[:0], pick.state...)
			seen.insert(Hash(state), 0)
			if depth+1 > s.depth {
				s.depth = depth + 1
			}
		}
		buf = state
		hs.Walks++
	}
	r := s.finish(Incomplete, fmt.Sprintf("no violation found in %d random walks of depth at most %d (%d distinct states seen); random walks never prove anything", hs.Walks, opt.MaxDepth, seen.n))
	r.Stats.States = int64(seen.n)
	hs.Coverage = int64(seen.n)
	if sec := r.Stats.Elapsed.Seconds(); sec > 0 {
		r.Stats.StatesPerSec, hs.WalksPer = float64(seen.n)/sec, float64(hs.Walks)/sec
	}
	return r, hs, nil
}

func firstClause(s string) string {
	for i := 0; i+5 < len(s); i++ {
		if s[i:i+5] == " with" {
			return s[:i]
		}
	}
	return s
}

// failTrace is fail for a violation found on an explicit path.
func (s *search) failTrace(err error, trace []uint32) (Result, error) {
	r, e := s.fail(err, trace)
	if e == nil {
		r.Stats.Depth = len(trace)
	}
	return r, e
}
