package explore

import (
	"errors"
	"fmt"
	"runtime"
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
// The graph costs about 5 bytes per transition (live_graph.go: 6 past 256
// distinct action codes) and 9 per state, the analysis about 5 more per
// state (per pair with a cover: Pearce's numbering, and a bit for
// reachability); Options.MaxMemory
// bounds both, and a search cut short by any limit is Incomplete and
// checks no liveness property.
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
	// Cover, when set, says the search stores one state per orbit of a
	// group of renamings, and how to analyse the real graph from it (see
	// Cover).
	Cover *Cover
}

// Cover describes the real state graph of a symmetric model whose search
// stores only orbit representatives: the liveness analysis runs on the
// cover, whose states are pairs (q, g) of a stored representative q and
// a renaming g, standing for the real state g(q). Its edges are the
// renamed edges of q: an action a of q, whose successor t the model
// stored as its representative r = p(t) (p in the action code's bits 24
// to 30, 0 for the identity, see PermOf), becomes g(a) from g(q) to
// g(p^-1(r)), the pair (r, g p^-1). The cover's labels and fairness
// classes are those of the real states and actions, so the analysis of
// the real graph carries over unchanged: a path of the real graph lifts
// to the cover from any pair standing for its first state, and a cover
// path is a real path; a state fixed by a renaming appears in several
// pairs, which changes no verdict. The analysis keeps to the pairs
// reachable from (initial, identity), so every counterexample is a real
// run from the real initial state, given as real actions (codes with
// RealCode set). Symmetry under fairness needs this: a cycle on
// representatives may close only up to a renaming, and the fairness
// classes it meets are renamed around it (Emerson and Sistla).
type Cover struct {
	// Size is the number of renamings, the identity first (index 0); at
	// most 128.
	Size int
	// Next[g*Size+p] is the index of the renaming g p^-1, for the
	// renaming g of a pair and the renaming p recorded on an edge.
	Next []uint8
	// Obl[g][j] is the liveness property (index into Props) whose labels
	// at a representative q are property j's labels at g(q): per-node
	// properties move with the nodes.
	Obl [][]int
	// Class[g][c] is the fairness class of g(a) for an action a of class c.
	Class [][]int32
	// Act returns the code of g(a) for the code of an action a.
	Act func(code uint32, g int) uint32
}

// RealCode marks an action code of a counterexample found on a cover
// (Live.Cover): the code is the real action, not one of a representative.
const RealCode = 1 << 31

// PermOf returns the renaming index a symmetric model records in bits 24
// to 30 of an action code for a search with Live.Cover (0 for the
// identity).
func PermOf(code uint32) int { return int(code>>24) & 0x7f }

// PermCode returns code with renaming index p recorded (see PermOf).
func PermCode(code uint32, p int) uint32 { return code&0x00ffffff | uint32(p)<<24 }

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

// errStop ends the analysis when a limit is hit; reason says which.
type errStop struct{ reason string }

func (e *errStop) Error() string { return e.reason }

// liveness checks every property of s.opt.Live on the recorded graph.
func (s *search) liveness() (Result, error) {
	g := s.g
	n := g.n()
	if lim := s.opt.MaxMemory; lim > 0 {
		need := uint64(n) * 5
		if cv := s.opt.Live.Cover; cv != nil && cv.Size > 1 {
			need = uint64(n) * uint64(cv.Size) * 5
		}
		heap := s.sampleMemory(true)
		if heap+need >= lim {
			// The heap sampled counts garbage too, such as the tables
			// the search just freed (releaseStore): collect it first.
			runtime.GC()
			heap = s.sampleMemory(true)
		}
		if heap+need >= lim {
			return s.finish(Incomplete, fmt.Sprintf("memory limit %s reached (heap %s; the liveness analysis needs about %s more) after exploring all %d states",
				FormatBytes(lim), FormatBytes(heap), FormatBytes(need), n)), nil
		}
	}
	lc := &liveCheck{s: s, g: g, live: s.opt.Live, sz: 1}
	if cv := s.opt.Live.Cover; cv != nil && cv.Size > 1 {
		lc.cv, lc.sz = cv, uint32(cv.Size)
		if uint64(n)*uint64(cv.Size) >= 1<<31 {
			return s.finish(Incomplete, fmt.Sprintf("the liveness analysis on %d representatives and %d renamings needs more than 2^31 states", n, cv.Size)), nil
		}
	}
	if s.opt.Live.Acyclic {
		if err := lc.acyclic(); err != nil {
			var stop *errStop
			if errors.As(err, &stop) {
				return s.finish(Incomplete, stop.reason), nil
			}
			return Result{}, err
		}
	}
	if lc.cv != nil {
		if err := lc.reachable(); err != nil {
			var stop *errStop
			if errors.As(err, &stop) {
				return s.finish(Incomplete, stop.reason), nil
			}
			return Result{}, err
		}
	}
	for i, p := range s.opt.Live.Props {
		if lc.equivalent(i) {
			continue
		}
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

	// The cover (Live.Cover) the analysis runs on, if any: state v is the
	// pair (v/sz, v%sz); sz is 1 without a cover. seen marks the pairs
	// reachable from (initial, identity).
	cv   *Cover
	sz   uint32
	seen []uint64
	cls  []int32 // per distinct action code of the graph: its fairness class

	goal, trig uint64 // label bits of the property being checked
	// with a cover, per renaming: the label bits at the representative
	goalG, trigG []uint64

	// Tarjan scratch for the top-level decomposition and, allocated on
	// first use, for the refinement under strong fairness.
	top, sub tarjan // top.comp: per state, its top-level component, -1 if not a bad state
	reach    []bool // per component: a fair cycle or terminal state is reachable
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
		return int64(cap(t.rindex))*4 + int64(cap(t.stack))*4 + int64(cap(t.calls))*24
	}
	return b(&lc.top) + b(&lc.sub) + int64(cap(lc.reach)) + int64(cap(lc.stamp)+cap(lc.par))*4 + int64(cap(lc.seen))*8
}

// n is the number of states the analysis numbers (with a cover, pairs).
func (lc *liveCheck) n() int { return lc.g.n() * int(lc.sz) }

// edges returns the range of edge indices of state v (into g's edges; a
// pair's edges are its representative's, renamed by to, class and code).
func (lc *liveCheck) edges(v uint32) (int64, int64) {
	if lc.cv != nil {
		v /= lc.sz
	}
	return lc.g.edgesOf(v)
}

// to is the target of edge e of state v.
func (lc *liveCheck) to(v uint32, e int64) uint32 {
	w := lc.g.to.at(e)
	if lc.cv == nil {
		return w
	}
	return w*lc.sz + uint32(lc.cv.Next[(v%lc.sz)*lc.sz+uint32(PermOf(lc.g.code.at(e)))])
}

// class is the fairness class of edge e of state v, -1 for none.
func (lc *liveCheck) class(v uint32, e int64) int {
	c := lc.classOfCode(e)
	if c < 0 || lc.cv == nil {
		return c
	}
	return int(lc.cv.Class[v%lc.sz][c])
}

// classOfCode is the fairness class of edge e's action code (of the
// representative, with a cover), from a table per distinct code.
func (lc *liveCheck) classOfCode(e int64) int {
	c := &lc.g.code
	if c.wide != nil {
		return lc.live.ClassOf(c.wide.at(e))
	}
	if len(lc.cls) != len(c.dict) {
		lc.cls = lc.cls[:0]
		for _, code := range c.dict {
			lc.cls = append(lc.cls, int32(lc.live.ClassOf(code)))
		}
	}
	return int(lc.cls[c.index(e)])
}

// code is the action code of edge e of state v for a counterexample.
func (lc *liveCheck) code(v uint32, e int64) uint32 {
	if lc.cv == nil {
		return lc.g.code.at(e)
	}
	return lc.cv.Act(lc.g.code.at(e), int(v%lc.sz)) | RealCode
}

// bad reports whether the goal of the property being checked does not
// hold in state v (with a cover, a reachable pair).
func (lc *liveCheck) bad(v uint32) bool {
	if lc.cv == nil {
		return lc.g.lab.at(int64(v))&lc.goal == 0
	}
	return lc.seen[v/64]&(1<<(v%64)) != 0 && lc.g.lab.at(int64(v/lc.sz))&lc.goalG[v%lc.sz] == 0
}

// triggered reports whether the trigger of the property being checked
// holds in state v.
func (lc *liveCheck) triggered(v uint32) bool {
	if lc.cv == nil {
		return lc.g.lab.at(int64(v))&lc.trig != 0
	}
	return lc.g.lab.at(int64(v/lc.sz))&lc.trigG[v%lc.sz] != 0
}

// reachable marks the pairs of the cover reachable from (initial,
// identity).
func (lc *liveCheck) reachable() error {
	n := lc.n()
	lc.seen = make([]uint64, (n+63)/64)
	// The queue lives in the decomposition's numbers, which check
	// initialises afterwards: every pair enters it once.
	lc.top.reset(n, nil)
	queue := lc.top.rindex
	lc.seen[0] |= 1
	queue[0] = 0
	for i, end := 0, 1; i < end; i++ {
		if err := lc.tick(); err != nil {
			return err
		}
		v := uint32(queue[i])
		lo, hi := lc.edges(v)
		for e := lo; e < hi; e++ {
			if w := lc.to(v, e); lc.seen[w/64]&(1<<(w%64)) == 0 {
				lc.seen[w/64] |= 1 << (w % 64)
				queue[end] = int32(w)
				end++
			}
		}
	}
	return nil
}

// equivalent reports whether property i is property j < i renamed (with
// a cover): both then have the same verdict.
func (lc *liveCheck) equivalent(i int) bool {
	if lc.cv == nil {
		return false
	}
	for g := 1; g < lc.cv.Size; g++ {
		if j := lc.cv.Obl[g][i]; j < i {
			return true
		}
	}
	return false
}

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

// check checks property i and returns its counterexample, if any.
func (lc *liveCheck) check(i int, p LiveProp) (*lasso, error) {
	n := lc.n()
	lc.trig, lc.goal = 1<<(2*i), 1<<(2*i+1)
	if lc.cv != nil {
		lc.goalG, lc.trigG = lc.goalG[:0], lc.trigG[:0]
		for g := 0; g < lc.cv.Size; g++ {
			j := lc.cv.Obl[g][i]
			lc.trigG, lc.goalG = append(lc.trigG, 1<<(2*j)), append(lc.goalG, 1<<(2*j+1))
		}
	}
	lc.reach = lc.reach[:0]
	lc.fairSet = map[int32]fairPart{}
	lc.top.reset(n, nil)
	var err error
	for r := 0; r < n && err == nil; r++ {
		if lc.bad(uint32(r)) && !lc.top.visited(uint32(r)) {
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
		if (p.FromInitial || lc.triggered(uint32(v))) && lc.bad(uint32(v)) && lc.reach[lc.top.comp(uint32(v))] {
			start = v
			break
		}
	}
	if start < 0 {
		return nil, nil
	}
	return lc.lasso(p, uint32(start))
}
