package gsb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"lfccheck/internal/goid"
	"lfccheck/model"
	"lfccheck/model/live"
	"lfccheck/properties"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/ucast"
)

// Delivery is one message delivered, in total order, to a process of a
// live Group.
type Delivery struct {
	Seq  int // the message's place in the total order, from 0
	From int // its sender
	K    int // its number among the sender's messages, from 1
	// Payload is the group's copy of the bytes the sender broadcast,
	// shared by every node's delivery of the message and by the Result:
	// read it, do not change it.
	Payload []byte
}

// LiveOptions configure a live Group.
type LiveOptions struct {
	// Config is a gsb configuration (Config, or any configuration of
	// protocol "gsb"): nodes, credits, buffers, broadcast trees, sequencer,
	// fragments and the senders (the nodes that may broadcast). Its packets
	// setting is ignored (a live group's messages are the Broadcast calls);
	// casts are not allowed.
	Config model.Config
	// Messages, if positive, is the most messages each sender may
	// broadcast; 0 allows the most the protocol can number, 65535/fragments
	// per sender (a message's packets are numbered in 16 bits on its
	// sender's tree).
	Messages int
	// OnDeliver, if set, is the group's receive upcall (Panda's upcall for
	// a group message, made from LFC's lfc_upcall): it is called for every
	// message every process delivers, in the total order, including the
	// sender's own messages (see Group for what it may do). If it
	// panics, the group recovers the panic and stops: Close returns an
	// error wrapping a *HandlerPanic with the panic's value and stack.
	OnDeliver func(node int, d Delivery)
}

// Group is GSB, Panda's totally-ordered broadcast (thesis §6.4), running
// in-process on the live runtime: one goroutine per node runs the same
// action kinds and handlers as the model (the NI's credits, the
// sequencer's fetch-and-add, the broadcast trees and the host's hold-back
// queue), and the recording of its steps can be replayed through the model
// (Result.Check).
//
// The calls and their thesis counterparts:
//
//   - StartLive starts the group: every node's NI with its broadcast tree
//     and credits, the sequencer's NI with the fetch-and-add variable.
//   - Broadcast (BroadcastContext) is Panda's totally-ordered group send:
//     the sender gets the message's sequence number with lfc_fetch_and_add
//     on the sequencer's NI (§3.8), then launches the message's packets
//     (fragments, §6.3) on its broadcast tree with lfc_bcast_launch; it
//     returns once the sender has delivered its own message, as Orca's
//     replicated-object writes wait for their own update.
//   - OnDeliver is the group's receive upcall: every process runs it for
//     each message in sequence-number order, holding back a message that
//     arrives before its predecessors (its packets stay in host buffers
//     until lfc_packet_free, §6.4), and for its own messages from its own
//     memory (LFC's broadcast does not deliver to the sender).
//   - Close (CloseContext) has no thesis counterpart: it ends the group
//     once everything broadcast is delivered everywhere and returns the
//     run.
//
// # Goroutines
//
// Broadcast, BroadcastContext, Close and CloseContext may be called
// concurrently from any goroutines, except from inside OnDeliver: there
// they return ErrInUpcall at once (waiting would wait for the very
// goroutine that runs the upcall). Concurrent broadcasts from one node are
// numbered (Delivery.K) in the order the group accepts them; broadcasts
// from different nodes proceed in parallel, as on separate hosts.
//
// OnDeliver runs in the delivering node's goroutine: one call at a time
// per node, calls for different nodes concurrently. While it runs, that
// node's protocol (its NI and host) waits, so it must not block for long;
// and it must not wait for a Broadcast or Close made for it by another
// goroutine, which may need this node's NI to finish. To broadcast in
// reaction to a delivery, hand the work to another goroutine and return.
//
// Ordered broadcast has no flow control (§6.1.1): with too few host
// buffers, held-back packets can fill them and stall the group; Broadcast
// then waits until its context ends, and Close until its context ends.
type Group struct {
	m       *Machine
	opt     LiveOptions
	cfg     model.Config // resolved; for Result.Check
	limit   int          // messages per sender
	nodes   []member
	upcalls atomic.Int32 // OnDeliver calls running
	failed  atomic.Pointer[HandlerPanic]

	mu     sync.Mutex
	closed bool

	stop  context.CancelCauseFunc
	done  chan struct{} // closed when the run is over
	res   *live.Result  // the run, once done
	err   error         // the run's error, once done
	cause error         // why the run was stopped (nil: it ended by itself), once done

	once      sync.Once
	result    *Result
	resultErr error
}

// member is a node's part of a Group.
type member struct {
	sender bool
	// Guarded by Group.mu.
	payloads [][]byte      // copies of its messages' payloads, by number-1
	taken    int           // messages its client has handed to the protocol
	own      int           // its own messages it has delivered (OnDeliver returned)
	ownSig   chan struct{} // closed and replaced when own grows
	// The node's goroutine only (Close reads them after the run).
	seen      int
	delivered []Delivery
	// Wake-ups for the node's client, one pending at most.
	posted  chan struct{} // a message was posted, or the group closed
	changed chan struct{} // the node took a step
	// Upcall detection: the node's goroutine, and whether it runs OnDeliver.
	gid      atomic.Uint64
	inUpcall atomic.Bool
}

// Result is a closed group's run.
type Result struct {
	// Delivered lists, per node, the messages it delivered, in the total
	// order.
	Delivered [][]Delivery
	// Broadcasts is, per node, how many of its messages the group accepted.
	Broadcasts []int
	// Steps is how many protocol steps the run took: each NI handler, each
	// packet's reception, each host's request, launch and upcall (the
	// model's actions, which Check replays).
	Steps int

	cfg     model.Config
	actions []model.Action
	stopped bool
}

var (
	// ErrClosed is returned by Broadcast after Close.
	ErrClosed = errors.New("gsb: group closed")
	// ErrInUpcall is returned by a call the group cannot serve from inside
	// OnDeliver (Broadcast, Close), which runs in a node's goroutine.
	ErrInUpcall = errors.New("gsb: called from inside OnDeliver")
)

// StartLive starts a live group (see Group). The group runs until Close,
// or until ctx ends: then it stops where it is, waiting calls return an
// error and Close reports the run as stopped.
func StartLive(ctx context.Context, opt LiveOptions) (*Group, error) {
	if opt.Config.Params == nil {
		return nil, fmt.Errorf("gsb: StartLive needs a gsb configuration")
	}
	cfg := opt.Config.Clone()
	def := Def
	p, ok := cfg.Params.(*Params)
	if !ok || cfg.Protocol != def.Name {
		return nil, fmt.Errorf("gsb: StartLive needs a gsb configuration")
	}
	if len(p.Casts) > 0 {
		return nil, fmt.Errorf("gsb: a live group takes no casts")
	}
	p.Packets = 1 // the workload comes from Broadcast
	cfg, err := def.Resolve(cfg)
	if err != nil {
		return nil, err
	}
	p = cfg.Params.(*Params)
	most := 65535 / p.Fragments
	if opt.Messages < 0 || opt.Messages > most {
		return nil, fmt.Errorf("gsb: messages must be in 0..%d (0: %d), got %d", most, most, opt.Messages)
	}
	m, err := build(cfg, p, 0, true)
	if err != nil {
		return nil, err
	}
	sys, err := model.NewSystem(cfg, m)
	if err != nil {
		return nil, err
	}
	g := &Group{m: m, opt: opt, cfg: cfg, limit: most, nodes: make([]member, cfg.Nodes), done: make(chan struct{})}
	if opt.Messages > 0 {
		g.limit = opt.Messages
	}
	for i := range g.nodes {
		s := &g.nodes[i]
		s.sender = m.trees[i] >= 0
		s.ownSig = make(chan struct{})
		s.posted = make(chan struct{}, 1)
		s.changed = make(chan struct{}, 1)
	}
	runCtx, stop := context.WithCancelCause(ctx)
	g.stop = stop
	go func() {
		res, err := live.RunWith(runCtx, sys, live.Options{Client: g.client, Observe: g.observe})
		cause := context.Cause(runCtx)
		stop(nil)
		g.res, g.err, g.cause = res, err, cause
		close(g.done)
	}()
	return g, nil
}

// addMessage appends message k (from 0) of sender s to its workload: one
// work item per fragment on its broadcast tree. A live group's workload
// grows this way, in node s's goroutine, which alone reads it.
func (m *Machine) addMessage(s model.NodeID, k int) {
	for f := 0; f < m.Fragments; f++ {
		m.AppendWork(int(s), ucast.WorkItem{Tag: mcast.TagMulticast, Tree: uint16(m.trees[s]), Seq: model.SeqOf(k*m.Fragments + f + 1)})
		m.item[s] = append(m.item[s], itemInfo{msg: k, frag: f})
	}
	m.Messages[s]++
}

// client is a node's program: for each accepted Broadcast, in order, it
// adds the message to the node's workload and issues the fetch-and-add
// request as soon as the protocol allows it; it returns once the group is
// closed and every accepted message is requested.
func (g *Group) client(ctx context.Context, c *live.Client) {
	id := c.Node()
	s := &g.nodes[id]
	for {
		g.mu.Lock()
		k, n, closed := s.taken, len(s.payloads), g.closed
		if k < n {
			s.taken++
		}
		g.mu.Unlock()
		if k == n {
			if closed {
				return
			}
			select {
			case <-s.posted:
			case <-ctx.Done():
				return
			}
			continue
		}
		if !c.Update(func(model.Node) { g.m.addMessage(id, k) }) {
			return
		}
		for !c.Do("request") {
			select {
			case <-s.changed:
			case <-ctx.Done():
				return
			}
		}
	}
}

// observe runs in node id's goroutine after each of its steps: it reports
// the node's new deliveries.
func (g *Group) observe(id model.NodeID, mn model.Node) {
	n := node(mn)
	s := &g.nodes[id]
	for s.seen < len(n.Delivered) {
		msg := n.Delivered[s.seen]
		g.mu.Lock()
		var pl []byte
		if ps := g.nodes[msg.From].payloads; int(msg.K) <= len(ps) {
			pl = ps[msg.K-1]
		}
		g.mu.Unlock()
		d := Delivery{Seq: s.seen, From: int(msg.From), K: int(msg.K), Payload: pl}
		s.seen++
		s.delivered = append(s.delivered, d)
		if g.opt.OnDeliver != nil && g.failed.Load() == nil {
			if s.gid.Load() == 0 {
				s.gid.Store(goid.ID()) // the node's goroutine: always the same
			}
			if hp := g.upcall(s, int(id), d); hp != nil {
				// The group stops; the delivery is in the Result (the
				// protocol made it), the upcall did not finish.
				g.failed.CompareAndSwap(nil, hp)
				g.stop(g.failed.Load())
				return
			}
		}
		if msg.From == id {
			g.mu.Lock()
			s.own++
			close(s.ownSig)
			s.ownSig = make(chan struct{})
			g.mu.Unlock()
		}
	}
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// upcall runs OnDeliver for node id's delivery d, recovering a panic,
// which it returns.
func (g *Group) upcall(s *member, id int, d Delivery) (hp *HandlerPanic) {
	s.inUpcall.Store(true)
	g.upcalls.Add(1)
	defer func() {
		g.upcalls.Add(-1)
		s.inUpcall.Store(false)
		if v := recover(); v != nil {
			hp = &HandlerPanic{Node: id, Seq: d.Seq, From: d.From, K: d.K, Value: v, Stack: debug.Stack()}
		}
	}()
	g.opt.OnDeliver(id, d)
	return nil
}

// HandlerPanic is the error of a group whose OnDeliver panicked: the
// group recovers the panic and stops where it is (as when StartLive's
// context ends); waiting and later Broadcasts, and Close, return an error
// wrapping it (test with errors.As). No OnDeliver call follows it.
type HandlerPanic struct {
	Node  int    // the delivering node
	Seq   int    // the delivery's place in the total order
	From  int    // the message's sender
	K     int    // its number among the sender's messages
	Value any    // the value passed to panic
	Stack []byte // the stack of OnDeliver's goroutine when it panicked
}

func (e *HandlerPanic) Error() string {
	return fmt.Sprintf("gsb: OnDeliver of node %d panicked on message %d (node %d's #%d): %v", e.Node, e.Seq, e.From, e.K, e.Value)
}

// Unwrap returns the panic value when it is an error.
func (e *HandlerPanic) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}

// inUpcall reports whether the calling goroutine is running OnDeliver. It
// asks for the goroutine's number only while some OnDeliver runs.
func (g *Group) inUpcall() bool {
	if g.upcalls.Load() == 0 {
		return false
	}
	me := goid.ID()
	for i := range g.nodes {
		if g.nodes[i].inUpcall.Load() && g.nodes[i].gid.Load() == me {
			return true
		}
	}
	return false
}

// stopped is why a group whose run is over stopped.
func (g *Group) stopped() error {
	if g.cause != nil {
		return g.cause
	}
	return g.err
}

// Broadcast is BroadcastContext with context.Background(): it waits as long
// as the group runs.
func (g *Group) Broadcast(node int, payload []byte) error {
	return g.BroadcastContext(context.Background(), node, payload)
}

// BroadcastContext broadcasts payload from node in the total order
// (Panda's totally-ordered group send, §6.4: lfc_fetch_and_add on the
// sequencer's NI for the sequence number, then lfc_bcast_launch of the
// message's packets on node's broadcast tree) and returns once node has
// delivered the message itself, its OnDeliver call for it included.
//
// The group copies payload before BroadcastContext returns, so the caller
// may reuse it at once. Calls for one node are numbered (Delivery.K) in
// the order the group accepts them.
//
// It returns an error, without broadcasting, if node is out of range or
// not a sender, if node has broadcast Messages messages already, after
// Close (ErrClosed), from inside OnDeliver (ErrInUpcall), or if ctx has
// ended. If ctx ends after the message was accepted, it returns ctx's
// error (wrapped) at once; the message cannot be taken back: it is still
// broadcast and delivered in its place in the order.
func (g *Group) BroadcastContext(ctx context.Context, node int, payload []byte) error {
	if g.inUpcall() {
		return ErrInUpcall
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("gsb: broadcast from node %d not made: %w", node, err)
	}
	if node < 0 || node >= len(g.nodes) {
		return fmt.Errorf("gsb: node %d out of range 0..%d", node, len(g.nodes)-1)
	}
	s := &g.nodes[node]
	if !s.sender {
		return fmt.Errorf("gsb: node %d is not a sender", node)
	}
	if hp := g.failed.Load(); hp != nil {
		return fmt.Errorf("gsb: broadcast from node %d: the group stopped: %w", node, hp)
	}
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return ErrClosed
	}
	select {
	case <-g.done:
		g.mu.Unlock()
		return fmt.Errorf("gsb: broadcast from node %d: the group stopped: %w", node, g.stopped())
	default:
	}
	if len(s.payloads) >= g.limit {
		g.mu.Unlock()
		return fmt.Errorf("gsb: node %d has broadcast all %d of its messages", node, g.limit)
	}
	s.payloads = append(s.payloads, bytes.Clone(payload))
	k := len(s.payloads)
	g.mu.Unlock()
	select {
	case s.posted <- struct{}{}:
	default:
	}
	for {
		g.mu.Lock()
		ok, sig := s.own >= k, s.ownSig
		g.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-sig:
			continue
		case <-ctx.Done():
		case <-g.done:
		}
		g.mu.Lock()
		ok = s.own >= k
		g.mu.Unlock()
		switch {
		case ok:
			return nil
		case ctx.Err() != nil:
			return fmt.Errorf("gsb: node %d's message %d is accepted and will be delivered, but the wait for it ended: %w", node, k, ctx.Err())
		default:
			return fmt.Errorf("gsb: the group stopped before node %d delivered its message %d: %w", node, k, g.stopped())
		}
	}
}

// Close is CloseContext with context.Background(): it waits as long as
// the group runs (a stalled group runs until StartLive's context ends).
func (g *Group) Close() (*Result, error) {
	return g.CloseContext(context.Background())
}

// CloseContext accepts no more broadcasts, waits until the run is over
// (every accepted message delivered everywhere, nothing in flight) and
// returns the run. It is an error if some process did not deliver every
// message: with too few host buffers, held-back messages can stall the
// group, since ordered broadcast has no flow control (§6.1.1). If ctx (or
// StartLive's context) ends first, the run is stopped where it is, and
// CloseContext returns the run so far with an error wrapping ctx's.
//
// Every call returns the same Result and error; from inside OnDeliver it
// returns ErrInUpcall and does not close the group.
func (g *Group) CloseContext(ctx context.Context) (*Result, error) {
	if g.inUpcall() {
		return nil, ErrInUpcall
	}
	if ctx.Err() != nil {
		g.stop(fmt.Errorf("gsb: close: %w", context.Cause(ctx)))
	}
	g.mu.Lock()
	if !g.closed {
		g.closed = true
		for i := range g.nodes {
			select {
			case g.nodes[i].posted <- struct{}{}:
			default:
			}
		}
	}
	g.mu.Unlock()
	select {
	case <-g.done:
	case <-ctx.Done():
		g.stop(fmt.Errorf("gsb: close: %w", context.Cause(ctx)))
		<-g.done
	}
	g.once.Do(g.finish)
	return g.result, g.resultErr
}

// finish builds the Result once the run is over.
func (g *Group) finish() {
	if g.res == nil {
		g.resultErr = fmt.Errorf("gsb: the group did not run: %w", g.err)
		return
	}
	r := &Result{Delivered: make([][]Delivery, len(g.nodes)), Broadcasts: make([]int, len(g.nodes)),
		Steps: len(g.res.Actions), cfg: g.cfg, actions: g.res.Actions, stopped: g.err != nil || g.cause != nil}
	total := 0
	g.mu.Lock()
	for i := range g.nodes {
		r.Broadcasts[i] = len(g.nodes[i].payloads)
		total += r.Broadcasts[i]
	}
	g.mu.Unlock()
	short := ""
	for i := range g.nodes {
		r.Delivered[i] = g.nodes[i].delivered
		if got := len(r.Delivered[i]); got != total && short == "" {
			short = fmt.Sprintf("node %d delivered %d of %d messages", i, got, total)
		}
	}
	g.result = r
	switch {
	case r.stopped && short != "":
		g.resultErr = fmt.Errorf("gsb: the run was stopped after %d steps, %s: %w", r.Steps, short, g.stopped())
	case r.stopped:
		g.resultErr = fmt.Errorf("gsb: the run was stopped after %d steps: %w", r.Steps, g.stopped())
	case short != "":
		g.resultErr = fmt.Errorf("gsb: %s: the group stalled", short)
	}
}

// Check replays the run through the gsb model, step by step, checking
// every property of the protocol after each step and, at the end, that
// nothing is left to do and every message was delivered everywhere. It
// returns nil if the model accepts the run: then the live group did
// nothing the model does not allow.
//
// The model's workload is fixed: every sender broadcasts the same number
// of messages. Check can replay a run in which every node that broadcast
// at all broadcast the same number of messages, with at most 64 packets
// (messages x fragments) per sender; for other runs it returns an error
// saying so. A run stopped before its end (CloseContext's context) is
// replayed, and then reported as stopped.
func (r *Result) Check() error {
	cfg := r.cfg.Clone()
	p := cfg.Params.(*Params)
	p.Senders, p.Packets = nil, 0
	for i, b := range r.Broadcasts {
		if b == 0 {
			continue
		}
		if p.Packets != 0 && b != p.Packets {
			return fmt.Errorf("gsb: Check: senders broadcast %d and %d messages; the model gives every sender as many", p.Packets, b)
		}
		p.Packets = b
		p.Senders = append(p.Senders, i)
	}
	if p.Packets == 0 {
		if r.Steps > 0 {
			return fmt.Errorf("gsb: Check: %d steps but no message", r.Steps)
		}
		return nil
	}
	if p.Packets*p.Fragments > model.MaxStreamSeq {
		return fmt.Errorf("gsb: Check: %d messages x %d fragments per sender, more than the model's %d packets per sender", p.Packets, p.Fragments, model.MaxStreamSeq)
	}
	ck, err := properties.Build(cfg)
	if err != nil {
		return fmt.Errorf("gsb: Check: %v", err)
	}
	w := ck.Sys.Initial()
	if err := ck.CheckState(w); err != nil {
		return fmt.Errorf("gsb: Check: the initial state: %v", err)
	}
	var out model.Outbox
	for i, a := range r.actions {
		w.ClearChanges()
		if err := w.Apply(a, &out); err != nil {
			return fmt.Errorf("gsb: Check: step %d (%s): the model does not allow it: %v", i+1, ck.Sys.ActionName(a), err)
		}
		if err := ck.CheckNextStep(w, a, &out); err != nil {
			return fmt.Errorf("gsb: Check: step %d (%s): %v", i+1, ck.Sys.ActionName(a), err)
		}
	}
	if r.stopped {
		return fmt.Errorf("gsb: Check: the model accepts all %d steps, but the run was stopped before its end", r.Steps)
	}
	if en := w.Enabled(nil); len(en) > 0 {
		return fmt.Errorf("gsb: Check: the run ended with %d steps left to take in the model (%s first)", len(en), ck.Sys.ActionName(en[0]))
	}
	if err := ck.CheckFinal(w); err != nil {
		return fmt.Errorf("gsb: Check: the end state: %v", err)
	}
	return nil
}
