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

// bfs finds a shortest path from src through states allowed by ok to a
// state target accepts (src itself included) and returns its edges.
func (lc *liveCheck) bfs(src uint32, ok func(uint32) bool, target func(uint32) bool) []int64 {
	g := lc.g
	if lc.stamp == nil {
		lc.stamp, lc.par = make([]uint32, g.n()), make([]uint32, g.n())
	}
	lc.gen++
	lc.stamp[src] = lc.gen
	queue := []uint32{src}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		if target(u) {
			var rev []int64
			for u != src {
				p := lc.par[u]
				e := g.off[p]
				for g.to[e] != u {
					e++
				}
				rev = append(rev, e)
				u = p
			}
			path := make([]int64, len(rev))
			for i := range rev {
				path[i] = rev[len(rev)-1-i]
			}
			return path
		}
		for e := g.off[u]; e < g.off[u+1]; e++ {
			if w := g.to[e]; lc.stamp[w] != lc.gen && ok(w) {
				lc.stamp[w], lc.par[w] = lc.gen, u
				queue = append(queue, w)
			}
		}
	}
	return nil
}

// lasso builds the counterexample of property p from start.
func (lc *liveCheck) lasso(p LiveProp, start uint32) (*lasso, error) {
	g := lc.g
	trace, err := lc.s.traceTo(start)
	if err != nil {
		return nil, err
	}
	inFair := func(v uint32) bool {
		if lc.comp[v] < 0 {
			return false
		}
		fp, ok := lc.fairSet[lc.comp[v]]
		return ok && (fp.member == nil || fp.member[v])
	}
	path := lc.bfs(start, lc.bad, inFair)
	if path == nil && !inFair(start) {
		return nil, errors.New("explore: liveness: no path to the fair component that the analysis found")
	}
	entry := start
	for _, e := range path {
		trace = append(trace, g.code[e])
		entry = g.to[e]
	}
	k := lc.fairSet[lc.comp[entry]].nodes
	from := len(trace) - len(path)
	if lc.endState(entry) {
		return &lasso{viol: &LiveViolation{p.Name, fmt.Sprintf("a run stays for ever in its state after step %d and the goal never holds from step %d on", len(trace), from)}, trace: trace}, nil
	}
	loop, err := lc.loop(k, entry)
	if err != nil {
		return nil, err
	}
	for _, e := range loop {
		trace = append(trace, g.code[e])
	}
	return &lasso{viol: &LiveViolation{p.Name, fmt.Sprintf("a fair loop of %d steps repeats for ever and the goal never holds from step %d on", len(loop), from)},
		trace: trace, loop: len(loop)}, nil
}

// loop builds a cycle through entry inside the fair component k that meets
// every fairness obligation.
func (lc *liveCheck) loop(k []uint32, entry uint32) ([]int64, error) {
	g := lc.g
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
		for e := g.off[v]; e < g.off[v+1]; e++ {
			if lc.live.ClassOf(g.code[e]) == c {
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
		for e := g.off[v]; e < g.off[v+1]; e++ {
			if c := lc.live.ClassOf(g.code[e]); c >= 0 && !met[c] && in(g.to[e]) {
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
	var loop []int64
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
		for _, e := range p {
			loop = append(loop, e)
			if c := lc.live.ClassOf(g.code[e]); c >= 0 {
				met[c] = true
			}
			cur = g.to[e]
			note(cur)
		}
		if e := wanted(cur); e >= 0 {
			loop = append(loop, e)
			met[lc.live.ClassOf(g.code[e])] = true
			cur = g.to[e]
			note(cur)
		}
	}
	if len(loop) == 0 {
		for e := g.off[entry]; e < g.off[entry+1]; e++ {
			if in(g.to[e]) {
				loop = append(loop, e)
				cur = g.to[e]
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
