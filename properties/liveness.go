package properties

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"lfccheck/explore"
	"lfccheck/model"
)

// Liveness properties
//
// A liveness property says that something good eventually happens on every
// fair run: Eventually (from the initial state), LeadsTo (after every state
// where a trigger holds) and AlwaysEventually (again and again). Goals are
// predicates on states, evaluated by the explorer on the complete state
// graph (explore.Live describes the algorithm).
//
// Runs and end states: a run is infinite or ends in a state with no enabled
// action, which then counts as repeating for ever; nothing is enabled
// there, so every fairness condition holds. A terminal state where a goal
// is still due is therefore a counterexample, and a protocol's proper end
// states must satisfy its goals (for a delivery goal: every launched
// packet has been delivered). An improper end (a
// deadlock) usually violates both the deadlock property and the goal; the
// deadlock property is a safety condition and is found first.
//
// Fairness is declared by the protocol per action kind (model.ActionKind
// Fair and FairClass): links are weakly fair in the kernel; a protocol
// states in its package doc which of its own classes are fair and why.
//
// Two ways of checking: on the recorded state graph (explore.Live), or,
// for an AlwaysEventually property of a variant whose runs are all finite
// (Def.Acyclic, the variant not Cyclic), on end states alone: with no
// cycles, a fair run on which the goal stops holding must end, and its end
// state is then a state without enabled actions where the goal does not
// hold; conversely such an end state is itself a counterexample. This
// costs nothing beyond the search, whereas the graph costs about 5 bytes
// per transition and 9 per state. Checker.LivenessGraph forces the graph
// (tests use it to compare both ways, and the graph analysis then also
// checks that the graph is acyclic as declared).

// whole adapts a predicate on the whole world to the per-node signature.
func whole(f func(w *model.World) bool) func(*model.World, int) bool {
	return func(w *model.World, _ int) bool { return f(w) }
}

// Eventually builds "eventually goal": on every fair run from the initial
// state, goal holds at some point.
func Eventually(name, doc string, goal func(w *model.World) bool) Property {
	return Property{Name: name, Doc: doc, Live: model.Eventually, Goal: whole(goal)}
}

// LeadsTo builds "always (after implies eventually goal)": after every
// state where after holds, goal holds at some point (at once included).
func LeadsTo(name, doc string, after, goal func(w *model.World) bool) Property {
	return Property{Name: name, Doc: doc, Live: model.LeadsTo, After: whole(after), Goal: whole(goal)}
}

// LeadsToEach is LeadsTo for every node separately: for each node h,
// after every state where after(w, h) holds, goal(w, h) holds at some point.
func LeadsToEach(name, doc string, after, goal func(w *model.World, h int) bool) Property {
	return Property{Name: name, Doc: doc, Live: model.LeadsTo, PerNode: true, After: after, Goal: goal}
}

// AlwaysEventually builds "always eventually goal": goal holds again and
// again on every fair run (for a goal that, once true, stays true until
// new work arrives, such as "nothing is outstanding", this says that all
// work is eventually done).
func AlwaysEventually(name, doc string, goal func(w *model.World) bool) Property {
	return Property{Name: name, Doc: doc, Live: model.AlwaysEventually, Goal: whole(goal)}
}

// liveness is the checker's liveness setup: the obligations of its
// liveness properties and the fairness classes of the system's actions.
type liveness struct {
	props   []int        // indices into Checker.Props of every liveness property
	obls    []obligation // one per property, or per node of a PerNode one
	classes []explore.FairClass
	table   []int32 // per kind*P*P + node*P + peer: class index or -1
}

func buildLiveness(sys *model.System, props []Property) (*liveness, error) {
	l := &liveness{}
	for i := range props {
		if props[i].Live != model.NotLive {
			if props[i].Goal == nil || (props[i].Live == model.LeadsTo && props[i].After == nil) {
				return nil, fmt.Errorf("liveness property %s lacks its goal or trigger", props[i].Name)
			}
			l.props = append(l.props, i)
			if !props[i].PerNode {
				l.obls = append(l.obls, obligation{i, 0})
				continue
			}
			for h := 0; h < sys.P; h++ {
				l.obls = append(l.obls, obligation{i, h})
			}
		}
	}
	if len(l.props) == 0 {
		return nil, nil
	}
	if len(l.obls) > 32 {
		return nil, fmt.Errorf("at most 32 liveness obligations (properties, times nodes for per-node ones) can be checked at once, got %d", len(l.obls))
	}
	P := sys.P
	index := map[string]int{}
	l.table = make([]int32, len(sys.Kinds)*P*P)
	for ki, k := range sys.Kinds {
		for node := 0; node < P; node++ {
			for peer := 0; peer < P; peer++ {
				slot := (ki*P+node)*P + peer
				l.table[slot] = -1
				if k.Fair == model.Unfair {
					continue
				}
				name := k.ClassName(model.Action{Kind: uint8(ki), Node: model.NodeID(node), Peer: model.NodeID(peer)})
				c, ok := index[name]
				if !ok {
					c = len(l.classes)
					index[name] = c
					l.classes = append(l.classes, explore.FairClass{Name: name, Strong: k.Fair == model.Strong})
				} else if l.classes[c].Strong != (k.Fair == model.Strong) {
					return nil, fmt.Errorf("fairness class %q is declared both weak and strong", name)
				}
				l.table[slot] = int32(c)
			}
		}
	}
	return l, nil
}

// obligation is one liveness property, for one node if it is per node.
type obligation struct {
	prop, node int
}

// classOf returns the fairness class of action a, -1 for none.
func (l *liveness) classOf(sys *model.System, a model.Action) int {
	P := sys.P
	if int(a.Kind) >= len(sys.Kinds) || int(a.Node) >= P || int(a.Peer) >= P {
		return -1
	}
	return int(l.table[(int(a.Kind)*P+int(a.Node))*P+int(a.Peer)])
}

// OnEndStates reports whether liveness property p is checked on end
// states alone (see above).
func (c *Checker) OnEndStates(p *Property) bool {
	return p.Live == model.AlwaysEventually && !c.LivenessGraph && c.DeclaredAcyclic() && !c.stutters()
}

// stutters reports whether the protocol lets runs stop where only unfair
// actions are enabled (Def.Stutter).
func (c *Checker) stutters() bool { return c.Def != nil && c.Def.Stutter }

// unfairOnly returns the printed actions enabled in w when none of them
// has a fairness class (all nil when a fair one is enabled; an empty
// non-nil list when nothing is).
func (c *Checker) unfairOnly(w *model.World) []string {
	names := []string{}
	for _, a := range w.Enabled(nil) {
		if c.live.classOf(c.Sys, a) >= 0 {
			return nil
		}
		names = append(names, c.Sys.ActionName(a))
	}
	return names
}

// Live returns the explorer's liveness configuration for the liveness
// properties checked on the state graph, or nil when there are none. The
// explorer calls it at the start of a search; the checker then labels
// the states it expands for those properties.
func (c *Checker) Live() *explore.Live {
	c.graphObls = nil
	if c.live == nil {
		return nil
	}
	lv := &explore.Live{Classes: c.live.classes, Acyclic: c.DeclaredAcyclic(), Stutter: c.stutters(),
		ClassOf: func(code uint32) int { return c.live.classOf(c.Sys, model.ActionFromCode(code)) }}
	for _, o := range c.live.obls {
		p := &c.Props[o.prop]
		if !c.OnEndStates(p) {
			c.graphObls = append(c.graphObls, o)
			lv.Props = append(lv.Props, explore.LiveProp{Name: p.Name, FromInitial: p.Live == model.Eventually})
		}
	}
	if len(lv.Props) == 0 {
		return nil
	}
	// The graph analysis runs on the cover of representatives and
	// renamings (liveness_symmetry.go), or on the real graph.
	c.coverCodes = false
	if c.Symmetry && !c.OnTheFly {
		cv, why := c.liveCover(c.graphObls)
		if why != "" {
			c.Symmetry = false
		} else {
			lv.Cover, c.coverCodes = cv, true
		}
	}
	return lv
}

// HasLiveness reports whether the checker checks a liveness property.
func (c *Checker) HasLiveness() bool { return c.live != nil }

// LivenessNote says how the checker checks its liveness properties, or ""
// when it has none.
func (c *Checker) LivenessNote() string {
	if c.live == nil {
		return ""
	}
	var end, graph []string
	for _, i := range c.live.props {
		if c.OnEndStates(&c.Props[i]) {
			end = append(end, c.Props[i].Name)
		} else {
			graph = append(graph, c.Props[i].Name)
		}
	}
	var parts []string
	if len(end) > 0 {
		parts = append(parts, fmt.Sprintf("%s on end states (every run of variant %s is finite, as the protocol declares, so a fair run without the goal ends in a state with no enabled action)",
			strings.Join(end, ", "), c.Sys.Cfg.Variant))
	}
	if len(graph) > 0 {
		var fair []string
		for _, k := range c.Sys.Kinds {
			if k.Fair != model.Unfair {
				class := k.FairClass
				if class == "" {
					class = k.Pattern
				}
				fair = append(fair, fmt.Sprintf("%s per %q", k.Fair, class))
			}
		}
		if len(fair) == 0 {
			fair = []string{"none"}
		}
		acyc := ""
		if c.DeclaredAcyclic() {
			acyc = "; the graph must be acyclic, as the protocol declares, or the check ends with an internal error"
		}
		where := "on the recorded state graph"
		if c.OnTheFly {
			where = "by the on-the-fly search (--liveness-search scc: strongly connected components found as a depth-first search goes, no state graph kept)"
		}
		parts = append(parts, fmt.Sprintf("%s %s, for fair cycles and end states (fairness: %s%s)",
			strings.Join(graph, ", "), where, strings.Join(fair, "; "), acyc))
	}
	return strings.Join(parts, "; ")
}

// checkEnd checks the liveness properties checked on end states in w, a
// state with no enabled action.
func (c *Checker) checkEnd(w *model.World) error {
	if c.live == nil {
		return nil
	}
	for _, o := range c.live.obls {
		if p := &c.Props[o.prop]; c.OnEndStates(p) && !p.Goal(w, o.node) {
			return violation(p, fmt.Errorf("a run ends here, with no action enabled, and the goal does not hold%s", c.forNode(p, o.node)))
		}
	}
	return nil
}

// forNode names the node of a per-node obligation in messages.
func (c *Checker) forNode(p *Property, node int) string {
	if !p.PerNode {
		return ""
	}
	return fmt.Sprintf(" for node %d", node)
}

// LabelsOf returns the liveness labels of w for the properties the graph
// analysis checks: for the i-th of them, bit 2i is its trigger and bit
// 2i+1 its goal.
func (c *Checker) LabelsOf(w *model.World) uint64 {
	var l uint64
	for j, o := range c.graphObls {
		p := &c.Props[o.prop]
		if p.Live == model.AlwaysEventually || (p.Live == model.LeadsTo && p.After(w, o.node)) {
			l |= 1 << (2 * j)
		}
		if p.Goal(w, o.node) {
			l |= 1 << (2*j + 1)
		}
	}
	return l
}

// Labels implements explore.Labeler: the labels of the state most recently
// passed to Successors.
func (c *Checker) Labels() uint64 { return c.labels }

// CheckLasso checks the liveness properties on a run: states[i] is the
// state after i steps of acts. With loop > 0 the last loop actions must
// return to the state before them, and the run repeats them for ever; with
// loop 0 the run counts only if it ends in a state with no enabled action.
// It returns the first violated property with an explanation of how the
// run meets its fairness obligations, the step from which the goal never
// holds, or an error when the run is not a fair lasso.
func (c *Checker) CheckLasso(states []*model.World, acts []model.Action, loop int) (*Violation, *model.Explanation, int, error) {
	if c.live == nil {
		if loop > 0 {
			return nil, nil, 0, fmt.Errorf("the trace has a loop, but no liveness property is checked")
		}
		return nil, nil, 0, nil
	}
	last := len(states) - 1
	L := last - loop // index of the loop's first state
	if loop > 0 {
		if L < 0 {
			return nil, nil, 0, fmt.Errorf("the loop of %d steps is longer than the trace", loop)
		}
		if !bytes.Equal(states[L].Encode(nil), states[last].Encode(nil)) {
			return nil, nil, 0, fmt.Errorf("the loop (steps %d-%d) does not return to the state after step %d", L+1, last, L)
		}
	}
	var idle []string // loop 0: what is enabled in the state the run stays in
	if loop == 0 {
		idle = c.unfairOnly(states[last])
		if idle == nil || (len(idle) > 0 && !c.stutters()) {
			return nil, nil, 0, nil // a finite prefix says nothing about liveness
		}
	}
	var fair *model.Explanation
	if loop > 0 {
		var err error
		if fair, err = c.loopFairness(states[L:last], acts[L:], L); err != nil {
			return nil, nil, 0, err
		}
	}
	for _, o := range c.live.obls {
		p := &c.Props[o.prop]
		goals := make([]bool, len(states))
		for k, w := range states {
			goals[k] = p.Goal(w, o.node)
		}
		goal := func(k int) bool { return goals[k] }
		// The goal must fail at every state that recurs.
		from := last
		for from > 0 && !goal(from-1) {
			from--
		}
		if goal(last) || (loop > 0 && from > L) {
			continue
		}
		start := -1
		for k := from; k <= last && start < 0; k++ {
			if (p.Live == model.Eventually && k == 0) || p.Live == model.AlwaysEventually || (p.Live == model.LeadsTo && p.After(states[k], o.node)) {
				start = k
			}
		}
		if start < 0 {
			continue
		}
		v := &Violation{Property: p.Name}
		goalText := "the goal" + c.forNode(p, o.node)
		if loop > 0 {
			v.Message = fmt.Sprintf("%s never holds from step %d on: steps %d-%d repeat for ever, a fair loop", goalText, start, L+1, last)
			return v, fair, start, nil
		}
		if len(idle) > 0 {
			v.Message = fmt.Sprintf("%s never holds from step %d on: the run stays for ever in its state after step %d, where only actions without fairness are enabled", goalText, start, last)
			e := c.Explain(p.Name, states[last])
			if e == nil {
				e = &model.Explanation{Head: "enabled, none of them fair (the run may stop here for ever):", Lines: idle, Field: "stutter"}
			}
			return v, e, start, nil
		}
		v.Message = fmt.Sprintf("%s never holds from step %d on: the run ends after step %d with no action enabled", goalText, start, last)
		return v, c.Explain(p.Name, states[last]), start, nil
	}
	return nil, nil, 0, nil
}

// loopFairness checks that a loop (its states and actions, the first
// action being step base+1 of the trace) meets every fairness obligation
// and explains how.
func (c *Checker) loopFairness(states []*model.World, acts []model.Action, base int) (*model.Explanation, error) {
	nc := len(c.live.classes)
	takenAt := make([]int, nc)
	enabledIn := make([]int, nc)
	disabledAt := make([]int, nc)
	for k, w := range states {
		seen := make([]bool, nc)
		for _, a := range w.Enabled(nil) {
			if cl := c.live.classOf(c.Sys, a); cl >= 0 && !seen[cl] {
				seen[cl] = true
				enabledIn[cl]++
			}
		}
		for cl := range seen {
			if !seen[cl] && disabledAt[cl] == 0 {
				disabledAt[cl] = k + 1
			}
		}
	}
	for k, a := range acts {
		if cl := c.live.classOf(c.Sys, a); cl >= 0 && takenAt[cl] == 0 {
			takenAt[cl] = k + 1
		}
	}
	e := &model.Explanation{Head: "the loop is fair: every fairness obligation enabled in it is met", Field: "fairness"}
	var idle []string
	for cl, fc := range c.live.classes {
		kind := "weak"
		if fc.Strong {
			kind = "strong"
		}
		switch {
		case enabledIn[cl] == 0:
			idle = append(idle, fc.Name)
		case takenAt[cl] > 0:
			e.Lines = append(e.Lines, fmt.Sprintf("%s fairness of %s: taken at step %d", kind, fc.Name, takenAt[cl]+base))
		case !fc.Strong && disabledAt[cl] > 0:
			e.Lines = append(e.Lines, fmt.Sprintf("%s fairness of %s: not taken, but disabled after step %d", kind, fc.Name, disabledAt[cl]-1+base))
		default:
			return nil, fmt.Errorf("the loop is not fair: it never takes %s (%s fairness), which is enabled %s in it",
				fc.Name, kind, map[bool]string{true: "at some of its states", false: "throughout"}[fc.Strong])
		}
	}
	if len(idle) > 0 {
		sort.Strings(idle)
		e.Lines = append(e.Lines, fmt.Sprintf("never enabled in the loop: %d fair classes", len(idle)))
	}
	return e, nil
}
