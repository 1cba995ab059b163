package model

// Property is a named correctness condition of a protocol. Any of its
// checks may be nil; the properties package provides the kinds (invariants,
// transition rules, terminal conditions, reachability) and the checker.
// It is declared here, beside the protocol registry, because a protocol's
// Def carries its properties and every generic package reads Defs.
type Property struct {
	Name string
	Doc  string
	// State must hold in every reachable state.
	State func(w *World) error
	// Step must hold for every transition: w is the state after action a,
	// out what the step did (its transmissions and host deliveries).
	Step func(w *World, a Action, out *Outbox) error
	// Final must hold in every reachable state with no enabled action.
	Final func(w *World) error
	// Sometimes must hold in at least one reachable state: the checker
	// must show such a state exists (a race or a scenario is reachable).
	Sometimes func(w *World) bool
	// Explain, when set, explains a violation of this property in the
	// state w where it was found.
	Explain func(w *World) Explanation
}

// Explanation is what a property says about a state that violates it.
type Explanation struct {
	// Head is a heading line, or the whole explanation when Lines is
	// empty.
	Head string
	// Lines are the explanation's items, printed indented under Head.
	Lines []string
	// Field names the field of JSON results that carries Lines (for
	// example "wait_for_cycle").
	Field string
}

// Text renders the explanation as lines: Head, then each item indented.
func (e Explanation) Text() []string {
	var out []string
	if e.Head != "" {
		out = append(out, e.Head)
	}
	for _, l := range e.Lines {
		out = append(out, "  "+l)
	}
	return out
}
