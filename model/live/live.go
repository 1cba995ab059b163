// Package live runs a model.System's protocol as an in-process
// implementation: one goroutine per node, owning that node's state, and
// unbounded FIFO inboxes as the links, running the very same action kinds
// and Receive handler that the explorer searches. It knows no protocol:
// whatever a protocol registers runs here.
//
// Every step is recorded, in a global order, as the model action it is, so a
// run can be replayed through the model step by step; the model accepting
// the recording is the evidence that the runtime did nothing the model does
// not allow.
//
// # Why the recorded order is a valid model execution
//
// Every action kind other than Deliver is local to its node (model.ActionKind):
// its enabledness and effect depend only on the node's own state, which its
// goroutine alone owns. A goroutine performs a step, appends it to the
// recording under a lock, and only then pushes the step's transmissions to
// the receivers' inboxes. A delivery is recorded after the receiver takes
// the packet from its inbox, so after the step that sent it. Each inbox
// keeps the order of pushes, so the packets of link i->j are received in
// transmission order, as the model's FIFO link requires.
//
// # Termination
//
// A node goroutine that has no enabled local action and an empty inbox is
// idle. The run ends when every node is idle and no packet is in flight: a
// state with no enabled action, which Run returns for the caller to judge
// (a proper end or a deadlock).
package live

import (
	"context"
	"fmt"
	"sync"

	"lfccheck/model"
)

type msg struct {
	from model.NodeID
	pkt  model.Packet
}

// inbox is an unbounded FIFO queue with a wake-up signal.
type inbox struct {
	mu     sync.Mutex
	q      []msg
	signal chan struct{}
}

func (b *inbox) push(m msg) {
	b.mu.Lock()
	b.q = append(b.q, m)
	b.mu.Unlock()
	select {
	case b.signal <- struct{}{}:
	default:
	}
}

func (b *inbox) pop() (msg, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.q) == 0 {
		return msg{}, false
	}
	m := b.q[0]
	b.q = b.q[1:]
	return m, true
}

// Result is what a live run did.
type Result struct {
	// Actions is the recording of every step, in a valid global order.
	Actions []model.Action
	// Delivered lists, per host, the packets handed to it, in order.
	Delivered [][]model.Packet
	// Final is the state the run ended in: every node's state, no packet
	// in flight, and no action enabled (unless the run was stopped).
	Final *model.World
}

type run struct {
	sys     *model.System
	inboxes []*inbox
	mu      sync.Mutex // guards acts, active
	acts    []model.Action
	active  int // nodes not idle + packets in flight
	done    chan struct{}
	once    sync.Once
}

func (r *run) record(a model.Action) {
	r.mu.Lock()
	r.acts = append(r.acts, a)
	r.mu.Unlock()
}

// adjust changes the activity count. Reaching zero means every node is
// idle and no packet is in flight, so nothing can happen any more: the run
// is over (a node woken afterwards by a stale signal finds nothing to do).
func (r *run) adjust(d int) {
	r.mu.Lock()
	r.active += d
	if r.active == 0 {
		r.once.Do(func() { close(r.done) })
	}
	r.mu.Unlock()
}

// Run executes sys until no action is enabled anywhere, or until ctx
// ends. On ctx's end it returns the partial result and an error.
func Run(ctx context.Context, sys *model.System) (*Result, error) {
	P := sys.P
	r := &run{sys: sys, inboxes: make([]*inbox, P), active: P, done: make(chan struct{})}
	for i := range r.inboxes {
		r.inboxes[i] = &inbox{signal: make(chan struct{}, 1)}
	}
	res := &Result{Delivered: make([][]model.Packet, P), Final: sys.Initial()}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for n := 0; n < P; n++ {
		wg.Add(1)
		go func(id model.NodeID) {
			defer wg.Done()
			res.Delivered[id] = r.node(id, res.Final.Nodes[id], stop)
		}(model.NodeID(n))
	}
	var err error
	select {
	case <-r.done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	close(stop)
	wg.Wait()
	r.mu.Lock()
	res.Actions = append([]model.Action(nil), r.acts...)
	r.mu.Unlock()
	if err != nil {
		return res, fmt.Errorf("live run stopped before completion after %d steps: %w", len(res.Actions), err)
	}
	return res, nil
}

// node runs node id's state n until stop is closed; it returns the packets
// handed to its host.
func (r *run) node(id model.NodeID, n model.Node, stop <-chan struct{}) []model.Packet {
	var out model.Outbox
	var delivered []model.Packet
	box := r.inboxes[id]
	emit := func(a model.Action) {
		r.record(a)
		for _, d := range out.Deliveries {
			delivered = append(delivered, d.Pkt)
		}
		if len(out.Sends) > 0 {
			r.adjust(len(out.Sends))
		}
		for _, t := range out.Sends {
			r.inboxes[t.To].push(msg{from: id, pkt: t.Pkt})
		}
	}
	for {
		if m, ok := box.pop(); ok {
			out.Reset()
			r.sys.M.Receive(n, m.from, m.pkt, &out)
			emit(model.Action{Kind: r.deliverKind(), Node: id, Peer: m.from})
			r.adjust(-1) // the packet is consumed
			continue
		}
		if r.localStep(id, n, &out, emit) {
			continue
		}
		// Idle: nothing enabled locally and nothing received.
		r.adjust(-1)
		select {
		case <-stop:
			return delivered
		case <-box.signal:
			r.adjust(1)
		}
	}
}

// localStep performs the first enabled local action of node id, if any.
func (r *run) localStep(id model.NodeID, n model.Node, out *model.Outbox, emit func(model.Action)) bool {
	for ki, k := range r.sys.Kinds {
		if k == model.Deliver || !k.Enabled(n) {
			continue
		}
		out.Reset()
		k.Apply(n, out)
		emit(model.Action{Kind: uint8(ki), Node: id})
		return true
	}
	return false
}

func (r *run) deliverKind() uint8 {
	for i, k := range r.sys.Kinds {
		if k == model.Deliver {
			return uint8(i)
		}
	}
	panic("live: system without Deliver")
}
