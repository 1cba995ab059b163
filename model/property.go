package model

import "strings"

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
	// Local, when set, is State's condition where it involves node n:
	// n's own state and the links from and to it. A checker that knows
	// that State held before some steps may, instead of State, call Local
	// for every node the steps changed and for both ends of every link
	// they changed (World.Changed). So every violation of State must
	// involve a node or link that changed, and Local(w, n) must find
	// every violation that involves n. Tests compare the two.
	Local func(w *World, n int) error
	// Step must hold for every transition: w is the state after action a,
	// out what the step did (its transmissions and host deliveries). It
	// may read only a, out, the configuration and a's node in w (its
	// links in w are others' business): sleep sets leave out transitions
	// that some explored transition repeats with the same node state and
	// outbox (see properties' sleep.go).
	Step func(w *World, a Action, out *Outbox) error
	// Final must hold in every reachable state with no enabled action.
	Final func(w *World) error
	// Sometimes must hold in at least one reachable state: the checker
	// must show such a state exists (a race or a scenario is reachable).
	Sometimes func(w *World) bool
	// Explain, when set, explains a violation of this property in the
	// state w where it was found.
	Explain func(w *World) Explanation
	// The forms below tell the stubborn-set reduction (see the properties
	// package's stubborn.go) how State is decided, so that it can keep
	// State's verdict; a State that declares none of them (NodeLocal,
	// Stable, Conserved; Vacuous, further below, is not one of them)
	// turns the reduction off. Tests check each declaration on the full state
	// graphs of the built-in claims and broken variants.
	//
	// NodeLocal: State fails exactly where Local(w, n) fails for some
	// node n, and Local reads only node n's own state and the
	// configuration (not n's links, nor other nodes).
	NodeLocal bool
	// Stable: once State fails in a state, it fails in every state
	// reachable from it (what it reads is never undone).
	Stable bool
	// Conserved: State is Conservation.Bounds at every node and sums
	// over the nodes and the packets in flight that keep their initial
	// values.
	Conserved *Conservation

	// Vacuous, when set, is a sufficient condition for State per node:
	// State holds in every state where Vacuous(w, n) holds at every node
	// n, and Vacuous reads only node n's own state and the configuration.
	// A search that knows every node's answer can then skip State (the
	// search over segment ids keeps it per segment). Tests check it on
	// the full state graphs of the built-in claims and broken variants.
	Vacuous func(w *World, n int) bool

	// Sees names the action kinds whose effects the property reads (other
	// than on terminal states). An ample-set reduction never uses a kind
	// that a checked property sees.
	Sees []string

	// Live makes the property a liveness property over fair runs (see the
	// properties package): Goal must eventually hold on every fair run,
	// from the initial state (Eventually), after every state where After
	// holds (LeadsTo), or again and again (AlwaysEventually). A run that
	// reaches a state with no enabled action stays there for ever.
	//
	// PerNode makes it one obligation per node: After and Goal get the
	// node's index, and the property holds when every node's obligation
	// does. Otherwise the index is always 0.
	Live    LiveKind
	PerNode bool
	After   func(w *World, node int) bool
	Goal    func(w *World, node int) bool
}

// Conservation declares an invariant as conserved sums with node-local
// bounds: State holds in w exactly when Bounds(w, n) holds at every node
// n and every sum (0 to Sums-1), added up over Node(w, n) for every node
// and Packet for every packet on every link, has the value it has in the
// initial state. Node and Bounds read only node n's own state and the
// configuration; Packet only the packet, its link's ends and the
// configuration. Then a step of node n changes a sum only by what it
// changes at n, the packet it takes off a link and the packets it sends:
// a step-local check that the stubborn-set reduction keeps.
type Conservation struct {
	Sums   func(sys *System) int
	Node   func(w *World, n int, add func(sum int, v int64))
	Packet func(w *World, from, to NodeID, p Packet, add func(sum int, v int64))
	Bounds func(w *World, n int) error
}

// LiveKind is the form of a liveness property.
type LiveKind uint8

// Liveness forms.
const (
	NotLive          LiveKind = iota
	Eventually                // eventually Goal
	LeadsTo                   // always (After implies eventually Goal)
	AlwaysEventually          // always eventually Goal
)

// Kind names the property's kind for listings: "invariant", "step rule",
// "terminal", "sometimes", "eventually", "leads-to", "always eventually",
// or several joined by "+".
func (p *Property) Kind() string {
	switch p.Live {
	case Eventually:
		return "eventually"
	case LeadsTo:
		return "leads-to"
	case AlwaysEventually:
		return "always eventually"
	}
	var ks []string
	for _, k := range []struct {
		set  bool
		name string
	}{{p.State != nil, "invariant"}, {p.Step != nil, "step rule"}, {p.Final != nil, "terminal"}, {p.Sometimes != nil, "sometimes"}} {
		if k.set {
			ks = append(ks, k.name)
		}
	}
	return strings.Join(ks, "+")
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
	// Waits, when set, are the explanation as edges between NIs (a
	// wait-for cycle: From waits for To), for pictures.
	Waits []Wait
}

// Wait is one edge of a wait-for relation between NIs.
type Wait struct {
	From, To NodeID
	Label    string
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

// Stat is a statistic a protocol reports about a search: Step, summed over
// every transition the search explores (one per expanded state and enabled
// action, less those sleep sets leave out; with symmetry, per stored
// orbit; Step reads what Property.Step may), or State, the largest value
// over the states it checks. Exactly one of them is set. Statistics
// describe what the search saw; they decide nothing.
type Stat struct {
	Name  string
	Doc   string
	Step  func(w *World, a Action, out *Outbox) int64
	State func(w *World) int64
	// Applies, when set, says whether the statistic means anything for a
	// machine (for example only where a feature is modeled); one that
	// does not is neither gathered nor reported.
	Applies func(m Machine) bool
}
