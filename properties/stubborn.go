package properties

import (
	"bytes"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
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
// liveness properties checked on end states) keep their verdicts.
//
// What the reduction keeps besides (issue 39 item 3). Where the protocol
// declares every run finite (Checker.DeclaredAcyclic), every reachable
// state lies on a finite maximal run, and the reduced graph has, for each
// maximal run of the full graph, a run that is a reordering of it, built
// by moving, again and again, the first action of the current state's
// stubborn set that the rest of the run takes to the front. An action of
// a set that is not a commuting delivery moves only over steps of other
// nodes (the steps of one node depend on each other), so each node keeps
// its sequence of steps, in order, with the same node state before and
// after each, the same packet taken off a link (links are FIFO, and a
// link's sender and receiver keep their orders) and the same outbox. So:
//
//   - a step rule (model.Property.Step reads a's node after the step, a,
//     the outbox and the configuration) violated on a transition of the
//     full graph is violated on one of the reduced graph;
//   - a NodeLocal invariant (fails where Local fails at a node, Local
//     reads that node alone) keeps its verdict: the failing node state
//     occurs in the reduced graph;
//   - a Conserved invariant keeps its verdict: its sums change only by
//     steps, each by what it changes at its node, the packet it takes and
//     the packets it sends, and its Bounds are node-local; a state that
//     breaks a sum lies after a first step that changes it, and the same
//     step occurs in the reduced graph, after states that kept every sum;
//   - a Stable invariant (once failing, failing for ever) keeps its
//     verdict without any of this: a failing state leads to an end state,
//     which fails, and the reduced graph reaches every end state;
//   - reachability goals are not kept (a goal over several nodes need
//     not hold in a reordering): a check with one runs without the
//     reduction, as does one with an invariant in none of these forms,
//     or with a step rule or a non-stable invariant where runs are not
//     declared finite (Checker.StubbornOff).
//
// A delivery declared commuting (model.Dependencies.Commutes), explored
// alone, moves over other steps of its own node: that node then passes
// through the states d(s) instead of s. Such moves keep the verdicts above
// when d is invisible to the properties: in every state s where d is
// enabled, each NodeLocal Local and each Conservation's Bounds at d's
// node fail at s exactly when they fail at d(s), and for every other
// enabled step t of the node, t from s and from d(s), and d from s and
// from t(s), get the same verdict from every step rule and change the
// conserved sums by the same amounts (then, by induction along the node's
// steps, the reordered run fails exactly where the original did, or
// already at d). The search checks this wherever it explores a commuting
// delivery (checkCommutes) and tests check it on every state of full
// graphs. Without it (the checked properties read no node's states
// between steps) nothing is checked: end states do not depend on it.
//
// With the symmetry reduction the reduced run is renamed after each step;
// the properties are symmetric (each is checked at every node and pair),
// so a failing node state or step occurs renamed and is found. With the
// host-step fusion (ample sets), the fused steps after a step are all of
// its node (only its state changed, and a delivery is not ample): the
// argument holds for the fused steps as node-local steps, each of which
// the checker still checks.
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
	// ordered names a checked property that reads a node's states between
	// its steps (inOrder): checkCommutes then checks that commuting
	// deliveries are invisible to such properties.
	ordered string
	// conserved: the checked properties with Conservation (checkForms),
	// and checkForms' scratch.
	conserved []int
	delta     []int64
	mark      []bool
	nodes     []int
	links     []int

	sends    map[string]uint64 // localSends by node index and encoding
	key      []byte
	out      model.Outbox
	scratch  []model.Node // localSends' search: nodes by depth
	seen     map[string]bool
	stack    []model.Node
	queue    []int
	needSeen []bool
	// Per node of the state being examined (newState): its Pending and
	// its localSends, when known (mayAt and ownAt hold the state's
	// generation; each is computed only when needed).
	may, own     []uint64
	mayAt, ownAt []uint32
	gen          uint32
	// before[k*P+j]: node j's terms of the k-th conserved property's
	// sums in the state being examined, when beforeAt[k*P+j] is its
	// generation (checkForms, beforeTerms).
	before   [][]sumTerm
	beforeAt []uint32
	terms    []sumTerm        // appendTerms' scratch
	addT     func(int, int64) // appends to terms
	// The leaves of the state being examined, when the store gave them
	// (leafIDs, by position; nil otherwise), and localSends memoised by
	// leaf: a leaf at a position always decodes to the same node (as
	// model.SegmentCache relies on), so it needs no encoding as a key.
	leafIDs   []uint32
	leafEnds  []int
	leafOwner uint64
	leafSends map[leafKey]uint64
	// leafHot: a direct-mapped cache of leafSends' entries in front of
	// it (a lookup in the map costs about what it saves).
	leafHot hotSends[leafKey]
	// afterHot: localSends after a delivery, by the leaf of the node
	// before it and the delivery (deliverySends).
	afterHot hotSends[afterKey]
	// addD and subD add to and subtract from delta (checkForms), made
	// once: closures made per call escape to the heap.
	addD, subD func(int, int64)
	w1, w2     model.World
	w3, w4     model.World  // checkCommutes: d(w) and t(w)
	out2       model.Outbox // checkCommutes' outboxes (see invisibleSteps)
	out3       model.Outbox
	outD       model.Outbox
	enc1       []byte
	enc2       []byte
	// counts (shared by forks): states expanded with fewer actions than
	// enabled, and actions left out; the last two of the checker's
	// statVals (see newCounts), so that they are counted as its
	// statistics are.
	counts *[stubbornCounts]atomic.Int64
}

// localSendsCap bounds the states localSends visits; beyond it the node
// may send anywhere.
const localSendsCap = 256

// sendsMemoCap bounds the memo of localSends.
const sendsMemoCap = 1 << 16

// newStubborn builds the tables for checking props on sys, or returns nil
// when the protocol declares nothing that could reduce.
func newStubborn(sys *model.System, props []Property) *stubborn {
	dep, ok := sys.M.(model.Dependencies)
	if !ok {
		return nil
	}
	P := sys.P
	st := &stubborn{P: P, dep: dep, trig: make([][]uint64, P), comm: make([]bool, P*P), tset: make([]uint64, P*P)}
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
	for i := range props {
		if props[i].State != nil && props[i].Conserved != nil {
			st.conserved = append(st.conserved, i)
		}
	}
	st.ordered = inOrder(props)
	if !st.useful() {
		return nil
	}
	return st
}

// anyComm reports whether some link is declared commuting.
func (st *stubborn) anyComm() bool { return slices.Contains(st.comm, true) }

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
	return &stubborn{P: st.P, dep: st.dep, trig: st.trig, comm: st.comm, tset: st.tset, ordered: st.ordered, conserved: st.conserved, counts: st.counts}
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

// leafKey names a node by the leaf its segment is stored as: the store's
// leaf id, the node's position and the segment's length.
type leafKey struct {
	id  uint32
	pos uint32
	len int
}

type afterKey struct {
	leaf leafKey
	a    model.Action
	pkt  model.Packet
}

// hotSends is a direct-mapped cache of localSends masks by key K, 2^bits
// entries (made by reset).
type hotSends[K comparable] struct {
	e    []hotSend[K]
	bits uint
}

type hotSend[K comparable] struct {
	k    K
	m    uint64
	full bool
}

// reset empties the cache, making it with 2^bits entries the first time.
func (c *hotSends[K]) reset(bits uint) {
	if c.e == nil {
		c.e, c.bits = make([]hotSend[K], 1<<bits), bits
		return
	}
	clear(c.e)
}

// slot is the entry for a key with hash h.
func (c *hotSends[K]) slot(h uint64) *hotSend[K] {
	return &c.e[(h*0x9e3779b97f4a7c15)>>(64-c.bits)]
}

// hash is a key's hash for hotSends' slot.
func (k leafKey) hash() uint64 {
	return uint64(k.id)<<8 ^ uint64(k.pos) ^ uint64(k.len)<<40
}

// useLeaves says that the state examined since newState has segment j
// stored as leaf ids[j] of the store owner, ending at ends[j].
func (st *stubborn) useLeaves(owner uint64, ids []uint32, ends []int) {
	if st.leafSends == nil || st.leafOwner != owner || len(st.leafSends) >= sendsMemoCap {
		st.leafSends, st.leafOwner = map[leafKey]uint64{}, owner
		st.leafHot.reset(12)
		st.afterHot.reset(13)
	}
	st.leafIDs, st.leafEnds = ids, ends
}

// newState starts the examination of a state: what ownOf and mayOf knew
// of the previous one is forgotten.
func (st *stubborn) newState() {
	st.leafIDs, st.leafEnds = nil, nil
	if len(st.mayAt) < st.P {
		st.may, st.own, st.mayAt, st.ownAt = make([]uint64, st.P), make([]uint64, st.P), make([]uint32, st.P), make([]uint32, st.P)
	}
	if st.gen++; st.gen == 0 {
		clear(st.mayAt)
		clear(st.ownAt)
		clear(st.beforeAt)
		st.gen = 1
	}
}

// ownOf returns node j's localSends in w, the state examined since
// newState (computed once per state: it encodes the node).
func (c *Checker) ownOf(w *model.World, j int) uint64 {
	st := c.stb
	if st.ownAt[j] != st.gen {
		if st.leafIDs != nil {
			start := 0
			if j > 0 {
				start = st.leafEnds[j-1]
			}
			k := leafKey{id: st.leafIDs[j], pos: uint32(j), len: st.leafEnds[j] - start}
			e := st.leafHot.slot(k.hash())
			if !e.full || e.k != k {
				m, ok := st.leafSends[k]
				if !ok {
					m = c.localSends(w.Nodes[j], j)
					st.leafSends[k] = m
				}
				*e = hotSend[leafKey]{k: k, m: m, full: true}
			}
			st.own[j] = e.m
		} else {
			st.own[j] = c.localSends(w.Nodes[j], j)
		}
		st.ownAt[j] = st.gen
	}
	return st.own[j]
}

// deliverySends is localSends of node a.Node in the state after that
// delivery a left it in. A delivery's handler reads only the node and the packet
// (model.World.RunHandler), so where the store gave the leaves of the
// state before, the node after is named by its leaf before, the action
// and the packet: a direct-mapped cache by those needs no encoding of
// the node as a key.
func (c *Checker) deliverySends(a model.Action, after model.Node, out *model.Outbox) uint64 {
	st := c.stb
	i := int(a.Node)
	if st.leafIDs == nil || st.afterHot.e == nil || !out.Arrival {
		return c.localSends(after, i)
	}
	start := 0
	if i > 0 {
		start = st.leafEnds[i-1]
	}
	k := afterKey{leaf: leafKey{id: st.leafIDs[i], pos: uint32(i), len: st.leafEnds[i] - start}, a: a, pkt: out.Arrived}
	p := &k.pkt
	h := k.leaf.hash() ^ uint64(a.Code())<<20
	h ^= (uint64(p.Tag) | uint64(p.Src)<<8 | uint64(p.Credits)<<16 | uint64(p.Origin)<<24 | uint64(p.Hop)<<32 | uint64(p.Tree)<<40) * 0xff51afd7ed558ccd
	h ^= (uint64(p.Seq) | uint64(p.Val)<<16) * 0xc4ceb9fe1a85ec53
	e := st.afterHot.slot(h)
	if e.full && e.k == k {
		return e.m
	}
	m := c.localSends(after, i)
	*e = hotSend[afterKey]{k: k, m: m, full: true}
	return m
}

// mayOf returns node j's Pending in w, the state examined since newState.
func (c *Checker) mayOf(w *model.World, j int) uint64 {
	st := c.stb
	if st.mayAt[j] != st.gen {
		st.may[j] = st.dep.Pending(w.Nodes[j])
		st.mayAt[j] = st.gen
	}
	return st.may[j]
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
		mb := uint64(1) << uint(m)
		if c.mayOf(w, j)&mb != 0 {
			add(j, true) // any step of j, a commuting delivery too
			return
		}
		if c.ownOf(w, j)&mb != 0 {
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
	for h := 0; h < len(st.queue); h++ {
		m := st.queue[h]
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
	pending := c.mayOf(w, i)
	var trig, sent uint64
	deliver := c.Sys.Kinds[a.Kind] == model.Deliver
	if deliver {
		trig = st.tset[int(a.Peer)*st.P+i]
	}
	for _, t := range out.Sends {
		sent |= 1 << uint(t.To)
	}
	// A step of i's own sends only where its own steps could; a delivery
	// only to its Triggers or Pending. The localSends of i before and
	// after the step (each encodes the node) are computed only where
	// they can change the outcome.
	var own uint64
	switch {
	case deliver:
		own = pending | trig
	case sent != 0:
		own = c.ownOf(w, i)
	}
	if extra := sent &^ own; extra != 0 {
		why := "its own steps could not send to before"
		if deliver {
			why = "neither its Triggers nor its Pending names"
		}
		return c.wrongDeps(a, fmt.Sprintf("it sends to node %d, which %s", bits.TrailingZeros64(extra), why))
	}
	all := ^uint64(0) >> uint(64-st.P)
	allowed := pending | trig
	if allowed != all {
		allowed |= c.ownOf(w, i)
	}
	if allowed == all {
		return nil // the node could send anywhere before the step
	}
	later := st.dep.Pending(after)
	if deliver {
		later |= c.deliverySends(a, after, out)
	}
	// After a step of its own, what the node's own steps may send to is
	// within what they could before, by construction: localSends from
	// the state before tries that step and every own step after it
	// (localSends(after) is a subset of own, both being cut at
	// localSendsCap to all nodes), so only Pending is checked. After a
	// delivery it is what the declaration (Triggers) must cover.
	if extra := later &^ allowed; extra != 0 {
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
// enabled after the other, and both orders reach the same state. Where a
// checked property reads a node's states between its steps (st.ordered),
// it also checks that d is invisible to them (see invisible).
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
	if st.ordered != "" {
		// d alone, from w.
		st.w3.CopyFrom(w)
		if err := st.w3.Apply(d, &st.outD); err != nil {
			return err
		}
		if err := c.invisibleState(w, &st.w3, d); err != nil {
			return err
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
		e2 := st.w2.Apply(t, &st.out2)
		if e2 == nil && st.ordered != "" {
			st.w4.CopyFrom(&st.w2) // t(w)
		}
		if e2 == nil {
			e2 = st.w2.Apply(d, &st.out3)
		}
		if e1 == nil && e2 == nil {
			st.enc1 = st.w1.Encode(st.enc1[:0])
			st.enc2 = st.w2.Encode(st.enc2[:0])
			if bytes.Equal(st.enc1, st.enc2) {
				if st.ordered != "" {
					// w1: d then t (t's outbox in out); w2: t then d
					// (t's in out2, d's in out3); w3 = d(w), w4 = t(w).
					if err := c.invisibleSteps(w, d, t); err != nil {
						return err
					}
				}
				continue
			}
		}
		return fmt.Errorf("stubborn sets: the protocol's dependency declaration is wrong: %s is declared to commute with every step of node %d, but not with %s",
			c.Sys.ActionName(d), d.Node, c.Sys.ActionName(t))
	}
	return nil
}

// invisibleState checks that the commuting delivery d, from w to dw,
// changes no verdict of a node-local invariant or a Conservation's
// Bounds at its node, nor a Conservation's change of the sums.
func (c *Checker) invisibleState(w, dw *model.World, d model.Action) error {
	n := int(d.Node)
	for i := range c.Props {
		p := &c.Props[i]
		switch {
		case p.State == nil || p.Stable:
		case p.Conserved != nil:
			if (p.Conserved.Bounds(w, n) == nil) != (p.Conserved.Bounds(dw, n) == nil) {
				return c.visible(d, p, "its bounds at node "+strconv.Itoa(n))
			}
		case p.NodeLocal && p.Local != nil:
			if (p.Local(w, n) == nil) != (p.Local(dw, n) == nil) {
				return c.visible(d, p, "its verdict at node "+strconv.Itoa(n))
			}
		}
	}
	return nil
}

// invisibleSteps checks that the commuting delivery d and another enabled
// step t of its node in w keep, taken in either order, the verdicts of
// the step rules and the Conservations' changes of the sums: t from w and
// from d(w), d from w and from t(w) (the worlds checkCommutes left).
func (c *Checker) invisibleSteps(w *model.World, d, t model.Action) error {
	st := c.stb
	// t from w (w4, out2) and from d(w) (w1, out).
	if err := c.sameStep(w, &st.w4, &st.out2, &st.w3, &st.w1, &st.out, t, d); err != nil {
		return err
	}
	// d from w (w3, outD) and from t(w) (w2, out3).
	return c.sameStep(w, &st.w3, &st.outD, &st.w4, &st.w2, &st.out3, d, d)
}

// sameStep compares step a from b1 to a1 (outbox o1) with step a from b2
// to a2 (outbox o2): every step rule must give the same verdict and every
// Conservation the same change of the sums.
func (c *Checker) sameStep(b1, a1 *model.World, o1 *model.Outbox, b2, a2 *model.World, o2 *model.Outbox, a, d model.Action) error {
	st := c.stb
	for i := range c.Props {
		p := &c.Props[i]
		if p.Step != nil && (p.Step(a1, a, o1) == nil) != (p.Step(a2, a, o2) == nil) {
			return c.visible(d, p, "the verdict on "+c.Sys.ActionName(a))
		}
		if p.State == nil || p.Stable || p.Conserved == nil {
			continue
		}
		st.delta = c.stepDelta(p.Conserved, b1, a1, a, o1, st.delta[:0])
		k := len(st.delta)
		st.delta = c.stepDelta(p.Conserved, b2, a2, a, o2, st.delta)
		if !slices.Equal(st.delta[:k], st.delta[k:]) {
			return c.visible(d, p, "the change "+c.Sys.ActionName(a)+" makes to its sums")
		}
	}
	return nil
}

// stepDelta appends the change that step a, from before to after with
// outbox out, makes to the sums of cs: at a's node, the packet it took
// off its link and the packets it sent.
func (c *Checker) stepDelta(cs *model.Conservation, before, after *model.World, a model.Action, out *model.Outbox, dst []int64) []int64 {
	base := len(dst)
	for range cs.Sums(c.Sys) {
		dst = append(dst, 0)
	}
	add := func(q int, v int64) { dst[base+q] += v }
	sub := func(q int, v int64) { dst[base+q] -= v }
	n := int(a.Node)
	cs.Node(before, n, sub)
	cs.Node(after, n, add)
	if out.Arrival {
		cs.Packet(before, a.Peer, a.Node, out.Arrived, sub)
	}
	for _, t := range out.Sends {
		cs.Packet(after, a.Node, t.To, t.Pkt, add)
	}
	return dst
}

// visible is the error of a commuting delivery d that a property sees.
func (c *Checker) visible(d model.Action, p *Property, what string) error {
	return fmt.Errorf("stubborn sets: the protocol's dependency declaration is wrong for property %s: %s is declared to commute with every step of node %d, but it changes %s", p.Name, c.Sys.ActionName(d), d.Node, what)
}

// StubbornOff says why the stubborn-set reduction cannot be used for this
// check, or returns "". Each checked property must be kept (see the
// comment "What the reduction keeps"): decided on end states, or, where
// the protocol declares every run finite, a step rule or an invariant in
// a form the reduction keeps (model.Property: NodeLocal, Stable,
// Conserved).
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
	finite := c.DeclaredAcyclic()
	for i := range c.Props {
		p := &c.Props[i]
		switch {
		case p.Live != model.NotLive && !c.OnEndStates(p):
			return "liveness property " + p.Name + " is checked on the state graph"
		case p.Live != model.NotLive:
		case p.Sometimes != nil:
			return "property " + p.Name + " is a reachability goal (stubborn sets keep the end states and each node's steps, not every state)"
		case p.State != nil && !p.Stable && p.Conserved == nil && !(p.NodeLocal && p.Local != nil):
			return "property " + p.Name + " is an invariant over several nodes or links in no form the reduction keeps (model.Property: NodeLocal, Stable or Conserved)"
		case (p.State != nil || p.Step != nil) && !finite:
			return "property " + p.Name + " is decided between end states, and the protocol does not declare every run of variant " + c.Sys.Cfg.Variant + " finite (stubborn sets keep each node's steps, and stable violations, only along finite runs)"
		}
	}
	return ""
}

// inOrder names a checked property that reads a node's states between its
// steps (a step rule, a node-local or conserved invariant), for which
// the reduction must keep every node's sequence of steps, or returns "".
func inOrder(props []Property) string {
	for i := range props {
		p := &props[i]
		if p.Live != model.NotLive {
			continue
		}
		if p.Step != nil || p.State != nil && !p.Stable {
			return p.Name
		}
	}
	return ""
}

// StubbornKeeps says what the stubborn-set reduction keeps for this
// check's properties (when it is on).
func (c *Checker) StubbornKeeps() string {
	keeps := "every end state is reached, so deadlocks and end-state conditions keep their verdicts"
	if c.stb != nil && c.stb.ordered != "" {
		keeps = "every end state is reached, and each node's steps of every run in their order (the protocol declares every run finite), so deadlocks, end-state conditions, step rules, invariants of one node and conserved sums keep their verdicts"
	}
	for i := range c.Props {
		if c.Props[i].State != nil && c.Props[i].Stable {
			keeps += "; stable invariants (" + c.Props[i].Name + ") fail at the end states every violation leads to"
			break
		}
	}
	if c.stb != nil && c.stb.ordered != "" && c.stb.anyComm() {
		keeps += "; a delivery declared commuting, explored alone, must be invisible to those properties, which the search checks wherever one is enabled"
	}
	return keeps
}

// NoStubborn turns the stubborn-set reduction off for a reason of the
// caller's, which StubbornOff then gives.
func (c *Checker) NoStubborn(why string) {
	c.Stubborn, c.noStubborn = false, why
}

// StubbornCounts returns the states this checker expanded with a proper
// subset of their enabled actions and the actions it left out: after a
// search that collects the checker's statistics (explore.Counter), the
// whole search's, its checkpoints and workers included.
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
