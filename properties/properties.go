// Package properties defines the kinds of properties lfccheck checks
// (invariants over states, rules over single transitions, and conditions on
// states where no action is enabled), the reusable properties of the LFC
// protocols stated over the model's vocabulary (deadlock, credit
// conservation, pool bounds, FIFO, exactly-once delivery), and the Checker
// that binds a model.System to a set of properties so the explorer can search
// it and traces can be replayed against it. It knows no specific protocol.
package properties

import (
	"fmt"
	"strings"

	"lfccheck/model"
)

// Property is a named correctness condition. Any of its checks may be nil.
type Property struct {
	Name string
	Doc  string
	// State must hold in every reachable state.
	State func(w *model.World) error
	// Step must hold for every transition; w is the state after it.
	Step func(w *model.World, s *model.StepInfo) error
	// Final must hold in every reachable state with no enabled action.
	Final func(w *model.World) error
	// Explain, when set, adds lines that explain a violation of this
	// property in the state w where it was found.
	Explain func(w *model.World) []string
}

// Violation is a property failure found in a state or transition.
type Violation struct {
	Property string
	Message  string
}

func (v *Violation) Error() string { return v.Property + ": " + v.Message }

// PropertyName names the violated property.
func (v *Violation) PropertyName() string { return v.Property }

// Deadlock: a state with no enabled action must be a proper end, with every
// packet launched, delivered and processed and nothing in flight.
var Deadlock = Property{
	Name: "deadlock",
	Doc:  "no state without enabled actions while packets remain undelivered, queued or in flight",
	Final: func(w *model.World) error {
		if w.Finished() {
			return nil
		}
		return fmt.Errorf("no action enabled, but %s", Remaining(w))
	},
	Explain: func(w *model.World) []string {
		cyc := WaitForCycle(w)
		if cyc == nil {
			return []string{"no wait-for cycle of full receive pools: the deadlock is not App. A.1's buffer cycle"}
		}
		lines := []string{"wait-for cycle (App. A.1):"}
		for _, l := range FormatCycle(w, cyc) {
			lines = append(lines, "  "+l)
		}
		return lines
	},
}

// Remaining summarizes the work left in a state, for deadlock messages.
func Remaining(w *model.World) string {
	var parts []string
	unsent, blocked, pooled, queued, inflight := 0, 0, 0, 0, 0
	for n := range w.Hosts {
		unsent += len(w.Sys.Work[n]) - w.Hosts[n].Next
		queued += len(w.Hosts[n].Queue)
		pooled += len(w.NIs[n].Recv)
		for p := range w.NIs[n].PCB {
			blocked += len(w.NIs[n].PCB[p].Blocked)
		}
	}
	for _, l := range w.Links {
		inflight += len(l)
	}
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(unsent, "packets not launched")
	add(blocked, "blocked sends")
	add(pooled, "NI receive buffers occupied")
	add(queued, "packets unprocessed by hosts")
	add(inflight, "packets in flight")
	if len(parts) == 0 {
		return "nothing remains"
	}
	return strings.Join(parts, ", ")
}

// CreditConservation: per ordered pair S->R, credits held by S, data packets
// in flight S->R, R's buffers occupied by S's packets, credits R owes S and
// credits in flight R->S add up to C, and no count is negative.
var CreditConservation = Property{
	Name: "credit-conservation",
	Doc:  "per ordered pair, credits held + data in flight + buffers occupied + credits owed or returning = C; none negative",
	State: func(w *model.World) error {
		P, C := w.Sys.P, w.Sys.Cfg.Credits
		for s := 0; s < P; s++ {
			for r := 0; r < P; r++ {
				if s == r {
					continue
				}
				held := w.NIs[s].PCB[r].SendCredits
				owed := w.NIs[r].PCB[s].FreeCredits
				if held < 0 {
					return fmt.Errorf("ni %d holds %d credits for %d", s, held, r)
				}
				if owed < 0 {
					return fmt.Errorf("ni %d owes %d credits to %d", r, owed, s)
				}
				data := 0
				for _, p := range w.Link(model.NodeID(s), model.NodeID(r)) {
					if p.Tag.IsData() {
						data++
					}
				}
				back := 0
				for _, p := range w.Link(model.NodeID(r), model.NodeID(s)) {
					back += int(p.Credits)
				}
				bufs := PoolCount(&w.NIs[r], model.NodeID(s))
				if sum := held + data + bufs + owed + back; sum != C {
					return fmt.Errorf("pair %d->%d: held %d + in flight %d + buffers %d + owed %d + returning %d = %d, want C = %d",
						s, r, held, data, bufs, owed, back, sum, C)
				}
			}
		}
		return nil
	},
}

// PoolCount is the number of ni's receive buffers occupied by packets from
// sender.
func PoolCount(ni *model.NI, sender model.NodeID) int {
	n := 0
	for i := range ni.Recv {
		if ni.Recv[i].From == sender {
			n++
		}
	}
	return n
}

// PoolBound: no NI ever holds more than C packets from one sender.
var PoolBound = Property{
	Name: "pool-bound",
	Doc:  "no NI receive pool ever holds more than C packets of one sender",
	State: func(w *model.World) error {
		C := w.Sys.Cfg.Credits
		for r := range w.NIs {
			for s := 0; s < w.Sys.P; s++ {
				if n := PoolCount(&w.NIs[r], model.NodeID(s)); n > C {
					return fmt.Errorf("ni %d holds %d packets from %d, more than C = %d", r, n, s, C)
				}
			}
		}
		return nil
	},
}

// FIFO: each host is delivered every stream's packets in increasing
// sequence order.
var FIFO = Property{
	Name: "fifo",
	Doc:  "every host is delivered each sender's packets in send order",
	Step: func(w *model.World, s *model.StepInfo) error {
		if s.Delivered && s.Prev.Last != 0 && s.Pkt.Seq <= s.Prev.Last {
			return fmt.Errorf("host %d delivered %s after #%d of the same stream", s.Host, s.Pkt, s.Prev.Last)
		}
		return nil
	},
}

// ExactlyOnce: no packet is delivered twice, and at a proper end every
// packet has been delivered.
var ExactlyOnce = Property{
	Name: "exactly-once",
	Doc:  "every packet is delivered to each destination host exactly once",
	Step: func(w *model.World, s *model.StepInfo) error {
		if s.Delivered && s.Pkt.Seq >= 1 && s.Pkt.Seq <= 64 && s.Prev.Mask&(1<<(s.Pkt.Seq-1)) != 0 {
			return fmt.Errorf("host %d delivered %s twice", s.Host, s.Pkt)
		}
		return nil
	},
	Final: func(w *model.World) error {
		for h := range w.Hosts {
			for st, want := range w.Sys.Expect[h] {
				full := uint64(1)<<want - 1
				if got := w.Hosts[h].Log[st].Mask; got != full {
					return fmt.Errorf("host %d: stream %d delivered mask %b, want %b", h, st, got, full)
				}
			}
		}
		return nil
	},
}

// Select returns the properties named in names, in the order of all, or all
// of them when names is empty.
func Select(all []Property, names []string) ([]Property, error) {
	if len(names) == 0 {
		return all, nil
	}
	var out []Property
	for _, n := range names {
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

// BufferHeld: every packet queued for forwarding still occupies its NI
// receive buffer, and each buffer's pending-forward count equals the
// forwards of it still queued.
var BufferHeld = Property{
	Name: "buffer-held",
	Doc:  "a packet queued for forwarding still occupies its receive buffer, with a matching pending-forward count",
	State: func(w *model.World) error {
		for n := range w.NIs {
			ni := &w.NIs[n]
			for p := range ni.PCB {
				for _, d := range ni.PCB[p].Blocked {
					if !d.Fwd {
						continue
					}
					held := false
					for i := range ni.Recv {
						held = held || ni.Recv[i].Pkt.SameData(d.Pkt)
					}
					if !held {
						return fmt.Errorf("ni %d has %s queued for %d, but its receive buffer was released", n, d.Pkt, d.Dest)
					}
				}
			}
			for i := range ni.Recv {
				rb := &ni.Recv[i]
				queued := 0
				for p := range ni.PCB {
					for _, d := range ni.PCB[p].Blocked {
						if d.Fwd && d.Pkt.SameData(rb.Pkt) {
							queued++
						}
					}
				}
				if queued != int(rb.Pending) {
					return fmt.Errorf("ni %d buffer %s counts %d pending forwards, %d are queued", n, rb.Pkt, rb.Pending, queued)
				}
			}
		}
		return nil
	},
}

// WaitEdge is one link of an App. A.1 wait-for cycle: NI From holds Held
// (received from its predecessor in the cycle) and is blocked sending to To,
// whose receive pool for From is full (Pool lists its contents).
type WaitEdge struct {
	From, To model.NodeID
	Held     *model.Packet
	Blocked  model.Packet // head of From's blocked-sends queue for To
	Pool     []model.Packet
}

// WaitForCycle finds a cycle of App. A.1 in w: NIs n0 -> n1 -> ... -> n0
// where each has a nonempty blocked-sends queue for its successor and the
// successor's receive pool for it is full. It returns nil if there is none.
func WaitForCycle(w *model.World) []WaitEdge {
	P, C := w.Sys.P, w.Sys.Cfg.Credits
	waits := func(s, r int) bool {
		return s != r && len(w.NIs[s].PCB[r].Blocked) > 0 && PoolCount(&w.NIs[r], model.NodeID(s)) >= C
	}
	// Depth-first search for a cycle in the wait-for graph, in node order.
	state := make([]int, P) // 0 unvisited, 1 on stack, 2 done
	var stack []int
	var cycle []int
	var dfs func(s int) bool
	dfs = func(s int) bool {
		state[s] = 1
		stack = append(stack, s)
		for r := 0; r < P; r++ {
			if !waits(s, r) {
				continue
			}
			if state[r] == 1 {
				for i, x := range stack {
					if x == r {
						cycle = append([]int(nil), stack[i:]...)
					}
				}
				return true
			}
			if state[r] == 0 && dfs(r) {
				return true
			}
		}
		stack = stack[:len(stack)-1]
		state[s] = 2
		return false
	}
	for s := 0; s < P && cycle == nil; s++ {
		if state[s] == 0 {
			dfs(s)
		}
	}
	if cycle == nil {
		return nil
	}
	var edges []WaitEdge
	k := len(cycle)
	for i, s := range cycle {
		r, pred := cycle[(i+1)%k], cycle[(i+k-1)%k]
		e := WaitEdge{From: model.NodeID(s), To: model.NodeID(r), Blocked: w.NIs[s].PCB[r].Blocked[0].Pkt}
		// The packet s holds from its predecessor that waits to go to r.
		for _, rb := range w.NIs[s].Recv {
			if rb.From != model.NodeID(pred) {
				continue
			}
			for _, d := range w.NIs[s].PCB[r].Blocked {
				if d.Fwd && d.Pkt.SameData(rb.Pkt) {
					p := rb.Pkt
					e.Held = &p
				}
			}
		}
		for _, rb := range w.NIs[r].Recv {
			if rb.From == model.NodeID(s) {
				e.Pool = append(e.Pool, rb.Pkt)
			}
		}
		edges = append(edges, e)
	}
	return edges
}

// FormatCycle renders a wait-for cycle, one line per NI.
func FormatCycle(w *model.World, cyc []WaitEdge) []string {
	var out []string
	for _, e := range cyc {
		held := "no packet from its predecessor"
		if e.Held != nil {
			held = "holds " + e.Held.String()
			if e.Held.Tag == model.TagMulticast {
				held = fmt.Sprintf("holds %s (root %d, number %d)", e.Held, e.Held.Origin, e.Held.Seq)
			}
		}
		pool := make([]string, len(e.Pool))
		for i, p := range e.Pool {
			pool[i] = p.String()
		}
		out = append(out, fmt.Sprintf("ni %d %s, blocked sending %s to ni %d, whose pool for ni %d is full (%d of %d: %s)",
			e.From, held, e.Blocked, e.To, e.From, len(e.Pool), w.Sys.Cfg.Credits, strings.Join(pool, " ")))
	}
	return out
}
