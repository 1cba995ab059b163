package properties

import (
	"math/bits"

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

// sleepTab numbers the actions of a system for sleep sets: a bit per
// (node, kind) and per (node, link into it).
type sleepTab struct {
	kinds int      // number of action kinds
	per   int      // bits per node: one per kind, then one per sending peer
	node  []uint64 // per node: its bits
	ren   [][]uint8
	del   []bool // per kind: it is Deliver
}

// newSleepTab returns the table of sys with the renamings sym, or nil when
// its actions need more than 64 bits.
func newSleepTab(sys *model.System, sym []model.Perm) *sleepTab {
	P, K := sys.P, len(sys.Kinds)
	per := K + P
	if P*per > 64 {
		return nil
	}
	t := &sleepTab{kinds: K, per: per, node: make([]uint64, P), del: make([]bool, K)}
	for k, kd := range sys.Kinds {
		t.del[k] = kd == model.Deliver
	}
	for n := range P {
		t.node[n] = (uint64(1)<<per - 1) << (n * per)
		if sleepAllIndependent {
			t.node[n] = 0
		}
	}
	for _, p := range sym {
		r := make([]uint8, P*per)
		for n := range P {
			for j := range per {
				to := int(p.Node[n])*per + j
				if j >= K {
					to = int(p.Node[n])*per + K + int(p.Node[j-K])
				}
				r[n*per+j] = uint8(to)
			}
		}
		t.ren = append(t.ren, r)
	}
	return t
}

// bit is action a's bit.
func (t *sleepTab) bit(a model.Action) uint64 {
	j := int(a.Kind)
	if t.del[a.Kind] {
		j = t.kinds + int(a.Peer)
	}
	return 1 << (int(a.Node)*t.per + j)
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
		out |= 1 << r[i]
	}
	return out
}

// SleepOff implements explore.Sleeper: it says why sleep sets cannot be
// used, or returns "": the system's actions need more than 64 bits, or a
// liveness property is checked on the state graph (whose edges sleep sets
// would leave out).
func (c *Checker) SleepOff() string {
	if c.slp == nil {
		return "the configuration has more than 64 actions (nodes x (kinds + nodes))"
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
