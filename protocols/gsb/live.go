package gsb

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"lfccheck/model"
	"lfccheck/model/live"
)

// Delivery is one message delivered, in total order, to a process of a
// live Group.
type Delivery struct {
	Seq     int          // the message's place in the total order, from 0
	From    model.NodeID // its sender
	K       int          // its number among the sender's messages, from 1
	Payload []byte
}

// LiveOptions configure a live Group.
type LiveOptions struct {
	// Config is a gsb configuration: nodes, credits, buffers, broadcast
	// trees, sequencer, fragments and the senders (the nodes that may
	// broadcast). Its packets setting is replaced by Messages; casts are
	// not allowed.
	Config model.Config
	// Messages is how many messages each sender may broadcast (the
	// protocol's workload is fixed when the group starts), 1 up to
	// 65535/fragments.
	Messages int
	// OnDeliver is called for every message a process delivers, in the
	// total order, from that node's goroutine: it must not block for long
	// and must not call the Group.
	OnDeliver func(node model.NodeID, d Delivery)
}

// Group is GSB running in-process on the live runtime: one goroutine per
// node runs the same action kinds and handlers as the model. A sender's
// process issues its fetch-and-add request when Broadcast asks it to; the
// NIs, the broadcast and the hosts' upcalls run by themselves.
//
// Payloads travel by reference: a packet carries its sender and message
// number, and the receiving process looks up the group's copy of the
// bytes, as a pointer in an in-process packet would.
type Group struct {
	m        *Machine
	opt      LiveOptions
	mu       sync.Mutex
	payloads [][][]byte // per sender, per message
	closed   bool
	requests []chan struct{} // per node: one token per Broadcast
	own      []chan struct{} // per node: one token per own message delivered
	changed  []chan struct{} // per node: a step happened
	seen     []int           // per node: deliveries reported (its goroutine only)
	done     chan struct{}
	res      *live.Result
	err      error
}

// ErrClosed is returned by Broadcast after Close.
var ErrClosed = errors.New("gsb: group closed")

// StartLive starts a live group; it runs until Close (or ctx's end).
func StartLive(ctx context.Context, opt LiveOptions) (*Group, error) {
	cfg := opt.Config.Clone()
	def := Def
	p, ok := cfg.Params.(*Params)
	if !ok || cfg.Protocol != def.Name {
		return nil, fmt.Errorf("gsb: StartLive needs a gsb configuration")
	}
	if len(p.Casts) > 0 {
		return nil, fmt.Errorf("gsb: a live group takes no casts")
	}
	if opt.Messages < 1 || opt.Messages*max(p.Fragments, 1) > 65535 {
		return nil, fmt.Errorf("gsb: messages must be in 1..%d, got %d", 65535/max(p.Fragments, 1), opt.Messages)
	}
	cfg, err := def.Resolve(cfg)
	if err != nil {
		return nil, err
	}
	p = cfg.Params.(*Params)
	m, err := build(cfg, p, opt.Messages, true)
	if err != nil {
		return nil, err
	}
	sys, err := model.NewSystem(cfg, m)
	if err != nil {
		return nil, err
	}
	P := cfg.Nodes
	g := &Group{m: m, opt: opt, payloads: make([][][]byte, P), requests: make([]chan struct{}, P),
		own: make([]chan struct{}, P), changed: make([]chan struct{}, P), seen: make([]int, P), done: make(chan struct{})}
	for i := 0; i < P; i++ {
		g.requests[i] = make(chan struct{}, opt.Messages)
		g.own[i] = make(chan struct{}, opt.Messages)
		g.changed[i] = make(chan struct{}, 1)
	}
	go func() {
		defer close(g.done)
		g.res, g.err = live.RunWith(ctx, sys, live.Options{Client: g.client, Observe: g.observe})
	}()
	return g, nil
}

// client is a node's program: one fetch-and-add request per Broadcast,
// each as soon as the protocol allows it.
func (g *Group) client(ctx context.Context, c *live.Client) {
	for range g.requests[c.Node()] {
		for !c.Do("request") {
			select {
			case <-g.changed[c.Node()]:
			case <-ctx.Done():
				return
			}
		}
	}
}

// observe reports node id's new deliveries.
func (g *Group) observe(id model.NodeID, mn model.Node) {
	n := node(mn)
	for ; g.seen[id] < len(n.Delivered); g.seen[id]++ {
		msg := n.Delivered[g.seen[id]]
		g.mu.Lock()
		var pl []byte
		if ps := g.payloads[msg.From]; int(msg.K) <= len(ps) {
			pl = ps[msg.K-1]
		}
		g.mu.Unlock()
		if g.opt.OnDeliver != nil {
			g.opt.OnDeliver(id, Delivery{Seq: g.seen[id], From: msg.From, K: int(msg.K), Payload: pl})
		}
		if msg.From == id {
			g.own[id] <- struct{}{}
		}
	}
	select {
	case g.changed[id] <- struct{}{}:
	default:
	}
}

// Broadcast broadcasts payload from node in total order and returns once
// node has delivered it itself (as Orca's replicated-object writes wait
// for their own update). Calls for one node are numbered in call order.
// Broadcast copies payload: the caller may reuse it once Broadcast
// returns, while other nodes have yet to deliver the message.
func (g *Group) Broadcast(node model.NodeID, payload []byte) error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return ErrClosed
	}
	if int(node) >= len(g.payloads) || g.m.Messages[node] == 0 {
		g.mu.Unlock()
		return fmt.Errorf("gsb: node %d is not a sender", node)
	}
	if len(g.payloads[node]) >= g.m.Messages[node] {
		g.mu.Unlock()
		return fmt.Errorf("gsb: node %d has broadcast all %d of its messages", node, g.m.Messages[node])
	}
	g.payloads[node] = append(g.payloads[node], append([]byte(nil), payload...))
	g.requests[node] <- struct{}{}
	g.mu.Unlock()
	select {
	case <-g.own[node]:
		return nil
	case <-g.done:
		return fmt.Errorf("gsb: the group stopped before node %d delivered its message: %v", node, g.err)
	}
}

// Close accepts no more broadcasts, waits until the run is over (every
// broadcast delivered everywhere, nothing in flight) and returns the run's
// recording. It is an error if some process did not deliver every message:
// with too few host buffers held-back messages can stall the group, since
// ordered broadcast has no flow control (§6.1.1).
func (g *Group) Close() (*live.Result, error) {
	g.mu.Lock()
	if !g.closed {
		g.closed = true
		for _, c := range g.requests {
			close(c)
		}
	}
	total := 0
	for _, ps := range g.payloads {
		total += len(ps)
	}
	g.mu.Unlock()
	<-g.done
	if g.err != nil {
		return g.res, g.err
	}
	for i, n := range g.res.Final.Nodes {
		if got := len(node(n).Delivered); got != total {
			return g.res, fmt.Errorf("gsb: node %d delivered %d of %d messages: the group stalled", i, got, total)
		}
	}
	return g.res, nil
}
