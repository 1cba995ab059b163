package explore

import "fmt"

// fairPart is the fair part of a top-level component: the whole component
// (member nil) or a sub-component (member its states).
type fairPart struct {
	nodes  []uint32
	member map[uint32]bool
}

// acyclic checks the model's promise that the graph has no cycle (Kahn's
// algorithm: repeatedly remove states nothing points to).
func (lc *liveCheck) acyclic() error {
	g, n := lc.g, lc.g.n()
	in := make([]int32, n)
	for e := int64(0); e < g.edges(); e++ {
		in[g.to.at(e)]++
	}
	var free []uint32
	for v := 0; v < n; v++ {
		if in[v] == 0 {
			free = append(free, uint32(v))
		}
	}
	removed := 0
	for len(free) > 0 {
		if err := lc.tick(); err != nil {
			return err
		}
		v := free[len(free)-1]
		free = free[:len(free)-1]
		removed++
		lo, hi := g.edgesOf(v)
		for e := lo; e < hi; e++ {
			w := g.to.at(e)
			if in[w]--; in[w] == 0 {
				free = append(free, w)
			}
		}
	}
	if removed < n {
		return fmt.Errorf("explore: the model declares its state graph acyclic, but %d of its %d states lie on or behind a cycle", n-removed, n)
	}
	return nil
}

// emitTop records a top-level component of bad states.
func (lc *liveCheck) emitTop(c []uint32) error {
	id := int32(len(lc.reach))
	k, whole, err := lc.fairCycle(c, func(v uint32) bool { return lc.top.comp(v) == id })
	if err != nil {
		return err
	}
	ok := k != nil
	if ok {
		fp := fairPart{nodes: append([]uint32(nil), k...)}
		if !whole {
			fp.member = make(map[uint32]bool, len(k))
			for _, v := range k {
				fp.member[v] = true
			}
		}
		lc.fairSet[id] = fp
		if lo, hi := lc.edges(c[0]); lc.live.Acyclic && !(len(c) == 1 && lo == hi) {
			return fmt.Errorf("explore: the model declares its state graph acyclic, but it has a cycle through %d states", len(c))
		}
	}
	for _, v := range c {
		if ok {
			break
		}
		lo, hi := lc.edges(v)
		for e := lo; e < hi; e++ {
			if cw := lc.top.comp(lc.to(v, e)); cw >= 0 && cw != id && lc.reach[cw] {
				ok = true
				break
			}
		}
	}
	lc.reach = append(lc.reach, ok)
	return nil
}

// fairCycle returns the states of a fair part of component c (members in):
// c itself (whole) when it is a terminal state or holds a fair cycle
// through all of it, a sub-component when only one avoiding strongly fair
// classes it cannot meet is fair, and nil when it has no fair cycle.
func (lc *liveCheck) fairCycle(c []uint32, in func(uint32) bool) (k []uint32, whole bool, err error) {
	inner := false
	for _, v := range c {
		lo, hi := lc.edges(v)
		for e := lo; e < hi && !inner; e++ {
			inner = in(lc.to(v, e))
		}
	}
	var ends []uint32 // states a run may stay in for ever
	for _, v := range c {
		if lc.endState(v) {
			ends = append(ends, v)
		}
	}
	if ends != nil {
		return ends, len(ends) == len(c), nil
	}
	if !inner {
		return nil, false, nil
	}
	lc.judge(c, in)
	var strongBad []bool
	for k, fc := range lc.live.Classes {
		switch {
		case !fc.Strong && lc.enabled[k] == len(c) && !lc.taken[k]:
			return nil, false, nil // enabled throughout, never taken: no fair cycle in c
		case fc.Strong && lc.enabled[k] > 0 && !lc.taken[k]:
			if strongBad == nil {
				strongBad = make([]bool, len(lc.live.Classes))
			}
			strongBad[k] = true
		}
	}
	if strongBad == nil {
		return c, true, nil
	}
	var rest []uint32
	for _, v := range c {
		keep := true
		lo, hi := lc.edges(v)
		for e := lo; e < hi && keep; e++ {
			if k := lc.class(v, e); k >= 0 && strongBad[k] {
				keep = false
			}
		}
		if keep {
			rest = append(rest, v)
		}
	}
	if len(rest) == 0 {
		return nil, false, nil
	}
	lc.sub.reset(lc.n(), rest)
	member := make(map[uint32]bool, len(rest))
	for _, v := range rest {
		member[v] = true
	}
	isMember := func(v uint32) bool { return member[v] }
	var parts [][]uint32
	for _, r := range rest {
		if !lc.sub.visited(r) {
			if err := lc.sub.run(lc, r, isMember, func(p []uint32) error {
				parts = append(parts, append([]uint32(nil), p...))
				return nil
			}); err != nil {
				return nil, false, err
			}
		}
	}
	for _, p := range parts {
		pm := make(map[uint32]bool, len(p))
		for _, v := range p {
			pm[v] = true
		}
		k, _, err := lc.fairCycle(p, func(v uint32) bool { return pm[v] })
		if err != nil || k != nil {
			return k, false, err
		}
	}
	return nil, false, nil
}

// endState reports whether a run may stay in state v for ever: nothing is
// enabled there or, with Stutter, nothing with a fairness class.
func (lc *liveCheck) endState(v uint32) bool {
	lo, hi := lc.edges(v)
	if lo == hi {
		return true
	}
	if !lc.live.Stutter {
		return false
	}
	for e := lo; e < hi; e++ {
		if lc.class(v, e) >= 0 {
			return false
		}
	}
	return true
}

// judge counts, per fairness class, the states of c where it is enabled
// and whether an edge inside c (members in) takes it.
func (lc *liveCheck) judge(c []uint32, in func(uint32) bool) {
	nc := len(lc.live.Classes)
	if lc.enabled == nil {
		lc.enabled, lc.taken, lc.stampC = make([]int, nc), make([]bool, nc), make([]int, nc)
	}
	for k := range lc.enabled {
		lc.enabled[k], lc.taken[k], lc.stampC[k] = 0, false, -1
	}
	for i, v := range c {
		lo, hi := lc.edges(v)
		for e := lo; e < hi; e++ {
			k := lc.class(v, e)
			if k < 0 {
				continue
			}
			if lc.stampC[k] != i {
				lc.stampC[k] = i
				lc.enabled[k]++
			}
			if in(lc.to(v, e)) {
				lc.taken[k] = true
			}
		}
	}
}
