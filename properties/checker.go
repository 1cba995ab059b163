package properties

import (
	"bytes"
	"fmt"
	"slices"
	"sync/atomic"

	"lfccheck/explore"
	"lfccheck/model"
)

// Checker binds a system to the properties to check. It implements the
// explorer's model interface over canonical state encodings.
//
// A Checker holds scratch space for one worker. The static parts (system,
// properties) and the record of reached Sometimes goals are shared: Fork
// returns a checker for another goroutine, so a parallel explorer needs no
// change to protocols or properties.
type Checker struct {
	Sys   *model.System
	Def   *model.Def
	Props []Property
	// Reduce enables the ample-set reduction described at Successors.
	Reduce bool
	// LivenessGraph makes every liveness property be checked on the
	// recorded state graph, even where end states would do (see
	// OnEndStates).
	LivenessGraph bool
	// Symmetry enables the symmetry reduction described at Canonical
	// (Build turns it on when SymmetryOff returns ""; a caller that
	// changes LivenessGraph must ask SymmetryOff again).
	Symmetry bool
	// Relative makes the symmetry reduction store states in the relative
	// form (see relRep) where the system's symmetries act regularly on
	// the nodes (for each node exactly one maps it to node 0, as the
	// rotations of every node do); elsewhere it has no effect. Build
	// sets it; turning it off gives the same orbits with the absolute
	// form, for comparison.
	Relative bool

	reached   []atomic.Bool  // per property: a Sometimes goal was reached
	statVals  []atomic.Int64 // per Def.Stats entry: its sum or maximum so far
	statOn    []bool         // per Def.Stats entry: it applies to the machine (Stat.Applies)
	live      *liveness      // nil without liveness properties
	graphObls []obligation   // the liveness obligations the graph analysis checks
	labels    uint64         // their labels in the state last expanded

	sym        []model.Perm // the system's symmetries (without the identity)
	symInv     []model.Perm // their inverses
	toZero     []int        // with a regular group: per node i, the index in sym of the symmetry mapping i to node 0 (-1 for node 0), else nil
	slp        *sleepTab    // the actions' bits in sleep sets
	sleepOut   uint64       // SuccSleep
	tmp        model.World  // scratch for decoding the relative form
	segs       []byte       // relRep: each node's relative segment
	segAt      []int        // their start and end offsets in segs
	cur, next  model.World
	ren        model.World // scratch for renamings
	acts       []model.Action
	out        model.Outbox
	buf        []byte
	ends       []int  // segment ends of the encoding canonical made last
	deferState bool   // see DeferStateChecks
	ends2      []int  // scratch for renamedIfSmaller
	touched    []bool // scratch for invariantsAfter

	// While Successors expands a state (cacheOn): whether each node of
	// the successor being canonicalised is unchanged from the expanded
	// state (1) or not (0), the expanded state's encoding and its node
	// spans (start, end per node), and the renamed-node cache
	// (renamedNode): renamed encodings with their offsets per (node,
	// symmetry), -1 if absent.
	cacheOn bool
	same    []int8
	pEnc    []byte
	pAt     []int
	rEnc    []byte
	rAt     []int
	// segSame says which segments (a node and its outgoing links) are
	// unchanged from the expanded state, and sEnc/sAt cache whole renamed
	// segments per (node, symmetry) like rEnc/rAt.
	segSame []int8
	sEnc    []byte
	sAt     []int

	// The store's leaf ids and segment ends of the next state to expand
	// (UseLeaves), and the segments decoded by them.
	leafOwner uint64
	leafIDs   []uint32
	leafEnds  []int
	leafNext  bool
	segCache  *model.SegmentCache

	// Workers write the fields above at every successor: keep the next
	// allocation (another worker's checker) off their cache line.
	_ [64]byte
}

// Build resolves cfg against its registered protocol and builds the
// checker for the selected properties (all of the protocol's when
// cfg.Properties is empty). Reduction is on when the protocol allows it.
func Build(cfg model.Config) (*Checker, error) {
	def, err := model.Lookup(cfg.Protocol)
	if err != nil {
		return nil, err
	}
	cfg, err = def.Resolve(cfg)
	if err != nil {
		return nil, err
	}
	props, err := Select(def.Properties, cfg.Properties)
	if err != nil {
		return nil, err
	}
	m, err := def.New(cfg)
	if err != nil {
		return nil, err
	}
	return buildFor(def, cfg, props, m)
}

// BuildFor is Build for a machine the caller built from cfg (resolved,
// with def.New) and adapted (an in-process library's driving of its hosts,
// a workload that grows as it runs): the checker of its protocol's
// properties over it.
func BuildFor(cfg model.Config, m model.Machine) (*Checker, error) {
	def, err := model.Lookup(cfg.Protocol)
	if err != nil {
		return nil, err
	}
	props, err := Select(def.Properties, cfg.Properties)
	if err != nil {
		return nil, err
	}
	return buildFor(def, cfg, props, m)
}

func buildFor(def *model.Def, cfg model.Config, props []Property, m model.Machine) (*Checker, error) {
	sys, err := model.NewSystem(cfg, m)
	if err != nil {
		return nil, err
	}
	live, err := buildLiveness(sys, props)
	if err != nil {
		return nil, fmt.Errorf("protocol %s: %v", def.Name, err)
	}
	c := &Checker{Sys: sys, Props: props, reached: make([]atomic.Bool, len(props)), live: live}
	c.Def = def
	c.statVals = newStatVals(len(def.Stats))
	for _, s := range def.Stats {
		c.statOn = append(c.statOn, s.Applies == nil || s.Applies(m))
	}
	c.Reduce = c.CanReduce()
	if s, ok := m.(model.Symmetric); ok {
		c.sym = s.Symmetries()
		for i := range c.sym {
			c.symInv = append(c.symInv, *c.sym[i].Inverse())
		}
	}
	c.toZero = regularToZero(sys.P, c.sym)
	c.slp = newSleepTab(sys, c.sym)
	c.Symmetry = c.SymmetryOff() == ""
	c.Relative = true
	return c, nil
}

// newStatVals returns n zero statistics on cache lines of their own:
// every worker adds to its own at each transition, and two workers'
// small slices allocated side by side would otherwise share a line that
// both cores keep taking from each other.
func newStatVals(n int) []atomic.Int64 {
	const pad = 8 // 64 bytes of int64s
	return make([]atomic.Int64, pad+n+pad)[pad : pad+n : pad+n]
}

// NewChecker builds a checker with no reduction. It panics when a
// liveness property is malformed (a protocol definition error).
func NewChecker(sys *model.System, props []Property) *Checker {
	live, err := buildLiveness(sys, props)
	if err != nil {
		panic("properties: " + err.Error())
	}
	return &Checker{Sys: sys, Props: props, reached: make([]atomic.Bool, len(props)), live: live, slp: newSleepTab(sys, nil)}
}

// Fork returns a checker sharing c's system, properties, settings and
// reached goals, with scratch space of its own.
func (c *Checker) Fork() *Checker {
	return &Checker{Sys: c.Sys, Def: c.Def, Props: c.Props, Reduce: c.Reduce, LivenessGraph: c.LivenessGraph,
		Symmetry: c.Symmetry, Relative: c.Relative, deferState: c.deferState, sym: c.sym, symInv: c.symInv, toZero: c.toZero, slp: c.slp, reached: c.reached, statVals: c.statVals, statOn: c.statOn, live: c.live, graphObls: c.graphObls}
}

// NewWorker implements explore.Forker: a fork for another goroutine, with
// statistics of its own (the explorer collects them, see explore.Counter).
func (c *Checker) NewWorker() explore.Model {
	f := c.Fork()
	f.statVals = newStatVals(len(c.statVals))
	return f
}

// NewReplayer implements explore.Replayer: a fork whose statistics and
// reached goals are its own, for expanding states again (rebuilding a
// trace) without counting them twice.
func (c *Checker) NewReplayer() explore.Model {
	f := c.Fork()
	f.statVals = newStatVals(len(c.statVals))
	f.reached = make([]atomic.Bool, len(c.reached))
	return f
}

// segCacheMax bounds a worker's cache of decoded segments (UseLeaves).
const segCacheMax = 1 << 15

// UseLeaves implements explore.LeafUser: the next state this checker
// expands has segment i stored as leaf ids[i] of the store owner, ending
// at ends[i]; segments decoded before from the same leaf at the same
// position are copied instead of decoded again.
func (c *Checker) UseLeaves(owner uint64, ids []uint32, ends []int) {
	if c.segCache == nil {
		c.segCache = model.NewSegmentCache(segCacheMax)
	}
	c.leafOwner, c.leafNext = owner, true
	c.leafIDs = append(c.leafIDs[:0], ids...)
	c.leafEnds = append(c.leafEnds[:0], ends...)
}

// Segments implements explore.Segmenter: it appends the end offsets of the
// node segments (model.World.EncodeSegment) of the encoding this checker
// returned last (the initial state, or the successor last passed to
// visit).
func (c *Checker) Segments(dst []int) []int { return append(dst, c.ends...) }

// DeclaredAcyclic reports whether the protocol declares every run of the
// checked variant finite (Def.Acyclic, and the variant is not Cyclic).
func (c *Checker) DeclaredAcyclic() bool {
	if c.Def == nil || !c.Def.Acyclic {
		return false
	}
	v, err := c.Def.Variant(c.Sys.Cfg.Variant)
	return err == nil && !v.Cyclic
}

// CanReduce reports whether the ample-set reduction is sound for this
// checker: the protocol declares the variant's state graph acyclic and at
// least one action kind ample. Acyclicity makes the cycle proviso hold
// trivially, for safety and liveness properties alike (the liveness
// analysis reports a cycle in a graph declared acyclic as an internal
// error).
func (c *Checker) CanReduce() bool {
	if !c.DeclaredAcyclic() || c.SeenAmple() != "" {
		return false
	}
	for _, k := range c.Sys.Kinds {
		if k.Ample {
			return true
		}
	}
	return false
}

// SeenAmple names a checked property that sees the effect of an ample
// kind (Property.Sees), which rules the reduction out, or returns "".
func (c *Checker) SeenAmple() string {
	for _, k := range c.Sys.Kinds {
		if !k.Ample {
			continue
		}
		for i := range c.Props {
			for _, s := range c.Props[i].Sees {
				if s == k.Name {
					return fmt.Sprintf("property %s reads the effect of %q", c.Props[i].Name, k.Pattern)
				}
			}
		}
	}
	return ""
}

func violation(p *Property, err error) error {
	return &Violation{Property: p.Name, Message: err.Error()}
}

// StatValue is a statistic's value after a search.
type StatValue struct {
	Name  string `json:"name"`
	Doc   string `json:"doc"`
	Value int64  `json:"value"`
}

// Statistics returns the protocol's statistics (Def.Stats) as gathered so
// far.
func (c *Checker) Statistics() []StatValue {
	var out []StatValue
	if c.Def == nil {
		return nil
	}
	for i, s := range c.Def.Stats {
		if c.statOn[i] {
			out = append(out, StatValue{Name: s.Name, Doc: s.Doc, Value: c.statVals[i].Load()})
		}
	}
	return out
}

// CheckState checks the state invariants in w and notes reached goals.
func (c *Checker) CheckState(w *model.World) error {
	c.stateStats(w)
	return c.invariants(w)
}

// stateStats updates the state statistics (maxima) with w.
func (c *Checker) stateStats(w *model.World) {
	if c.Def != nil {
		for i, s := range c.Def.Stats {
			if s.State == nil || !c.statOn[i] {
				continue
			}
			v := s.State(w)
			for old := c.statVals[i].Load(); v > old && !c.statVals[i].CompareAndSwap(old, v); old = c.statVals[i].Load() {
			}
		}
	}
}

// invariants checks the state invariants in w and notes reached goals.
func (c *Checker) invariants(w *model.World) error { return c.checkInvariants(w, nil) }

// invariantsAfter is invariants for w, a successor of a state that
// satisfied every invariant, by the steps that w.Changed lists: a property
// with Local is checked only at the nodes those steps changed and at both
// ends of the links they changed. Where that is no less work than State
// (at least half the nodes touched), or without the list (too many
// steps), it is invariants.
func (c *Checker) invariantsAfter(w *model.World) error {
	P := c.Sys.P
	c.touched = c.touched[:0]
	for range P {
		c.touched = append(c.touched, false)
	}
	k := 0
	mark := func(i int) {
		if !c.touched[i] {
			c.touched[i] = true
			k++
		}
	}
	if !w.Changed(mark, func(l int) { mark(l / P); mark(l % P) }) || 2*k >= P {
		return c.invariants(w)
	}
	return c.checkInvariants(w, c.touched)
}

// checkInvariants checks the invariants in w and notes reached goals; with
// touched set, the properties with Local only at the touched nodes (a
// violation found so is reported with State's message, as invariants
// would report it).
func (c *Checker) checkInvariants(w *model.World, touched []bool) error {
	for i := range c.Props {
		p := &c.Props[i]
		if p.Sometimes != nil && !c.reached[i].Load() && p.Sometimes(w) {
			c.reached[i].Store(true)
		}
		switch {
		case p.State == nil:
		case p.Local == nil || touched == nil:
			if err := p.State(w); err != nil {
				return violation(p, err)
			}
		default:
			for n, t := range touched {
				if !t {
					continue
				}
				if err := p.Local(w, n); err != nil {
					if e := p.State(w); e != nil {
						err = e
					}
					return violation(p, err)
				}
			}
		}
	}
	return nil
}

// CheckNextStep is CheckStep for a driver that steps one world along a
// run: w passed every check before the steps since its last
// ClearChanges (one, action a, with outbox out), so the invariants with
// Local are checked only where those steps changed something.
func (c *Checker) CheckNextStep(w *model.World, a model.Action, out *model.Outbox) error {
	if err := c.checkRules(w, a, out); err != nil {
		return err
	}
	c.stateStats(w)
	return c.invariantsAfter(w)
}

// CheckStep checks the transition rules for action a, which led to w with
// outbox out, then the invariants in w.
func (c *Checker) CheckStep(w *model.World, a model.Action, out *model.Outbox) error {
	if err := c.checkRules(w, a, out); err != nil {
		return err
	}
	return c.CheckState(w)
}

// checkRules checks the transition rules for action a (and counts its step
// statistics), not the invariants of the state it led to.
func (c *Checker) checkRules(w *model.World, a model.Action, out *model.Outbox) error {
	if c.Def != nil {
		for i, s := range c.Def.Stats {
			if s.Step != nil && c.statOn[i] {
				c.statVals[i].Add(s.Step(w, a, out))
			}
		}
	}
	for i := range c.Props {
		if f := c.Props[i].Step; f != nil {
			if err := f(w, a, out); err != nil {
				return violation(&c.Props[i], err)
			}
		}
	}
	return nil
}

// DeferStateChecks implements explore.FreshChecker: from now on
// Successors leaves the invariants of each successor it passes to visit
// unchecked, and the explorer calls CheckFresh during visit for the
// successors it has not seen before. A state seen before was checked when
// it was new (and a renaming of it satisfies the same properties), so
// every reachable state is still checked, once. The states that fusion
// passes through satisfy what the state where it stops does (see
// fuseDeferred).
func (c *Checker) DeferStateChecks() { c.deferState = true }

// CheckFresh implements explore.FreshChecker: it checks the invariants of
// the successor being visited (its statistics are counted in Successors,
// for every successor, so that they belong to the transition). The state
// being expanded passed them (the explorer expands only states that
// did), so the properties with Local are checked where the successor's
// steps changed something (invariantsAfter).
func (c *Checker) CheckFresh() error { return c.invariantsAfter(&c.next) }

// Counts implements explore.Counter: the statistics counted by this
// checker (shared with the checker it was forked from, except for
// NewWorker's and NewReplayer's forks).
func (c *Checker) Counts(dst []int64) []int64 {
	for i := range c.statVals {
		dst = append(dst, c.statVals[i].Load())
	}
	return dst
}

// ResetCounts implements explore.Counter.
func (c *Checker) ResetCounts() {
	for i := range c.statVals {
		c.statVals[i].Store(0)
	}
}

// CountMax implements explore.Counter: state statistics are maxima, step
// statistics sums.
func (c *Checker) CountMax() []bool {
	var m []bool
	if c.Def != nil {
		for _, s := range c.Def.Stats {
			m = append(m, s.State != nil)
		}
	}
	return m
}

// SetCounts implements explore.Counter.
func (c *Checker) SetCounts(v []int64) {
	for i := range v {
		c.statVals[i].Store(v[i])
	}
}

// CheckFinal checks the conditions on a state without enabled actions,
// including the liveness properties checked on end states.
func (c *Checker) CheckFinal(w *model.World) error {
	for i := range c.Props {
		if f := c.Props[i].Final; f != nil {
			if err := f(w); err != nil {
				return violation(&c.Props[i], err)
			}
		}
	}
	return c.checkEnd(w)
}

// Reached implements explore.GoalKeeper: the Sometimes goals reached by
// a state checked so far, by name.
func (c *Checker) Reached() []string {
	var out []string
	for i := range c.reached {
		if c.reached[i].Load() {
			out = append(out, c.Props[i].Name)
		}
	}
	return out
}

// SetReached implements explore.GoalKeeper (a resumed search's record).
func (c *Checker) SetReached(names []string) error {
	for _, n := range names {
		i := slices.IndexFunc(c.Props, func(p model.Property) bool { return p.Name == n })
		if i < 0 || c.Props[i].Sometimes == nil {
			return fmt.Errorf("goal %q recorded, not among the properties checked", n)
		}
		c.reached[i].Store(true)
	}
	return nil
}

// Unreached lists the Sometimes goals no checked state has reached so far.
// After a complete search each of them is a violation: no reachable state
// satisfies it.
func (c *Checker) Unreached() []Violation {
	var out []Violation
	for i := range c.Props {
		if c.Props[i].Sometimes != nil && !c.reached[i].Load() {
			out = append(out, Violation{Property: c.Props[i].Name,
				Message: "no reachable state satisfies it: " + c.Props[i].Doc})
		}
	}
	return out
}

// Initial returns the encoded initial state and any invariant it violates.
func (c *Checker) Initial() ([]byte, error) {
	w := c.Sys.Initial()
	err := c.CheckState(w)
	if err == nil && len(w.Enabled(nil)) == 0 {
		err = c.CheckFinal(w)
	}
	return c.canonical(w, nil), err
}

// Explain returns the explanation the named property gives for a violation
// found in w, if it has one.
func (c *Checker) Explain(property string, w *model.World) *model.Explanation {
	for i := range c.Props {
		if c.Props[i].Name == property && c.Props[i].Explain != nil {
			e := c.Props[i].Explain(w)
			return &e
		}
	}
	return nil
}

// Successors calls visit for every enabled action of the encoded state with
// the action's code, the encoded successor (valid only during the call) and
// the violation the transition causes, if any; it stops when visit returns
// false. With no action enabled it returns the violated final condition, if
// any. The state satisfies every invariant (the explorer expands no other),
// so the properties with Local are checked only where a successor differs
// from it (invariantsAfter).
//
// With Reduce set, when an action of a kind the protocol declares Ample is
// enabled, it alone is explored (an ample set of one). The protocol
// declares such a kind independent of every other action, never disabled
// by another, and invisible to its properties except on terminal states;
// with an acyclic state graph (Def.Acyclic) the cycle proviso holds
// trivially, so the reduced graph keeps every terminal state and every
// violation of the state invariants and transition rules. Tests compare
// verdicts and terminal states with and without it.
//
// Fusion: in the reduced graph a state where an ample action is enabled has
// that action as its only successor, so the search need not store it:
// after every step, Successors applies the enabled ample actions at once
// (the first in enumeration order, again and again, checking the
// properties after each, as the reduced graph would have), and hands the
// explorer the state where none is enabled. The explorer stores only those
// states (for UCAST and MCAST, a copy and the processing of the copied
// packet become one transition); Actions rebuilds the actions a stored
// trace stands for. The initial state is expanded as before if an ample
// action is enabled in it.
func (c *Checker) Successors(state []byte, visit func(code uint32, succ []byte, err error) bool) error {
	return c.successors(state, 0, false, visit)
}

// successors is Successors, with sleep set z when asleep (see
// SuccessorsAsleep).
func (c *Checker) successors(state []byte, z uint64, asleep bool, visit func(code uint32, succ []byte, err error) bool) error {
	var err error
	// The state's node spans let canonical reuse the bytes of what a
	// successor shares with it.
	leaves := c.leafNext
	c.leafNext = false
	switch {
	case leaves && c.relative():
		c.pAt, err = c.Sys.DecodeLeaves(state, &c.cur, &c.tmp, c.pAt[:0], c.fromZero, c.segCache, c.leafOwner, c.leafIDs, c.leafEnds)
	case leaves:
		c.pAt, err = c.Sys.DecodeLeaves(state, &c.cur, nil, c.pAt[:0], nil, c.segCache, c.leafOwner, c.leafIDs, c.leafEnds)
	case c.relative():
		c.pAt, err = c.Sys.DecodeRenamed(state, &c.cur, &c.tmp, c.pAt[:0], c.fromZero)
	default:
		c.pAt, err = c.Sys.DecodeSpans(state, &c.cur, c.pAt[:0])
	}

	if err != nil {
		return err
	}
	if c.graphObls != nil {
		c.labels = c.LabelsOf(&c.cur)
	}
	c.acts = c.cur.Enabled(c.acts[:0])
	if len(c.acts) == 0 {
		return c.CheckFinal(&c.cur)
	}
	c.cacheNodes(state)
	defer func() { c.cacheOn = false }()
	if c.Reduce {
		for _, a := range c.acts {
			if c.Sys.Kinds[a.Kind].Ample {
				c.acts[0] = a
				c.acts = c.acts[:1]
				// An ample step is explored whatever the sleep set says
				// (only the initial state can have one), and its
				// successor sleeps on nothing.
				asleep, z = false, 0
				c.sleepOut = 0
				break
			}
		}
	}
	// next starts as a copy of cur; after each successor only what its
	// steps changed is copied back (model.World.Restore).
	c.next.CopyFrom(&c.cur)
	var before uint64 // asleep: the transitions explored so far
	for i, a := range c.acts {
		var bit uint64
		if asleep {
			if bit = c.slp.bit(a); z&bit != 0 {
				if !visit(a.Code(), nil, nil) {
					return nil
				}
				continue
			}
		}
		if i > 0 {
			c.next.Restore(&c.cur)
		}
		if err := c.next.Apply(a, &c.out); err != nil {
			return fmt.Errorf("enabled action failed: %w", err)
		}
		verr := c.checkRules(&c.next, a, &c.out)
		if verr == nil && c.Reduce {
			var err error
			if verr, err = c.fuseDeferred(&c.next); err != nil {
				return err
			}
		}
		if verr == nil {
			c.stateStats(&c.next)
			if !c.deferState {
				verr = c.invariantsAfter(&c.next)
			}
		}
		c.noteChanged(&c.next)
		var h int
		c.buf, h = c.orbitRep(&c.next, c.buf[:0])
		if asleep {
			c.sleepOut = c.slp.rename((z|before)&^c.slp.node[a.Node], h)
			before |= bit
		}
		if !visit(a.Code(), c.buf, verr) {
			return nil
		}
	}
	return nil
}

// noteChanged records, for canonical, which nodes (same) and which
// segments (segSame) of w, a successor of the state being expanded, are
// as in that state: those its steps did not change.
func (c *Checker) noteChanged(w *model.World) {
	P := c.Sys.P
	c.same, c.segSame = c.same[:0], c.segSame[:0]
	for range P {
		c.same, c.segSame = append(c.same, 1), append(c.segSame, 1)
	}
	if !w.Changed(func(i int) { c.same[i], c.segSame[i] = 0, 0 }, func(l int) { c.segSame[l/P] = 0 }) {
		for i := range P {
			c.same[i], c.segSame[i] = 0, 0
		}
	}
}

// Symmetries returns the renamings of node ids under which the system maps
// onto itself (without the identity), whether or not the reduction is on.
func (c *Checker) Symmetries() []model.Perm { return c.sym }

// SymmetryOff says why the symmetry reduction cannot run, or returns "":
// the system has no symmetry, or a liveness property is checked on the
// state graph, where the quotient would need a fairness-aware cycle
// proviso that is not implemented.
func (c *Checker) SymmetryOff() string {
	if len(c.sym) == 0 {
		return "the configuration has no symmetry (or the protocol declares none)"
	}
	if c.live != nil {
		for _, i := range c.live.props {
			if !c.OnEndStates(&c.Props[i]) {
				return fmt.Sprintf("liveness property %s is checked on the state graph", c.Props[i].Name)
			}
		}
	}
	return ""
}

// canonical appends to buf the canonical encoding of w: with Symmetry set,
// the smallest encoding of w and its renamings by the system's symmetries
// (one representative per orbit; the properties treat every node alike,
// so a state and its renamings satisfy the same ones, and the renamings
// commute with every action up to the renaming of its nodes), else w's.
//
// Counterexamples are found over representatives; Actions maps them back
// to a run from the real initial state.
func (c *Checker) canonical(w *model.World, buf []byte) []byte {
	buf, _ = c.orbitRep(w, buf)
	return buf
}

// orbitRep appends to buf the canonical encoding of w (see canonical) and
// returns the index in c.sym of the renaming that gives it, -1 for w
// itself.
func (c *Checker) orbitRep(w *model.World, buf []byte) ([]byte, int) {
	if c.relative() {
		return c.relRep(w, buf)
	}
	start := len(buf)
	c.ends = c.ends[:0]
	P := c.Sys.P
	for i, n := range w.Nodes {
		switch {
		case c.cacheOn && c.segSame[i] == 1:
			buf = append(buf, c.pEnc[c.pAt[2*i]:c.segEnd(i)]...)
		case c.cacheOn && c.same[i] == 1:
			buf = append(buf, c.pEnc[c.pAt[2*i]:c.pAt[2*i+1]]...)
			buf = w.AppendOutLinks(buf, i)
		default:
			buf = w.AppendOutLinks(n.Encode(buf), i)
		}
		c.ends = append(c.ends, len(buf)-start)
	}
	if !c.Symmetry {
		return buf, -1
	}
	if c.ren.Sys != w.Sys {
		c.ren = *w.Sys.Initial()
	}
	if !c.cacheOn {
		c.same, c.segSame = c.same[:0], c.segSame[:0]
		for range P {
			c.same, c.segSame = append(c.same, 0), append(c.segSame, 0)
		}
	}
	best := -1
	for i := range c.sym {
		var smaller bool
		if buf, smaller = c.renamedIfSmaller(w, i, buf); smaller {
			best = i
		}
	}
	return buf, best
}

// regularToZero returns, when the identity and syms act regularly on P
// nodes (each node is mapped to node 0 by exactly one of them), the index
// in syms of the one mapping node i to 0, per node (-1 for node 0);
// otherwise nil.
func regularToZero(P int, syms []model.Perm) []int {
	if P < 2 || len(syms)+1 != P {
		return nil
	}
	to := make([]int, P)
	for i := range to {
		to[i] = -1
	}
	for k, p := range syms {
		for i, n := range p.Node {
			if n != 0 {
				continue
			}
			if i == 0 || to[i] >= 0 {
				return nil // not regular: a renaming fixes node 0, or two map i to 0
			}
			to[i] = k
		}
	}
	for i := 1; i < P; i++ {
		if to[i] < 0 {
			return nil
		}
	}
	return to
}

// relative reports whether states are stored in the relative form.
func (c *Checker) relative() bool { return c.Symmetry && c.Relative && c.toZero != nil }

// RelativeForm reports whether the search stores states in the relative
// form (see relRep): the symmetry reduction is on, Relative is set, and
// the system's symmetries act regularly on its nodes.
func (c *Checker) RelativeForm() bool { return c.relative() }

// fromZero is the renaming that maps node 0 to node j (nil for j = 0):
// the inverse of the one that maps j to 0.
func (c *Checker) fromZero(j int) *model.Perm {
	if j == 0 {
		return nil
	}
	return &c.symInv[c.toZero[j]]
}

// relRep is orbitRep in the relative form, used where the symmetries act
// regularly on the nodes (toZero). Node i's relative segment R_i is its
// segment (the node, then its outgoing links) renamed by g_i, the
// symmetry that maps i to node 0, and written as node 0's. For a
// symmetry h, R_{h(i)} of h(w) is R_i of w (g_{h(i)}h maps i to 0, so it
// is g_i), so renaming a state only moves its relative segments: h(w)
// has R_i(w) at position h(i). The canonical form is the smallest of
// these arrangements, segment by segment (bytes.Compare on each); it
// determines the state up to renaming, since segment j of the state it
// stands for is its j-th relative segment renamed back from node 0 to
// node j (model.System.DecodeRenamed). Each renaming is compared without
// renaming anything: a successor renames only the nodes its steps
// changed (once each, to node 0), and takes the relative segments of the
// rest from the expanded state's encoding, where they are the segments at
// their nodes' positions.
func (c *Checker) relRep(w *model.World, buf []byte) ([]byte, int) {
	P := c.Sys.P
	if c.ren.Sys != w.Sys {
		c.ren = *w.Sys.Initial()
	}
	c.segs, c.segAt = c.segs[:0], c.segAt[:0]
	for i := 0; i < P; i++ {
		st := len(c.segs)
		switch {
		case c.cacheOn && c.segSame[i] == 1:
			c.segs = append(c.segs, c.pEnc[c.pAt[2*i]:c.segEnd(i)]...)
		case c.cacheOn && c.same[i] == 1:
			// The node is as in the expanded state, whose encoding
			// holds its relative form: only its links are renamed.
			c.segs = append(c.segs, c.pEnc[c.pAt[2*i]:c.pAt[2*i+1]]...)
			if i == 0 {
				c.segs = w.AppendOutLinks(c.segs, 0)
			} else {
				c.segs = c.renamedLinks(w, i, 0, c.toZero[i], c.segs)
			}
		case i == 0:
			c.segs = w.EncodeSegment(c.segs, 0)
		default:
			c.segs = c.renamedSegment(w, i, 0, c.toZero[i], c.segs)
		}
		c.segAt = append(c.segAt, st, len(c.segs))
	}
	// seg is the segment at position j when renaming h (an index in sym,
	// -1 for the identity) is applied: node i goes to h(i), so position j
	// holds R of h's preimage of j.
	seg := func(h, j int) []byte {
		if h >= 0 {
			j = int(c.symInv[h].Node[j])
		}
		return c.segs[c.segAt[2*j]:c.segAt[2*j+1]]
	}
	best := -1
	for h := range c.sym {
		for j := 0; j < P; j++ {
			if r := bytes.Compare(seg(h, j), seg(best, j)); r != 0 {
				if r < 0 {
					best = h
				}
				break
			}
		}
	}
	start := len(buf)
	c.ends = c.ends[:0]
	for j := 0; j < P; j++ {
		buf = append(buf, seg(best, j)...)
		c.ends = append(c.ends, len(buf)-start)
	}
	return buf, best
}

// segEnd is the end offset of segment i in the encoding of the state being
// expanded.
func (c *Checker) segEnd(i int) int {
	if i+1 < c.Sys.P {
		return c.pAt[2*i+2]
	}
	return len(c.pEnc)
}

// Decode overwrites w with the state whose canonical encoding (from
// Canonical, or a successor's from Successors) is b: with the relative
// form (see relRep), the orbit representative it stands for.
func (c *Checker) Decode(b []byte, w *model.World) error {
	if c.relative() {
		_, err := c.Sys.DecodeRenamed(b, w, &c.tmp, nil, c.fromZero)
		return err
	}
	return c.Sys.Decode(b, w)
}

// Canonical appends to buf the encoding of w's orbit representative (see
// canonical); without Symmetry, w's encoding.
func (c *Checker) Canonical(w *model.World, buf []byte) []byte { return c.canonical(w, buf) }

// renamedIfSmaller compares the encoding of w renamed by p with buf, the
// smallest encoding so far, piece by piece (a node, then its outgoing
// links, in encoding order), and stops at the first piece that decides it
// is larger; a smaller one replaces buf (and it reports true). Most
// renamings are decided by their first node, so the rest is neither
// renamed nor encoded.
func (c *Checker) renamedIfSmaller(w *model.World, k int, buf []byte) ([]byte, bool) {
	p, inv := &c.sym[k], &c.symInv[k]
	n, P := len(buf), c.Sys.P
	less := false
	// cmp compares the piece just appended at buf[off:] with the same
	// bytes of the best encoding; it reports whether to go on.
	cmp := func(off int) bool {
		if less {
			return true
		}
		piece := buf[off:]
		at := off - n
		if at >= n {
			return false // the best is a proper prefix: the renaming is larger
		}
		best := buf[at:n]
		m := min(len(piece), len(best))
		switch r := bytes.Compare(piece[:m], best[:m]); {
		case r < 0:
			less = true
			return true
		case r > 0:
			return false
		case len(piece) > len(best):
			return false // equal up to the end of the best: longer is larger
		}
		return true
	}
	sym := c.Sys.M.(model.Symmetric)
	c.ends2 = c.ends2[:0]
	for i := 0; i < P; i++ {
		off := len(buf)
		if src := int(inv.Node[i]); c.cacheOn && c.segSame[src] == 1 {
			// The whole renamed segment, from the cache or made once
			// for the rest of the successors.
			slot := src*len(c.sym) + k
			if at := c.sAt[2*slot]; at >= 0 {
				buf = append(buf, c.sEnc[at:c.sAt[2*slot+1]]...)
			} else {
				buf = c.renamedSegment(w, src, i, k, buf)
				c.sAt[2*slot] = len(c.sEnc)
				c.sEnc = append(c.sEnc, buf[off:]...)
				c.sAt[2*slot+1] = len(c.sEnc)
			}
			if !cmp(off) {
				return buf[:n], false
			}
			c.ends2 = append(c.ends2, len(buf)-n)
			continue
		}
		buf = c.renamedNode(w, int(inv.Node[i]), i, k, buf)
		if !cmp(off) {
			return buf[:n], false
		}
		for j := 0; j < P; j++ {
			if i == j {
				continue
			}
			off := len(buf)
			buf = model.AppendRenamedPackets(sym, buf, w.Links[int(inv.Node[i])*P+int(inv.Node[j])], p)
			if !cmp(off) {
				return buf[:n], false
			}
		}
		c.ends2 = append(c.ends2, len(buf)-n)
	}
	if !less {
		return buf[:n], false // equal: w is fixed by p
	}
	m := copy(buf, buf[n:])
	c.ends, c.ends2 = c.ends2, c.ends
	return buf[:m], true
}

// renamedNode appends the encoding of node j of w renamed by symmetry k
// (scratch node slot i). While Successors expands a state, the renamed
// encodings of the nodes that a successor shares with that state are
// remembered and reused by the next successors: most steps change one or
// two nodes, and a node's renamed encoding depends only on its own
// encoding.
func (c *Checker) renamedNode(w *model.World, j, i, k int, buf []byte) []byte {
	slot := -1
	if c.cacheOn {
		if c.same[j] == 1 {
			slot = j*len(c.sym) + k
			if at := c.rAt[2*slot]; at >= 0 {
				return append(buf, c.rEnc[at:c.rAt[2*slot+1]]...)
			}
		}
	}
	st := len(buf)
	if rc := model.CodesRenamed(w.Nodes[j]); rc != nil {
		buf = rc.EncodeRenamed(buf, &c.sym[k], &c.symInv[k])
	} else {
		node := c.ren.Nodes[i]
		node.(model.Renamable).RenameFrom(w.Nodes[j], &c.sym[k])
		buf = node.Encode(buf)
	}
	if slot >= 0 {
		c.rAt[2*slot] = len(c.rEnc)
		c.rEnc = append(c.rEnc, buf[st:]...)
		c.rAt[2*slot+1] = len(c.rEnc)
	}
	return buf
}

// cacheNodes starts the cache of renamed node encodings (renamedNode) for
// the successors of c.cur, whose encoding is state (c.pAt holds its
// nodes' spans).
func (c *Checker) cacheNodes(state []byte) {
	c.pEnc = state
	c.rEnc, c.rAt = c.rEnc[:0], c.rAt[:0]
	c.sEnc, c.sAt = c.sEnc[:0], c.sAt[:0]
	if c.Symmetry {
		for range 2 * len(c.cur.Nodes) * len(c.sym) {
			c.rAt = append(c.rAt, -1)
			c.sAt = append(c.sAt, -1)
		}
	}
	c.cacheOn = true
}

// renamedSegment appends segment src of w renamed by symmetry k, which
// puts it at position i: the renamed node, then its links in the order of
// the renamed destinations.
func (c *Checker) renamedSegment(w *model.World, src, i, k int, buf []byte) []byte {
	return c.renamedLinks(w, src, i, k, c.renamedNode(w, src, i, k, buf))
}

// renamedLinks appends the outgoing links of node src of w renamed by
// symmetry k, which puts src at position i, in the order of the renamed
// destinations.
func (c *Checker) renamedLinks(w *model.World, src, i, k int, buf []byte) []byte {
	P := c.Sys.P
	p, inv := &c.sym[k], &c.symInv[k]
	sym := c.Sys.M.(model.Symmetric)
	for j := 0; j < P; j++ {
		if i == j {
			continue
		}
		buf = model.AppendRenamedPackets(sym, buf, w.Links[src*P+int(inv.Node[j])], p)
	}
	return buf
}

// firstAmple returns the first enabled action of an ample kind in w.
func (c *Checker) firstAmple(w *model.World) (model.Action, bool) {
	for n := range w.Nodes {
		for ki, k := range c.Sys.Kinds {
			if k.Ample && k != model.Deliver && k.Enabled(w.Nodes[n]) {
				return model.Action{Kind: uint8(ki), Node: model.NodeID(n)}, true
			}
		}
	}
	return model.Action{}, false
}

// fuse applies enabled ample actions to w, one at a time, until none is
// enabled or one violates a property, appending them to done when it is
// not nil. It returns the violation (a property error) or an internal
// error.
func (c *Checker) fuse(w *model.World, done *[]model.Action) (verr error, err error) {
	for {
		a, ok := c.firstAmple(w)
		if !ok {
			return nil, nil
		}
		if err := w.Apply(a, &c.out); err != nil {
			return nil, fmt.Errorf("enabled ample action failed: %w", err)
		}
		if done != nil {
			*done = append(*done, a)
		}
		if verr := c.CheckStep(w, a, &c.out); verr != nil {
			return verr, nil
		}
	}
}

// fuseDeferred is fuse for Successors: it checks the transition rules of
// each action it applies, and no invariant: an ample action is invisible
// to every checked property (model.ActionKind.Ample; a property that sees
// the kind switches the reduction off), so each state it passes through
// satisfies the same invariants and goals as the state where it stops,
// which the caller checks (or defers, see DeferStateChecks). A violation
// in a state passed through is therefore reported for the transition, with
// the same message, and Actions, which checks every state, ends the trace
// there, as before.
func (c *Checker) fuseDeferred(w *model.World) (verr error, err error) {
	for {
		a, ok := c.firstAmple(w)
		if !ok {
			return nil, nil
		}
		if err := w.Apply(a, &c.out); err != nil {
			return nil, fmt.Errorf("enabled ample action failed: %w", err)
		}
		if verr := c.checkRules(w, a, &c.out); verr != nil {
			return verr, nil
		}
	}
}

// Actions rebuilds the actions that a trace of explorer action codes
// stands for: with Reduce set, each code is followed by the ample actions
// that Successors fused into it (it stops fusing at the first violation,
// as the search did). loop, the number of trailing codes that form a
// lasso's loop, becomes the number of trailing actions that do.
func (c *Checker) Actions(codes []uint32, loop int) ([]model.Action, int) {
	var acts []model.Action
	w := c.Sys.Initial()
	violated := false
	loopStart := 0
	for i, code := range codes {
		if i == len(codes)-loop {
			loopStart = len(acts)
		}
		a := model.ActionFromCode(code)
		if c.Symmetry && !violated {
			// Code i is an action of the representative of the state
			// reached so far: rename it back to the real state.
			var i int
			if c.buf, i = c.orbitRep(w, c.buf[:0]); i >= 0 {
				a = c.symInv[i].Action(c.Sys, a)
			}
		}
		acts = append(acts, a)
		if violated || !c.Reduce && !c.Symmetry {
			continue
		}
		if w.Apply(a, &c.out) != nil || c.CheckStep(w, a, &c.out) != nil {
			violated = true
			continue
		}
		if !c.Reduce {
			continue
		}
		if verr, err := c.fuse(w, &acts); verr != nil || err != nil {
			violated = true
		}
	}
	if loop == 0 {
		return acts, 0
	}
	return acts, len(acts) - loopStart
}

// ActionName names an action code.
func (c *Checker) ActionName(code uint32) string {
	return c.Sys.ActionName(model.ActionFromCode(code))
}
