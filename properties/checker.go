package properties

import (
	"fmt"
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
	// cyclic: the protocol does not declare the variant's runs finite, so
	// a reduction makes the run-time checks of checker_reduction.go.
	cyclic    bool
	ampEn     []model.Action // beforeAmple: the actions enabled before an ample step
	ampAfter  []model.Action // afterAmple's scratch
	ampLabels uint64         // beforeAmple: the liveness labels before it
	// LivenessGraph makes every liveness property be checked on the
	// recorded state graph, even where end states would do (see
	// OnEndStates).
	LivenessGraph bool
	// OnTheFly says the liveness properties on the state graph are
	// checked by the on-the-fly search (explore.LiveDFS), which keeps no
	// graph: Live then builds no cover (the caller turns Symmetry off)
	// and LivenessNote says so.
	OnTheFly bool
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
	// Stubborn restricts each expansion to a stubborn set (see
	// stubborn.go; Build turns it on when StubbornOff returns "").
	Stubborn   bool
	stb        *stubborn
	noStubborn string // NoStubborn's reason
	// StepCache memoizes the protocol's handlers in Successors (see
	// stepcache.go; off unless set: it has not been found to pay).
	StepCache bool
	sc        *stepCache
	scStats   *stepStats

	reached   []atomic.Bool  // per property: a Sometimes goal was reached
	statVals  []atomic.Int64 // per Def.Stats entry: its sum or maximum so far; then the stubborn-set counts (see newCounts)
	statOn    []bool         // per Def.Stats entry: it applies to the machine (Stat.Applies)
	live      *liveness      // nil without liveness properties
	graphObls []obligation   // the liveness obligations the graph analysis checks
	labels    uint64         // their labels in the state last expanded
	// coverCodes: successors' codes carry the renaming to their
	// representative (explore.PermCode), for the liveness analysis on
	// the cover (Live)
	coverCodes bool

	sym        []model.Perm // the system's symmetries (without the identity)
	symInv     []model.Perm // their inverses
	toZero     []int        // with a regular group: per node i, the index in sym of the symmetry mapping i to node 0 (-1 for node 0), else nil
	slp        *sleepTab    // the actions' bits in sleep sets
	sleepOut   uint64       // SuccSleep
	tmp        model.World  // scratch for decoding the relative form
	segs       []byte       // relRep: each node's relative segment
	segAt      []int        // their start and end offsets in segs
	segRef     [][]byte     // the segments by position, in segs or the expanded state's encoding
	cur, next  model.World
	ren        model.World // scratch for renamings
	acts       []model.Action
	out        model.Outbox
	buf        []byte
	ends       []int  // segment ends of the encoding canonical made last
	deferState bool   // see DeferStateChecks
	ends2      []int  // scratch for renamedIfSmaller
	touched    []bool // scratch for invariantsAfter
	changed    []bool // scratch for invariantsAfter
	// formsOK: the properties (by index, the first 64) whose State
	// checkForms found holding in next, the successor being passed to
	// visit; invariantsAfter does not check them again there.
	formsOK uint64
	// formsLater: with deferState, the conserved properties (by index,
	// the first 64) whose sums and bounds checkForms found kept by the
	// step to next, and whose State it left to CheckFresh (see
	// checkForms); formsAct is that step, formsErr the disagreement
	// CheckFresh found, which Successors returns after visit.
	formsLater uint64
	formsAct   model.Action
	formsErr   error

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
	if _, err := Select(def.Properties, def.PropertyNames(cfg.Properties)); err != nil {
		return nil, err // before the machine: a bad property is the first error
	}
	m, err := def.New(cfg)
	if err != nil {
		return nil, err
	}
	return BuildFor(cfg, m)
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
	props, err := Select(def.Properties, def.PropertyNames(cfg.Properties))
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
	for _, s := range def.Stats {
		c.statOn = append(c.statOn, s.Applies == nil || s.Applies(m))
	}
	c.Reduce = c.CanReduce()
	c.cyclic = !c.DeclaredAcyclic()
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
	c.stb = newStubborn(sys, props)
	c.newCounts()
	c.Stubborn = c.StubbornOff() == ""
	return c, nil
}

// NewChecker builds a checker with no reduction. It panics when a
// liveness property is malformed (a protocol definition error).
func NewChecker(sys *model.System, props []Property) *Checker {
	live, err := buildLiveness(sys, props)
	if err != nil {
		panic("properties: " + err.Error())
	}
	return &Checker{Sys: sys, Props: props, reached: make([]atomic.Bool, len(props)), live: live, slp: newSleepTab(sys, nil), cyclic: true}
}

// Fork returns a checker sharing c's system, properties, settings and
// reached goals, with scratch space of its own.
func (c *Checker) Fork() *Checker {
	return &Checker{Sys: c.Sys, Def: c.Def, Props: c.Props, Reduce: c.Reduce, cyclic: c.cyclic, LivenessGraph: c.LivenessGraph,
		OnTheFly: c.OnTheFly, Symmetry: c.Symmetry, Stubborn: c.Stubborn, stb: c.stb.fork(), noStubborn: c.noStubborn, Relative: c.Relative, deferState: c.deferState, sym: c.sym, symInv: c.symInv, toZero: c.toZero, slp: c.slp, reached: c.reached, statVals: c.statVals, statOn: c.statOn, live: c.live, graphObls: c.graphObls, coverCodes: c.coverCodes,
		StepCache: c.StepCache, scStats: c.scStats}
}

// NewWorker implements explore.Forker: a fork for another goroutine, with
// statistics of its own (the explorer collects them, see explore.Counter).
func (c *Checker) NewWorker() explore.Model {
	if c.StepCache && c.scStats == nil {
		c.scStats = new(stepStats) // shared with the workers
	}
	f := c.Fork()
	f.newCounts()
	return f
}

// NewReplayer implements explore.Replayer: a fork whose statistics and
// reached goals are its own, for expanding states again (rebuilding a
// trace) without counting them twice.
func (c *Checker) NewReplayer() explore.Model {
	f := c.Fork()
	f.newCounts()
	f.reached = make([]atomic.Bool, len(c.reached))
	f.scStats = nil // the cache's counts are the search's
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

// Initial returns the encoded initial state and any invariant it violates.
// With Reduce set, the enabled ample actions are applied to it first (as
// Successors fuses them into every step), so that the stored initial state
// is fully expanded too; Actions puts them at the head of every trace.
func (c *Checker) Initial() ([]byte, error) {
	w := c.Sys.Initial()
	err := c.CheckState(w)
	if err == nil && c.Reduce {
		var ierr error
		if err, ierr = c.fuse(w, nil, c.cyclic, false); ierr != nil {
			err = ierr // a wrong declaration: the search ends on it
		}
	}
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
// violation of the state invariants and transition rules. With cycles,
// the fusion below makes every stored state fully expanded, which is the
// proviso, and the conditions and run-time checks of checker_reduction.go
// keep liveness under fairness too. Tests compare verdicts and terminal
// states with and without it.
//
// Fusion: in the reduced graph a state where an ample action is enabled has
// that action as its only successor, so the search need not store it:
// after every step, Successors applies the enabled ample actions at once
// (the first in enumeration order, again and again, checking the
// properties after each, as the reduced graph would have), and hands the
// explorer the state where none is enabled. The explorer stores only those
// states (for a protocol whose host processing is ample, a copy and the
// processing of the copied packet become one transition); Actions rebuilds the actions a stored
// trace stands for. Initial fuses the ample actions enabled in the initial
// state in the same way.
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
	sc := c.stepMemo()
	defer func() {
		c.cacheOn = false
		if sc != nil {
			c.next.SetStepMemo(nil)
			sc.unshare(&c.next, true)
			sc.end()
		}
	}()
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
	if c.Stubborn {
		c.stb.newState()
		if leaves {
			c.stb.useLeaves(c.leafOwner, c.leafIDs, c.leafEnds)
		}
	}
	if c.Stubborn && len(c.acts) > 1 {
		if c.acts, err = c.stubbornSet(&c.cur, c.acts); err != nil {
			return err
		}
	}
	// next starts as a copy of cur; after each successor only what its
	// steps changed is copied back (model.World.Restore).
	c.next.CopyFrom(&c.cur)
	if sc != nil {
		c.next.SetStepMemo(sc)
	}
	var before uint64 // asleep: the transitions explored so far
	defer func() { c.formsOK, c.formsLater, c.formsErr = 0, 0, nil }()
	for i, a := range c.acts {
		c.formsOK, c.formsLater = 0, 0
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
			if sc != nil {
				sc.unshare(&c.next, false)
			}
			c.next.Restore(&c.cur)
		}
		if sc != nil {
			sc.begin(state, c.pAt)
		}
		if err := c.next.Apply(a, &c.out); err != nil {
			return fmt.Errorf("enabled action failed: %w", err)
		}
		if c.Stubborn {
			if err := c.checkStep(&c.cur, a, c.next.Nodes[a.Node], &c.out); err != nil {
				return err
			}
		}
		verr := c.checkRules(&c.next, a, &c.out)
		if verr == nil && c.Reduce {
			var err error
			if verr, err = c.fuse(&c.next, nil, c.cyclic, true); err != nil {
				return err
			}
		}
		if verr == nil && c.Stubborn {
			if err := c.checkForms(&c.cur, &c.next, a); err != nil {
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
		code := a.Code()
		if c.coverCodes && h >= 0 {
			code = explore.PermCode(code, h+1)
		}
		if !visit(code, c.buf, verr) {
			return c.formsErr
		}
		if c.formsErr != nil {
			return c.formsErr
		}
	}
	return nil
}

// ActionName names an action code.
func (c *Checker) ActionName(code uint32) string {
	return c.Sys.ActionName(model.ActionFromCode(code))
}
