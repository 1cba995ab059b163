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

// sleepTab numbers the actions of a system for sleep sets: per node, a
// bit per action kind other than Deliver, then one per link into it.
type sleepTab struct {
	kind []int    // per kind: its index among the kinds other than Deliver, or -1 for Deliver
	nk   int      // kinds other than Deliver
	per  int      // bits per node
	node []uint64 // per node: its bits
	ren  [][]uint8
}

// newSleepTab returns the table of sys with the renamings sym, or nil when
// its actions need more than 64 bits.
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
	if P*t.per > 64 {
		return nil
	}
	for n := range P {
		t.node[n] = (uint64(1)<<t.per - 1) << (n * t.per)
		if sleepAllIndependent {
			t.node[n] = 0
		}
	}
	for _, p := range sym {
		r := make([]uint8, P*t.per)
		for n := range P {
			to := int(p.Node[n])
			for k := range sys.Kinds {
				if t.kind[k] >= 0 {
					r[t.slot(k, n, 0)] = uint8(t.slot(k, to, 0))
					continue
				}
				for peer := range P {
					if peer != n {
						r[t.slot(k, n, peer)] = uint8(t.slot(k, to, int(p.Node[peer])))
					}
				}
			}
		}
		t.ren = append(t.ren, r)
	}
	return t
}

// slot is the bit number of the action of kind k by node n (from peer,
// for a delivery).
func (t *sleepTab) slot(k, n, peer int) int {
	if j := t.kind[k]; j >= 0 {
		return n*t.per + j
	}
	if peer > n {
		peer--
	}
	return n*t.per + t.nk + peer
}

// bit is action a's bit.
func (t *sleepTab) bit(a model.Action) uint64 {
	return 1 << t.slot(int(a.Kind), int(a.Node), int(a.Peer))
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
		return "the configuration has more than 64 actions (nodes x (kinds other than deliver + links into a node))"
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
