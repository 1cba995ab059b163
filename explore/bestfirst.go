package explore

import (
	"container/heap"
	"errors"
	"fmt"
	"time"
)

// Directed model checking (as HSF-SPIN does): a best-first search expands
// first the open state that a heuristic rates highest, so that a search for
// a violation the heuristic points at (a deadlock whose cycle of buffers
// fills) gets there after few states. It stores every state it generates,
// as DFS does, in the exact store; the open set is a heap of state ids,
// each read back from the store when it is expanded. Every state generated
// is expanded unless a limit ends the search first, so a search that
// finishes without a violation has explored the whole reachable graph and
// passes. Counterexamples follow the parents that first reached each
// state: they are neither shortest nor the ones BFS or DFS would give.

// openEntry is a state waiting for expansion: its heuristic value, its
// depth and its id (the order of first generation).
type openEntry struct {
	h     int
	depth int32
	id    uint32
}

// openHeap orders open states: higher h first, then smaller depth (or,
// with deep, greater depth), then smaller id, so that a search is
// deterministic.
type openHeap struct {
	e    []openEntry
	deep bool
}

func (o *openHeap) Len() int { return len(o.e) }
func (o *openHeap) Less(i, j int) bool {
	a, b := &o.e[i], &o.e[j]
	if a.h != b.h {
		return a.h > b.h
	}
	if a.depth != b.depth {
		return (a.depth < b.depth) != o.deep
	}
	return a.id < b.id
}
func (o *openHeap) Swap(i, j int) { o.e[i], o.e[j] = o.e[j], o.e[i] }
func (o *openHeap) Push(x any)    { o.e = append(o.e, x.(openEntry)) }
func (o *openHeap) Pop() any {
	x := o.e[len(o.e)-1]
	o.e = o.e[:len(o.e)-1]
	return x
}

// BestFirst explores m best first: among the states generated and not yet
// expanded, it expands one with the highest h (ties: the smaller depth,
// then the state generated first). h is called once per state stored,
// after the expansion that generated it, with the state's encoding (valid
// only during the call; h may decode it with a model of its own, not with
// m's scratch if m has any). It needs the exact store (Options.Fingerprint
// is refused), ignores Workers, sleep sets, checkpoints and liveness, and
// honours MaxStates, MaxDepth (states at that depth are not expanded: the
// search is then Incomplete), Timeout, MaxMemory and Stop, and prints
// progress lines to Progress. A search that ends without a violation or a
// limit is exhaustive and passes.
func BestFirst(m Model, opt Options, h func(state []byte) int) (Result, error) {
	return bestFirst(m, opt, h, false)
}

// BestFirstDeep is BestFirst with ties broken the other way: among the
// open states with the highest h, the deepest first (then the state
// generated first). A heuristic with plateaus (many states rated alike,
// as counts of packets are) then follows one path across a plateau, as
// DFS would, instead of exploring the plateau level by level: lfccheck
// trees' deadlock search on App. A.2's groups (C=1, one packet cast in each
// group) stores 117 states instead of 10,973, a chain of 4 NIs with C=4
// and K=3 169 instead of 295. It is as exhaustive, limited and
// deterministic as BestFirst; its counterexamples are longer.
func BestFirstDeep(m Model, opt Options, h func(state []byte) int) (Result, error) {
	return bestFirst(m, opt, h, true)
}

func bestFirst(m Model, opt Options, h func(state []byte) int, deep bool) (Result, error) {
	if opt.Fingerprint {
		return Result{}, errors.New("explore: best-first search needs the exact store (it reads open states back from it)")
	}
	if h == nil {
		return Result{}, errors.New("explore: best-first search needs a heuristic")
	}
	exact := &ExactStore{}
	s := &search{m: m, opt: opt, start: time.Now(), store: exact}
	s.runStart = s.start
	init, verr := m.Initial()
	s.add(init, noParent, 0)
	if verr != nil {
		return s.fail(verr, nil)
	}
	open := &openHeap{e: []openEntry{{h: h(init), depth: 0, id: 0}}, deep: deep}
	var kids []uint32
	var violation error
	var vcode uint32
	var limit string // why the search stopped while storing successors
	var buf []byte
	cut := false // a state at MaxDepth was left unexpanded
	steps := 0
	every := opt.progressEvery()
	lastProgress := s.start
	for open.Len() > 0 {
		steps++
		if steps&15 == 0 { // (an expansion of a large model takes long: check the limits often)
			if r, stop := s.checkLimits(s.store.Len() - open.Len()); stop {
				r.Reason += " (best-first)"
				return r, nil
			}
			if opt.Progress != nil && time.Since(lastProgress) >= every {
				lastProgress = time.Now()
				fmt.Fprintf(opt.Progress, "progress: best-first: %d states stored, %d to expand, depth %d, best rating %d, heap %s, %s\n",
					s.store.Len(), open.Len(), s.depth, open.e[0].h, FormatBytes(s.sampleMemory(false)), time.Since(s.start).Round(time.Second))
			}
		}
		e := heap.Pop(open).(openEntry)
		if s.opt.MaxDepth > 0 && int(e.depth) >= s.opt.MaxDepth {
			cut = true // not expanded: the search is cut (reported below)
			continue
		}
		// Copied: expanding stores successors, which may move the store's
		// bytes.
		buf = append(buf[:0], exact.State(int(e.id))...)
		kids = kids[:0]
		err := m.Successors(buf, func(code uint32, b []byte, err error) bool {
			s.transitions++
			if err != nil {
				violation, vcode = err, code
				return false
			}
			kid, fresh, lim := s.storeNew(b, e.id, code)
			if lim != "" {
				limit = fmt.Sprintf("%s with %d states unexplored (best-first)", lim, open.Len()+len(kids)+1)
				return false
			}
			if fresh {
				kids = append(kids, kid)
			}
			return true
		})
		if violation != nil {
			return s.fail(violation, s.trace(e.id, []uint32{vcode}))
		}
		if err != nil {
			return s.fail(err, s.trace(e.id, nil))
		}
		if limit != "" {
			return s.finish(Incomplete, limit), nil
		}
		if len(kids) > 0 && int(e.depth)+1 > s.depth {
			s.depth = int(e.depth) + 1
		}
		for _, id := range kids {
			heap.Push(open, openEntry{h: h(exact.State(int(id))), depth: e.depth + 1, id: id})
		}
	}
	if cut {
		return s.finish(Incomplete, fmt.Sprintf("depth limit %d reached (best-first: states at that depth were not expanded)", s.opt.MaxDepth)), nil
	}
	return s.finish(Pass, ""), nil
}
