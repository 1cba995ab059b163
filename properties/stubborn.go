package properties

import (
	"bytes"
	"fmt"
	"math/bits"
	"sync/atomic"

	"lfccheck/model"
)

// Stubborn sets (Valmari's strong stubborn sets, the partial-order
// reduction for deadlocks). In a state, the search explores only the
// enabled actions of a set T of actions such that
//
//   - every action that depends on an enabled action of T is in T;
//   - for every disabled action of T, T holds a necessary enabling set:
//     actions of which every run that enables it takes one;
//   - T holds an enabled action if any is enabled.
//
// Then every run from the state to a state with no enabled action takes
// an action of T (the enabled ones stay enabled until one is taken), and
// the first it takes, independent of those before it, can be taken
// first: the reduced state graph reaches every state with no enabled
// action that the full graph reaches, each by a reordering of a full run
// (by induction on the run's length; with the symmetry reduction, on the
// run renamed onto the representative after each step). So deadlocks
// and the conditions checked on end states (model.Property.Final,
// liveness properties checked on end states) keep their verdicts. Other
// properties do not in general: invariants, step rules and reachability
// goals see the states and steps between, which a reordering changes,
// and a check that has any of them runs without the reduction
// (Checker.StubbornOff).
//
// Dependence comes from the kernel's rule (model.ActionKind): a step of
// node n other than a delivery reads and writes n's state and appends to
// the links out of n; a delivery into n also pops the head of its link.
// So steps of different nodes are independent (a send to a link whose
// head a delivery takes commutes with it), and the steps of one node
// depend on each other. The machine's model.Dependencies refines this:
// deliveries on a link it declares commuting are independent of every
// step of their node.
//
// The set is built from a seed node s whose steps are enabled: T holds
// the actions of a set N of nodes (starting from N = {s}): their steps,
// enabled or not, and the deliveries into them that do not commute; and
// the commuting deliveries into a node m of N too where m is marked full
// or the protocol says m is Waiting (a disabled step of m needs m's
// actions as its enabling set, and a commuting delivery enables a step
// of m only where m is Waiting: a returned resource may free what a
// waiting step needs). For each node m in N and each empty link j->m whose
// delivery T holds, the disabled delivery j->m needs an enabling set:
// the steps of j that may send to m, which by the declaration are
//
//   - if j's Pending holds m: any action of j (a delivery may let the
//     send go), so j joins N, full;
//   - if j's own steps, from its present state, may send to m (found by
//     trying them, Checker.localSends): those, so j joins N;
//   - and the deliveries k->j whose Triggers(k, j) hold m: T holds such a
//     delivery already if j is in N and the link does not commute;
//     otherwise, if the link is not empty, the delivery is enabled and j
//     joins N, and if it is empty, the delivery needs an enabling set of
//     its own, found the same way.
//
// (What j may send to, by its own steps or after deliveries, grows only by
// a delivery's Triggers: a send to m needs, before it, a delivery whose
// Triggers name m, unless j could send to m already.) The seed giving the
// fewest enabled actions is chosen (the first on a tie). An enabled
// delivery on a commuting link is a stubborn set of its own and is
// explored alone: it is independent of every other action.

// The search checks the declaration it relies on at every step it
// explores: a step of a node's own sends only where its own steps could,
// a delivery only to its Triggers and the node's Pending; after a step,
// what the node may send to (its own steps and Pending) was so before or,
// for a delivery, is named by Triggers; and wherever a commuting delivery
// is enabled beside other steps of its node, both orders of each pair
// must be possible and reach the same state, and where its node is not
// Waiting it must enable none of the node's steps and leave it so. A
// wrong declaration ends the search with an error.

// stubborn holds the stubborn-set tables of a system and a worker's
// scratch space.
type stubborn struct {
	P    int
	dep  model.Dependencies
	trig [][]uint64 // trig[j][m]: the nodes k whose deliveries into j may make j send to m
	comm []bool     // comm[k*P+j]: deliveries on k->j commute
	tset []uint64   // tset[k*P+j]: Triggers(k, j)

	sends    map[string]uint64 // localSends by node index and encoding
	key      []byte
	out      model.Outbox
	scratch  []model.Node // localSends' search: nodes by depth
	seen     map[string]bool
	stack    []model.Node
	queue    []int
	needSeen []bool
	// Per node of the state being examined (newState): its Pending and
	// its localSends, when known (mayAt holds the state's generation).
	may, own []uint64
	mayAt    []uint32
	gen      uint32
	w1, w2   model.World
	enc1     []byte
	enc2     []byte
	// counts (shared by forks): states expanded with fewer actions than
	// enabled, and actions left out.
	counts *[2]atomic.Int64
}

// localSendsCap bounds the states localSends visits; beyond it the node
// may send anywhere.
const localSendsCap = 256

// sendsMemoCap bounds the memo of localSends.
const sendsMemoCap = 1 << 16

func newStubborn(sys *model.System) *stubborn {
	dep, ok := sys.M.(model.Dependencies)
	if !ok {
		return nil
	}
	P := sys.P
	st := &stubborn{P: P, dep: dep, trig: make([][]uint64, P), comm: make([]bool, P*P), tset: make([]uint64, P*P), counts: new([2]atomic.Int64)}
	for j := range P {
		st.trig[j] = make([]uint64, P)
		for k := range P {
			if k == j {
				continue
			}
			st.comm[k*P+j] = dep.Commutes(model.NodeID(k), model.NodeID(j))
			t := dep.Triggers(model.NodeID(k), model.NodeID(j))
			st.tset[k*P+j] = t
			for m := range P {
				if t&(1<<uint(m)) != 0 {
					st.trig[j][m] |= 1 << uint(k)
				}
			}
		}
	}
	if !st.useful() {
		return nil
	}
	return st
}

// useful reports whether the declaration says more than the kernel's
// rule: some link commutes, or some delivery may not trigger every send.
func (st *stubborn) useful() bool {
	all := ^uint64(0) >> uint(64-st.P)
	for l, c := range st.comm {
		if c || l/st.P != l%st.P && st.tset[l] != all {
			return true
		}
	}
	return false
}

// fork returns tables sharing st's static part, with scratch of its own.
func (st *stubborn) fork() *stubborn {
	if st == nil {
		return nil
	}
	return &stubborn{P: st.P, dep: st.dep, trig: st.trig, comm: st.comm, tset: st.tset, counts: st.counts}
}

// localSends returns, as a bit set, the nodes node i may send to by its
// own steps alone (no delivery into it), from its state in w: every step
// of every kind other than Deliver, from every state those steps reach
// (all nodes when more than localSendsCap states are reached).
func (c *Checker) localSends(n model.Node, i int) uint64 {
	st := c.stb
	if st.sends == nil {
		st.sends, st.seen = map[string]uint64{}, map[string]bool{}
	}
	st.key = n.Encode(append(st.key[:0], byte(i)))
	if m, ok := st.sends[string(st.key)]; ok {
		return m
	}
	all := uint64(1)<<uint(st.P) - 1
	if st.P == 64 {
		all = ^uint64(0)
	}
	var mask uint64
	clear(st.seen)
	st.seen[string(st.key[1:])] = true
	st.stack = st.stack[:0]
	used := 0
	grab := func(src model.Node) model.Node {
		if used == len(st.scratch) {
			st.scratch = append(st.scratch, c.Sys.M.NewNode(model.NodeID(i)))
		}
		x := st.scratch[used]
		used++
		x.CopyFrom(src)
		return x
	}
	st.stack = append(st.stack, grab(n))
	var enc []byte
search:
	for len(st.stack) > 0 {
		x := st.stack[len(st.stack)-1]
		st.stack = st.stack[:len(st.stack)-1]
		for _, k := range c.Sys.Kinds {
			if k == model.Deliver || !k.Enabled(x) {
				continue
			}
			y := grab(x)
			st.out.Reset()
			k.Apply(y, &st.out)
			for _, t := range st.out.Sends {
				mask |= 1 << uint(t.To)
			}
			enc = y.Encode(enc[:0])
			if st.seen[string(enc)] {
				used--
				continue
			}
			if len(st.seen) >= localSendsCap {
				mask = all
				break search
			}
			st.seen[string(enc)] = true
			st.stack = append(st.stack, y)
		}
	}
	// Nodes of different ids with equal encodings may differ in their
	// static configuration: the key starts with the id.
	if len(st.sends) >= sendsMemoCap {
		clear(st.sends)
	}
	st.sends[string(st.key)] = mask
	return mask
}

// newState starts the examination of a state: what ownMay knew of the
// previous one is forgotten.
func (st *stubborn) newState() {
	if len(st.mayAt) < st.P {
		st.may, st.own, st.mayAt = make([]uint64, st.P), make([]uint64, st.P), make([]uint32, st.P)
	}
	if st.gen++; st.gen == 0 {
		clear(st.mayAt)
		st.gen = 1
	}
}

// ownMay makes st.own[j] and st.may[j] node j's localSends and Pending in
// w, the state examined since newState.
func (c *Checker) ownMay(w *model.World, j int) {
	st := c.stb
	if st.mayAt[j] != st.gen {
		st.own[j] = c.localSends(w.Nodes[j], j)
		st.may[j] = st.dep.Pending(w.Nodes[j])
		st.mayAt[j] = st.gen
	}
}

// stubbornSet keeps, of acts (the enabled actions of w, in enumeration
// order), those of a stubborn set, in the same order.
func (c *Checker) stubbornSet(w *model.World, acts []model.Action) ([]model.Action, error) {
	st := c.stb
	P := st.P
	for _, a := range acts {
		if c.Sys.Kinds[a.Kind] == model.Deliver && st.comm[int(a.Peer)*P+int(a.Node)] {
			if err := c.checkCommutes(w, a, acts); err != nil {
				return nil, err
			}
			st.counts[0].Add(1)
			st.counts[1].Add(int64(len(acts) - 1))
			acts[0] = a
			return acts[:1], nil
		}
	}
	var enabled [model.MaxNodes]int
	var active uint64
	for _, a := range acts {
		enabled[a.Node]++
		active |= 1 << uint(a.Node)
	}
	best, bestN := uint64(0), -1
	for s := range P {
		if active&(1<<uint(s)) == 0 {
			continue
		}
		inN := c.closure(w, s)
		n := 0
		for m := inN & active; m != 0; m &= m - 1 {
			n += enabled[bits.TrailingZeros64(m)]
		}
		if bestN < 0 || n < bestN {
			best, bestN = inN, n
			if n == enabled[s] {
				break
			}
		}
	}
	if bestN == len(acts) {
		return acts, nil
	}
	st.counts[0].Add(1)
	st.counts[1].Add(int64(len(acts) - bestN))
	out := acts[:0]
	for _, a := range acts {
		if best&(1<<uint(a.Node)) != 0 {
			out = append(out, a)
		}
	}
	return out, nil
}

// closure returns the nodes N of the stubborn set seeded by node s (see
// the stubborn-set comment).
func (c *Checker) closure(w *model.World, s int) uint64 {
	st := c.stb
	P := st.P
	var inN, full uint64
	if len(st.needSeen) < P*P {
		st.needSeen = make([]bool, P*P)
	} else {
		clear(st.needSeen)
	}
	add := func(j int, all bool) {
		b := uint64(1) << uint(j)
		if inN&b == 0 || all && full&b == 0 {
			st.queue = append(st.queue, j)
		}
		inN |= b
		if all {
			full |= b
		}
	}
	// need puts into T a necessary enabling set of the disabled delivery
	// j->m: the steps of j that may send to m.
	var need func(j, m int)
	need = func(j, m int) {
		b := uint64(1) << uint(j)
		if full&b != 0 || st.needSeen[j*P+m] {
			return
		}
		st.needSeen[j*P+m] = true
		c.ownMay(w, j)
		mb := uint64(1) << uint(m)
		if st.may[j]&mb != 0 {
			add(j, true) // any step of j, a commuting delivery too
			return
		}
		if st.own[j]&mb != 0 {
			add(j, false) // j's own steps
		}
		// The deliveries k->j whose Triggers name m: T holds one already
		// if j is in N and the link does not commute.
		for ks := st.trig[j][m]; ks != 0; ks &= ks - 1 {
			k := bits.TrailingZeros64(ks)
			if inN&b != 0 && !st.comm[k*P+j] {
				continue
			}
			if len(w.Links[k*P+j]) > 0 {
				add(j, false) // enabled: its node's steps depend on it
				continue
			}
			need(k, j)
		}
	}
	st.queue = append(st.queue[:0], s)
	inN |= 1 << uint(s)
	for len(st.queue) > 0 {
		m := st.queue[0]
		st.queue = st.queue[1:]
		// T holds m's steps and its deliveries that do not commute; the
		// commuting ones too where m is full (they may send where an
		// enabling set needs m to), or Waiting (they may enable a
		// disabled step of m: a returned resource frees what a waiting
		// step needs).
		also := full&(1<<uint(m)) != 0 || st.dep.Waiting(w.Nodes[m])
		for j := range P {
			if j != m && len(w.Links[j*P+m]) == 0 && (also || !st.comm[j*P+m]) {
				need(j, m)
			}
		}
	}
	return inN
}

// checkStep checks a step the search explores against the machine's
// Triggers and Pending: w is the state before the step (examined since
// newState), after its node's state after, out the step's outbox. What the node may send
// to after the step, by its own steps or after deliveries (Pending),
// must be what it could before, or named by Triggers for a delivery.
func (c *Checker) checkStep(w *model.World, a model.Action, after model.Node, out *model.Outbox) error {
	st := c.stb
	i := int(a.Node)
	c.ownMay(w, i)
	pending := st.may[i]
	var trig, sent uint64
	deliver := c.Sys.Kinds[a.Kind] == model.Deliver
	if deliver {
		trig = st.tset[int(a.Peer)*st.P+i]
	}
	for _, t := range out.Sends {
		sent |= 1 << uint(t.To)
	}
	own := st.own[i] // a step of i's own sends only there
	if deliver {
		own = pending | trig // a delivery only to its Triggers or Pending
	}
	later := c.localSends(after, i) | st.dep.Pending(after)
	if extra := sent &^ own; extra != 0 {
		why := "its own steps could not send to before"
		if deliver {
			why = "neither its Triggers nor its Pending names"
		}
		return c.wrongDeps(a, fmt.Sprintf("it sends to node %d, which %s", bits.TrailingZeros64(extra), why))
	}
	if extra := later &^ (st.own[i] | pending | trig); extra != 0 {
		why := "Pending may grow only by a delivery's Triggers"
		if deliver {
			why = fmt.Sprintf("Triggers(%d, %d) does not name it", a.Peer, a.Node)
		}
		return c.wrongDeps(a, fmt.Sprintf("node %d may then send to node %d, which it could not before, and %s", i, bits.TrailingZeros64(extra), why))
	}
	return nil
}

// wrongDeps is the error of a step that breaks the machine's dependency
// declaration.
func (c *Checker) wrongDeps(a model.Action, what string) error {
	return fmt.Errorf("stubborn sets: the protocol's dependency declaration is wrong: after %s, %s", c.Sys.ActionName(a), what)
}

// checkCommutes checks the delivery d on a link declared commuting
// against every other enabled step of its node in w (acts): each stays
// enabled after the other, and both orders reach the same state.
func (c *Checker) checkCommutes(w *model.World, d model.Action, acts []model.Action) error {
	st := c.stb
	if n := w.Nodes[d.Node]; !st.dep.Waiting(n) {
		// Not Waiting: d enables no step of its node and leaves it so.
		st.w1.CopyFrom(w)
		if err := st.w1.Apply(d, &st.out); err != nil {
			return err
		}
		after := st.w1.Nodes[d.Node]
		for _, k := range c.Sys.Kinds {
			if k != model.Deliver && k.Enabled(after) && !k.Enabled(n) {
				return fmt.Errorf("stubborn sets: the protocol's dependency declaration is wrong: %s enables %q at node %d, which is not Waiting", c.Sys.ActionName(d), k.Name, d.Node)
			}
		}
		if st.dep.Waiting(after) {
			return fmt.Errorf("stubborn sets: the protocol's dependency declaration is wrong: %s makes node %d Waiting", c.Sys.ActionName(d), d.Node)
		}
	}
	for _, t := range acts {
		if t == d || t.Node != d.Node {
			continue
		}
		st.w1.CopyFrom(w)
		st.w2.CopyFrom(w)
		e1 := st.w1.Apply(d, &st.out)
		if e1 == nil {
			e1 = st.w1.Apply(t, &st.out)
		}
		e2 := st.w2.Apply(t, &st.out)
		if e2 == nil {
			e2 = st.w2.Apply(d, &st.out)
		}
		if e1 == nil && e2 == nil {
			st.enc1 = st.w1.Encode(st.enc1[:0])
			st.enc2 = st.w2.Encode(st.enc2[:0])
			if bytes.Equal(st.enc1, st.enc2) {
				continue
			}
		}
		return fmt.Errorf("stubborn sets: the protocol's dependency declaration is wrong: %s is declared to commute with every step of node %d, but not with %s",
			c.Sys.ActionName(d), d.Node, c.Sys.ActionName(t))
	}
	return nil
}

// StubbornOff says why the stubborn-set reduction cannot be used for this
// check, or returns "".
func (c *Checker) StubbornOff() string {
	if c.noStubborn != "" {
		return c.noStubborn
	}
	if c.stb == nil {
		return "the protocol declares no dependencies that could reduce anything (model.Dependencies)"
	}
	for _, k := range c.Sys.Kinds {
		if k.Quiet {
			return "action kind " + k.Pattern + " waits for quiet links (model.ActionKind.Quiet)"
		}
	}
	if len(c.Sys.Faults()) > 0 {
		return FaultsOff + " (the protocol's dependencies are declared for reliable links; a fault step reads and changes a link and the budget every other fault uses)"
	}
	for i := range c.Props {
		p := &c.Props[i]
		switch {
		case p.Live != model.NotLive && !c.OnEndStates(p):
			return "liveness property " + p.Name + " is checked on the state graph"
		case p.Live != model.NotLive:
		case p.State != nil:
			return "property " + p.Name + " is an invariant (stubborn sets keep the end states, not every state)"
		case p.Step != nil:
			return "property " + p.Name + " is a step rule (stubborn sets keep the end states, not every step)"
		case p.Sometimes != nil:
			return "property " + p.Name + " is a reachability goal (stubborn sets keep the end states, not every state)"
		}
	}
	return ""
}

// NoStubborn turns the stubborn-set reduction off for a reason of the
// caller's, which StubbornOff then gives.
func (c *Checker) NoStubborn(why string) {
	c.Stubborn, c.noStubborn = false, why
}

// StubbornCounts returns the states this checker expanded with a proper
// subset of their enabled actions and the actions it left out.
func (c *Checker) StubbornCounts() (states, left int64) {
	if c.stb == nil {
		return 0, 0
	}
	return c.stb.counts[0].Load(), c.stb.counts[1].Load()
}

// CheckDependencies checks the machine's dependency declaration at one
// state (an encoding the checker produced), as a reduced search does
// along its way but for every enabled step: each step against Triggers
// and Pending, and each enabled delivery declared commuting against the
// other enabled steps of its node. Tests run it on every state of full
// searches. It returns nil when the machine declares nothing.
func (c *Checker) CheckDependencies(state []byte) error {
	if c.stb == nil {
		return nil
	}
	var w, next model.World
	if err := c.Decode(state, &w); err != nil {
		return err
	}
	acts := w.Enabled(nil)
	c.stb.newState()
	for _, a := range acts {
		if c.Sys.Kinds[a.Kind] == model.Deliver && c.stb.comm[int(a.Peer)*c.stb.P+int(a.Node)] {
			if err := c.checkCommutes(&w, a, acts); err != nil {
				return err
			}
		}
		next.CopyFrom(&w)
		var out model.Outbox
		if err := next.Apply(a, &out); err != nil {
			return err
		}
		if err := c.checkStep(&w, a, next.Nodes[a.Node], &out); err != nil {
			return err
		}
	}
	return nil
}
