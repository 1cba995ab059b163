// Package lfc is LFC as a library: an in-process cluster of P nodes that
// run the very handlers lfccheck checks (MCAST on UCAST's credits, or
// RECOV for trees that MCAST would deadlock on) on the live runtime
// (model/live, one goroutine per node), behind LFC's client interface
// (thesis Table 3.1, §3.1). Each Go call names the LFC call it is:
//
//   - Node.Send, Node.SendContext: lfc_send_alloc + lfc_ucast_launch. The
//     payload is copied; the call returns once the NI has taken the
//     packet, so a sender whose destination stops consuming blocks (flow
//     control, not loss).
//   - Node.Multicast, Node.MulticastContext: lfc_mcast_launch (and
//     lfc_bcast_launch, with the group of all nodes).
//   - Node.FetchAndAdd, Node.FetchAndAddContext: lfc_fetch_and_add (§3.8)
//     on the NI of Options.Server.
//   - Options.Handler: lfc_upcall. In Upcall mode the library calls it
//     for every packet as soon as the NI has copied it to a host buffer
//     (LFC's interrupt-driven upcalls); in Polling mode Node.Poll
//     (lfc_poll) calls it for at most one waiting packet, Node.PollAll
//     for every waiting one.
//   - Packet.Keep is lfc_upcall returning nonzero, Kept.Free is
//     lfc_packet_free: a kept packet holds one of the node's host buffers
//     (at most Options.Keep at once) until it is freed.
//   - Node.DisableInterrupts and Node.EnableInterrupts are
//     lfc_intr_disable and lfc_intr_enable: Upcall mode starts with
//     interrupts enabled, Polling mode with them disabled.
//   - Options.NoNestedUpcalls is upcalls_allowed = 0 on every call.
//
// # Draining and nested upcalls (§3.1.4, §3.6, §6.2.3)
//
// A handler may send, multicast and fetch-and-add: a request's upcall may
// reply before it returns. As in LFC, every call that waits for a resource
// (a send packet, a fetch-and-add value) drains the network: when the NI
// has a packet for the host and every host buffer is full, the library
// takes another buffer from host memory, so the NI's receive buffers are
// released and the credits flow back to the senders, whose own waiting
// handlers could otherwise hold every buffer in a cycle. When the waiting
// call was made from the node's own handler and upcalls are allowed (the
// default; Options.NoNestedUpcalls turns them off; the library also turns
// them off with Options.Keep, whose kept packets it does not move aside), the drain
// also makes nested upcalls: the handler of the next waiting packet runs
// on the same goroutine, inside the waiting call, as LFC's Fig. 6.4 shows
// (at most 16 deep; deeper calls drain without upcalls).
// Handlers must therefore be reentrant: a handler that holds a lock while
// it sends can be entered again, and would then wait for itself. The
// model checks exactly this host library (UCAST and MCAST parameters
// drain, reply and upcalls-allowed; the built-in suite's request/reply
// rows and the variant no-drain, which deadlocks).
//
// # Goroutines
//
// Every method may be called from any goroutine, concurrently; calls on
// one node are served in the order they take its send lock. A handler
// runs on the library's goroutine for its node (Upcall mode) or on the
// caller of Poll (Polling mode), one packet at a time per node (nested
// upcalls aside). From inside a handler, a program may call its own
// node's Send, Multicast, FetchAndAdd (and their Context forms),
// Packet.Keep and Kept.Free; calls that would wait for the handler itself
// return ErrInUpcall: Poll and PollAll, Cluster.Drain, Cluster.Close, and
// any blocking call on another node (in LFC a process has one NI). Calls
// on a nil *Node (Cluster.Node of an id out of range) return ErrNoNode;
// nothing panics on misuse, and misuse errors wrap sentinels for
// errors.Is (ErrPayloadTooLarge, ErrKeepLimit, ErrDoubleFree,
// ErrUnknownGroup). A handler's panic is recovered: it stops the cluster,
// and every call from then on returns the *HandlerPanic. After Close,
// every call returns ErrClosed; Node.PollContext waits for a packet
// instead of polling in a loop, and Cluster.CloseContext bounds Close's
// wait for handlers that are still running.
//
// Sequence numbers wrap: a stream (per sender and destination, or per
// tree) numbers its packets 1..65535 and starts again at 1, so a cluster
// may run for ever; Packet.Seq is that number. The model's numbers wrap
// alike (model.SeqSpace), and its FIFO and exactly-once properties read
// them modulo 65535 (model.StreamLog). A cluster that does not record
// keeps no history of its steps (a recording one keeps every step, within
// the model's limits below); fetch-and-add values are kept, four bytes
// per call.
//
// # Conformance
//
// Options.Record turns on the check that the running cluster is a model
// execution, in tests and programs alike (off by default). Either way the
// live runtime records every step of every node, in a valid global order,
// as the model action it is, with the identity of the packet each
// delivery took (origin, stream, number), and every send as the node's
// workload. The model then replays the steps with every property of the
// protocol after every step, checks that every delivery takes off its
// link the very packet the live node received, and that the replay ends
// in the live run's state (every node's credits, buffers, queues, stream
// logs and fetch-and-add values, and the packets on the links). A link
// that reorders, loses or duplicates a packet, a step the model does not
// allow, and a property's violation all end in a *ConformanceError from
// Close that names the step (ConformanceError.Step) and the packet.
//
// With RecordMonitor an online monitor does this while the cluster runs,
// in a goroutine of its own, holding one model state, the posted sends
// not yet launched, and the last 32 steps for its error
// (ConformanceError.Recent): its memory does not grow with the run, so a
// cluster of any length checks itself, at about 1.1-1.2x the unchecked
// cost on this project's benchmarks (BenchmarkConformance,
// BenchmarkStream; docs/results.md). Cluster.Conformance reports its
// verdict so far; Close waits for it to catch up. The nodes wait for the
// monitor when it is 4096 steps behind.
//
// With RecordOn the cluster keeps the whole run instead (Cluster.Recording
// after Close), and Close replays it: Recording.TraceFile writes it as a
// trace file that `lfccheck replay` accepts, so a bug seen live becomes a
// counterexample a person can read. A recording is a checked workload,
// within the explorer's limits: at most 64 packets per stream (per
// ordered pair for unicast, per tree for multicast) and 16384 per host,
// so a recording cluster refuses sends beyond that.
//
// Both count the protocol's statistics over the run (Report.Statistics,
// Recording.Statistics: RECOV's recoveries and recovery-channel packets,
// Table 5.2's RC and D; MCAST's forwarded packets), and Report.Checked
// says how many steps the model checked.
//
// Handlers' arguments are the model's by construction: the packet handed
// to a handler is the head of the live node's host queue, whose identity
// the replay compares. Payloads are outside the model: the library, not
// the protocol, carries them (below).
//
// # Payloads
//
// The model's packets carry no payload. In-process payloads travel by
// reference: the cluster keeps a copy of each payload under its packet's
// identity (origin, tree or destination, sequence number) until every
// destination handled it, as a pointer in an in-process packet would.
package lfc

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"lfccheck/internal/goid"
	"lfccheck/model"
	"lfccheck/model/live"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/recov"
	"lfccheck/protocols/topology"
	"lfccheck/protocols/ucast"
)

// Mode is how packets reach the program at first: it sets every node's
// interrupt flag, which Node.DisableInterrupts and Node.EnableInterrupts
// change at run time.
type Mode int

// Delivery modes.
const (
	// Upcall hands every packet to the handler as soon as it is in a host
	// buffer, from a goroutine of the library (one per node).
	Upcall Mode = iota
	// Polling keeps packets in host buffers until the program calls
	// Node.Poll, which runs the handler in the caller's goroutine.
	Polling
)

// Options configure a cluster. Zero sizes take the defaults given.
type Options struct {
	Nodes    int    // P, 2..64 (required)
	Protocol string // "mcast" (default) or "recov"
	// Variant is the protocol variant to run (default "correct"): a
	// broken variant runs live as it is checked, for showing what the
	// conformance check makes of it.
	Variant     string
	Credits     int // send credits per ordered pair, C (default 8)
	HostBuffers int // host receive buffers per host (default 16)
	SendBuffers int // NI send packets per NI (default 4)
	// Tree is the tree family of the broadcast group of all nodes (binary,
	// binomial, chain, star, kary:K; default binary); Topology, instead, is
	// the text of a topology file (see 'lfccheck help topology') with the
	// groups Multicast names.
	Tree       string
	Topology   string
	MaxPayload int // bytes per packet (default 8192)
	// Keep is how many packets a node's program may keep at once after
	// their upcall (Packet.Keep; default 0: none). Kept packets hold host
	// buffers, so Keep must be below HostBuffers.
	Keep int
	Mode Mode
	// Handler is the upcall (lfc_upcall): it receives every packet
	// delivered to node, in delivery order per node (per sender and tree,
	// the send order; nested upcalls aside). It may send, multicast and
	// fetch-and-add on its own node, and keep the packet (Packet.Keep);
	// calls that would wait for itself return ErrInUpcall (see the
	// package doc).
	//
	// A handler that panics stops the cluster: the library recovers the
	// panic (in Upcall mode as in Polling mode, nested upcalls
	// included), and from then on every call returns a *HandlerPanic
	// holding the panic's value and stack, Close and Poll included. The
	// packet is not counted as delivered (Report.InFlight lists it), and
	// no other handler is called with it.
	Handler func(node int, p Packet)
	// NoNestedUpcalls is upcalls_allowed = 0 (Table 3.1): a call that
	// waits drains the network without making upcalls (it still takes
	// host buffers). The default allows them, as LFC's clients do.
	NoNestedUpcalls bool
	// Record says whether the cluster checks itself against the model
	// (see the package doc's Conformance): RecordMonitor checks every step
	// while it runs, keeping no history; RecordOn keeps the run
	// (Cluster.Recording) and checks it on Close. The default, RecordOff
	// (the zero value), checks nothing.
	Record RecordMode
	// Server is the NI whose fetch-and-add variable Node.FetchAndAdd
	// increments (default 0), with either protocol (RECOV serves
	// fetch-and-add on MCAST's host library alike).
	Server int
	// LinkDelay is the time every packet spends on a link (see
	// live.Options.LinkDelay; default 0: none).
	LinkDelay time.Duration

	// tamper is the live transport's fault hook (live.Options.Tamper),
	// set by tests only (export_test.go).
	tamper func(from, to model.NodeID, pkt model.Packet) []model.Packet
}

// RecordMode says whether a cluster records itself.
type RecordMode int

// Record modes. RecordOff is the zero value, the default: the cluster
// records and checks nothing. (RecordOff was 2 before; RecordMode(2) is
// still accepted, and means off.)
//
// RecordOn keeps the whole run (Cluster.Recording), for a trace file and
// `lfccheck replay`, within the model's limits for a checked workload (64
// packets per stream, 16384 per host). RecordMonitor keeps no history: an
// online monitor replays every step through the model as the cluster
// runs, in a goroutine of its own, holding one model state and the last
// few steps, so that a cluster of any length checks itself (see the
// package doc's Conformance).
const (
	RecordOff     RecordMode = 0
	RecordOn      RecordMode = 1
	recordOffOld  RecordMode = 2 // RecordOff's former value: off
	RecordMonitor RecordMode = 3
)

// String names the mode ("off", "on", "monitor").
func (m RecordMode) String() string {
	switch m {
	case RecordOff, recordOffOld:
		return "off"
	case RecordOn:
		return "on"
	case RecordMonitor:
		return "monitor"
	}
	return fmt.Sprintf("RecordMode(%d)", int(m))
}

// Default sizes.
const (
	DefaultCredits     = 8
	DefaultHostBuffers = 16
	DefaultSendBuffers = 4
	DefaultMaxPayload  = 8192
)

// maxNesting bounds nested upcalls: a call that waits inside the
// maxNesting-th nested handler drains without upcalls. Each nested handler
// that waits in turn holds its packet's host buffer until the ones it
// nests return (LIFO), so unbounded nesting under a steady stream of
// requests only grows the stack and the buffers taken from host memory;
// the model allows a drain to make no upcall, so the bound keeps runs
// conforming.
const maxNesting = 16

// compactAt is how many launched items a node's workload holds before a
// cluster that does not record drops them.
const compactAt = 1024

// maxSeq is the largest sequence number; a stream's numbers wrap from it
// to 1.
const maxSeq = 65535

type key struct {
	tag    model.Tag
	origin model.NodeID
	to     uint16 // unicast: destination; multicast: tree
	seq    uint16
}

type stored struct {
	data []byte
	left int // destinations that have not handled it
}

// Cluster is a running in-process LFC.
type Cluster struct {
	opt    Options
	record bool
	cfg    model.Config // resolved, with the initial (empty) workload
	sys    *model.System
	um     *ucast.Machine
	topo   *topology.Topology
	nodes  []*Node
	ready  sync.WaitGroup // the nodes' library goroutines have started
	cancel context.CancelFunc
	done   chan struct{} // the live run has returned
	res    *live.Result
	runErr error
	mon    *monitor // with RecordMonitor
	// faCheck checks fetch-and-add per caller (RecordOn, RecordMonitor;
	// guarded by mu).
	faCheck *faLedger

	mu       sync.Mutex
	cond     *sync.Cond
	closed   bool          // Close was called, or a handler panicked
	failure  *HandlerPanic // the first handler's panic, which stopped the cluster
	payloads map[key]*stored
	expected int // deliveries owed for every packet posted
	handled  int // deliveries handed to a handler

	closeOnce sync.Once // Close's verdict, once the run has ended
	closeRep  *Report
	closeErr  error

	gen     uint64       // counts the wake-ups: changes observe reports, Close, contexts ending (guarded by mu)
	upcalls atomic.Int32 // handlers running, over all nodes
}

// Node is one node's client interface.
type Node struct {
	c    *Cluster
	id   model.NodeID
	lc   *live.Client
	send sync.Mutex  // serializes posting, so that the workload keeps send order
	poll sync.Mutex  // one delivery at a time
	seq  map[int]int // per stream (destination, or P + tree): last number given; guarded by send
	// Guarded by c.mu:
	posted     int      // workload items posted
	kept       int      // packets kept (Packet.Keep) and not freed
	launched   int      // workload items the NI took (launchBase + the node's Next)
	launchBase int      // items dropped from the front of the workload (not recording)
	values     []uint32 // fetch-and-add values the process got: values[k] is ticket k's
	faPosted   int      // fetch-and-add tickets given (requests posted)
	// faOpen holds the tickets of calls that have neither taken their
	// value nor given up; faAbandoned the tickets of calls that gave up
	// (their context ended, or Close came) without their value.
	faOpen      map[int]struct{}
	faAbandoned []int
	queued      int // packets in host buffers
	work        []mcast.WorkEntry
	changed     chan struct{}

	// intr is the node's interrupt flag: set, the library makes upcalls
	// by itself (Upcall mode's start, lfc_intr_enable).
	intr atomic.Bool
	// handlerG is the goroutine running the node's handler (0: none).
	handlerG atomic.Uint64
	// stack holds the deliveries whose handlers run, innermost last
	// (nested upcalls); only the goroutine holding poll touches it.
	stack []*delivery
}

// Start starts a cluster. It runs until Close.
func Start(opt Options) (*Cluster, error) {
	cfg, err := configFor(&opt)
	if err != nil {
		return nil, err
	}
	m, um, topo, err := newMachine(cfg, opt)
	if err != nil {
		return nil, err
	}
	sys, err := model.NewSystem(cfg, m)
	if err != nil {
		return nil, fmt.Errorf("lfc: %v", err)
	}
	c := &Cluster{opt: opt, cfg: cfg, sys: sys, um: um, topo: topo, payloads: map[key]*stored{}, done: make(chan struct{}),
		record: opt.Record == RecordOn}
	if opt.Record == RecordOn || opt.Record == RecordMonitor {
		c.faCheck = &faLedger{}
	}
	lo := live.Options{Client: c.client, Observe: c.observe, LinkDelay: opt.LinkDelay, Tamper: opt.tamper, Forget: !c.record}
	if opt.Record == RecordMonitor {
		if c.mon, err = newMonitor(c); err != nil {
			return nil, err
		}
		lo.Monitor = c.mon.observe
	}
	c.cond = sync.NewCond(&c.mu)
	for i := 0; i < opt.Nodes; i++ {
		n := &Node{c: c, id: model.NodeID(i), seq: map[int]int{}, faOpen: map[int]struct{}{}, changed: make(chan struct{}, 1)}
		n.intr.Store(opt.Mode == Upcall)
		c.nodes = append(c.nodes, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.ready.Add(opt.Nodes)
	go func() {
		defer close(c.done)
		c.res, c.runErr = live.RunWith(ctx, sys, lo)
		if c.mon != nil {
			c.mon.end()
		}
	}()
	started := make(chan struct{})
	go func() { c.ready.Wait(); close(started) }()
	select {
	case <-started:
	case <-c.done: // the runtime refused to start
		cancel()
		return nil, fmt.Errorf("lfc: %v", c.runErr)
	}
	return c, nil
}

// newMachine builds the cluster's protocol machine for cfg (configFor's):
// the protocol's machine with an empty workload, which the programs' sends
// fill, and the host processes driven by the programs. It returns the
// machine, its UCAST layer and the multicast topology.
func newMachine(cfg model.Config, opt Options) (model.Machine, *ucast.Machine, *topology.Topology, error) {
	def, err := model.Lookup(cfg.Protocol)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("lfc: %v", err)
	}
	m, err := def.New(cfg)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("lfc: %v", err)
	}
	var mm *mcast.Machine
	switch m := m.(type) {
	case *mcast.Machine:
		mm = m
	case *recov.Machine:
		mm = m.Machine
	}
	if opt.Protocol == "mcast" {
		if dg := topology.Dependencies(mm.Topo, opt.Nodes); !dg.Acyclic {
			steps := make([]string, len(dg.Cycle))
			for i, st := range dg.Cycle {
				steps[i] = st.String()
			}
			return nil, nil, nil, fmt.Errorf("lfc: MCAST can deadlock on these trees: their buffer dependency graph has a cycle (%s); use Protocol \"recov\", which recovers from such deadlocks, or trees without one (see 'lfccheck trees')", strings.Join(steps, "; "))
		}
	}
	um := mm.Machine
	if n := len(um.Work); n != opt.Nodes {
		return nil, nil, nil, fmt.Errorf("lfc: the machine has a workload for %d nodes, not %d", n, opt.Nodes)
	}
	for i, w := range um.Work {
		if len(w) > 0 {
			return nil, nil, nil, fmt.Errorf("lfc: the machine starts with %d sends of node %d; the programs post every send", len(w), i)
		}
	}
	return m, um, mm.Topo, nil
}

// configFor validates opt, fills in defaults, and builds the protocol's
// configuration (with a placeholder workload that Start discards).
func configFor(opt *Options) (model.Config, error) {
	if opt.Nodes < 2 || opt.Nodes > model.MaxNodes {
		return model.Config{}, fmt.Errorf("lfc: nodes must be in 2..%d, got %d", model.MaxNodes, opt.Nodes)
	}
	if opt.Protocol == "" {
		opt.Protocol = "mcast"
	}
	if opt.Protocol != "mcast" && opt.Protocol != "recov" {
		return model.Config{}, fmt.Errorf("lfc: protocol must be mcast or recov, got %q", opt.Protocol)
	}
	for _, d := range []struct {
		v        *int
		name     string
		def, max int
	}{
		{&opt.Credits, "credits", DefaultCredits, ucast.MaxCredits},
		{&opt.HostBuffers, "host buffers", DefaultHostBuffers, ucast.MaxBuffers},
		{&opt.SendBuffers, "send buffers", DefaultSendBuffers, ucast.MaxBuffers},
		{&opt.MaxPayload, "max payload", DefaultMaxPayload, 1 << 30},
	} {
		if *d.v == 0 {
			*d.v = d.def
		}
		if *d.v < 1 || *d.v > d.max {
			return model.Config{}, fmt.Errorf("lfc: %s must be in 1..%d (0: %d), got %d", d.name, d.max, d.def, *d.v)
		}
	}
	if opt.Keep < 0 || opt.Keep >= opt.HostBuffers {
		return model.Config{}, fmt.Errorf("lfc: keep must be in 0..%d (below the host buffers), got %d", opt.HostBuffers-1, opt.Keep)
	}
	if opt.Record < 0 || opt.Record > RecordMonitor {
		return model.Config{}, fmt.Errorf("lfc: unknown record mode %d", opt.Record)
	}
	if opt.Server < 0 || opt.Server >= opt.Nodes {
		return model.Config{}, fmt.Errorf("lfc: server %d out of range 0..%d", opt.Server, opt.Nodes-1)
	}
	if opt.LinkDelay < 0 {
		return model.Config{}, fmt.Errorf("lfc: link delay must not be negative, got %v", opt.LinkDelay)
	}
	if opt.Mode != Upcall && opt.Mode != Polling {
		return model.Config{}, fmt.Errorf("lfc: unknown mode %d", opt.Mode)
	}
	if opt.Handler == nil {
		return model.Config{}, fmt.Errorf("lfc: a handler is required")
	}
	p := mcast.Defaults()
	p.Credits, p.HostBuffers, p.SendBuffers, p.Keep = opt.Credits, opt.HostBuffers, opt.SendBuffers, opt.Keep
	// LFC's host library: calls that wait drain (and make nested upcalls
	// unless the program says otherwise, or keeps packets, which the
	// model does not combine with nested upcalls).
	p.Drain, p.NoNestedUpcalls = true, opt.NoNestedUpcalls || opt.Keep > 0
	// Programs drive the hosts and post every send; MCAST offers them
	// fetch-and-add on NI opt.Server.
	p.Library, p.Server = true, opt.Server
	switch {
	case opt.Topology != "" && opt.Tree != "":
		return model.Config{}, fmt.Errorf("lfc: give a tree family or a topology, not both")
	case opt.Topology != "":
		if err := p.SetTopologyFile("topology", []byte(opt.Topology)); err != nil {
			return model.Config{}, fmt.Errorf("lfc: %v", err)
		}
	default:
		if opt.Tree == "" {
			opt.Tree = "binary"
		}
		if err := p.Set("tree", opt.Tree); err != nil {
			return model.Config{}, fmt.Errorf("lfc: %v", err)
		}
	}
	// An empty workload, valid for any topology (without it MCAST's
	// default has every member multicast): the programs post every send.
	p.Work = []mcast.Work{{Node: 0}}
	if opt.Variant == "" {
		opt.Variant = "correct"
	}
	def, err := model.Lookup(opt.Protocol)
	if err != nil {
		return model.Config{}, fmt.Errorf("lfc: %v", err)
	}
	known := false
	for _, v := range def.Variants {
		known = known || v.Name == opt.Variant
	}
	if !known {
		return model.Config{}, fmt.Errorf("lfc: protocol %s has no variant %q", opt.Protocol, opt.Variant)
	}
	cfg := model.Config{Protocol: opt.Protocol, Variant: opt.Variant, Nodes: opt.Nodes, Params: p}
	nodes, err := p.Resolve(cfg.Nodes)
	if err != nil {
		return model.Config{}, fmt.Errorf("lfc: %v", err)
	}
	cfg.Nodes = nodes
	return cfg, nil
}

// Node returns node i's interface, or nil for an id out of range (every
// method of a nil *Node returns ErrNoNode).
func (c *Cluster) Node(i int) *Node {
	if i < 0 || i >= len(c.nodes) {
		return nil
	}
	return c.nodes[i]
}

// upcallNode returns the node whose handler the calling goroutine runs,
// or nil. It asks for the goroutine's id only while some handler runs.
func (c *Cluster) upcallNode() *Node {
	if c.upcalls.Load() == 0 {
		return nil
	}
	g := goid.ID()
	for _, n := range c.nodes {
		if n.handlerG.Load() == g {
			return n
		}
	}
	return nil
}

// enter checks a blocking call on n: n exists, ctx has not ended, and the
// caller is not the handler of another node. It reports whether the caller runs n's own
// handler (where waiting drains with nested upcalls).
func (n *Node) enter(ctx context.Context, what string) (own bool, err error) {
	if n == nil {
		return false, ErrNoNode
	}
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("lfc: %s on node %d: %w", what, n.id, err)
	}
	u := n.c.upcallNode()
	if u != nil && u != n {
		return false, fmt.Errorf("lfc: %s on node %d from the handler of node %d: %w", what, n.id, u.id, ErrInUpcall)
	}
	return u == n, nil
}

// Nodes is the number of nodes.
func (c *Cluster) Nodes() int { return len(c.nodes) }

// closedErr is the error of calls on the closed cluster (c.mu held): the
// handler's panic that stopped it, or ErrClosed.
func (c *Cluster) closedErr() error {
	if c.failure != nil {
		return c.failure
	}
	return ErrClosed
}

// stopErr is closedErr taking c.mu.
func (c *Cluster) stopErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closedErr()
}

// fail stops the cluster after a handler's panic hp (the first one
// counts): every call from now on returns it. It does not wait for the
// run to end (the caller may be a node's library goroutine, which the
// run waits for).
func (c *Cluster) fail(hp *HandlerPanic) {
	c.mu.Lock()
	if c.failure == nil {
		c.failure = hp
	}
	c.closed = true
	c.gen++
	c.cond.Broadcast()
	c.mu.Unlock()
	c.cancel()
}
