package properties

import (
	"bytes"
	"fmt"

	"lfccheck/model"
)

// CheckAmpleDeclaration checks the ample kinds of the checker's system
// (model.ActionKind.Ample) against what the reduction assumes of them
// (checker_reduction.go), on the full state graph from the initial state,
// breadth first, up to maxStates states: in every state s and for every
// enabled ample action a and every other enabled action b,
//
//   - a commutes with b: a is enabled after b, b after a, and both orders
//     reach the same state;
//   - a disables no action;
//   - a is invisible: every invariant, reachability goal and liveness
//     trigger and goal of the checked properties has the same value in s
//     and after a;
//   - every action of a fair class that a enables (enabled after a, not
//     in s) belongs to a persistent class: in every state explored, an
//     enabled action of that class stays enabled (or another of its
//     class does) after any step of another class.
//
// It returns the states explored and the first failure, naming the state
// by the actions that reach it. Tests run it on the claims of every
// protocol that declares an ample kind, and on wrong declarations.
func (c *Checker) CheckAmpleDeclaration(maxStates int) (int, error) {
	sys := c.Sys
	type node struct {
		w      *model.World
		parent int
		act    model.Action
	}
	var states []node
	seen := map[string]int{}
	add := func(w *model.World, parent int, a model.Action) {
		k := string(w.Encode(nil))
		if _, ok := seen[k]; ok || len(states) >= maxStates {
			return
		}
		seen[k] = len(states)
		states = append(states, node{w, parent, a})
	}
	path := func(i int) string {
		var acts []string
		for ; i > 0; i = states[i].parent {
			acts = append([]string{sys.ActionName(states[i].act)}, acts...)
		}
		if len(acts) == 0 {
			return "in the initial state"
		}
		return fmt.Sprintf("after %v", acts)
	}
	var out model.Outbox
	step := func(w *model.World, a model.Action) (*model.World, error) {
		n := w.Clone()
		if err := n.Apply(a, &out); err != nil {
			return nil, err
		}
		n.ClearChanges()
		return n, nil
	}
	enabled := func(w *model.World, a model.Action) bool {
		for _, b := range w.Enabled(nil) {
			if b == a {
				return true
			}
		}
		return false
	}
	class := func(a model.Action) string {
		k := sys.Kinds[a.Kind]
		if k.Fair == model.Unfair {
			return ""
		}
		return k.ClassName(a)
	}
	classOn := func(w *model.World, name string) bool {
		for _, b := range w.Enabled(nil) {
			if class(b) == name {
				return true
			}
		}
		return false
	}
	// visible returns what the properties read in w.
	visible := func(w *model.World) string {
		var b bytes.Buffer
		for i := range c.Props {
			p := &c.Props[i]
			if p.State != nil {
				fmt.Fprint(&b, p.State(w) == nil)
			}
			if p.Sometimes != nil {
				fmt.Fprint(&b, p.Sometimes(w))
			}
			if p.Live == model.NotLive {
				continue
			}
			for h := 0; h < sys.P; h++ {
				if !p.PerNode && h > 0 {
					break
				}
				if p.Live == model.LeadsTo {
					fmt.Fprint(&b, p.After(w, h))
				}
				fmt.Fprint(&b, p.Goal(w, h))
			}
		}
		return b.String()
	}
	enables := map[string]bool{} // fair classes some ample action enables
	w0 := sys.Initial()
	w0.ClearChanges()
	add(w0, -1, model.Action{})
	for i := 0; i < len(states); i++ {
		w := states[i].w
		en := w.Enabled(nil)
		for _, a := range en {
			next, err := step(w, a)
			if err != nil {
				return len(states), fmt.Errorf("%s: %s: %v", path(i), sys.ActionName(a), err)
			}
			add(next, i, a)
			if !sys.Kinds[a.Kind].Ample {
				continue
			}
			name := sys.ActionName(a)
			if visible(next) != visible(w) {
				return len(states), fmt.Errorf("%s: ample action %s changes what a checked property reads", path(i), name)
			}
			for _, b := range next.Enabled(nil) {
				if !enabled(w, b) && class(b) != "" {
					enables[class(b)] = true
				}
			}
			for _, b := range en {
				if b == a {
					continue
				}
				if !enabled(next, b) {
					return len(states), fmt.Errorf("%s: ample action %s disables %s", path(i), name, sys.ActionName(b))
				}
				wb, err := step(w, b)
				if err != nil {
					return len(states), err
				}
				if !enabled(wb, a) {
					return len(states), fmt.Errorf("%s: %s disables ample action %s", path(i), sys.ActionName(b), name)
				}
				ab, err := step(next, b)
				if err != nil {
					return len(states), err
				}
				ba, err := step(wb, a)
				if err != nil {
					return len(states), err
				}
				if !bytes.Equal(ab.Encode(nil), ba.Encode(nil)) {
					return len(states), fmt.Errorf("%s: ample action %s does not commute with %s", path(i), name, sys.ActionName(b))
				}
			}
		}
	}
	for i := range states {
		w := states[i].w
		en := w.Enabled(nil)
		for _, x := range en {
			cx := class(x)
			if !enables[cx] {
				continue
			}
			for _, y := range en {
				if class(y) == cx {
					continue
				}
				next, err := step(w, y)
				if err != nil {
					return len(states), err
				}
				if !classOn(next, cx) {
					return len(states), fmt.Errorf("%s: an ample action enables actions of class %q, which is not persistent: %s disables %s", path(i), cx, sys.ActionName(y), sys.ActionName(x))
				}
			}
		}
	}
	return len(states), nil
}
