package ucast

import (
	"fmt"
	"strings"

	"lfccheck/model"
)

// WaitEdge is one link of an App. A.1 wait-for cycle: NI From holds Held
// (received from its predecessor in the cycle) and is blocked sending to To,
// whose receive pool for From holds Pool and owes From Owed credits: every
// credit From has for To is there, the pool full or the rest owed below
// CREDIT_REFRESH, so never returned on its own.
type WaitEdge struct {
	From, To model.NodeID
	Held     *model.Packet
	Blocked  model.Packet // head of From's blocked-sends queue for To
	Pool     []model.Packet
	Owed     int
}

// WaitForCycle finds a cycle of App. A.1 in w: NIs n0 -> n1 -> ... -> n0
// where each has a nonempty blocked-sends queue for its successor and the
// successor holds every credit for it, in its receive pool or owed below
// the refresh threshold (with CREDIT_REFRESH R a cycle closes with C-R+1
// packets in a pool and R-1 credits owed). It returns nil if there is none.
func WaitForCycle(w *model.World) []WaitEdge {
	P, C, R := w.Sys.P, mach(w).C, mach(w).Refresh
	waits := func(s, r int) bool {
		if s == r || len(NodeAt(w, s).PCB[r].Blocked) == 0 {
			return false
		}
		nr := NodeAt(w, r)
		owed := nr.PCB[s].FreeCredits
		return owed < R && nr.PoolCount(model.NodeID(s))+owed >= C
	}
	// Depth-first search for a cycle in the wait-for graph, in node order.
	state := make([]int, P) // 0 unvisited, 1 on stack, 2 done
	var stack, cycle []int
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
		ns := NodeAt(w, s)
		e := WaitEdge{From: model.NodeID(s), To: model.NodeID(r), Blocked: ns.PCB[r].Blocked[0].Pkt}
		// The packet s holds from its predecessor that waits to go to r.
		for _, rb := range ns.Recv {
			if rb.From != model.NodeID(pred) {
				continue
			}
			for _, d := range ns.PCB[r].Blocked {
				if d.Fwd && d.Pkt.SameData(rb.Pkt) {
					p := rb.Pkt
					e.Held = &p
				}
			}
		}
		for _, rb := range NodeAt(w, r).Recv {
			if rb.From == model.NodeID(s) {
				e.Pool = append(e.Pool, rb.Pkt)
			}
		}
		e.Owed = NodeAt(w, r).PCB[s].FreeCredits
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
			if e.Held.Tag != TagUnicast { // forwarded on a tree: name its root
				held = fmt.Sprintf("holds %s (root %d, number %d)", e.Held, e.Held.Origin, e.Held.Seq)
			}
		}
		pool := make([]string, len(e.Pool))
		for i, p := range e.Pool {
			pool[i] = p.String()
		}
		if e.Owed == 0 {
			out = append(out, fmt.Sprintf("ni %d %s, blocked sending %s to ni %d, whose pool for ni %d is full (%d of %d: %s)",
				e.From, held, e.Blocked, e.To, e.From, len(e.Pool), mach(w).C, strings.Join(pool, " ")))
			continue
		}
		out = append(out, fmt.Sprintf("ni %d %s, blocked sending %s to ni %d, whose pool for ni %d holds %d of %d (%s) and owes it %s, fewer than CREDIT_REFRESH %d, so none is returned",
			e.From, held, e.Blocked, e.To, e.From, len(e.Pool), mach(w).C, strings.Join(pool, " "), credits(e.Owed), mach(w).Refresh))
	}
	return out
}

// ExplainCycle explains a deadlock by its wait-for cycle, if it has one.
func ExplainCycle(w *model.World) model.Explanation {
	cyc := WaitForCycle(w)
	if cyc == nil {
		return model.Explanation{Field: "wait_for_cycle",
			Head: "no wait-for cycle of receive pools holding every credit: the deadlock is not App. A.1's buffer cycle"}
	}
	e := model.Explanation{Field: "wait_for_cycle", Head: "wait-for cycle (App. A.1):", Lines: FormatCycle(w, cyc)}
	for _, c := range cyc {
		e.Waits = append(e.Waits, model.Wait{From: c.From, To: c.To, Label: "blocked " + c.Blocked.String()})
	}
	return e
}

func credits(n int) string {
	if n == 1 {
		return "1 credit"
	}
	return fmt.Sprintf("%d credits", n)
}
