package explore

import (
	"errors"
	"fmt"
	"time"
)

// Live configures liveness checking (Options.Live).
//
// # What is checked
//
// A liveness property has a goal and a trigger, both labels of states
// (Labeler): the goal must eventually hold on every fair run, counted from
// the initial state (FromInitial: "eventually goal") or from every state
// whose trigger label is set ("always (trigger implies eventually goal)";
// a trigger set everywhere makes it "always eventually goal"). A run is a
// path from the initial state that is infinite or ends in a state with no
// enabled action; such a terminal state is taken to repeat for ever, and
// with nothing enabled every fairness condition holds there. So a terminal
// state where the goal has not held since the trigger is a counterexample:
// a protocol's proper end states must satisfy its goals.
//
// Fairness is per class of actions (Classes, ClassOf). Weak fairness of a
// class: a run on which some action of the class is enabled in every state
// from some point on takes an action of the class infinitely often.
// Strong fairness: a run on which the class is enabled infinitely often
// takes it infinitely often. Actions without a class get no fairness.
//
// # The algorithm
//
// The search records the complete graph it explores: every edge with its
// action, and every state's labels. A property is violated exactly when
// some state v has the trigger (or is the initial state) and not the goal,
// and from v a path through states without the goal reaches either a
// terminal state or a fair cycle. Cycles are found as strongly connected
// components (Tarjan) of the subgraph of states without the goal. A
// component C holds a fair cycle when it has an edge inside it and, for
// every weakly fair class, C takes the class on an inner edge or has a
// state where the class is disabled (the cycle through all of C's states
// and edges is then fair; if not, no cycle in C is); for strongly fair
// classes enabled somewhere in C but never taken inside it, the states
// where they are enabled are removed and the rest decomposed again
// (Emerson and Lei). Tarjan emits components after every component they
// reach, so whether a component can reach a fair one is known when it is
// emitted. Enabledness is read from the complete graph: edges to states
// with the goal count as enabled actions. A state where a run may stay for
// ever (nothing enabled; with Stutter, nothing fair enabled) is a fair end
// by itself.
//
// The counterexample is a lasso: the shortest path to the first (lowest
// breadth-first id) such v, a shortest path from v to the fair component,
// and a loop in it that meets every fairness obligation: it takes an
// action of each class it must take and visits a state where each other
// weakly fair class is disabled.
//
// The graph costs 8 bytes per transition and 16 per state, the analysis
// about 13 more per state; Options.MaxMemory bounds both, and a search cut
// short by any limit is Incomplete and checks no liveness property.
//
// Reductions: the graph must be the complete one, or a reduced one that
// keeps every fair cycle (a reduction with a cycle proviso). A model whose
// reduction relies on the graph being acyclic sets Acyclic; a cycle then
// is an internal error instead of a verdict.
type Live struct {
	Props []LiveProp
	// Classes are the fairness classes; ClassOf maps an action code to
	// its class index, or -1 for an action without fairness.
	Classes []FairClass
	ClassOf func(code uint32) int
	// Acyclic says the model promises a graph without cycles.
	Acyclic bool
	// Stutter lets a run stop for ever in a state where no action with a
	// fairness class is enabled (not only where nothing is enabled).
	Stutter bool
}

// LiveProp is one liveness property: for property i of Live.Props, label
// bit 2i is its trigger and bit 2i+1 its goal.
type LiveProp struct {
	Name string
	// FromInitial makes the goal due from the initial state only.
	FromInitial bool
}

// FairClass is a fairness class of actions: weakly fair, or strongly fair
// when Strong is set.
type FairClass struct {
	Name   string
	Strong bool
}

// LiveModel is implemented by models that carry liveness properties: BFS
// checks them (Live returns nil when there are none).
type LiveModel interface {
	Live() *Live
}

// Labeler is implemented by models checked for liveness: Labels returns
// the labels of the state most recently passed to Successors.
type Labeler interface {
	Labels() uint64
}

// LiveViolation reports a fair run on which a liveness goal never holds.
type LiveViolation struct {
	Property string
	Message  string
}

func (v *LiveViolation) Error() string { return v.Property + ": " + v.Message }

// PropertyName names the violated property.
func (v *LiveViolation) PropertyName() string { return v.Property }

// graph is the recorded state graph in compressed sparse rows: the edges
// of state v are to[off[v]:off[v+1]] with actions code[...].
type graph struct {
	off     []int64
	to      []uint32
	code    []uint32
	lab     []uint64
	labeler Labeler
}

func (g *graph) bytes() int64 {
	return int64(cap(g.off))*8 + int64(cap(g.to)+cap(g.code))*4 + int64(cap(g.lab))*8
}

func (g *graph) n() int { return len(g.off) - 1 }

// errStop ends the analysis when a limit is hit; reason says which.
type errStop struct{ reason string }

func (e *errStop) Error() string { return e.reason }

// liveness checks every property of s.opt.Live on the recorded graph.
func (s *search) liveness() (Result, error) {
	g := s.g
	n := g.n()
	if lim := s.opt.MaxMemory; lim > 0 {
		need := uint64(n) * 13
		if heap := s.sampleMemory(true); heap+need >= lim {
			return s.finish(Incomplete, fmt.Sprintf("memory limit %s reached (heap %s; the liveness analysis needs about %s more) after exploring all %d states",
				FormatBytes(lim), FormatBytes(heap), FormatBytes(need), n)), nil
		}
	}
	lc := &liveCheck{s: s, g: g, live: s.opt.Live}
	if s.opt.Live.Acyclic {
		if err := lc.acyclic(); err != nil {
			var stop *errStop
			if errors.As(err, &stop) {
				return s.finish(Incomplete, stop.reason), nil
			}
			return Result{}, err
		}
	}
	for i, p := range s.opt.Live.Props {
		tr, err := lc.check(i, p)
		var stop *errStop
		if errors.As(err, &stop) {
			return s.finish(Incomplete, stop.reason), nil
		}
		if err != nil {
			return Result{}, err
		}
		if tr != nil {
			r := s.finish(Fail, "")
			r.Violation = tr.viol
			r.Trace, r.Loop = tr.trace, tr.loop
			r.Stats.Depth = len(tr.trace)
			r.Stats.GraphBytes += lc.bytes()
			return r, nil
		}
	}
	r := s.finish(Pass, "")
	r.Stats.GraphBytes += lc.bytes()
	return r, nil
}

type liveCheck struct {
	s    *search
	g    *graph
	live *Live

	goal, trig uint64 // label bits of the property being checked

	// Tarjan scratch for the top-level decomposition and, allocated on
	// first use, for the refinement under strong fairness.
	top, sub tarjan
	comp     []int32 // per state: top-level component, -1 if not a bad state
	reach    []bool  // per component: a fair cycle or terminal state is reachable
	fairSet  map[int32]fairPart
	steps    int

	// per class scratch for judging a component
	enabled []int
	taken   []bool
	stampC  []int
	// breadth-first search scratch for lasso construction
	stamp []uint32
	par   []uint32
	gen   uint32
}

func (lc *liveCheck) bytes() int64 {
	b := func(t *tarjan) int64 {
		return int64(cap(t.index)+cap(t.low))*4 + int64(cap(t.onStack)) + int64(cap(t.stack))*4
	}
	return b(&lc.top) + b(&lc.sub) + int64(cap(lc.comp))*4 + int64(cap(lc.reach)) + int64(cap(lc.stamp)+cap(lc.par))*4
}

func (lc *liveCheck) bad(v uint32) bool { return lc.g.lab[v]&lc.goal == 0 }

// tick checks the search's stop, time and memory limits now and then.
func (lc *liveCheck) tick() error {
	lc.steps++
	if lc.steps&(1<<16-1) != 0 {
		return nil
	}
	o := &lc.s.opt
	if o.Stop != nil {
		select {
		case <-o.Stop:
			return &errStop{"interrupted during the liveness analysis"}
		default:
		}
	}
	if o.Timeout > 0 && time.Since(lc.s.start) >= o.Timeout {
		return &errStop{fmt.Sprintf("time limit %s reached during the liveness analysis", o.Timeout)}
	}
	if heap := lc.s.sampleMemory(false); o.MaxMemory > 0 && heap >= o.MaxMemory {
		return &errStop{fmt.Sprintf("memory limit %s reached (heap %s) during the liveness analysis", FormatBytes(o.MaxMemory), FormatBytes(heap))}
	}
	return nil
}

// fairPart is the fair part of a top-level component: the whole component
// (member nil) or a sub-component (member its states).
type fairPart struct {
	nodes  []uint32
	member map[uint32]bool
}

type lasso struct {
	viol  *LiveViolation
	trace []uint32
	loop  int
}

// check checks property i and returns its counterexample, if any.
func (lc *liveCheck) check(i int, p LiveProp) (*lasso, error) {
	g, n := lc.g, lc.g.n()
	lc.trig, lc.goal = 1<<(2*i), 1<<(2*i+1)
	if lc.comp == nil {
		lc.comp = make([]int32, n)
	}
	for v := range lc.comp {
		lc.comp[v] = -1
	}
	lc.reach = lc.reach[:0]
	lc.fairSet = map[int32]fairPart{}
	lc.top.reset(n, nil)
	var err error
	for r := 0; r < n && err == nil; r++ {
		if lc.bad(uint32(r)) && lc.top.index[r] < 0 {
			err = lc.top.run(lc, uint32(r), lc.bad, lc.emitTop)
		}
	}
	if err != nil {
		return nil, err
	}
	start := -1
	for v := 0; v < n; v++ {
		if p.FromInitial && v > 0 {
			break
		}
		if (p.FromInitial || g.lab[v]&lc.trig != 0) && lc.bad(uint32(v)) && lc.reach[lc.comp[v]] {
			start = v
			break
		}
	}
	if start < 0 {
		return nil, nil
	}
	return lc.lasso(p, uint32(start))
}

// acyclic checks the model's promise that the graph has no cycle (Kahn's
// algorithm: repeatedly remove states nothing points to).
func (lc *liveCheck) acyclic() error {
	g, n := lc.g, lc.g.n()
	in := make([]int32, n)
	for _, w := range g.to {
		in[w]++
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
		for e := g.off[v]; e < g.off[v+1]; e++ {
			w := g.to[e]
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
	g := lc.g
	id := int32(len(lc.reach))
	for _, v := range c {
		lc.comp[v] = id
	}
	k, whole, err := lc.fairCycle(c, func(v uint32) bool { return lc.comp[v] == id })
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
		if lc.live.Acyclic && !(len(c) == 1 && g.off[c[0]] == g.off[c[0]+1]) {
			return fmt.Errorf("explore: the model declares its state graph acyclic, but it has a cycle through %d states", len(c))
		}
	}
	for _, v := range c {
		if ok {
			break
		}
		for e := g.off[v]; e < g.off[v+1]; e++ {
			if w := g.to[e]; lc.comp[w] >= 0 && lc.comp[w] != id && lc.reach[lc.comp[w]] {
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
	g := lc.g
	inner := false
	for _, v := range c {
		for e := g.off[v]; e < g.off[v+1] && !inner; e++ {
			inner = in(g.to[e])
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
		for e := g.off[v]; e < g.off[v+1] && keep; e++ {
			if k := lc.live.ClassOf(g.code[e]); k >= 0 && strongBad[k] {
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
	lc.sub.reset(g.n(), rest)
	member := make(map[uint32]bool, len(rest))
	for _, v := range rest {
		member[v] = true
	}
	isMember := func(v uint32) bool { return member[v] }
	var parts [][]uint32
	for _, r := range rest {
		if lc.sub.index[r] < 0 {
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
	g := lc.g
	if g.off[v] == g.off[v+1] {
		return true
	}
	if !lc.live.Stutter {
		return false
	}
	for e := g.off[v]; e < g.off[v+1]; e++ {
		if lc.live.ClassOf(g.code[e]) >= 0 {
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
	g := lc.g
	for i, v := range c {
		for e := g.off[v]; e < g.off[v+1]; e++ {
			k := lc.live.ClassOf(g.code[e])
			if k < 0 {
				continue
			}
			if lc.stampC[k] != i {
				lc.stampC[k] = i
				lc.enabled[k]++
			}
			if in(g.to[e]) {
				lc.taken[k] = true
			}
		}
	}
}

// tarjan is the scratch space of an iterative Tarjan decomposition.
type tarjan struct {
	index, low []int32
	onStack    []bool
	stack      []uint32
	calls      []tframe
	counter    int32
}

type tframe struct {
	v uint32
	e int64
}

// reset prepares t for a graph of n states: every state when nodes is
// nil, else only the given ones (the only ones the next runs visit).
func (t *tarjan) reset(n int, nodes []uint32) {
	if t.index == nil {
		t.index, t.low, t.onStack = make([]int32, n), make([]int32, n), make([]bool, n)
	}
	if nodes == nil {
		for i := range t.index {
			t.index[i] = -1
		}
	}
	for _, v := range nodes {
		t.index[v] = -1
	}
	t.counter = 0
}

// run decomposes the part of the subgraph induced by in that is reachable
// from root, calling emit with each component after every component it
// reaches. emit's argument is valid only during the call.
func (t *tarjan) run(lc *liveCheck, root uint32, in func(uint32) bool, emit func([]uint32) error) error {
	g := lc.g
	visit := func(v uint32) {
		t.index[v], t.low[v] = t.counter, t.counter
		t.counter++
		t.stack = append(t.stack, v)
		t.onStack[v] = true
		t.calls = append(t.calls, tframe{v, g.off[v]})
	}
	visit(root)
	for len(t.calls) > 0 {
		if err := lc.tick(); err != nil {
			return err
		}
		f := &t.calls[len(t.calls)-1]
		v := f.v
		if f.e < g.off[v+1] {
			w := g.to[f.e]
			f.e++
			if !in(w) {
				continue
			}
			if t.index[w] < 0 {
				visit(w)
			} else if t.onStack[w] && t.index[w] < t.low[v] {
				t.low[v] = t.index[w]
			}
			continue
		}
		t.calls = t.calls[:len(t.calls)-1]
		if len(t.calls) > 0 {
			if p := t.calls[len(t.calls)-1].v; t.low[v] < t.low[p] {
				t.low[p] = t.low[v]
			}
		}
		if t.low[v] != t.index[v] {
			continue
		}
		i := len(t.stack) - 1
		for t.stack[i] != v {
			i--
		}
		c := t.stack[i:]
		for _, w := range c {
			t.onStack[w] = false
		}
		if err := emit(c); err != nil {
			return err
		}
		t.stack = t.stack[:i]
	}
	return nil
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
