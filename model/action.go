package model

import (
	"fmt"
	"strconv"
	"strings"
)

// ActionKind is the kind of a nondeterministic choice.
type ActionKind uint8

// The action kinds. Their printed forms are part of the trace format: never
// rename them.
const (
	ActLaunch  ActionKind = iota + 1 // "host H launch"
	ActDeliver                       // "deliver I->J"
	ActCopy                          // "ni N copy"
	ActProcess                       // "host H process"
)

// Action is one nondeterministic choice. For ActDeliver, From is the link's
// sender and Node its receiver; other kinds use Node only.
type Action struct {
	Kind ActionKind
	Node NodeID
	From NodeID
}

// String gives the action's stable printed name.
func (a Action) String() string {
	switch a.Kind {
	case ActLaunch:
		return fmt.Sprintf("host %d launch", a.Node)
	case ActDeliver:
		return fmt.Sprintf("deliver %d->%d", a.From, a.Node)
	case ActCopy:
		return fmt.Sprintf("ni %d copy", a.Node)
	case ActProcess:
		return fmt.Sprintf("host %d process", a.Node)
	}
	return fmt.Sprintf("action?%d", a.Kind)
}

// Code packs the action into 32 bits for compact storage by the explorer.
func (a Action) Code() uint32 {
	return uint32(a.Kind)<<16 | uint32(a.Node)<<8 | uint32(a.From)
}

// ActionFromCode is the inverse of Action.Code.
func ActionFromCode(c uint32) Action {
	return Action{Kind: ActionKind(c >> 16), Node: NodeID(c >> 8), From: NodeID(c)}
}

// ParseAction parses a printed action name. It checks syntax and that node
// ids are below p; whether the action is enabled is the world's business.
func ParseAction(s string, p int) (Action, error) {
	f := strings.Fields(s)
	node := func(t string) (NodeID, error) {
		n, err := strconv.Atoi(t)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("bad node id %q in action %q", t, s)
		}
		if n >= p {
			return 0, fmt.Errorf("node %d out of range 0..%d in action %q", n, p-1, s)
		}
		return NodeID(n), nil
	}
	switch {
	case len(f) == 3 && f[0] == "host" && (f[2] == "launch" || f[2] == "process"):
		n, err := node(f[1])
		if err != nil {
			return Action{}, err
		}
		k := ActLaunch
		if f[2] == "process" {
			k = ActProcess
		}
		return Action{Kind: k, Node: n}, nil
	case len(f) == 3 && f[0] == "ni" && f[2] == "copy":
		n, err := node(f[1])
		if err != nil {
			return Action{}, err
		}
		return Action{Kind: ActCopy, Node: n}, nil
	case len(f) == 2 && f[0] == "deliver":
		from, to, ok := strings.Cut(f[1], "->")
		if !ok {
			return Action{}, fmt.Errorf("bad link %q in action %q (want I->J)", f[1], s)
		}
		i, err := node(from)
		if err != nil {
			return Action{}, err
		}
		j, err := node(to)
		if err != nil {
			return Action{}, err
		}
		if i == j {
			return Action{}, fmt.Errorf("no link from a node to itself in action %q", s)
		}
		return Action{Kind: ActDeliver, Node: j, From: i}, nil
	}
	return Action{}, fmt.Errorf("unknown action %q (want \"host H launch\", \"deliver I->J\", \"ni N copy\" or \"host H process\")", s)
}
