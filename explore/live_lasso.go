package explore

import (
	"errors"
	"fmt"
)

type lasso struct {
	viol  *LiveViolation
	trace []uint32
	loop  int
}

// step is an edge of a path: edge e of state from.
type step struct {
	from uint32
	e    int64
}

// bfs finds a shortest path from src through states allowed by ok to a
// state target accepts (src itself included) and returns its edges.
func (lc *liveCheck) bfs(src uint32, ok func(uint32) bool, target func(uint32) bool) []step {
	if lc.stamp == nil {
		lc.stamp, lc.par = make([]uint32, lc.n()), make([]uint32, lc.n())
	}
	lc.gen++
	lc.stamp[src] = lc.gen
	queue := []uint32{src}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		if target(u) {
			var rev []step
			for u != src {
				p := lc.par[u]
				e, _ := lc.edges(p)
				for lc.to(p, e) != u {
					e++
				}
				rev = append(rev, step{p, e})
				u = p
			}
			path := make([]step, len(rev))
			for i := range rev {
				path[i] = rev[len(rev)-1-i]
			}
			return path
		}
		lo, hi := lc.edges(u)
		for e := lo; e < hi; e++ {
			if w := lc.to(u, e); lc.stamp[w] != lc.gen && ok(w) {
				lc.stamp[w], lc.par[w] = lc.gen, u
				queue = append(queue, w)
			}
		}
	}
	return nil
}

// lasso builds the counterexample of property p from start.
func (lc *liveCheck) lasso(p LiveProp, start uint32) (*lasso, error) {
	var trace []uint32
	if lc.cv == nil {
		var err error
		if trace, err = lc.s.traceTo(start); err != nil {
			return nil, err
		}
	} else {
		// A shortest path of the cover from (initial, identity): the
		// search's parents are those of representatives.
		pre := lc.bfs(0, func(uint32) bool { return true }, func(u uint32) bool { return u == start })
		if pre == nil && start != 0 {
			return nil, errors.New("explore: liveness: no path in the cover to the state the analysis found")
		}
		for _, st := range pre {
			trace = append(trace, lc.code(st.from, st.e))
		}
	}
	inFair := func(v uint32) bool {
		cv := lc.top.comp(v)
		if cv < 0 {
			return false
		}
		fp, ok := lc.fairSet[cv]
		return ok && (fp.member == nil || fp.member[v])
	}
	path := lc.bfs(start, lc.bad, inFair)
	if path == nil && !inFair(start) {
		return nil, errors.New("explore: liveness: no path to the fair component that the analysis found")
	}
	entry := start
	for _, st := range path {
		trace = append(trace, lc.code(st.from, st.e))
		entry = lc.to(st.from, st.e)
	}
	return lc.closeLasso(p, trace, entry, len(trace)-len(path))
}

// closeLasso ends the counterexample of property p whose trace reaches
// entry, a state of a fair component, the goal failing from step from on:
// the run stays in entry if it is an end state, else it repeats a loop
// through entry that meets every fairness obligation.
func (lc *liveCheck) closeLasso(p LiveProp, trace []uint32, entry uint32, from int) (*lasso, error) {
	if lc.endState(entry) {
		return &lasso{viol: &LiveViolation{p.Name, fmt.Sprintf("a run stays for ever in its state after step %d and the goal never holds from step %d on", len(trace), from)}, trace: trace}, nil
	}
	loop, err := lc.loop(lc.fairSet[lc.top.comp(entry)].nodes, entry)
	if err != nil {
		return nil, err
	}
	for _, st := range loop {
		trace = append(trace, lc.code(st.from, st.e))
	}
	return &lasso{viol: &LiveViolation{p.Name, fmt.Sprintf("a fair loop of %d steps repeats for ever and the goal never holds from step %d on", len(loop), from)},
		trace: trace, loop: len(loop)}, nil
}

// loop builds a cycle through entry inside the fair component k that meets
// every fairness obligation.
func (lc *liveCheck) loop(k []uint32, entry uint32) ([]step, error) {
	member := make(map[uint32]bool, len(k))
	for _, v := range k {
		member[v] = true
	}
	in := func(v uint32) bool { return member[v] }
	lc.judge(k, in)
	nc := len(lc.live.Classes)
	// mustTake: the loop must take the class; mayVisit: visiting a state
	// where it is disabled also meets it.
	met := make([]bool, nc)
	mayVisit := make([]bool, nc)
	for c, fc := range lc.live.Classes {
		switch {
		case lc.enabled[c] == 0:
			met[c] = true
		case fc.Strong:
			// after refinement a strongly fair class enabled in k is
			// taken inside k: take it.
		case lc.enabled[c] < len(k):
			mayVisit[c] = true
		}
	}
	enabledAt := func(v uint32, c int) bool {
		lo, hi := lc.edges(v)
		for e := lo; e < hi; e++ {
			if lc.class(v, e) == c {
				return true
			}
		}
		return false
	}
	note := func(v uint32) {
		for c := range met {
			if !met[c] && mayVisit[c] && !enabledAt(v, c) {
				met[c] = true
			}
		}
	}
	// wanted returns an inner edge of v whose class is still unmet, or -1.
	wanted := func(v uint32) int64 {
		lo, hi := lc.edges(v)
		for e := lo; e < hi; e++ {
			if c := lc.class(v, e); c >= 0 && !met[c] && in(lc.to(v, e)) {
				return e
			}
		}
		return -1
	}
	allMet := func() bool {
		for _, m := range met {
			if !m {
				return false
			}
		}
		return true
	}
	var loop []step
	cur := entry
	note(cur)
	for !allMet() {
		if err := lc.tick(); err != nil {
			return nil, err
		}
		p := lc.bfs(cur, in, func(u uint32) bool {
			if wanted(u) >= 0 {
				return true
			}
			for c := range met {
				if !met[c] && mayVisit[c] && !enabledAt(u, c) {
					return true
				}
			}
			return false
		})
		if p == nil && (wanted(cur) < 0) {
			return nil, errors.New("explore: liveness: a fairness obligation cannot be met in a component judged fair")
		}
		for _, st := range p {
			loop = append(loop, st)
			if c := lc.class(st.from, st.e); c >= 0 {
				met[c] = true
			}
			cur = lc.to(st.from, st.e)
			note(cur)
		}
		if e := wanted(cur); e >= 0 {
			loop = append(loop, step{cur, e})
			met[lc.class(cur, e)] = true
			cur = lc.to(cur, e)
			note(cur)
		}
	}
	if len(loop) == 0 {
		lo, hi := lc.edges(entry)
		for e := lo; e < hi; e++ {
			if in(lc.to(entry, e)) {
				loop = append(loop, step{entry, e})
				cur = lc.to(entry, e)
				break
			}
		}
	}
	back := lc.bfs(cur, in, func(u uint32) bool { return u == entry })
	if back == nil && cur != entry {
		return nil, errors.New("explore: liveness: the fair component is not strongly connected")
	}
	return append(loop, back...), nil
}
