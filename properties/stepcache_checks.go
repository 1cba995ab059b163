package properties

import (
	"fmt"
	"slices"
	"unsafe"

	"lfccheck/model"
)

// The checks that read one node alone are memoized with the step cache's
// entries (stepcache.go): a NodeLocal property's Local at node j, and a
// Conservation's Bounds and the node's terms of its sums, read only node
// j's own state and the configuration (model.Property), and where a
// cached step made node j's present state in the successor being built,
// that state is the entry's node. So each entry remembers, from its
// first use on, which of those Locals and Bounds hold at its node and
// the node's terms; a step served from the entry then takes them instead
// of calling the property again. Only "holds" is remembered: a check
// that failed is run again (for its message). In the stubborn-set form
// check (checkForms), a changed node's terms before the step are those
// of the state being expanded, the same for all of its successors: they
// are computed once per expanded state (with or without the cache).
//
// An entry's memo is forgotten when the entry is replaced. With the
// cache's verification on (VerifyStepCache), every memoized verdict and
// term list is checked against the property's own functions.

// sumTerm is one term a node adds to a conserved sum: v to sum q.
type sumTerm struct {
	q int
	v int64
}

// stepChecks is what an entry remembers of the checks reading its node
// alone: the properties (by index, below 64) whose NodeLocal Local
// (localOK) and Conservation Bounds (boundsOK) hold at the node, and the
// node's terms of each conserved sum (terms, by position in
// stubborn.conserved, where termsKnown has the bit).
type stepChecks struct {
	localOK, boundsOK uint64
	terms             [][]sumTerm
	termsKnown        uint64
}

// forget clears the memo of an entry being replaced (keeping its
// slices' storage).
func (m *stepChecks) forget() {
	m.localOK, m.boundsOK, m.termsKnown = 0, 0, 0
}

// bytes is the memo's storage beyond the entry.
func (m *stepChecks) bytes() int64 {
	n := int64(cap(m.terms)) * int64(unsafe.Sizeof([]sumTerm(nil)))
	for _, t := range m.terms {
		n += int64(cap(t)) * int64(unsafe.Sizeof(sumTerm{}))
	}
	return n
}

// memoEntry returns the step cache's entry whose node is node j's state
// in w, when w is the successor being built and a cached step made node
// j's present state there; else nil.
func (c *Checker) memoEntry(w *model.World, j int) *stepEntry {
	sc := c.sc
	if sc == nil || !sc.active || w != &c.next || !sc.fresh[j] {
		return nil
	}
	return sc.entry[j]
}

// nodeLocal returns the Local of property i at node n of w, from the
// step cache's memo where it has it (a NodeLocal property's).
func (c *Checker) nodeLocal(w *model.World, i, n int) error {
	p := &c.Props[i]
	e := c.memoEntry(w, n)
	if e == nil || i >= 64 || !p.NodeLocal {
		return p.Local(w, n)
	}
	bit := uint64(1) << uint(i)
	if e.checks.localOK&bit != 0 {
		c.sc.checkHits++
		if c.scStats.verify {
			c.sc.verifyCheck(p.Local(w, n) == nil, "the step cache's Local of %s at node %d holds, the property's fails", p.Name, n)
		}
		return nil
	}
	err := p.Local(w, n)
	if err == nil {
		e.checks.localOK |= bit
	}
	return err
}

// bounds returns the Bounds of conservation cs (property i) at node j of
// w, from the step cache's memo where it has it.
func (c *Checker) bounds(cs *model.Conservation, i int, w *model.World, j int) error {
	e := c.memoEntry(w, j)
	if e == nil || i >= 64 {
		return cs.Bounds(w, j)
	}
	bit := uint64(1) << uint(i)
	if e.checks.boundsOK&bit != 0 {
		c.sc.checkHits++
		if c.scStats.verify {
			c.sc.verifyCheck(cs.Bounds(w, j) == nil, "the step cache's bounds of %s at node %d hold, the property's fail", c.Props[i].Name, j)
		}
		return nil
	}
	err := cs.Bounds(w, j)
	if err == nil {
		e.checks.boundsOK |= bit
	}
	return err
}

// afterTerms calls add with node j's terms of the sums of conservation cs
// (the k-th conserved property) in w, from the step cache's memo where it
// has them.
func (c *Checker) afterTerms(cs *model.Conservation, k int, w *model.World, j int, add func(int, int64)) {
	e := c.memoEntry(w, j)
	if e == nil || k >= 64 {
		cs.Node(w, j, add)
		return
	}
	m := &e.checks
	bit := uint64(1) << uint(k)
	if m.termsKnown&bit == 0 {
		was := m.bytes()
		for len(m.terms) <= k {
			m.terms = append(m.terms, nil)
		}
		m.terms[k] = c.appendTerms(m.terms[k][:0], cs, w, j)
		m.termsKnown |= bit
		grown := m.bytes() - was
		c.sc.bytes += grown
		e.size += grown
	} else {
		c.sc.checkHits++
		if c.scStats.verify {
			c.sc.verifyCheck(slices.Equal(m.terms[k], c.appendTerms(nil, cs, w, j)), "the step cache's terms of %s at node %d differ from the property's", c.Props[c.stb.conserved[k]].Name, j)
		}
	}
	for _, t := range m.terms[k] {
		add(t.q, t.v)
	}
}

// appendTerms appends node j's terms of cs's sums in w to dst.
func (c *Checker) appendTerms(dst []sumTerm, cs *model.Conservation, w *model.World, j int) []sumTerm {
	st := c.stb
	if st.addT == nil {
		// Made once: a closure made per call escapes to the heap.
		st.addT = func(q int, v int64) { st.terms = append(st.terms, sumTerm{q, v}) }
	}
	st.terms = st.terms[:0]
	cs.Node(w, j, st.addT)
	return append(dst, st.terms...)
}

// beforeTerms calls sub with node j's terms of the sums of conservation
// cs (the k-th conserved property) in the state being expanded (cur),
// computed once per expanded state.
func (c *Checker) beforeTerms(cs *model.Conservation, k int, before *model.World, j int, sub func(int, int64)) {
	st := c.stb
	if before != &c.cur {
		cs.Node(before, j, sub)
		return
	}
	P := c.Sys.P
	x := k*P + j
	if n := len(st.conserved) * P; len(st.beforeAt) < n {
		st.beforeAt = make([]uint32, n)
		st.before = make([][]sumTerm, n)
	}
	if st.beforeAt[x] != st.gen {
		st.before[x] = c.appendTerms(st.before[x][:0], cs, before, j)
		st.beforeAt[x] = st.gen
	}
	for _, t := range st.before[x] {
		sub(t.q, t.v)
	}
}

// verifyCheck (verify) notes a mismatch unless ok.
func (sc *stepCache) verifyCheck(ok bool, format string, args ...any) {
	sc.c.scStats.verified.Add(1)
	if !ok {
		sc.mismatchf("%s", fmt.Sprintf(format, args...))
	}
}
