package live

import (
	"fmt"

	"lfccheck/model"
)

// RawNode is one node of a system driven step by step by its caller, in
// the manner of etcd raft's RawNode: the caller hands it arriving packets
// (Receive) and asks it to perform action kinds (Perform, Eager), and
// collects what each step did (Ready: the action, the packets to put on
// links, the deliveries to the host). It owns the node's state and knows
// no protocol. The goroutine driver (RunWith) is a RawNode per node plus
// inboxes, clients and timers; Stepper drives RawNodes synchronously in
// one goroutine, for tests and simulations.
type RawNode struct {
	sys     *model.System
	id      model.NodeID
	n       model.Node
	out     model.Outbox
	deliver uint8
}

// Ready is what one step of a RawNode did. Its slices are valid until the
// node's next step.
type Ready struct {
	Action     model.Action
	Sends      []model.Transmit
	Deliveries []model.Delivery
}

// NewRawNode returns node id of sys in its initial state.
func NewRawNode(sys *model.System, id model.NodeID) *RawNode {
	return newRawNode(sys, id, sys.M.NewNode(id))
}

func newRawNode(sys *model.System, id model.NodeID, n model.Node) *RawNode {
	r := &RawNode{sys: sys, id: id, n: n}
	for i, k := range sys.Kinds {
		if k == model.Deliver {
			r.deliver = uint8(i)
		}
	}
	return r
}

// Node is the node's state; the caller must only read it.
func (r *RawNode) Node() model.Node { return r.n }

// Receive runs the protocol's handler for a packet arriving from node
// from (the model's "deliver from->id").
func (r *RawNode) Receive(from model.NodeID, pkt model.Packet) Ready {
	r.out.Reset()
	r.sys.M.Receive(r.n, from, pkt, &r.out)
	return r.ready(model.Action{Kind: r.deliver, Node: r.id, Peer: from})
}

// corrupted runs the machine's handler for a packet from node from that
// failed its CRC check (the model's corrupt action, kind index ki, or -1
// when the system has no such kind).
func (r *RawNode) corrupted(h model.CorruptionHandler, from model.NodeID, pkt model.Packet, ki int) Ready {
	r.out.Reset()
	h.Corrupted(r.n, from, pkt, &r.out)
	return r.ready(model.Action{Kind: uint8(max(ki, 0)), Node: r.id, Peer: from})
}

// Enabled reports whether action kind ki (an index into the system's
// Kinds, not Deliver) is enabled.
func (r *RawNode) Enabled(ki int) bool {
	k := r.sys.Kinds[ki]
	return k != model.Deliver && k.Enabled(r.n)
}

// Perform performs action kind ki if it is enabled.
func (r *RawNode) Perform(ki int) (Ready, bool) {
	if !r.Enabled(ki) {
		return Ready{}, false
	}
	r.out.Reset()
	r.sys.Kinds[ki].Apply(r.n, &r.out)
	return r.ready(model.Action{Kind: uint8(ki), Node: r.id}), true
}

// Eager performs the first enabled kind the protocol marks
// model.LiveEager (the ones a runtime performs by itself), if any.
func (r *RawNode) Eager() (Ready, bool) {
	for ki, k := range r.sys.Kinds {
		if k != model.Deliver && k.Live == model.LiveEager && k.Enabled(r.n) {
			return r.Perform(ki)
		}
	}
	return Ready{}, false
}

// Kind returns the index of the action kind named name (not Deliver).
func Kind(sys *model.System, name string) (int, error) {
	for i, k := range sys.Kinds {
		if k.Name == name && k != model.Deliver {
			return i, nil
		}
	}
	return 0, fmt.Errorf("live: no action kind %q", name)
}

func (r *RawNode) ready(a model.Action) Ready {
	return Ready{Action: a, Sends: r.out.Sends, Deliveries: r.out.Deliveries}
}

// Stepper drives every node of a system synchronously, in one goroutine:
// links are FIFO queues, and each Step performs one enabled step chosen by
// the caller's policy. It records the run as model actions, as the
// goroutine driver does.
type Stepper struct {
	Sys     *model.System
	Nodes   []*RawNode
	Actions []model.Action
	links   [][][]model.Packet // [from][to]
}

// NewStepper returns a stepper at sys's initial state.
func NewStepper(sys *model.System) *Stepper {
	s := &Stepper{Sys: sys, links: make([][][]model.Packet, sys.P)}
	for i := 0; i < sys.P; i++ {
		s.Nodes = append(s.Nodes, NewRawNode(sys, model.NodeID(i)))
		s.links[i] = make([][]model.Packet, sys.P)
	}
	return s
}

// Enabled lists the steps possible now: every node's enabled kinds (of
// every live mode) and every non-empty link's delivery.
func (s *Stepper) Enabled() []model.Action {
	var acts []model.Action
	for id, rn := range s.Nodes {
		for ki := range s.Sys.Kinds {
			if rn.Enabled(ki) {
				acts = append(acts, model.Action{Kind: uint8(ki), Node: model.NodeID(id)})
			}
		}
		for from := range s.links {
			if len(s.links[from][id]) > 0 {
				acts = append(acts, model.Action{Kind: rn.deliver, Node: model.NodeID(id), Peer: model.NodeID(from)})
			}
		}
	}
	return acts
}

// Step performs a, one of Enabled's steps, and returns what it did.
func (s *Stepper) Step(a model.Action) (Ready, error) {
	if int(a.Node) >= len(s.Nodes) {
		return Ready{}, fmt.Errorf("live: step %s: no node %d", s.Sys.ActionName(a), a.Node)
	}
	rn := s.Nodes[a.Node]
	var rd Ready
	if a.Kind == rn.deliver {
		q := s.links[a.Peer][a.Node]
		if len(q) == 0 {
			return Ready{}, fmt.Errorf("live: step %s: the link is empty", s.Sys.ActionName(a))
		}
		pkt := q[0]
		s.links[a.Peer][a.Node] = q[1:]
		rd = rn.Receive(a.Peer, pkt)
	} else {
		var ok bool
		if rd, ok = rn.Perform(int(a.Kind)); !ok {
			return Ready{}, fmt.Errorf("live: step %s: not enabled", s.Sys.ActionName(a))
		}
	}
	for _, t := range rd.Sends {
		s.links[a.Node][t.To] = append(s.links[a.Node][t.To], t.Pkt)
	}
	s.Actions = append(s.Actions, rd.Action)
	return rd, nil
}

// Run steps until nothing is enabled or max steps were taken, choosing
// each step with choose (for example the first, or a seeded random one);
// it returns the number of steps taken.
func (s *Stepper) Run(max int, choose func(enabled []model.Action) model.Action) (int, error) {
	for k := 0; k < max; k++ {
		en := s.Enabled()
		if len(en) == 0 {
			return k, nil
		}
		if _, err := s.Step(choose(en)); err != nil {
			return k, err
		}
	}
	return max, nil
}

// World returns the nodes' states and the links' contents as a model
// world (copies).
func (s *Stepper) World() *model.World {
	w := s.Sys.Initial()
	for i, rn := range s.Nodes {
		w.Nodes[i].CopyFrom(rn.n)
	}
	for from := range s.links {
		for to, q := range s.links[from] {
			w.Links[from*s.Sys.P+to] = append([]model.Packet(nil), q...)
		}
	}
	return w
}
