// Package properties defines the kinds of properties lfccheck checks and
// the checker that binds a system to them.
//
// A property (model.Property) may have an invariant over states (State), a
// rule over single transitions (Step), a condition on states where no
// action is enabled (Final), and a reachability goal (Sometimes: some
// reachable state must satisfy it, which shows that a race or scenario
// exists). Protocols define their properties and register them in their
// model.Def; this package provides the reusable ones, stated over the
// kernel's vocabulary only: deadlock (given the protocol's notion of a
// proper end), FIFO order and exactly-once delivery over the stream logs
// that protocols keep as history state.
//
// It knows no specific protocol.
package properties

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"lfccheck/model"
)

// Property is a named correctness condition (see model.Property).
type Property = model.Property

// Violation is a property failure found in a state or transition.
type Violation struct {
	Property string
	Message  string
}

func (v *Violation) Error() string { return v.Property + ": " + v.Message }

// PropertyName names the violated property.
func (v *Violation) PropertyName() string { return v.Property }

// Deadlock builds the deadlock property: a state with no enabled action
// must be a proper end. end returns nil for a proper end and otherwise an
// error saying what remains; explain, if not nil, explains a deadlock (for
// example with a wait-for cycle).
func Deadlock(end func(w *model.World) error, explain func(w *model.World) model.Explanation) Property {
	return Property{
		Name: "deadlock",
		Doc:  "no state without enabled actions while packets remain undelivered, queued or in flight",
		Final: func(w *model.World) error {
			if err := end(w); err != nil {
				return fmt.Errorf("no action enabled, but %v", err)
			}
			return nil
		},
		Explain: explain,
	}
}

// Counts renders nonzero counts as "3 blocked sends, 1 packet in flight"
// in the order given; "nothing remains" when all are zero.
func Counts(pairs ...any) string {
	var parts []string
	for i := 0; i+1 < len(pairs); i += 2 {
		if n := pairs[i].(int); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, pairs[i+1].(string)))
		}
	}
	if len(parts) == 0 {
		return "nothing remains"
	}
	return strings.Join(parts, ", ")
}

// FIFO: every host is handed each stream's packets in increasing sequence
// order, modulo model.SeqSpace (a number follows the last one when it is
// at most model.SeqWindow ahead of it). It reads the deliveries a step
// reports (model.Outbox.Deliver).
var FIFO = Property{
	Name: "fifo",
	Doc:  "every host is delivered each sender's packets in send order",
	Step: func(w *model.World, a model.Action, out *model.Outbox) error {
		for _, d := range out.Deliveries {
			if d.Prev.Last != 0 && !model.SeqAfter(d.Prev.Last, d.Pkt.Seq) {
				return fmt.Errorf("host %d delivered %s after #%d of the same stream", d.Host, d.Pkt, d.Prev.Last)
			}
		}
		return nil
	},
}

// ExactlyOnce builds the exactly-once property: no host is handed a packet
// of a stream twice, and at a proper end every host has every packet it
// must get. logs gives host h's stream logs in w and expect, per host and
// stream, how many packets it must get. Both read sequence numbers modulo
// model.SeqSpace (model.StreamLog): a host that got n packets of a stream
// and one that got n + SeqSpace look alike.
func ExactlyOnce(logs func(w *model.World, h int) []model.StreamLog, expect func(w *model.World, h int) []int) Property {
	return Property{
		Name: "exactly-once",
		Doc:  "every packet is delivered to each destination host exactly once",
		Step: func(w *model.World, a model.Action, out *model.Outbox) error {
			for _, d := range out.Deliveries {
				if d.Prev.Has(d.Pkt.Seq) {
					return fmt.Errorf("host %d delivered %s twice", d.Host, d.Pkt)
				}
			}
			return nil
		},
		Final: func(w *model.World) error {
			for h := range w.Nodes {
				lg := logs(w, h)
				for st, want := range expect(w, h) {
					if l := lg[st]; !l.Complete(want) {
						return fmt.Errorf("host %d: stream %d delivered %s, want packets 1..%d", h, st, l, want)
					}
				}
			}
			return nil
		},
	}
}

// Select returns the properties named in names, in the order of all, or all
// of them when names is empty.
func Select(all []Property, names []string) ([]Property, error) {
	if len(names) == 0 {
		return all, nil
	}
	var out []Property
	for i, n := range names {
		if slices.Contains(names[:i], n) {
			return nil, fmt.Errorf("property %q given twice", n)
		}
		found := false
		for _, p := range all {
			if p.Name == n {
				out = append(out, p)
				found = true
				break
			}
		}
		if !found {
			var known []string
			for _, p := range all {
				known = append(known, p.Name)
			}
			return nil, fmt.Errorf("unknown property %q (known: %s)", n, strings.Join(known, ", "))
		}
	}
	return out, nil
}

// AsViolation returns the violation err is or wraps, or one of the
// property "internal" with err's message.
func AsViolation(err error) *Violation {
	var v *Violation
	if errors.As(err, &v) {
		return v
	}
	return &Violation{Property: "internal", Message: err.Error()}
}
