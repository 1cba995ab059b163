package properties

import (
	"fmt"
	"slices"

	"lfccheck/model"
)

func violation(p *Property, err error) error {
	return &Violation{Property: p.Name, Message: err.Error()}
}

// CheckState checks the state invariants in w and notes reached goals.
func (c *Checker) CheckState(w *model.World) error {
	c.stateStats(w)
	return c.invariants(w)
}

// invariants checks the state invariants in w and notes reached goals.
func (c *Checker) invariants(w *model.World) error { return c.checkInvariants(w, nil, nil, 0) }

// invariantsAfter is invariants for w, a successor of a state that
// satisfied every invariant, by the steps that w.Changed lists: a property
// with Local is checked only at the nodes those steps changed and at both
// ends of the links they changed, and a NodeLocal one (whose Local reads
// the node alone) only at the nodes they changed. Where that is no less
// work than State (at least half the nodes touched), it is State, but
// for the NodeLocal properties; without the list (too many steps), it is
// invariants. In next, the successor Successors is passing to visit, the
// properties checkForms found holding (formsOK) are not checked again.
func (c *Checker) invariantsAfter(w *model.World) error {
	P := c.Sys.P
	var skip uint64
	if w == &c.next {
		skip = c.formsOK
	}
	c.touched, c.changed = c.touched[:0], c.changed[:0]
	for range P {
		c.touched = append(c.touched, false)
		c.changed = append(c.changed, false)
	}
	k := 0
	mark := func(i int) {
		if !c.touched[i] {
			c.touched[i] = true
			k++
		}
	}
	if !w.Changed(func(i int) { c.changed[i] = true; mark(i) }, func(l int) { mark(l / P); mark(l % P) }) {
		return c.checkInvariants(w, nil, nil, skip)
	}
	if 2*k >= P {
		return c.checkInvariants(w, nil, c.changed, skip)
	}
	return c.checkInvariants(w, c.touched, c.changed, skip)
}

// checkInvariants checks the invariants in w and notes reached goals; with
// touched set, the properties with Local only at the touched nodes, and
// with changed set, the NodeLocal ones only at the changed nodes (a
// violation found so is reported with State's message, as invariants
// would report it). The properties in skip (by index) are known to hold.
// Where the step cache made a node's state, a NodeLocal property's Local
// there may be its memo's (stepcache_checks.go).
func (c *Checker) checkInvariants(w *model.World, touched, changed []bool, skip uint64) error {
	for i := range c.Props {
		p := &c.Props[i]
		if p.Sometimes != nil && !c.reached[i].Load() && p.Sometimes(w) {
			c.reached[i].Store(true)
		}
		at := touched
		if p.NodeLocal && changed != nil {
			at = changed
		}
		switch {
		case p.State == nil:
		case i < 64 && skip&(1<<uint(i)) != 0:
		case p.Local == nil || at == nil:
			if err := p.State(w); err != nil {
				return violation(p, err)
			}
		default:
			for n, t := range at {
				if !t {
					continue
				}
				if err := c.nodeLocal(w, i, n); err != nil {
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
// fuse).
func (c *Checker) DeferStateChecks() { c.deferState = true }

// CheckFresh implements explore.FreshChecker: it checks the invariants of
// the successor being visited (its statistics are counted in Successors,
// for every successor, so that they belong to the transition). The state
// being expanded passed them (the explorer expands only states that
// did), so the properties with Local are checked where the successor's
// steps changed something (invariantsAfter).
//
// The States of conserved properties that checkForms left to it
// (formsLater) are evaluated first, as checkForms would have: where one
// fails although the step kept its sums, the declaration is wrong, and
// Successors returns that error once visit returns (CheckFresh then
// reports no violation).
func (c *Checker) CheckFresh() error {
	if c.formsLater != 0 {
		if c.laterForms(); c.formsErr != nil {
			return nil
		}
	}
	return c.invariantsAfter(&c.next)
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

// ConservedSums returns the sums that p's Conservation adds up in w (see
// model.Conservation), appended to dst.
func ConservedSums(p *Property, w *model.World, dst []int64) []int64 {
	cs := p.Conserved
	base := len(dst)
	for range cs.Sums(w.Sys) {
		dst = append(dst, 0)
	}
	add := func(i int, v int64) { dst[base+i] += v }
	P := w.Sys.P
	for n := range P {
		cs.Node(w, n, add)
	}
	for l, pkts := range w.Links {
		for _, pk := range pkts {
			cs.Packet(w, model.NodeID(l/P), model.NodeID(l%P), pk, add)
		}
	}
	return dst
}

// checkForms checks, for a transition the search explores (before, the
// expanded state, which satisfies every invariant, to after, the
// successor, as Changed says; a the step explored), the Conservation of each checked property
// that declares one against its State: the transition violates State
// exactly when it changes a sum (over the nodes and links it changed) or
// breaks Bounds at a node it changed. The stubborn-set reduction keeps
// the step-local form (see stubborn.go); a State that disagrees with it
// ends the search with an error naming the declaration wrong.
func (c *Checker) checkForms(before, after *model.World, a model.Action) error {
	st := c.stb
	if len(st.conserved) == 0 {
		return nil
	}
	P := c.Sys.P
	if len(st.mark) < P {
		st.mark = make([]bool, P)
	}
	clear(st.mark)
	st.nodes, st.links = st.nodes[:0], st.links[:0]
	node := func(i int) {
		if !st.mark[i] {
			st.mark[i] = true
			st.nodes = append(st.nodes, i)
		}
	}
	if !after.Changed(node, func(l int) { st.links = append(st.links, l) }) {
		st.nodes, st.links = st.nodes[:0], st.links[:0]
		for i := range P {
			st.nodes = append(st.nodes, i)
		}
		for l := range after.Links {
			st.links = append(st.links, l)
		}
	}
	slices.Sort(st.links)
	st.links = slices.Compact(st.links)
	changed := len(st.nodes) // the nodes the steps changed; then links' ends
	for _, l := range st.links {
		node(l / P)
		node(l % P)
	}
	for k, i := range st.conserved {
		p := &c.Props[i]
		cs := p.Conserved
		n := cs.Sums(c.Sys)
		if cap(st.delta) < n {
			st.delta = make([]int64, n)
		}
		st.delta = st.delta[:n]
		clear(st.delta)
		if st.addD == nil {
			st.addD = func(q int, v int64) { st.delta[q] += v }
			st.subD = func(q int, v int64) { st.delta[q] -= v }
		}
		add, sub := st.addD, st.subD
		for _, j := range st.nodes[:changed] {
			c.beforeTerms(cs, k, before, j, sub)
			c.afterTerms(cs, k, after, j, add)
		}
		for _, l := range st.links {
			from, to := model.NodeID(l/P), model.NodeID(l%P)
			for _, pk := range before.Links[l] {
				cs.Packet(before, from, to, pk, sub)
			}
			for _, pk := range after.Links[l] {
				cs.Packet(after, from, to, pk, add)
			}
		}
		step := ""
		for q, d := range st.delta {
			if d != 0 {
				step = fmt.Sprintf("it changes sum %d by %d", q, d)
				break
			}
		}
		for _, j := range st.nodes[:changed] {
			if step != "" {
				break
			}
			if err := c.bounds(cs, i, after, j); err != nil {
				step = err.Error()
			}
		}
		if step == "" && c.deferState && after == &c.next && i < 64 {
			// The step keeps every sum and bound: State must hold in
			// after. Where after is new to the search, CheckFresh checks
			// that; a state met before was checked when it was new (the
			// search ends at a state that fails it), so the check would
			// only repeat itself there (most successors of a search are
			// states met before).
			c.formsLater |= 1 << uint(i)
			c.formsAct = a
			continue
		}
		if err := c.formState(i, after, a, step); err != nil {
			return err
		}
	}
	return nil
}

// formState evaluates the State of conserved property i in after, the
// successor checkForms compared by step (its Local at the nodes that
// checkForms collected), and returns the error that names the property's
// conserved form wrong when the two disagree (step says whether the
// step broke a sum or bound). Where State holds it notes so in formsOK.
func (c *Checker) formState(i int, after *model.World, a model.Action, step string) error {
	p := &c.Props[i]
	var state error
	if p.Local == nil {
		state = p.State(after)
	} else {
		for _, j := range c.stb.nodes {
			if state = p.Local(after, j); state != nil {
				break
			}
		}
	}
	if state == nil && i < 64 {
		// Local held at every node the steps changed and at the ends
		// of every link they changed, in a successor of a state where
		// every invariant held: State holds (as invariantsAfter
		// assumes), and need not be checked again.
		c.formsOK |= 1 << uint(i)
	}
	switch {
	case step != "" && state == nil:
		return fmt.Errorf("stubborn sets: property %s's conserved form is wrong: after %s, %s, and State holds", p.Name, c.Sys.ActionName(a), step)
	case step == "" && state != nil:
		return fmt.Errorf("stubborn sets: property %s's conserved form is wrong: State fails after %s, which keeps every sum and bound (%v)", p.Name, c.Sys.ActionName(a), state)
	}
	return nil
}

// laterForms evaluates the States that checkForms left to CheckFresh
// (formsLater) in next, the new successor being visited; a disagreement
// is kept in formsErr, which Successors returns after visit.
func (c *Checker) laterForms() {
	later := c.formsLater
	c.formsLater = 0
	for i := range c.Props {
		if i >= 64 || later == 0 {
			break
		}
		if later&(1<<uint(i)) == 0 {
			continue
		}
		later &^= 1 << uint(i)
		if err := c.formState(i, &c.next, c.formsAct, ""); err != nil && c.formsErr == nil {
			c.formsErr = err
		}
	}
}
