package ucast

import "lfccheck/model"

// LFC's host library (Machine.HostLibrary; thesis §3.1.4, §3.6, §6.2.3).
//
// A host's upcall is two steps when it must be: "host H upcall" moves the
// packet at the head of the host queue aside (Host.Up, innermost last),
// where it keeps its host buffer while its handler runs, and "host H
// return" (or, for a request, "host H reply") ends the innermost one and
// frees its buffer. An upcall that does nothing but return is still the
// single step "host H process".
//
// A routine that waits for a resource (waiting: the host's next launch
// finds the send pool full, a request's reply does, or a fetch-and-add
// value is outstanding) drains the network. Draining moves packets to host
// memory: when the NI has a packet for the host and every host buffer is
// full, "host H drain" takes one more from the pool (Host.Extra; §3.6
// step 1, "appends a new buffer from the pool"). A buffer freed while
// buffers from the pool are in use goes back to the pool, so the buffers
// the NI may fill return to HostBuffers once the host has caught up (a
// modelling choice: §3.6 returns a freed packet to the pool when "the
// queue already contains a sufficient number of empty packets" without
// saying how many are sufficient). With Nested (upcalls_allowed), a
// waiting routine also makes upcalls for the packets that follow: the
// packet whose handler waits moves aside ("host H upcall") and the next
// ones are processed, or moved aside in turn when their own handlers wait.
//
// Over-approximation, named: "host H process" is enabled with upcalls
// aside whenever Nested is set, also once the routine that drained has
// stopped waiting (a nested upcall that began while it waited may end
// later, and the model does not record when it began). The model's runs
// include every run of the library.
//
// Variant no-drain leaves the drain step out: a host whose handlers wait
// for send packets that only the peers' draining would free deadlocks.

// NoDrain is the variant without LFC's draining rule.
const NoDrain = "no-drain"

// MaxExtraBuffers bounds the host buffers draining takes from the pool
// (host memory is finite; §3.1.4: a client that never consumes what it
// is sent makes the system "run out of memory or deadlock").
const MaxExtraBuffers = 1 << 20

// NoDrainVariant is the no-drain variant with the example configuration
// ex, a request/reply workload in which replies wait for send packets.
func NoDrainVariant(ex model.Config) model.Variant {
	return model.Variant{Name: NoDrain,
		Doc:     "a routine that waits for a send packet does not drain the network: handlers that reply hold every host buffer while the replies wait for credits that only draining would return (§3.1.4, §6.2.3)",
		Catches: "deadlock", Example: ex}
}

// isRequest reports whether pkt's upcall must reply (Machine.Replies).
func (m *Machine) isRequest(pkt model.Packet) bool {
	return m.Replies && pkt.Val == ReplyWanted && pkt.Tag != TagReply && pkt.Tag != TagFARequest
}

// waiting reports whether a routine of host n waits for a resource: a
// launch for a send packet, a request's reply for one, or a fetch-and-add
// call for its value.
func (m *Machine) waiting(n *Node) bool {
	if n.FA.Outstanding || n.Next < len(m.Work[n.ID]) && !m.canLaunch(n) {
		return true
	}
	k := len(n.Up)
	return k > 0 && m.isRequest(n.Up[k-1]) && len(n.Send) >= m.SendBuffers
}

// mayTakeHead reports whether the host may process (or keep) the packet at
// the head of its queue in one step: there is one, it is not a request
// (whose upcall replies: "host H upcall"), and no upcall is aside unless
// draining makes nested upcalls.
func (m *Machine) mayTakeHead(n *Node) bool {
	if len(n.Queue) == 0 {
		return false
	}
	if !m.HostLibrary {
		return true
	}
	return !m.isRequest(n.Queue[0]) && (len(n.Up) == 0 || m.Nested)
}

// freed returns a freed host buffer to the pool while buffers from it are
// in use.
func (m *Machine) freed(n *Node) {
	if n.Extra > 0 {
		n.Extra--
	}
}

// canDrain reports whether "host H drain" is enabled.
func (m *Machine) canDrain(n *Node) bool {
	return m.Variant != NoDrain && n.Extra < MaxExtraBuffers && n.NextCopy() >= 0 &&
		n.HostBuffersUsed() >= m.HostBuffers+n.Extra && m.waiting(n)
}

// canUpcall reports whether "host H upcall" is enabled: a request's
// upcall begins when no other runs, and with Nested a waiting routine
// moves the head's upcall aside to make the next ones.
func (m *Machine) canUpcall(n *Node) bool {
	if len(n.Queue) == 0 {
		return false
	}
	return len(n.Up) == 0 && m.isRequest(n.Queue[0]) || m.Nested && m.waiting(n)
}

func (m *Machine) hostLibraryKinds() []*model.ActionKind {
	ks := []*model.ActionKind{
		{Name: "upcall", Pattern: "host {node} upcall", Owner: model.OwnerHost,
			Fair: model.Weak, FairClass: "host {node}", Live: model.LiveClient,
			Enabled: func(n model.Node) bool { return m.canUpcall(m.NodeOf(n)) },
			Apply: func(n model.Node, _ *model.Outbox) {
				u := m.NodeOf(n)
				u.Up = append(u.Up, u.Queue[0])
				u.Queue = append(u.Queue[:0], u.Queue[1:]...)
			}},
		{Name: "return", Pattern: "host {node} return", Owner: model.OwnerHost,
			Fair: model.Weak, FairClass: "host {node}", Live: model.LiveClient,
			Enabled: func(n model.Node) bool {
				u := m.NodeOf(n)
				k := len(u.Up)
				return k > 0 && !m.isRequest(u.Up[k-1])
			},
			Apply: func(n model.Node, _ *model.Outbox) {
				u := m.NodeOf(n)
				u.Up = u.Up[:len(u.Up)-1]
				m.freed(u)
			}},
		{Name: "drain", Pattern: "host {node} drain", Owner: model.OwnerHost,
			Fair: model.Weak, FairClass: "host {node} drain",
			Enabled: func(n model.Node) bool { return m.canDrain(m.NodeOf(n)) },
			Apply:   func(n model.Node, _ *model.Outbox) { m.NodeOf(n).Extra++ }},
	}
	if m.Replies {
		ks = append(ks, &model.ActionKind{Name: "reply", Pattern: "host {node} reply", Owner: model.OwnerHost,
			Fair: model.Weak, FairClass: "host {node}",
			Enabled: func(n model.Node) bool {
				u := m.NodeOf(n)
				k := len(u.Up)
				return k > 0 && m.isRequest(u.Up[k-1]) && len(u.Send) < m.SendBuffers
			},
			Apply: func(n model.Node, out *model.Outbox) { m.Reply(m.NodeOf(n), out) }})
	}
	return ks
}

// Reply ends the innermost upcall, a request's: the handler's send of the
// reply takes a send packet and runs event_unicast (Fig. 4.2) to the
// request's origin, then the upcall returns and frees the request's host
// buffer.
func (m *Machine) Reply(n *Node, out *model.Outbox) {
	req := n.Up[len(n.Up)-1]
	n.Up = n.Up[:len(n.Up)-1]
	m.freed(n)
	pkt := model.Packet{Tag: TagReply, Src: n.ID, Origin: n.ID, Seq: req.Seq}
	n.Send = append(n.Send, SendBuf{Pkt: pkt, Refs: 1})
	n.Send[len(n.Send)-1].Pkt.Hop = m.reusedHeader(n) // the descriptor reads no header
	m.CreditSend(n, Desc{Dest: req.Origin, Pkt: pkt}, out)
}

// HostLibraryStats say whether a configuration exercises LFC's host
// library: the most host buffers draining took from the pool at once, and
// the most upcalls aside at once (2 or more: nested upcalls), in any state
// the search checks. Machines without it neither gather nor report them.
var HostLibraryStats = []model.Stat{
	{Name: "drained-buffers", Doc: "most host buffers taken from the pool by draining at once, in any state (0: draining never had to add one)",
		State:   func(w *model.World) int64 { return hostMax(w, func(n *Node) int { return n.Extra }) },
		Applies: modelsHostLibrary},
	{Name: "upcalls-aside", Doc: "most upcalls aside on one host at once, in any state (2 or more: nested upcalls)",
		State:   func(w *model.World) int64 { return hostMax(w, func(n *Node) int { return len(n.Up) }) },
		Applies: modelsHostLibrary},
}

// modelsHostLibrary reports whether m, a machine built on UCAST's, models
// LFC's host library.
func modelsHostLibrary(m model.Machine) bool {
	b, ok := m.(interface{ Base() *Machine })
	return ok && b.Base().HostLibrary
}

func hostMax(w *model.World, f func(*Node) int) int64 {
	best := 0
	for i := range w.Nodes {
		best = max(best, f(NodeAt(w, i)))
	}
	return int64(best)
}

// Base returns the UCAST machine (protocols that embed it inherit this).
func (m *Machine) Base() *Machine { return m }
