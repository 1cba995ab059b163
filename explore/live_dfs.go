package explore

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// LiveDFS checks m's liveness properties (Live, the same weak and strong
// fairness semantics as BFS's analysis of the recorded graph) and its
// safety properties with one depth-first search that does not keep the
// state graph: only the visited set (an exact store, whose dense ids let
// states be read back), per state id its parent, its action, one number
// (Pearce's space-efficient form of Tarjan's algorithm, run over the whole
// graph as the search goes) and one bit per liveness property, and the
// search's stacks: the frames hold their states' successor ids and action
// codes while they are open, and so do the states done whose component is
// not complete yet (Pearce's stack), until it completes. States are kept
// as trees of shared segments (treeIDs) for a Segmenter, else whole in an
// ExactStore.
//
// Tarjan's algorithm completes the strongly connected components of the
// whole graph in reverse topological order, every component after those
// it reaches. When one completes, the edges kept of its states make a
// small graph (a single state with no edge to itself is judged from its
// frame without one); edges leaving it lead to complete components, whose
// bits are known. For each property,
// the analysis of the recorded graph then runs on that small graph (the
// states where the goal fails decomposed again, fair components judged,
// Emerson-Lei refinement for strong fairness), with every exit standing
// for an end state where the goal fails if the bit of its target is set,
// and for a state where the goal holds otherwise. A state's bit says: the
// goal fails there, and a path through states where it fails reaches a
// fair cycle or an end state. A state with the trigger (the initial state
// for FromInitial) and the bit set violates the property.
//
// The search explores the whole graph before it reports a liveness
// violation, so that its verdict and violated property are the graph
// analysis's: a safety violation anywhere, found as the search goes,
// comes first (its trace is not the shortest), then the first property
// in the order of Live.Props. The counterexample is a lasso that replays:
// the search tree's path to the violating state, then component by
// component a shortest path through states with the bit set to a fair
// component, and a loop in it that meets every fairness obligation, both
// built on small graphs of the components, whose states are expanded
// again through the model (the search kept nothing of them).
//
// It needs the exact store (not Fingerprint), no cover (symmetry), no
// frontier or checkpoint, and at most 32 liveness properties; Workers is
// ignored. A search cut short by a limit (MaxStates, MaxDepth, Timeout,
// MaxMemory, Stop) is Incomplete and checks no liveness property.
// Stats.GraphBytes counts the per-state arrays and the stacks;
// Stats.ComponentBytes the largest component graph built.
func LiveDFS(m Model, opt Options) (Result, error) {
	if lm, ok := m.(LiveModel); ok && opt.Live == nil {
		opt.Live = lm.Live()
	}
	lv := opt.Live
	switch {
	case lv == nil:
		return Result{}, errors.New("explore: the on-the-fly liveness search needs liveness properties on the state graph")
	case lv.Cover != nil:
		return Result{}, errors.New("explore: the on-the-fly liveness search does not run on a symmetry cover")
	case opt.Fingerprint:
		return Result{}, errors.New("explore: the on-the-fly liveness search reads states back from the exact store: not with fingerprints")
	case opt.Frontier || opt.Checkpoint != "":
		return Result{}, errors.New("explore: the on-the-fly liveness search keeps no frontier and writes no checkpoint")
	case len(lv.Props) > 32:
		return Result{}, fmt.Errorf("explore: the on-the-fly liveness search checks at most 32 liveness properties, got %d", len(lv.Props))
	}
	lb, ok := m.(Labeler)
	if !ok {
		return Result{}, errors.New("explore: liveness checking needs a model that labels its states")
	}
	d := &liveDFS{
		s:  &search{m: m, opt: opt, start: time.Now(), runStart: time.Now()},
		lv: lv, lb: lb,
		c: 1<<31 - 1,
	}
	d.wit = make([]int64, len(lv.Props))
	for j := range d.wit {
		d.wit[j] = -1
	}
	return d.run()
}

type liveDFS struct {
	s  *search
	st Store // an ExactStore, or treeIDs for a Segmenter
	lv *Live
	lb Labeler

	rindex []int32  // Pearce's number per state id (see tarjan)
	bits   []uint32 // per state id: bit j, property j's goal fails and a fair end is reachable
	kids   []uint32 // the successor ids of the open frames and of the states on stack, one after another
	codes  []uint32 // their action codes
	info   []dinfo  // per state on stack: its successors and labels
	calls  []dframe
	stack  []uint32 // Pearce's stack: states done whose component is not complete
	index  int32
	c      int32 // the next component's number, counted down

	wit   []int64 // per property: a violating state, -1 for none
	comps int64   // components analysed on a graph of their own
	big   int64   // bytes of the largest component graph and its analysis
	steps int
	buf   []byte

	limit string // a limit hit while storing successors
	viol  error  // a safety violation met while expanding
	vcode uint32
}

// dinfo is what the search keeps of a state done whose component is not
// complete: its successors (kids[start:end]), labels and whether an edge
// with a fairness class leaves it; the component is built from these
// when it completes, without expanding its states again.
type dinfo struct {
	id         uint32
	start, end int
	lab        uint64
}

type dframe struct {
	id         uint32
	start, end int // its successor ids: kids[start:end]
	next       int
	lab        uint64
	fair       bool // an edge with a fairness class leaves it
	root       bool
}

// lookup returns the id of successor b of state parent reached by code,
// storing it if it is new ("" limit), or says which limit forbids storing.
func (d *liveDFS) lookup(b []byte, parent, code uint32) (uint32, string) {
	s := d.s
	if s.opt.MaxStates > 0 && int64(d.st.Len()) >= s.opt.MaxStates && !s.has(b) {
		return 0, fmt.Sprintf("state limit %d reached", s.opt.MaxStates)
	}
	if !s.growthFits() {
		return 0, fmt.Sprintf("memory limit %s reached", FormatBytes(s.opt.MaxMemory))
	}
	n := d.st.Len()
	id := s.add(b, parent, code)
	if t, ok := d.st.(*treeIDs); ok && t.full {
		return 0, "the tables of shared segments are full"
	}
	if int(id) == n {
		d.rindex = append(d.rindex, 0)
		d.bits = append(d.bits, 0)
	}
	return id, ""
}

// visit numbers state id, expands it and opens its frame.
func (d *liveDFS) visit(id uint32, state []byte) error {
	if d.index+1 >= d.c {
		d.limit = "more states than the on-the-fly numbering can count"
		return nil
	}
	d.rindex[id] = d.index
	d.index++
	f := dframe{id: id, start: len(d.kids), root: true}
	f.next = f.start
	err := d.s.m.Successors(state, func(code uint32, b []byte, err error) bool {
		d.s.transitions++
		if err != nil {
			d.viol, d.vcode = err, code
			return false
		}
		w, lim := d.lookup(b, id, code)
		if lim != "" {
			d.limit = lim
			return false
		}
		d.kids = append(d.kids, w)
		d.codes = append(d.codes, code)
		if d.lv.ClassOf(code) >= 0 {
			f.fair = true
		}
		return true
	})
	f.end = len(d.kids)
	f.lab = d.lb.Labels()
	d.calls = append(d.calls, f)
	if len(d.calls)-1 > d.s.depth {
		d.s.depth = len(d.calls) - 1
	}
	return err
}

func (d *liveDFS) run() (Result, error) {
	s := d.s
	init, verr := s.m.Initial()
	d.st = &ExactStore{}
	if sg, ok := s.m.(Segmenter); ok {
		t, err := newTreeIDs(sg, init)
		if err != nil {
			return Result{}, err
		}
		d.st = t
	}
	s.store = d.st
	d.lookup(init, noParent, 0)
	if verr != nil {
		return s.fail(verr, nil)
	}
	d.index = 1
	if err := d.visit(0, init); err != nil || d.viol != nil || d.limit != "" {
		return d.stopped(0, err)
	}
	lastProg := time.Now()
	every := s.opt.progressEvery()
	for len(d.calls) > 0 {
		d.steps++
		if d.steps&255 == 0 {
			if r, stop := s.checkLimits(0); stop {
				r.Reason = firstClause(r.Reason) + fmt.Sprintf(" after %d states (on-the-fly liveness search: the rest of the graph is unexplored)", d.st.Len())
				return d.result(r), nil
			}
			if s.opt.Progress != nil && time.Since(lastProg) >= every {
				lastProg = time.Now()
				fmt.Fprintf(s.opt.Progress, "progress: on-the-fly liveness: %d states, %d transitions, stack %d, %d components analysed, heap %s, %s\n",
					d.st.Len(), s.transitions, len(d.calls), d.comps, FormatBytes(s.sampleMemory(false)), time.Since(s.start).Round(time.Second))
			}
		}
		f := &d.calls[len(d.calls)-1]
		v := f.id
		if f.next < f.end {
			w := d.kids[f.next]
			f.next++
			if d.rindex[w] == 0 {
				if s.opt.MaxDepth > 0 && len(d.calls) > s.opt.MaxDepth {
					return d.result(s.finish(Incomplete, fmt.Sprintf("depth limit %d reached (on-the-fly liveness search: the rest of the graph is unexplored)", s.opt.MaxDepth))), nil
				}
				d.buf = append(d.buf[:0], d.st.State(int(w))...)
				if err := d.visit(w, d.buf); err != nil || d.viol != nil || d.limit != "" {
					return d.stopped(w, err)
				}
			} else if d.rindex[w] < d.rindex[v] {
				d.rindex[v], f.root = d.rindex[w], false
			}
			continue
		}
		fr := *f
		d.calls = d.calls[:len(d.calls)-1]
		if len(d.calls) > 0 {
			if p := &d.calls[len(d.calls)-1]; d.rindex[v] < d.rindex[p.id] {
				d.rindex[p.id], p.root = d.rindex[v], false
			}
		}
		if !fr.root {
			d.stack = append(d.stack, v)
			d.info = append(d.info, dinfo{v, fr.start, fr.end, fr.lab})
			continue
		}
		d.index--
		i := len(d.stack)
		for i > 0 && d.rindex[v] <= d.rindex[d.stack[i-1]] {
			i--
			d.index--
		}
		self := slices.Contains(d.kids[fr.start:fr.end], v)
		if i == len(d.stack) && !self {
			d.rindex[v] = d.c
			d.single(fr)
		} else {
			d.stack = append(d.stack, v)
			d.info = append(d.info, dinfo{v, fr.start, fr.end, fr.lab})
			comp := d.stack[i:]
			for _, w := range comp {
				d.rindex[w] = d.c
			}
			if d.lv.Acyclic {
				return Result{}, fmt.Errorf("explore: the model declares its state graph acyclic, but it has a cycle through %d states", len(comp))
			}
			if err := d.component(d.info[i:]); err != nil {
				var stop *errStop
				if errors.As(err, &stop) {
					return d.result(s.finish(Incomplete, stop.reason)), nil
				}
				return Result{}, err
			}
		}
		d.c--
		d.stack, d.info = d.stack[:i], d.info[:i]
		d.kids, d.codes = d.kids[:fr.start], d.codes[:fr.start]
	}
	for j, w := range d.wit {
		if w < 0 {
			continue
		}
		tr, err := d.lasso(j, uint32(w))
		if err != nil {
			var stop *errStop
			if errors.As(err, &stop) {
				return d.result(s.finish(Incomplete, stop.reason)), nil
			}
			return Result{}, err
		}
		r := d.result(s.finish(Fail, ""))
		r.Violation = tr.viol
		r.Trace, r.Loop = tr.trace, tr.loop
		r.Stats.Depth = len(tr.trace)
		return r, nil
	}
	return d.result(s.finish(Pass, "")), nil
}

// stopped ends the search after expanding state id met a safety violation,
// an error or a limit.
func (d *liveDFS) stopped(id uint32, err error) (Result, error) {
	s := d.s
	switch {
	case d.viol != nil:
		return d.result2(s.fail(d.viol, s.trace(id, []uint32{d.vcode})))
	case err != nil:
		return d.result2(s.fail(err, s.trace(id, nil)))
	}
	return d.result(s.finish(Incomplete, d.limit+" (on-the-fly liveness search: the rest of the graph is unexplored)")), nil
}

func (d *liveDFS) result2(r Result, err error) (Result, error) {
	if err != nil {
		return r, err
	}
	if r.Verdict == Fail {
		r.Stats.Depth = len(r.Trace)
	}
	return d.result(r), nil
}

// result adds the search's own memory to r's statistics.
func (d *liveDFS) result(r Result) Result {
	r.Stats.GraphBytes = int64(cap(d.rindex)+cap(d.bits)+cap(d.kids)+cap(d.codes)+cap(d.stack))*4 + int64(cap(d.info))*24 + int64(cap(d.calls))*48
	r.Stats.ComponentBytes = d.big
	return r
}

// violates records a violation of property j at state v if v has its
// trigger (or is the initial state, for FromInitial).
func (d *liveDFS) violates(j int, v uint32, lab uint64) {
	if d.wit[j] >= 0 {
		return
	}
	if p := d.lv.Props[j]; (p.FromInitial && v == 0) || (!p.FromInitial && lab&(1<<(2*j)) != 0) {
		d.wit[j] = int64(v)
	}
}

// single sets the bits of a component that is one state without an edge to
// itself, from its frame: its successors' components are complete.
func (d *liveDFS) single(f dframe) {
	kids := d.kids[f.start:f.end]
	end := len(kids) == 0 || (d.lv.Stutter && !f.fair)
	var any uint32
	for _, w := range kids {
		any |= d.bits[w]
	}
	for j := range d.lv.Props {
		if f.lab&(1<<(2*j+1)) != 0 {
			continue
		}
		if end || any&(1<<j) != 0 {
			d.bits[f.id] |= 1 << j
			d.violates(j, f.id, f.lab)
		}
	}
}

// compGraph is the graph of a complete component: states 0 to len(ids)-1
// are its states (ids, sorted), the others stand for the exits' targets,
// one per pattern of bits (pattern), with no edge. gto holds every edge's
// target id in the search.
type compGraph struct {
	g       *graph
	ids     []uint32
	gto     blocks[uint32]
	pattern []uint32
}

func (cg *compGraph) bytes() int64 {
	return cg.g.bytes() + int64(cap(cg.ids))*4 + cg.gto.bytes()
}

// build expands the component's states (number d.rindex of comp[0]) again.
func (d *liveDFS) build(comp []uint32) (*compGraph, error) {
	ids := slices.Sorted(slices.Values(comp))
	return d.buildWith(ids, func(k int, add func(w, code uint32)) (uint64, error) {
		d.buf = append(d.buf[:0], d.st.State(int(ids[k]))...)
		var werr error
		err := d.s.m.Successors(d.buf, func(code uint32, b []byte, err error) bool {
			w, fresh := d.st.Add(Hash(b), b)
			if fresh || err != nil {
				werr = errors.New("explore: the model generated a different successor when a state was expanded again")
				return false
			}
			add(w, code)
			return true
		})
		if werr != nil {
			return 0, werr
		}
		if err != nil {
			return 0, fmt.Errorf("explore: expanding a state again: %w", err)
		}
		return d.lb.Labels(), nil
	})
}

// buildKept builds a component that just completed from what the search
// kept of its states.
func (d *liveDFS) buildKept(comp []dinfo) *compGraph {
	slices.SortFunc(comp, func(a, b dinfo) int { return cmpU32(a.id, b.id) })
	ids := make([]uint32, len(comp))
	for k, x := range comp {
		ids[k] = x.id
	}
	cg, _ := d.buildWith(ids, func(k int, add func(w, code uint32)) (uint64, error) {
		x := comp[k]
		for e := x.start; e < x.end; e++ {
			add(d.kids[e], d.codes[e])
		}
		return x.lab, nil
	})
	return cg
}

func cmpU32(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// buildWith builds the graph of the component of states ids (sorted),
// whose edges and labels expand gives.
func (d *liveDFS) buildWith(ids []uint32, expand func(k int, add func(w, code uint32)) (uint64, error)) (*compGraph, error) {
	cg := &compGraph{g: &graph{}, ids: ids}
	cg.g.off.add(0)
	num := d.rindex[ids[0]]
	pat := map[uint32]uint32{}
	m := uint32(len(cg.ids))
	for k := range cg.ids {
		lab, err := expand(k, func(w, code uint32) {
			var local uint32
			if d.rindex[w] == num {
				k, _ := slices.BinarySearch(cg.ids, w)
				local = uint32(k)
			} else {
				p := d.bits[w]
				k, ok := pat[p]
				if !ok {
					k = m + uint32(len(cg.pattern))
					pat[p] = k
					cg.pattern = append(cg.pattern, p)
				}
				local = k
			}
			cg.g.addEdge(local, code)
			cg.gto.add(w)
		})
		if err != nil {
			return nil, err
		}
		cg.g.lab.add(lab)
		cg.g.off.add(cg.g.to.n)
	}
	for _, p := range cg.pattern {
		// An exit: for property j, a bad end state if its bit is set, a
		// state where the goal holds if not.
		var lab uint64
		for j := range d.lv.Props {
			if p&(1<<j) == 0 {
				lab |= 1 << (2*j + 1)
			}
		}
		cg.g.lab.add(lab)
		cg.g.off.add(cg.g.to.n)
	}
	return cg, nil
}

// analyse decomposes cg's states where property j's goal fails and judges
// the parts, as liveCheck.check does on the recorded graph.
func (d *liveDFS) analyse(cg *compGraph, j int) (*liveCheck, error) {
	lc := &liveCheck{s: d.s, g: cg.g, live: d.lv, sz: 1}
	lc.steps = d.steps
	lc.trig, lc.goal = 1<<(2*j), 1<<(2*j+1)
	lc.fairSet = map[int32]fairPart{}
	lc.top.reset(cg.g.n(), nil)
	for r := 0; r < len(cg.ids); r++ {
		if lc.bad(uint32(r)) && !lc.top.visited(uint32(r)) {
			if err := lc.top.run(lc, uint32(r), lc.bad, lc.emitTop); err != nil {
				return nil, err
			}
		}
	}
	d.steps = lc.steps
	return lc, nil
}

// component sets the bits of a complete component of two or more states,
// or of one with an edge to itself.
func (d *liveDFS) component(comp []dinfo) error {
	d.comps++
	cg := d.buildKept(comp)
	size := cg.bytes()
	for j := range d.lv.Props {
		lc, err := d.analyse(cg, j)
		if err != nil {
			return err
		}
		size = max(size, cg.bytes()+lc.bytes())
		for v, id := range cg.ids {
			if lc.bad(uint32(v)) && lc.reach[lc.top.comp(uint32(v))] {
				d.bits[id] |= 1 << j
				d.violates(j, id, cg.g.lab.at(int64(v)))
			}
		}
	}
	d.big = max(d.big, size)
	return nil
}

// members returns the states of v's complete component, found by
// expanding states again from v.
func (d *liveDFS) members(v uint32) []uint32 {
	num := d.rindex[v]
	seen := map[uint32]bool{v: true}
	out := []uint32{v}
	for i := 0; i < len(out); i++ {
		d.buf = append(d.buf[:0], d.st.State(int(out[i]))...)
		d.s.m.Successors(d.buf, func(code uint32, b []byte, err error) bool {
			if w, fresh := d.st.Add(Hash(b), b); !fresh && d.rindex[w] == num && !seen[w] {
				seen[w] = true
				out = append(out, w)
			}
			return true
		})
	}
	return out
}

// lasso builds the counterexample of property j from state start, whose
// bit is set: the search tree's path to it, then component by component a
// shortest path to a fair part, and a loop in it.
func (d *liveDFS) lasso(j int, start uint32) (*lasso, error) {
	p := d.lv.Props[j]
	trace := d.s.trace(start, nil)
	from := len(trace)
	cur := start
	for {
		cg, err := d.build(d.members(cur))
		if err != nil {
			return nil, err
		}
		lc, err := d.analyse(cg, j)
		if err != nil {
			return nil, err
		}
		inFair := func(v uint32) bool {
			cv := lc.top.comp(v)
			if cv < 0 {
				return false
			}
			fp, ok := lc.fairSet[cv]
			return ok && (fp.member == nil || fp.member[v])
		}
		k, _ := slices.BinarySearch(cg.ids, cur)
		local := uint32(k)
		if !lc.bad(local) {
			return nil, errors.New("explore: liveness: the on-the-fly search marked a state whose goal holds")
		}
		path := lc.bfs(local, lc.bad, inFair)
		if path == nil && !inFair(local) {
			return nil, errors.New("explore: liveness: no path to a fair component from a state the on-the-fly search marked")
		}
		entry := local
		var last int64 = -1
		for _, st := range path {
			trace = append(trace, lc.code(st.from, st.e))
			entry, last = lc.to(st.from, st.e), st.e
		}
		if int(entry) >= len(cg.ids) {
			cur = cg.gto.at(last) // an exit: continue in the component it leads to
			continue
		}
		return lc.closeLasso(p, trace, entry, from)
	}
}
