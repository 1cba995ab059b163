package properties

import (
	"fmt"

	"lfccheck/explore"
	"lfccheck/model"
)

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
// checker: the protocol declares the variant's state graph acyclic and at
// least one action kind ample. Acyclicity makes the cycle proviso hold
// trivially, for safety and liveness properties alike (the liveness
// analysis reports a cycle in a graph declared acyclic as an internal
// error).
func (c *Checker) CanReduce() bool {
	if !c.DeclaredAcyclic() || c.SeenAmple() != "" || len(c.Sys.Faults()) > 0 {
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

// FaultsOff begins the reason a reduction gives for being off while
// faults are on (Config.Faults).
const FaultsOff = "link faults are on (--faults)"

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
		if verr, err := c.fuse(w, &acts); verr != nil || err != nil {
			violated = true
		}
	}
	if loop == 0 {
		return acts, 0
	}
	return acts, len(acts) - loopStart
}
