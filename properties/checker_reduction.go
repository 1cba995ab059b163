package properties

import (
	"fmt"
	"slices"

	"lfccheck/explore"
	"lfccheck/model"
)

// The ample-set reduction
//
// A protocol declares an action kind Ample (model.ActionKind.Ample) when an
// action of the kind may be explored alone: it commutes with every other
// action, no other action disables it, it disables no other action, and no
// checked property reads its effect (Property.Sees). With Reduce set,
// Successors fuses enabled ample actions into the step before them (see
// Successors), and Initial into the initial state, so that every stored
// state is fully expanded: no ample action is enabled in it.
//
// With an acyclic state graph (Def.Acyclic, DeclaredAcyclic) the cycle
// proviso holds trivially, for safety and liveness alike. Without one the
// reduction is still sound, for safety and for liveness under the
// protocol's fairness, when the conditions ampleCyclicOff checks hold.
// The argument:
//
//   - Cycle proviso (C3). Every stored state is fully expanded, so every
//     cycle of the reduced graph passes through one: no action is
//     postponed around a cycle for ever. This needs fusion chains to end;
//     a chain longer than fuseLimit is an internal error.
//   - Completeness. Take a counterexample run r of the full graph: a fair
//     infinite run, or a run that ends (nothing enabled; with Def.Stutter,
//     nothing fair enabled) where a safety or liveness property fails.
//     Where the reduced graph takes an ample action a, a is enabled in r's
//     state and stays enabled (no other action disables it); a's fairness
//     class holds a alone and is fair, so r, being fair, takes a later (a
//     run cannot end with a enabled: a is fair). Moving a forward to where
//     the reduced graph takes it gives a run of the full graph (a commutes
//     with every action in between) that visits, between the two places,
//     the states with a applied. Those have the same liveness labels and
//     invariants (a is invisible), so the moved run is stutter-equivalent
//     to r, and the liveness forms checked here (eventually, leads-to,
//     always eventually: no "next") do not tell them apart. Its fairness
//     is r's: a disables nothing, so every action enabled in r's state is
//     enabled in the moved one; an action that a enables there (a
//     process step frees a host buffer, enabling a copy) is enabled earlier
//     in the moved run, and must belong to a persistent class (once
//     enabled, it stays enabled until taken), so a class the moved run
//     keeps enabled and never takes would, in r, be enabled once a is taken
//     and stay so: r would not be fair. Repeating the move for every
//     ample action (finitely many before each step of r, as chains are
//     finite) gives a fair counterexample of the reduced graph.
//   - Soundness of what is found. A lasso of the reduced graph, its fusion
//     chains expanded (Actions), is a run of the full graph. The liveness
//     analysis judges fairness by the actions enabled in stored states;
//     the states inside a chain differ from the stored state ending it
//     only by the ample actions still to come (disabled at the stored
//     state, taken in the chain: the class of an ample action holds only
//     that action, so it is met) and by actions those enable (persistent:
//     a class enabled at the chain's end and never taken on the loop is
//     enabled all round it, so it was not disabled inside the chain
//     either). The analysis thus judges the expanded loop as the full
//     graph would; every lasso is also replayed (traces.RunLasso), which
//     judges fairness on the expanded run.
//
// What is checked at run time, in every fused step of a search without
// declared acyclicity: the step disables no action that was enabled, it
// changes no liveness label (trigger or goal of any obligation), and every
// state a chain passes through satisfies the invariants. Commutation and
// the persistence of the classes an ample step enables are not checked
// during the search: tests check them on the full state graphs of the
// claims and broken variants (protocols' reduction tests,
// CheckAmpleDeclaration).

// DeclaredAcyclic reports whether the protocol declares every run of the
// checked variant finite (Def.Acyclic, and the variant is not Cyclic).
// A protocol declares it for reliable links: with faults on, states no
// fault-free run reaches come into play, so it is not relied on.
func (c *Checker) DeclaredAcyclic() bool {
	if c.Def == nil || !c.Def.Acyclic || len(c.Sys.Faults()) > 0 {
		return false
	}
	v, err := c.Def.Variant(c.Sys.Cfg.Variant)
	return err == nil && !v.Cyclic
}

// CanReduce reports whether the ample-set reduction is sound for this
// checker (ReduceOff returns "").
func (c *Checker) CanReduce() bool { return c.ReduceOff() == "" }

// ReduceOff says why the ample-set reduction cannot be used, or returns
// "": the protocol declares an ample kind, links are reliable, no checked
// property sees an ample kind, and either the variant's runs are all
// finite (Def.Acyclic) or the ample kinds meet the conditions for a state
// graph with cycles (see above).
func (c *Checker) ReduceOff() string {
	if len(c.AmpleKinds()) == 0 {
		return "the protocol declares no ample action kind"
	}
	if len(c.Sys.Faults()) > 0 {
		return FaultsOff
	}
	if s := c.SeenAmple(); s != "" {
		return s
	}
	if c.DeclaredAcyclic() {
		return ""
	}
	return c.ampleCyclicOff()
}

// AmpleKinds returns the printed patterns of the kinds declared ample.
func (c *Checker) AmpleKinds() []string {
	var ample []string
	for _, k := range c.Sys.Kinds {
		if k.Ample {
			ample = append(ample, k.Pattern)
		}
	}
	return ample
}

// ReducesCycles reports whether the reduction is on for a state graph the
// protocol does not declare acyclic (the conditions of ampleCyclicOff,
// and the run-time checks, apply).
func (c *Checker) ReducesCycles() bool { return c.Reduce && c.cyclic }

// ampleCyclicOff says why an ample kind does not meet the conditions for
// a state graph with cycles, or returns "": it is a kind of the protocol
// (not the kernel's delivery), does not wait for quiet links (which makes
// it depend on every step that sends to or delivers from its node), is
// weakly or strongly fair (a fair run cannot leave it enabled for ever,
// which the reduction, taking it at once, would never do), and each of
// its actions has a fairness class of its own (so that the class's
// fairness is that action's, and the liveness analysis, which does not see
// the fused steps, never needs to see the class taken).
func (c *Checker) ampleCyclicOff() string {
	why := func(k *model.ActionKind, s string) string {
		return fmt.Sprintf("the variant's state graph may have cycles (%s is not declared acyclic), and %q %s", c.Sys.Cfg.Variant, k.Pattern, s)
	}
	P := c.Sys.P
	for ki, k := range c.Sys.Kinds {
		if !k.Ample {
			continue
		}
		switch {
		case k == model.Deliver:
			return why(k, "is the kernel's delivery, which cannot be ample")
		case k.Quiet:
			return why(k, "waits for quiet links, so it depends on every step that sends to or delivers from its node")
		case k.Fair == model.Unfair:
			return why(k, "has no fairness: a fair run may leave it enabled for ever, a run the reduction, taking it at once, would lose")
		}
		for n := 0; n < P; n++ {
			a := model.Action{Kind: uint8(ki), Node: model.NodeID(n)}
			name := k.ClassName(a)
			for kj, k2 := range c.Sys.Kinds {
				if k2.Fair == model.Unfair {
					continue
				}
				for m := 0; m < P; m++ {
					for peer := 0; peer < P; peer++ {
						if (k2 == model.Deliver) == (peer == m) || k2 != model.Deliver && peer > 0 {
							continue // a delivery's peer is another node; a local action's is 0
						}
						b := model.Action{Kind: uint8(kj), Node: model.NodeID(m), Peer: model.NodeID(peer)}
						if b != a && k2.ClassName(b) == name {
							return why(k, fmt.Sprintf("shares its fairness class %q with %q: the class of an ample action must hold that action alone", name, k2.Format(b)))
						}
					}
				}
			}
		}
	}
	return ""
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

// FaultsOff begins the reason a reduction gives for being off while
// faults are on (Config.Faults).
const FaultsOff = "link faults are on (--faults)"

// fuseLimit bounds a chain of fused ample steps: ample steps alone must
// reach a state where none is enabled.
const fuseLimit = 1 << 16

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
// error. With check set it makes the run-time checks of a reduction on a
// graph with cycles (ampleStep).
//
// Without deferred it checks each step as CheckStep does: the transition
// rules, then the invariants of the state reached. With deferred (for
// Successors) it checks the transition rules of each action it applies,
// and no invariant: an ample action is invisible to every checked
// property (model.ActionKind.Ample; a property that sees the kind switches
// the reduction off), so each state it passes through satisfies the same
// invariants and goals as the state where it stops, which the caller
// checks (or defers, see DeferStateChecks). A violation in a state passed
// through is therefore reported for the transition, with the same
// message, and Actions, which checks every state, ends the trace there, as
// before. With deferred and check (on a graph with cycles,
// ReducesCycles) it also checks the invariants of every state it passes
// through, before leaving it.
func (c *Checker) fuse(w *model.World, done *[]model.Action, check, deferred bool) (verr error, err error) {
	for n := 0; ; n++ {
		a, ok := c.firstAmple(w)
		if !ok {
			return nil, nil
		}
		if n == fuseLimit {
			return nil, c.endless(w)
		}
		if check {
			if deferred {
				if verr := c.invariants(w); verr != nil {
					return verr, nil
				}
			}
			c.beforeAmple(w)
		}
		if err := w.Apply(a, &c.out); err != nil {
			return nil, fmt.Errorf("enabled ample action failed: %w", err)
		}
		if done != nil {
			*done = append(*done, a)
		}
		if check {
			if err := c.afterAmple(w, a); err != nil {
				return nil, err
			}
		}
		if deferred {
			verr = c.checkRules(w, a, &c.out)
		} else {
			verr = c.CheckStep(w, a, &c.out)
		}
		if verr != nil {
			return verr, nil
		}
	}
}

// endless is the internal error of a fusion chain longer than fuseLimit.
func (c *Checker) endless(w *model.World) error {
	a, _ := c.firstAmple(w)
	return fmt.Errorf("internal error: %d ample steps in a row and %s still enabled: the ample kinds (model.ActionKind.Ample) are not as declared, a run of ample steps alone must end", fuseLimit, c.Sys.ActionName(a))
}

// beforeAmple records what afterAmple compares: the actions enabled in w
// and its liveness labels.
func (c *Checker) beforeAmple(w *model.World) {
	c.ampEn = w.Enabled(c.ampEn[:0])
	c.ampLabels = c.allLabels(w)
}

// afterAmple checks the ample step a that led to w against what
// beforeAmple recorded: every other action enabled before is enabled
// after (a disables nothing), and every liveness obligation's trigger and
// goal are unchanged (a is invisible to them). A failure is an internal
// error: the protocol's declaration is wrong.
func (c *Checker) afterAmple(w *model.World, a model.Action) error {
	bad := func(s string) error {
		return fmt.Errorf("internal error: ample action %s %s: kind %q is declared ample (model.ActionKind.Ample), which it is not", c.Sys.ActionName(a), s, c.Sys.Kinds[a.Kind].Pattern)
	}
	if l := c.allLabels(w); l != c.ampLabels {
		for j, o := range c.live.obls {
			if d := (l ^ c.ampLabels) >> (2 * j) & 3; d != 0 {
				return bad(fmt.Sprintf("changed what liveness property %s reads%s", c.Props[o.prop].Name, c.forNode(&c.Props[o.prop], o.node)))
			}
		}
	}
	c.ampAfter = w.Enabled(c.ampAfter[:0])
	for _, b := range c.ampEn {
		if b != a && !slices.Contains(c.ampAfter, b) {
			return bad("disabled " + c.Sys.ActionName(b))
		}
	}
	return nil
}

// allLabels returns the trigger and goal of every liveness obligation in
// w (bits 2j and 2j+1 for obligation j; the trigger of an eventually
// property, due only in the initial state, is left 0).
func (c *Checker) allLabels(w *model.World) uint64 {
	if c.live == nil {
		return 0
	}
	var l uint64
	for j, o := range c.live.obls {
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

// Actions rebuilds the actions that a trace of explorer action codes
// stands for: with Reduce set, the ample actions that Initial fused into
// the initial state come first, and each code is followed by the ample
// actions that Successors fused into it (it stops fusing at the first
// violation, as the search did). loop, the number of trailing codes that
// form a lasso's loop, becomes the number of trailing actions that do.
func (c *Checker) Actions(codes []uint32, loop int) ([]model.Action, int) {
	var acts []model.Action
	w := c.Sys.Initial()
	violated := false
	if c.Reduce {
		if verr, err := c.fuse(w, &acts, false, false); verr != nil || err != nil {
			violated = true
		}
	}
	loopStart := 0
	for i, code := range codes {
		if i == len(codes)-loop {
			loopStart = len(acts)
		}
		a := model.ActionFromCode(code)
		if c.Symmetry && !violated && code&explore.RealCode == 0 {
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
		if verr, err := c.fuse(w, &acts, false, false); verr != nil || err != nil {
			violated = true
		}
	}
	if loop == 0 {
		return acts, 0
	}
	return acts, len(acts) - loopStart
}
