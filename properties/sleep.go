package properties

import (
	"fmt"
	"math/bits"
	"sort"

	"lfccheck/model"
)

// Sleep sets (Godefroid's partial-order technique, here for the
// breadth-first search; see explore.Sleeper). Two actions of different
// nodes are independent: every action other than Deliver depends only on
// its node's state and changes only that node and the tails of the links
// out of it, and a delivery to node n pops the head of a link into n,
// which another node's step can only append to (model.ActionKind). So in
// a state where both are enabled neither disables the other and they
// commute. With fusion (Successors) a transition is an action followed by
// the ample steps it enables, which are its own node's (ample kinds are
// not deliveries and a stored state has none enabled), so the fused
// transitions of different nodes are independent too.
//
// A state's sleep set names transitions whose successors are reached
// through some other, already explored, interleaving: expanding state s
// with sleep set Z explores the enabled transitions not in Z, in order,
// and gives the successor through t the sleep set {u in Z or explored
// before t : u independent of t}. Sleep sets alone leave out transitions,
// never states: every reachable state is still visited (so deadlocks,
// invariants, terminal conditions and reachability goals are checked as
// before), and a transition left out is the same action as one explored
// from an earlier state of an interleaving of independent steps, where
// its node and the head of the link it reads were the same, so its
// outbox and its node's state after it were too: the transition rules
// and statistics (model.Property.Step, which may read only those) see
// what they would have seen. With the symmetry reduction a successor's
// sleep set is renamed with it onto its orbit's representative.

// sleepAllIndependent breaks the independence relation (tests).
var sleepAllIndependent = false

// sleepBits is the size of a sleep set: transitions are named by bits of
// a uint64.
const sleepBits = 64

// sleepTab numbers the actions of a system for sleep sets. An action's
// name is its node and, per node, its kind if not Deliver, else the link
// it delivers from: nodes x (kinds other than Deliver + links into a
// node) names in all. When there are more than 64, only 64 of them are
// tracked (have a bit): those enabled most often on a few random runs
// from the initial state (rankNames; the links a topology's trees never
// use, for one, are never enabled), then every node's kinds other than
// Deliver, then the links, node by node. An untracked action is never
// asleep and never put to sleep, and a renaming that maps a tracked name
// onto an untracked one drops it from the set. Leaving names out only
// makes sleep sets smaller, which is sound: each set stays a subset of
// the one the full table would give the same state (the contribution of
// a transition, (Z or explored before it) and independent of it, is
// monotone in Z), and a smaller set explores more transitions whose
// successors get sets no larger, so the search visits every state it
// would visit with all names tracked, at the same level.
type sleepTab struct {
	kind    []int    // per kind: its index among the kinds other than Deliver, or -1 for Deliver
	nk      int      // kinds other than Deliver
	per     int      // names per node
	bitOf   []int8   // per name: its bit, or -1 (untracked)
	node    []uint64 // per node: its bits
	ren     [][]int8 // per renaming, per bit: the bit it becomes, or -1
	tracked int      // names with a bit
}

// newSleepTab returns the table of sys with the renamings sym.
func newSleepTab(sys *model.System, sym []model.Perm) *sleepTab {
	P := sys.P
	t := &sleepTab{kind: make([]int, len(sys.Kinds)), node: make([]uint64, P)}
	for k, kd := range sys.Kinds {
		t.kind[k] = -1
		if kd != model.Deliver {
			t.kind[k] = t.nk
			t.nk++
		}
	}
	t.per = t.nk + P - 1
	t.bitOf = make([]int8, P*t.per)
	for g := range t.bitOf {
		t.bitOf[g] = -1
	}
	var byBit []int // the name of each bit
	track := func(g int) {
		if len(byBit) < sleepBits {
			t.bitOf[g] = int8(len(byBit))
			byBit = append(byBit, g)
		}
	}
	if len(t.bitOf) > sleepBits {
		for _, g := range t.rankNames(sys) {
			track(g)
		}
	}
	for n := range P {
		for j := range t.nk {
			if t.bitOf[n*t.per+j] < 0 {
				track(n*t.per + j)
			}
		}
	}
	for n := range P {
		for j := t.nk; j < t.per; j++ {
			if t.bitOf[n*t.per+j] < 0 {
				track(n*t.per + j)
			}
		}
	}
	t.tracked = len(byBit)
	for b, g := range byBit {
		if !sleepAllIndependent {
			t.node[g/t.per] |= 1 << b
		}
	}
	for _, p := range sym {
		r := make([]int8, len(byBit))
		for b, g := range byBit {
			n, j := g/t.per, g%t.per
			to := int(p.Node[n])
			if j < t.nk {
				r[b] = t.bitOf[to*t.per+j]
				continue
			}
			peer := j - t.nk
			if peer >= n {
				peer++
			}
			r[b] = t.bitOf[t.name(to, int(p.Node[peer]))]
		}
		t.ren = append(t.ren, r)
	}
	return t
}

// rankNames returns the names of the actions enabled in the states of a
// few runs from the initial state, each step chosen at random (a fixed
// seed: the table, and with it every count of the search, is the same on
// every run), most often enabled first. A run ends where no action is
// enabled or an action fails (the search will report that).
func (t *sleepTab) rankNames(sys *model.System) []int {
	const runs, steps = 16, 500
	count := make([]int, len(t.bitOf))
	rng := uint64(0x9e3779b97f4a7c15)
	var acts []model.Action
	var out model.Outbox
	for range runs {
		w := sys.Initial()
		for range steps {
			acts = w.Enabled(acts[:0])
			if len(acts) == 0 {
				break
			}
			for _, a := range acts {
				count[t.nameOf(a)]++
			}
			rng ^= rng << 13
			rng ^= rng >> 7
			rng ^= rng << 17
			if w.Apply(acts[rng%uint64(len(acts))], &out) != nil {
				break
			}
		}
	}
	var names []int
	for g, n := range count {
		if n > 0 {
			names = append(names, g)
		}
	}
	sort.SliceStable(names, func(i, j int) bool { return count[names[i]] > count[names[j]] })
	return names
}

// nameOf is action a's name.
func (t *sleepTab) nameOf(a model.Action) int {
	if j := t.kind[a.Kind]; j >= 0 {
		return int(a.Node)*t.per + j
	}
	return t.name(int(a.Node), int(a.Peer))
}

// name is the name of a delivery to node n from peer.
func (t *sleepTab) name(n, peer int) int {
	if peer > n {
		peer--
	}
	return n*t.per + t.nk + peer
}

// bit is action a's bit (0: untracked).
func (t *sleepTab) bit(a model.Action) uint64 {
	if b := t.bitOf[t.nameOf(a)]; b >= 0 {
		return 1 << b
	}
	return 0
}

// rename renames the sleep set z by the symmetry with index h (-1: none).
func (t *sleepTab) rename(z uint64, h int) uint64 {
	if h < 0 {
		return z
	}
	r := t.ren[h]
	var out uint64
	for z != 0 {
		i := bits.TrailingZeros64(z)
		z &= z - 1
		if b := r[i]; b >= 0 {
			out |= 1 << b
		}
	}
	return out
}

// SleepNote implements explore.SleepNoter: it says how many of the
// actions' names sleep sets track when they do not track them all.
func (c *Checker) SleepNote() string {
	if all := c.Sys.P * c.slp.per; c.slp.tracked < all {
		return fmt.Sprintf("%d of the %d actions (nodes x (kinds other than deliver + links into a node)) are tracked, the others never left out", c.slp.tracked, all)
	}
	return ""
}

// SleepOff implements explore.Sleeper: it says why sleep sets cannot be
// used, or returns "": a liveness property is checked on the state graph
// (whose edges sleep sets would leave out).
func (c *Checker) SleepOff() string {
	if c.Stubborn {
		return "the stubborn-set reduction is on"
	}
	for _, k := range c.Sys.Kinds {
		if k.Quiet {
			return fmt.Sprintf("action kind %q waits for quiet links (model.ActionKind.Quiet), so it is not independent of the steps that send to or deliver from its node", k.Pattern)
		}
	}
	if len(c.Sys.Faults()) > 0 {
		return FaultsOff + " (a fault step is not in the independence relation: it changes a link's head, and the budget other links' faults use)"
	}
	if c.live != nil {
		for _, i := range c.live.props {
			if !c.OnEndStates(&c.Props[i]) {
				return "liveness property " + c.Props[i].Name + " is checked on the state graph"
			}
		}
	}
	return ""
}

// SuccessorsAsleep implements explore.Sleeper: Successors of a state with
// sleep set z. A transition in z is passed to visit with a nil successor
// (so that successor indexes are Successors'); SuccSleep gives, during
// visit, the sleep set of the successor passed.
func (c *Checker) SuccessorsAsleep(state []byte, z uint64, visit func(code uint32, succ []byte, err error) bool) error {
	return c.successors(state, z, true, visit)
}

// SuccSleep implements explore.Sleeper.
func (c *Checker) SuccSleep() uint64 { return c.sleepOut }
