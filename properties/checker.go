package properties

import (
	"lfccheck/model"
)

// Checker binds a system to the properties to check. It implements the
// explorer's model interface over canonical state encodings. A Checker holds
// scratch space and is not safe for concurrent use.
type Checker struct {
	Sys   *model.System
	Props []Property
	// Reduce enables the partial-order reduction described at Reduce.
	Reduce bool

	cur, next model.World
	acts      []model.Action
	out       model.Outbox
	info      model.StepInfo
	buf       []byte
}

// NewChecker builds a checker.
func NewChecker(sys *model.System, props []Property) *Checker {
	return &Checker{Sys: sys, Props: props}
}

// CheckState checks the state invariants in w.
func (c *Checker) CheckState(w *model.World) error {
	for i := range c.Props {
		if f := c.Props[i].State; f != nil {
			if err := f(w); err != nil {
				return &Violation{Property: c.Props[i].Name, Message: err.Error()}
			}
		}
	}
	return nil
}

// CheckStep checks the transition rules for a step that led to w.
func (c *Checker) CheckStep(w *model.World, s *model.StepInfo) error {
	for i := range c.Props {
		if f := c.Props[i].Step; f != nil {
			if err := f(w, s); err != nil {
				return &Violation{Property: c.Props[i].Name, Message: err.Error()}
			}
		}
	}
	return c.CheckState(w)
}

// CheckFinal checks the conditions on a state without enabled actions.
func (c *Checker) CheckFinal(w *model.World) error {
	for i := range c.Props {
		if f := c.Props[i].Final; f != nil {
			if err := f(w); err != nil {
				return &Violation{Property: c.Props[i].Name, Message: err.Error()}
			}
		}
	}
	return nil
}

// Initial returns the encoded initial state and any invariant it violates.
func (c *Checker) Initial() ([]byte, error) {
	w := c.Sys.Initial()
	err := c.CheckState(w)
	if err == nil && len(w.Enabled(nil)) == 0 {
		err = c.CheckFinal(w)
	}
	return w.Encode(nil), err
}

// Explain returns the explanation the named property gives for a violation
// found in w, if it has one.
func (c *Checker) Explain(property string, w *model.World) []string {
	for i := range c.Props {
		if c.Props[i].Name == property && c.Props[i].Explain != nil {
			return c.Props[i].Explain(w)
		}
	}
	return nil
}

// Successors calls visit for every enabled action of the encoded state with
// the action's code, the encoded successor (valid only during the call) and
// the violation the transition causes, if any; it stops when visit returns
// false. With no action enabled it returns the violated final condition, if
// any.
func (c *Checker) Successors(state []byte, visit func(code uint32, succ []byte, err error) bool) error {
	if err := c.Sys.Decode(state, &c.cur); err != nil {
		return err
	}
	c.acts = c.cur.Enabled(c.acts[:0])
	if len(c.acts) == 0 {
		return c.CheckFinal(&c.cur)
	}
	if c.Reduce {
		c.acts = reduce(c.acts)
	}
	for _, a := range c.acts {
		c.next.CopyFrom(&c.cur)
		if err := c.next.Apply(a, &c.out, &c.info); err != nil {
			return err
		}
		verr := c.CheckStep(&c.next, &c.info)
		c.buf = c.next.Encode(c.buf[:0])
		if !visit(a.Code(), c.buf, verr) {
			return nil
		}
	}
	return nil
}

// ActionName names an action code.
func (c *Checker) ActionName(code uint32) string { return model.ActionFromCode(code).String() }

// reduce applies an ample-set partial-order reduction: when some host can
// process a delivered packet, that single action is explored and the others
// are postponed. "host H process" only pops the head of host H's queue: it
// commutes with every other action, no other action disables it, and no
// property reads the host queue except Finished on terminal states. Every
// run of the model is finite (each action advances a packet or consumes a
// credit packet), so the state graph is acyclic and the cycle proviso holds
// trivially. The reduced graph therefore keeps every terminal state and every
// violation of the state invariants and delivery rules.
func reduce(acts []model.Action) []model.Action {
	for _, a := range acts {
		if a.Kind == model.ActProcess {
			acts[0] = a
			return acts[:1]
		}
	}
	return acts
}
