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
// # One driver shape
//
// A RawNode is one node driven step by step (etcd raft's RawNode): the
// caller hands it packets and asks for action kinds and collects what each
// step sent and delivered. RunWith is a RawNode per node in a goroutine of
// its own, fed by an inbox, its client and its timers; Stepper drives all
// RawNodes of a system in one goroutine under a schedule the caller
// chooses (tests, simulations). Both record the run as model actions.
//
// # Clients and timers
//
// Kinds the protocol marks model.LiveClient (a host polling, toggling its
// interrupt flag, launching on its own schedule) are performed only when
// the node's client asks (Options.Client, Client.Do); kinds marked
// model.LiveTimer (an NI's watchdog) are performed when they have stayed
// enabled for their delay (Options.Timers), on the time package's clock, so
// that tests can run them in a testing/synctest bubble. Everything else is
// performed as soon as it is enabled. A kind marked model.ActionKind.Quiet
// (a retransmission timer longer than any round trip) is performed only
// while no packet is on a link from or to its node nor, for a
// model.Holder machine, held unhandled by another node: the rule of
// model.World.Quiet, checked under the lock that orders the recording, so
// that the recorded run stays a model execution.
//
// # Termination
//
// A node goroutine that has no enabled eager action, no armed timer and an
// empty inbox is idle. The run ends when every node is idle, no packet is
// in flight and every client has returned: a state where only client
// actions may be enabled, which Run returns for the caller to judge (a
// proper end or a deadlock).
package live

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"lfccheck/model"
)

// Options configure a live run.
type Options struct {
	// Timers gives the delay of every model.LiveTimer kind, by kind name.
	Timers map[string]time.Duration
	// Client, when set, runs once per node in a goroutine of its own, as
	// the program on that node's host; it drives the node's LiveClient
	// actions with Client.Do. The run ends only after every client has
	// returned.
	Client func(ctx context.Context, c *Client)
	// Observe, when set, is called in node id's goroutine after every step
	// that node takes, with the node's state; it must only read n, and
	// must not block for long (the node waits for it). APIs built on a
	// protocol use it to report what a step did (for example a delivery).
	Observe func(id model.NodeID, n model.Node)
	// LinkDelay, when positive, is the time a packet spends on a link: a
	// node receives a packet no earlier than LinkDelay after it was sent
	// (links stay FIFO). It emulates the wire and switch latency that an
	// in-process run does not have, so that latency grows with the number
	// of hops a packet makes, as on a network (zero: packets are received
	// as soon as the receiver gets to them).
	LinkDelay time.Duration
	// Tamper, when set, breaks the network's guarantees on purpose, for
	// testing the checks that must notice (conformance): every packet a
	// node transmits to another is replaced by the packets Tamper
	// returns, which are put on the link from->to in order (none: the
	// packet is lost; two copies: it is duplicated; a Tamper that keeps a
	// packet and returns it with a later one reorders the link). It is
	// called in the sending node's goroutine, for one link at a time per
	// sender.
	Tamper func(from, to model.NodeID, pkt model.Packet) []model.Packet
	// Forget, when set, keeps no history: Result.Actions, Arrived and
	// Delivered stay empty, so that a long run's memory does not grow
	// with its steps (Result.Steps still counts them).
	Forget bool
	// Monitor, when set, is called with every step as it is recorded,
	// in the recording's global order (a valid model execution, see the
	// package doc), with the packet a delivery received (zero for other
	// steps): an online monitor replays the run alongside it, without a
	// history (with Forget). It is called with the run's lock held, so
	// the nodes wait while it blocks: a monitor that falls behind slows
	// the run down instead of buffering without bound. It must not call
	// into the run.
	Monitor func(a model.Action, arrived model.Packet)
	// Faults, when set, injects link faults at random (see Faults): off
	// (nil) by default, at no cost.
	Faults *Faults
	// Deliver, when set, is called in node id's goroutine with every
	// packet a step hands to the node's host, in order (it works with
	// Forget, unlike Result.Delivered): receivers check exactly-once and
	// FIFO with it. It must not block for long.
	Deliver func(host model.NodeID, pkt model.Packet)
}

// LinkFaults are the probabilities, each in [0, 1] and together at most
// 1, that a packet taken off a link is lost, duplicated or corrupted.
type LinkFaults struct {
	Loss, Dup, Corrupt float64
}

// Faults configures the live runtime's fault injector: the links that the
// model's fault kinds (model.Faults) make unreliable, with rates instead of
// budgets. A fault strikes the packet at the head of its link when the
// receiver takes it, as the model's lose, duplicate and corrupt actions
// do: a lost packet is consumed without a step of the receiver; a
// duplicated one is received twice in a row; a corrupted one fails the
// NI's CRC check and is dropped, unless the machine is a
// model.CorruptionHandler, which is told. When the system has the fault
// action kinds (its configuration has fault budgets), every fault is
// recorded as that action, so a run within the budgets replays through
// the model; otherwise faults are counted (Result.Faults) but not
// recorded.
type Faults struct {
	// Seed seeds the random choices: each receiving node draws from a
	// generator of its own, seeded with Seed and its id, so a node's
	// faults depend only on the seed and the order of its arrivals.
	Seed uint64
	// All are the rates of every link without rates of its own.
	All LinkFaults
	// Links are rates per link, by [from, to].
	Links map[[2]model.NodeID]LinkFaults
}

// FaultCounts counts the faults a run's injector made.
type FaultCounts struct {
	Lost, Duplicated, Corrupted int64
}

func (f LinkFaults) check() error {
	for _, p := range []float64{f.Loss, f.Dup, f.Corrupt} {
		if !(p >= 0 && p <= 1) {
			return fmt.Errorf("live: fault rate %v out of [0, 1]", p)
		}
	}
	if f.Loss+f.Dup+f.Corrupt > 1 {
		return fmt.Errorf("live: fault rates %v+%v+%v add up to more than 1", f.Loss, f.Dup, f.Corrupt)
	}
	return nil
}

// injector is a run's fault injector: the rates per link and a generator
// per receiver (used only in the receiver's goroutine).
type injector struct {
	rates   []LinkFaults                // per link from*P+to
	rng     []*rand.Rand                // per receiver
	kinds   [model.FaultCorrupt + 1]int // the system's kind index of each fault kind, or -1
	lost    atomic.Int64
	dup     atomic.Int64
	corrupt atomic.Int64
}

func newInjector(sys *model.System, f *Faults) (*injector, error) {
	P := sys.P
	inj := &injector{rates: make([]LinkFaults, P*P), rng: make([]*rand.Rand, P)}
	if err := f.All.check(); err != nil {
		return nil, err
	}
	for l := range inj.rates {
		inj.rates[l] = f.All
	}
	for k, lf := range f.Links {
		if int(k[0]) >= P || int(k[1]) >= P || k[0] == k[1] {
			return nil, fmt.Errorf("live: fault rates for link %d->%d: no such link among %d nodes", k[0], k[1], P)
		}
		if err := lf.check(); err != nil {
			return nil, err
		}
		inj.rates[int(k[0])*P+int(k[1])] = lf
	}
	for i := range inj.rng {
		inj.rng[i] = rand.New(rand.NewPCG(f.Seed, uint64(i)))
	}
	for i := range inj.kinds {
		inj.kinds[i] = -1
	}
	for ki, k := range sys.Kinds {
		if fk := k.Fault(); fk != 0 {
			inj.kinds[fk] = ki
		}
	}
	return inj, nil
}

// draw decides the fault, if any, that strikes a packet on link from->to.
func (inj *injector) draw(from, to model.NodeID, P int) model.FaultKind {
	lf := inj.rates[int(from)*P+int(to)]
	if lf.Loss+lf.Dup+lf.Corrupt == 0 {
		return 0
	}
	x := inj.rng[to].Float64()
	switch {
	case x < lf.Loss:
		inj.lost.Add(1)
		return model.FaultLoss
	case x < lf.Loss+lf.Dup:
		inj.dup.Add(1)
		return model.FaultDup
	case x < lf.Loss+lf.Dup+lf.Corrupt:
		inj.corrupt.Add(1)
		return model.FaultCorrupt
	}
	return 0
}

// Client is a node's program: it asks the node's goroutine to perform the
// node's actions.
type Client struct {
	id   model.NodeID
	r    *run
	reqs chan request
}

type request struct {
	kind int              // the action kind to perform, or -1 with view set
	view func(model.Node) // reads (or, for Update, changes) the node's state in its goroutine
	done chan bool
}

// Node is the client's node.
func (c *Client) Node() model.NodeID { return c.id }

// Do performs the node's action of the named kind if it is enabled, and
// reports whether it was; it returns false at once when the run is over.
func (c *Client) Do(kind string) bool {
	ki, err := Kind(c.r.sys, kind)
	if err != nil {
		panic(err)
	}
	return c.send(request{kind: ki, done: make(chan bool, 1)})
}

// View runs f on the node's state in the node's goroutine, between steps;
// f must only read. It reports false, without running f, when the run is
// over.
func (c *Client) View(f func(n model.Node)) bool {
	return c.send(request{kind: -1, view: f, done: make(chan bool, 1)})
}

// Update runs f in the node's goroutine, between steps, like View; f may
// change what the node's actions depend on outside its model state (for
// example append to the machine's workload for this node, as a program
// posting a send does), never the model state itself. The node then
// performs whatever became enabled. It reports false, without running f,
// when the run is over.
func (c *Client) Update(f func(n model.Node)) bool { return c.View(f) }

func (c *Client) send(req request) bool {
	select {
	case c.reqs <- req:
	case <-c.r.stopped:
		return false
	}
	select {
	case ok := <-req.done:
		return ok
	case <-c.r.stopped:
		return false
	}
}

type msg struct {
	from model.NodeID
	pkt  model.Packet
	due  time.Time // with Options.LinkDelay: when it may be received
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

// pop takes the oldest packet if it is due; otherwise it returns how long
// until it is (0: the inbox is empty).
func (b *inbox) pop() (msg, bool, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.q) == 0 {
		return msg{}, false, 0
	}
	m := b.q[0]
	if !m.due.IsZero() {
		if d := time.Until(m.due); d > 0 {
			return msg{}, false, d
		}
	}
	b.q = b.q[1:]
	return m, true, 0
}

// Result is what a live run did.
type Result struct {
	// Actions is the recording of every step, in a valid global order.
	Actions []model.Action
	// Delivered lists, per host, the packets handed to it, in order.
	Delivered [][]model.Packet
	// Arrived gives, for each step of Actions that is a delivery, the
	// packet the node received (its identity: tag, origin, tree, number,
	// value); other steps have the zero Packet.
	Arrived []model.Packet
	// Steps is the number of steps the run took (len(Actions) unless
	// Options.Forget).
	Steps int
	// Final is the state the run ended in: every node's state and the
	// packets still on their links (none, and no action enabled, unless
	// the run was stopped).
	Final *model.World
	// Faults counts the faults injected (Options.Faults).
	Faults FaultCounts
}

type run struct {
	sys      *model.System
	opt      Options
	inboxes  []*inbox
	clients  []*Client
	inj      *injector  // nil: reliable links
	quiet    bool       // some kind is model.ActionKind.Quiet: inflight is kept
	mu       sync.Mutex // guards acts, arrived, active, inflight, held, holding
	inflight []int      // per node: packets recorded as sent and not yet taken off a link from or to it
	acts     []model.Action
	arrived  []model.Packet
	steps    int
	active   int // nodes not idle + packets in flight + running clients
	done     chan struct{}
	once     sync.Once
	stopped  chan struct{} // closed when the node goroutines stop

	// With a Quiet kind and a model.Holder machine: held[x*P+from] says
	// whether node x holds a packet from node from unhandled after its
	// latest recorded step, and holding[n] counts the nodes that hold
	// one of n's packets (n is not quiet while it is positive).
	holder  model.Holder
	held    []bool
	holding []int
}

func (r *run) record(a model.Action, arrived model.Packet) {
	r.mu.Lock()
	r.recordLocked(a, arrived)
	r.mu.Unlock()
}

// linkChange notes, with r.mu held, that d packets were put on (d > 0) or
// taken off (d < 0) link from->to, for the Quiet kinds.
func (r *run) linkChange(from, to model.NodeID, d int) {
	if r.quiet {
		r.inflight[from] += d
		r.inflight[to] += d
	}
}

// holdsLocked notes, with r.mu held, which packets node id holds
// unhandled after a step recorded just now (model.Holder), in its state
// n: a node's quiet kinds wait, as in the model (model.World.Quiet),
// while another node holds one of its packets. Only node id's goroutine
// calls it for id, on the state it owns.
func (r *run) holdsLocked(id model.NodeID, n model.Node) {
	if r.holder == nil {
		return
	}
	P := r.sys.P
	for from := 0; from < P; from++ {
		if from == int(id) {
			continue
		}
		h := r.holder.Holds(n, model.NodeID(from))
		if k := int(id)*P + from; h != r.held[k] {
			r.held[k] = h
			if h {
				r.holding[from]++
			} else {
				r.holding[from]--
			}
		}
	}
}

// recordLocked records a step with r.mu held.
func (r *run) recordLocked(a model.Action, arrived model.Packet) {
	r.steps++
	if r.opt.Monitor != nil {
		r.opt.Monitor(a, arrived)
	}
	if !r.opt.Forget {
		r.acts = append(r.acts, a)
		r.arrived = append(r.arrived, arrived)
	}
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
	return RunWith(ctx, sys, Options{})
}

// RunWith is Run with clients and timers (see Options).
func RunWith(ctx context.Context, sys *model.System, opt Options) (*Result, error) {
	P := sys.P
	for _, k := range sys.Kinds {
		if k.Live == model.LiveTimer {
			if d, ok := opt.Timers[k.Name]; !ok || d <= 0 {
				return nil, fmt.Errorf("live: kind %q is a timer: Options.Timers needs a positive delay for it", k.Name)
			}
		}
	}
	// Every node starts active, and so does every client: counting the
	// clients only once they start would let idle nodes end the run first.
	active := P
	if opt.Client != nil {
		active += P
	}
	r := &run{sys: sys, opt: opt, inboxes: make([]*inbox, P), active: active, done: make(chan struct{}), stopped: make(chan struct{})}
	if opt.Faults != nil {
		inj, err := newInjector(sys, opt.Faults)
		if err != nil {
			return nil, err
		}
		r.inj = inj
	}
	for _, k := range sys.Kinds {
		if k.Quiet {
			r.quiet = true
			r.inflight = make([]int, P)
		}
	}
	if h, ok := sys.M.(model.Holder); ok && r.quiet {
		r.holder, r.held, r.holding = h, make([]bool, P*P), make([]int, P)
	}
	for i := range r.inboxes {
		r.inboxes[i] = &inbox{signal: make(chan struct{}, 1)}
	}
	r.clients = make([]*Client, P)
	for i := range r.clients {
		r.clients[i] = &Client{id: model.NodeID(i), r: r, reqs: make(chan request)}
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
	cctx, cancel := context.WithCancel(ctx)
	var cwg sync.WaitGroup
	if opt.Client != nil {
		for _, c := range r.clients {
			cwg.Add(1)
			go func(c *Client) {
				defer cwg.Done()
				defer r.adjust(-1)
				opt.Client(cctx, c)
			}(c)
		}
	}
	select {
	case <-r.done:
	case <-ctx.Done():
	}
	// A run ended with its context done did not complete, even if it came
	// to rest: the clients see the context, and may have stopped because
	// of it (select picks at random when both are ready).
	err := ctx.Err()
	close(stop)
	wg.Wait()
	close(r.stopped)
	cancel()
	cwg.Wait()
	r.mu.Lock()
	res.Actions = append([]model.Action(nil), r.acts...)
	res.Arrived = append([]model.Packet(nil), r.arrived...)
	res.Steps = r.steps
	r.mu.Unlock()
	if r.inj != nil {
		res.Faults = FaultCounts{Lost: r.inj.lost.Load(), Duplicated: r.inj.dup.Load(), Corrupted: r.inj.corrupt.Load()}
	}
	for to, b := range r.inboxes {
		for _, m := range b.q {
			l := int(m.from)*P + to
			res.Final.Links[l] = append(res.Final.Links[l], m.pkt)
		}
	}
	if err != nil {
		return res, fmt.Errorf("live run stopped before completion after %d steps: %w", res.Steps, err)
	}
	return res, nil
}

// node runs node id's state n until stop is closed; it returns the packets
// handed to its host. It is a RawNode fed by the node's inbox, client
// requests and timers.
func (r *run) node(id model.NodeID, n model.Node, stop <-chan struct{}) []model.Packet {
	rn := newRawNode(r.sys, id, n)
	var delivered []model.Packet
	box := r.inboxes[id]
	// emit records a step (unless recorded: the caller did, with r.mu
	// held) and then puts its transmissions on the links; consumed says
	// the step took a packet off link from->id.
	emit := func(rd Ready, arrived model.Packet, from model.NodeID, consumed, recorded bool) {
		if !recorded {
			r.mu.Lock()
			r.recordLocked(rd.Action, arrived)
			if consumed {
				r.linkChange(from, id, -1)
			}
			for _, t := range rd.Sends {
				r.linkChange(id, t.To, 1)
			}
			r.holdsLocked(id, n)
			r.mu.Unlock()
		}
		if r.opt.Observe != nil {
			r.opt.Observe(id, n)
		}
		if !r.opt.Forget {
			for _, d := range rd.Deliveries {
				delivered = append(delivered, d.Pkt)
			}
		}
		if r.opt.Deliver != nil {
			for _, d := range rd.Deliveries {
				r.opt.Deliver(id, d.Pkt)
			}
		}
		var due time.Time
		if r.opt.LinkDelay > 0 && len(rd.Sends) > 0 {
			due = time.Now().Add(r.opt.LinkDelay)
		}
		for _, t := range rd.Sends {
			pkts := []model.Packet{t.Pkt}
			if r.opt.Tamper != nil {
				pkts = r.opt.Tamper(id, t.To, t.Pkt)
				if r.quiet && len(pkts) != 1 {
					r.mu.Lock()
					r.linkChange(id, t.To, len(pkts)-1)
					r.mu.Unlock()
				}
			}
			if len(pkts) > 0 {
				r.adjust(len(pkts))
			}
			for _, p := range pkts {
				r.inboxes[t.To].push(msg{from: id, pkt: p, due: due})
			}
		}
	}
	perform := func(ki int) bool {
		if r.quiet && r.sys.Kinds[ki].Quiet {
			// Enabled only while no packet is on a link from or to
			// the node, nor held unhandled by another node of a
			// model.Holder machine, in the recording's order:
			// checked, performed and recorded under the lock that
			// orders the steps.
			r.mu.Lock()
			if r.inflight[id] != 0 || r.holder != nil && r.holding[id] != 0 {
				r.mu.Unlock()
				return false
			}
			rd, ok := rn.Perform(ki)
			if ok {
				r.recordLocked(rd.Action, model.Packet{})
				for _, t := range rd.Sends {
					r.linkChange(id, t.To, 1)
				}
				r.holdsLocked(id, n)
			}
			r.mu.Unlock()
			if ok {
				emit(rd, model.Packet{}, 0, false, true)
			}
			return ok
		}
		rd, ok := rn.Perform(ki)
		if ok {
			emit(rd, model.Packet{}, 0, false, false)
		}
		return ok
	}
	// fault records fault kind fk striking the packet at the head of
	// link from->id, if the system has the kind.
	fault := func(fk model.FaultKind, from model.NodeID, pkt model.Packet, d int) {
		r.mu.Lock()
		if ki := r.inj.kinds[fk]; ki >= 0 {
			r.recordLocked(model.Action{Kind: uint8(ki), Node: id, Peer: from}, model.Packet{})
		}
		r.linkChange(from, id, d)
		r.mu.Unlock()
	}
	corruption, _ := r.sys.M.(model.CorruptionHandler)
	tm := newTimers(r.sys, r.opt.Timers)
	reqs := r.clients[id].reqs
	serve := func(req request) {
		if req.kind < 0 {
			req.view(n)
			req.done <- true
			return
		}
		req.done <- perform(req.kind)
	}
	for {
		// A client's request is served between any two steps, so that a
		// node kept busy by arriving packets and eager steps (a host
		// whose waiting call drains the network) does not starve its own
		// program.
		select {
		case req := <-reqs:
			serve(req)
			continue
		default:
		}
		m, ok, wait := box.pop()
		if ok {
			if r.inj != nil {
				switch r.inj.draw(m.from, id, r.sys.P) {
				case model.FaultLoss:
					fault(model.FaultLoss, m.from, m.pkt, -1)
					r.adjust(-1)
					continue
				case model.FaultCorrupt:
					if corruption != nil {
						// One step, as the model's corrupt action:
						// the handler runs on the packet as sent.
						ki := r.inj.kinds[model.FaultCorrupt]
						rd := rn.corrupted(corruption, m.from, m.pkt, ki)
						r.mu.Lock()
						if ki >= 0 {
							r.recordLocked(rd.Action, m.pkt)
						}
						r.linkChange(m.from, id, -1)
						for _, t := range rd.Sends {
							r.linkChange(id, t.To, 1)
						}
						r.holdsLocked(id, n)
						r.mu.Unlock()
						emit(rd, m.pkt, m.from, true, true)
					} else {
						fault(model.FaultCorrupt, m.from, m.pkt, -1)
					}
					r.adjust(-1)
					continue
				case model.FaultDup:
					fault(model.FaultDup, m.from, m.pkt, 1)
					emit(rn.Receive(m.from, m.pkt), m.pkt, m.from, true, false)
				}
			}
			emit(rn.Receive(m.from, m.pkt), m.pkt, m.from, true, false)
			r.adjust(-1) // the packet is consumed
			continue
		}
		if rd, ok := rn.Eager(); ok {
			emit(rd, model.Packet{}, 0, false, false)
			continue
		}
		tm.arm(n)
		armed := tm.next != nil
		if !armed {
			r.adjust(-1) // idle: nothing to do until a packet or a client request
		}
		var fire, arrive <-chan time.Time
		if armed {
			fire = tm.next.C
		}
		var arrival *time.Timer
		if wait > 0 {
			arrival = time.NewTimer(wait)
			arrive = arrival.C
		}
		select {
		case <-stop:
			tm.stop()
			return delivered
		case <-arrive:
		case <-box.signal:
		case req := <-reqs:
			serve(req)
		case <-fire:
			tm.fired(n, perform)
		}
		if arrival != nil {
			arrival.Stop()
		}
		if !armed {
			r.adjust(1)
		}
	}
}

// timers are a node's LiveTimer kinds: each is armed with its delay when it
// becomes enabled and fires if it is still enabled when the delay is over;
// an action that leaves it enabled (a restarted watchdog) arms it anew.
type timers struct {
	kinds    []int
	delay    []time.Duration
	deadline []time.Time // zero: not armed
	next     *time.Timer // fires at the earliest deadline
	sys      *model.System
}

func newTimers(sys *model.System, delays map[string]time.Duration) *timers {
	t := &timers{sys: sys}
	for ki, k := range sys.Kinds {
		if k.Live == model.LiveTimer {
			t.kinds = append(t.kinds, ki)
			t.delay = append(t.delay, delays[k.Name])
			t.deadline = append(t.deadline, time.Time{})
		}
	}
	return t
}

// arm arms the enabled kinds that are not armed, disarms the disabled
// ones, and sets next to the earliest deadline.
func (t *timers) arm(n model.Node) {
	t.stop()
	var first time.Time
	for i, ki := range t.kinds {
		switch {
		case !t.sys.Kinds[ki].Enabled(n):
			t.deadline[i] = time.Time{}
		case t.deadline[i].IsZero():
			t.deadline[i] = time.Now().Add(t.delay[i])
		}
		if d := t.deadline[i]; !d.IsZero() && (first.IsZero() || d.Before(first)) {
			first = d
		}
	}
	if !first.IsZero() {
		t.next = time.NewTimer(time.Until(first))
	}
}

// fired performs every armed kind whose deadline has passed and that is
// still enabled.
func (t *timers) fired(n model.Node, perform func(int) bool) {
	t.next = nil
	now := time.Now()
	for i, ki := range t.kinds {
		if d := t.deadline[i]; !d.IsZero() && !now.Before(d) {
			t.deadline[i] = time.Time{}
			if t.sys.Kinds[ki].Enabled(n) {
				perform(ki)
			}
		}
	}
}

func (t *timers) stop() {
	if t.next != nil {
		t.next.Stop()
		t.next = nil
	}
}
