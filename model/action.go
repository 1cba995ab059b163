package model

import (
	"fmt"
	"strconv"
	"strings"
)

// Owner says which part of the system performs an action of a kind: the
// node's NI, the node's host, or the link that delivers to the node. The
// explorer's fairness and independence reasoning relies on it.
type Owner uint8

// Owners.
const (
	OwnerNI Owner = iota + 1
	OwnerHost
	OwnerLink
)

// ActionKind is a kind of nondeterministic choice. The kernel defines one,
// Deliver; protocols declare the rest (launches, copies, timer expiries,
// recovery steps, ...). Every action of a kind other than Deliver is local
// to one node: whether it is enabled depends only on that node's state, and
// it changes only that node's state and the links out of it. This is what
// lets the live runtime run each node in its own goroutine.
type ActionKind struct {
	// Name is the kind's short name, e.g. "launch".
	Name string
	// Pattern is the printed form of an action, with {node} for the node
	// that performs it and {peer} for its other node, e.g.
	// "host {node} launch" or "deliver {peer}->{node}". Printed forms are
	// part of the trace format: never change a released one.
	Pattern string
	// Owner is the part of the node that performs the action.
	Owner Owner
	// Enabled reports whether the action is enabled in node state n. Not
	// used for Deliver, which the kernel enumerates per link.
	Enabled func(n Node) bool
	// Apply performs the action on node state n (only called when
	// enabled), appending its effects to out.
	Apply func(n Node, out *Outbox)
	// Ample declares that an action of this kind may be explored alone
	// when enabled (an ample set of one action): it commutes with every
	// other action, no other action disables it, it disables no other
	// action, and no property the protocol defines observes its effect
	// except on terminal states (a property that does names the kind in
	// Property.Sees, which switches the reduction off while it is
	// checked). The protocol's package doc must argue this. Where the
	// protocol declares its state graph acyclic that is all; where it may
	// have cycles, the checker also needs the kind to be fair (Fair) with
	// a fairness class of its own for each action, and every fair action
	// an ample step enables to belong to a persistent class (once enabled,
	// enabled until taken): see the properties package's
	// checker_reduction.go for the argument and what is checked at run
	// time.
	Ample bool
	// Fair is the fairness liveness checks grant the kind's actions: none
	// (the zero value: the part may stop taking them for ever, as a client
	// may stop sending or a host stop polling), weak or strong.
	Fair Fairness
	// FairClass names the fairness class of an action, written like
	// Pattern (e.g. "ni {node}" for one obligation per NI, "link
	// {peer}->{node}" for one per link). Actions whose class names are
	// equal share one obligation: if some action of the class stays
	// enabled, some action of the class is eventually taken. Empty means
	// the printed action itself, one class per action.
	FairClass string
	// Live says how the live runtime (model/live) performs the kind's
	// actions: at once when enabled (the zero value: NI handlers, signal
	// delivery), only when the node's client asks (a program polling or
	// toggling a flag), or when it has stayed enabled for a timer's delay
	// (an NI's hardware timer).
	Live LiveMode
	// Quiet makes the kind's actions enabled only while no packet is in
	// flight on a link from or to the node (nor held unhandled by another
	// node, for a Holder machine), besides Enabled: a timer
	// longer than any round trip, which never expires while a packet or
	// its answer is under way. It is the one exception to the rule that
	// a kind's enabledness depends on its node's state alone, so sleep
	// sets are off for a system with such a kind.
	Quiet bool

	fault FaultKind // the kernel's fault kinds (fault.go): which fault
}

// LiveMode is how the live runtime performs an action kind.
type LiveMode uint8

// Live modes.
const (
	LiveEager LiveMode = iota
	LiveClient
	LiveTimer
)

// Fairness is the fairness of an action class in liveness checks.
type Fairness uint8

// Fairness kinds. Weak: a class that stays enabled from some point on is
// eventually taken. Strong: a class enabled again and again is eventually
// taken, even if it is disabled in between.
const (
	Unfair Fairness = iota
	Weak
	Strong
)

func (f Fairness) String() string {
	switch f {
	case Weak:
		return "weak"
	case Strong:
		return "strong"
	}
	return "none"
}

// ClassName is the fairness class of action a of kind k.
func (k *ActionKind) ClassName(a Action) string {
	if k.FairClass == "" {
		return k.Format(a)
	}
	return fill(k.FairClass, a)
}

// Deliver is the kernel's action kind: the packet at the head of the link
// from peer to node arrives at node's NI and the protocol's Receive handler
// runs to completion. Links are reliable: each is weakly fair (a packet at
// the head of a link is eventually delivered).
var Deliver = &ActionKind{Name: "deliver", Pattern: "deliver {peer}->{node}", Owner: OwnerLink,
	Fair: Weak, FairClass: "link {peer}->{node}"}

// Action is one nondeterministic choice: Kind indexes the system's kind
// list, Node performs it, Peer is its other node (for Deliver, the link's
// sender).
type Action struct {
	Kind uint8
	Node NodeID
	Peer NodeID
}

// Code packs the action into 32 bits for compact storage by the explorer.
func (a Action) Code() uint32 { return uint32(a.Kind)<<16 | uint32(a.Node)<<8 | uint32(a.Peer) }

// ActionFromCode is the inverse of Action.Code.
func ActionFromCode(c uint32) Action {
	return Action{Kind: uint8(c >> 16), Node: NodeID(c >> 8), Peer: NodeID(c)}
}

// Format renders an action of kind k.
func (k *ActionKind) Format(a Action) string { return fill(k.Pattern, a) }

func fill(pattern string, a Action) string {
	r := strings.NewReplacer("{node}", strconv.Itoa(int(a.Node)), "{peer}", strconv.Itoa(int(a.Peer)))
	return r.Replace(pattern)
}

// match parses s against the kind's pattern. It returns ok=false when s
// does not have the pattern's shape, and an error when it has the shape
// but a node id is bad.
func (k *ActionKind) match(s string, p int) (node, peer NodeID, ok bool, err error) {
	pat, rest := k.Pattern, s
	for pat != "" {
		i := strings.IndexByte(pat, '{')
		if i < 0 {
			return node, peer, rest == pat, nil
		}
		if !strings.HasPrefix(rest, pat[:i]) {
			return 0, 0, false, nil
		}
		rest = rest[i:]
		j := strings.IndexByte(pat, '}')
		field := pat[i+1 : j]
		pat = pat[j+1:]
		n := 0
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == 0 {
			m := 1
			for strings.HasPrefix(rest, "-") && m < len(rest) && rest[m] >= '0' && rest[m] <= '9' {
				m++
			}
			if m > 1 {
				return 0, 0, true, fmt.Errorf("bad node id %q in action %q", rest[:m], s)
			}
			return 0, 0, false, nil
		}
		v, perr := ParseDecimal(rest[:n])
		if perr != nil || v >= p {
			return 0, 0, true, fmt.Errorf("node %s out of range 0..%d in action %q", rest[:n], p-1, s)
		}
		rest = rest[n:]
		if field == "node" {
			node = NodeID(v)
		} else {
			peer = NodeID(v)
		}
	}
	return node, peer, rest == "", nil
}

// ParseAction parses a printed action name against the system's kinds. It
// checks syntax and that node ids are below P; whether the action is
// enabled is the world's business.
func (s *System) ParseAction(str string) (Action, error) {
	for i, k := range s.Kinds {
		node, peer, ok, err := k.match(str, s.P)
		if err != nil {
			return Action{}, err
		}
		if !ok {
			continue
		}
		if k.OnLink() && node == peer {
			return Action{}, fmt.Errorf("no link from a node to itself in action %q", str)
		}
		return Action{Kind: uint8(i), Node: node, Peer: peer}, nil
	}
	var want []string
	for _, k := range s.Kinds {
		want = append(want, fmt.Sprintf("%q", strings.NewReplacer("{node}", "N", "{peer}", "I").Replace(k.Pattern)))
	}
	return Action{}, fmt.Errorf("unknown action %q (want %s)", str, strings.Join(want, ", "))
}

// ActionName renders an action of this system.
func (s *System) ActionName(a Action) string {
	if int(a.Kind) >= len(s.Kinds) {
		return fmt.Sprintf("action?%d", a.Kind)
	}
	return s.Kinds[a.Kind].Format(a)
}
