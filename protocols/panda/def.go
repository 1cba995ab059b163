package panda

import (
	"fmt"
	"strings"

	"lfccheck/model"
	"lfccheck/properties"
)

// Def is Panda's protocol definition.
var Def = &model.Def{
	Name:      "panda",
	Doc:       "Panda's message passing over LFC: a host-level sliding window per pair, multi-packet messages, an RPC whose handler replies from its upcall, and the upcall models that make it deadlock or not (thesis §6.2.3, §6.3)",
	Params:    ParamSpecs(),
	NewParams: func() model.Params { return Defaults() },
	Variants: []model.Variant{
		{Name: Correct, Doc: "Panda's upcall model on LFC: lfc_upcall runs nested on top of a handler blocked in a send, at most one handler per endpoint (§6.2.3, §6.3)"},
		{Name: OneUpcall, Doc: "at most one upcall per host at a time: a reply handler whose send window closes blocks the upcall that would process the acknowledgement (§6.2.3)",
			Catches: "deadlock", Example: Config(2, 2, 3)},
	},
	Properties: []model.Property{Deadlock, Window, properties.FIFO, ExactlyOnce, ReplyBlocks},
	Acyclic:    true,
	New:        func(cfg model.Config) (model.Machine, error) { return New(cfg) },
	Claims:     claims(),
	Stats: []model.Stat{{Name: "nested-upcalls",
		Doc: "lfc_upcall steps taken while a request handler is active on the same host (nested upcalls; none under one-upcall)",
		Step: func(w *model.World, a model.Action, _ *model.Outbox) int64 {
			if w.Sys.Kinds[a.Kind].Name == "upcall" && pnode(w, int(a.Node)).Serving {
				return 1
			}
			return 0
		}}},
	Sweep: []model.Setting{{Key: "reply-packets", Value: "3,5"}},
}

func claims() []model.Claim {
	cfg := func(nodes, window, reply int, set ...string) model.Config {
		c := Config(nodes, window, reply)
		p := c.Params.(*Params)
		for i := 0; i+1 < len(set); i += 2 {
			if err := p.Set(set[i], set[i+1]); err != nil {
				panic(err)
			}
		}
		return c
	}
	fits := cfg(2, 2, 2)
	fits.Variant = OneUpcall
	fits.Properties = []string{"deadlock", "window", "fifo", "exactly-once"}
	return []model.Claim{
		{Name: "P=2 W=2 reply=3", Config: cfg(2, 2, 3), Expect: "pass", Ref: "§6.2.3",
			Doc: "the reply handler's window closes after two packets; the ACK is processed by a nested upcall on top of it, and the reply completes"},
		{Name: "P=2 W=4 calls=2 request=5 reply=5", Config: cfg(2, 4, 5, "calls", "2", "request-packets", "5"), Expect: "pass", Ref: "§6.2.3, §6.3",
			Doc: "both messages are longer than the window: the client's thread blocks in its request and the handler in its reply; credits below the ACK threshold ride on data packets (Fig. 6.12's credits field)"},
		{Name: "P=3 W=2 reply=3", Config: cfg(3, 2, 3), Expect: "pass", Ref: "§6.2.3",
			Doc: "two clients: a request queues at the server's endpoint behind a handler blocked in its reply (one upcall per endpoint), while nested upcalls process both clients' packets"},
		{Name: "one-upcall P=2 W=2 reply=2", Config: fits, Expect: "pass", Ref: "§6.2.3",
			Doc: "a reply that fits the window never blocks: at most one upcall at a time deadlocks only once the window closes"},
		{Name: "P=2 W=2 reply=2", Config: cfg(2, 2, 2), Expect: "fail reply-blocks", Ref: "§6.2.3",
			Doc: "with a reply that fits the window no handler blocks: the reachability goal fails, so the other claims' goals are meaningful"},
	}
}

func pnode(w *model.World, i int) *Node { return w.Nodes[i].(*Node) }
func pmach(w *model.World) *Machine     { return w.Sys.M.(*Machine) }

// Deadlock: a state with no enabled action has every call answered and
// nothing left in queues or on links.
var Deadlock = properties.Deadlock(func(w *model.World) error {
	m := pmach(w)
	open, blocked, waiting, queued := 0, 0, 0, 0
	for i := range w.Nodes {
		n := pnode(w, i)
		if i != int(serverNode) {
			open += m.Calls - n.Calls
			if n.Waiting {
				open++
			}
		}
		if n.Blocked() {
			blocked++
		}
		waiting += len(n.Delivered)
		queued += len(n.Partial) + len(n.Requests) + len(n.Replies)
	}
	if open+blocked+waiting+queued+w.InFlight() == 0 {
		return nil
	}
	var parts []string
	for _, c := range []struct {
		n          int
		one, other string
	}{{open, "call unanswered", "calls unanswered"}, {blocked, "send blocked on a closed window", "sends blocked on a closed window"},
		{waiting, "packet waiting for an upcall", "packets waiting for an upcall"},
		{queued, "message queued or partial", "messages queued or partial"}, {w.InFlight(), "packet in flight", "packets in flight"}} {
		switch {
		case c.n == 1:
			parts = append(parts, "1 "+c.one)
		case c.n > 1:
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.other))
		}
	}
	return fmt.Errorf("%s", strings.Join(parts, ", "))
}, explain)

// explain says, for each blocked send, where the credits it waits for
// are and why nothing processes them.
func explain(w *model.World) model.Explanation {
	m := pmach(w)
	e := model.Explanation{Field: "window_wait", Head: "waiting for a window credit (§6.2.3):"}
	for i := range w.Nodes {
		n := pnode(w, i)
		if !n.Blocked() {
			continue
		}
		who := "the thread's"
		if n.Out.Tag == TagReply {
			who = "the request handler's"
		}
		e.Lines = append(e.Lines, fmt.Sprintf("host %d: %s send (%s) waits for a window credit for %d", n.ID, who, n.outText(), n.Dest))
		e.Waits = append(e.Waits, model.Wait{From: n.ID, To: n.Dest, Label: "window"})
		credits := 0
		for _, p := range n.Delivered {
			if p.Src == n.Dest {
				credits += int(p.Credits)
			}
		}
		if credits > 0 {
			why := "only an upcall processes them"
			if m.Variant == OneUpcall && n.Serving {
				why = "only an upcall processes them, and the blocked handler is the one upcall the host may run"
			}
			e.Lines = append(e.Lines, fmt.Sprintf("host %d: %d credits from %d wait in its delivered packets %s: %s", n.ID, credits, n.Dest, model.PacketList(n.Delivered), why))
		}
	}
	return e
}

// Window: for every ordered pair S->R, S's credits for R, R's data
// packets from S not yet processed by lfc_upcall, the credits R owes S
// and the credits travelling back sum to W.
var Window = model.Property{
	Name: "window",
	Doc:  "for every pair S->R: S's window credits for R + S's data packets on the link or waiting for R's upcall + credits R owes S + credits travelling R->S = W",
	State: func(w *model.World) error {
		m := pmach(w)
		for s := range w.Nodes {
			for r := range w.Nodes {
				if s == r {
					continue
				}
				S, R := pnode(w, s), pnode(w, r)
				sum := int(S.Credits[r]) + int(R.Owed[s])
				for _, p := range w.Link(model.NodeID(s), model.NodeID(r)) {
					if p.Tag.IsData() {
						sum++
					}
				}
				for _, p := range R.Delivered {
					if p.Src == model.NodeID(s) && p.Tag.IsData() {
						sum++
					}
				}
				for _, p := range w.Link(model.NodeID(r), model.NodeID(s)) {
					sum += int(p.Credits)
				}
				for _, p := range S.Delivered {
					if p.Src == model.NodeID(r) {
						sum += int(p.Credits)
					}
				}
				if sum != m.W {
					return fmt.Errorf("pair %d->%d accounts for %d window credits, want %d", s, r, sum, m.W)
				}
			}
		}
		return nil
	},
}

// ExactlyOnce: no handler is handed a message twice, and at a proper end
// the server has handled every client's requests and every client every
// reply.
var ExactlyOnce = properties.ExactlyOnce(
	func(w *model.World, h int) []model.StreamLog { return pnode(w, h).Logs },
	func(w *model.World, h int) []int {
		m := pmach(w)
		want := make([]int, m.P)
		for s := range want {
			switch {
			case h == int(serverNode) && s != h:
				want[s] = m.Calls
			case h != int(serverNode) && s == int(serverNode):
				want[s] = m.Calls
			}
		}
		return want
	})

// ReplyBlocks is reachable when some request handler's reply waits for a
// closed window.
var ReplyBlocks = model.Property{
	Name: "reply-blocks",
	Doc:  "some reachable state has a request handler blocked in its reply on a closed window (the thesis's scenario is exercised)",
	Sometimes: func(w *model.World) bool {
		for i := range w.Nodes {
			if n := pnode(w, i); n.Serving && n.Blocked() {
				return true
			}
		}
		return false
	},
}
