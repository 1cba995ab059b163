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
// nothing panics on misuse.
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
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"lfccheck/internal/goid"
	"lfccheck/model"
	"lfccheck/model/live"
	"lfccheck/model/topology"
	"lfccheck/properties"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/recov"
	"lfccheck/protocols/ucast"
	"lfccheck/traces"
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
	Handler func(node int, p Packet)
	// NoNestedUpcalls is upcalls_allowed = 0 (Table 3.1): a call that
	// waits drains the network without making upcalls (it still takes
	// host buffers). The default allows them, as LFC's clients do.
	NoNestedUpcalls bool
	// Record says whether the cluster checks itself against the model
	// (see the package doc's Conformance): RecordMonitor checks every step
	// while it runs, keeping no history; RecordOn keeps the run
	// (Cluster.Recording) and checks it on Close. The default (zero)
	// checks nothing.
	Record RecordMode
	// Server is the NI whose fetch-and-add variable Node.FetchAndAdd
	// increments (default 0; mcast only).
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

// Record modes. The zero value records nothing, like RecordOff.
//
// RecordOn keeps the whole run (Cluster.Recording), for a trace file and
// `lfccheck replay`, within the model's limits for a checked workload (64
// packets per stream, 16384 per host). RecordMonitor keeps no history: an
// online monitor replays every step through the model as the cluster
// runs, in a goroutine of its own, holding one model state and the last
// few steps, so that a cluster of any length checks itself (see the
// package doc's Conformance).
const (
	RecordOn      RecordMode = 1
	RecordOff     RecordMode = 2
	RecordMonitor RecordMode = 3
)

// Packet is a delivered packet.
type Packet struct {
	From    int    // the node whose program sent it
	Group   string // the multicast group; "" for a unicast packet
	Seq     int    // its number in its stream (per sender and destination, or per tree), from 1
	Payload []byte // the cluster's copy; valid until the handler returns, or until Free if kept

	n *Node
	d *delivery
}

// delivery is one handler call's keep state, guarded by c.mu (aside by
// the node's poll lock).
type delivery struct {
	state int   // 0: in the handler, 1: kept, 2: returned, not kept, 3: returned, kept, 4: kept and freed in the handler
	k     *Kept // when kept
	aside bool  // moved aside ("host H upcall") so that a drain could make nested upcalls
}

// Keep keeps the packet's host buffer after the handler returns (LFC's
// lfc_upcall returning nonzero): the payload stays valid until the
// returned Kept is freed. It fails when the node already keeps
// Options.Keep packets, or when called outside the handler or twice.
func (p Packet) Keep() (*Kept, error) {
	if p.d == nil {
		return nil, fmt.Errorf("lfc: Keep of a packet the cluster did not deliver")
	}
	c := p.n.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if p.d.state != 0 {
		return nil, fmt.Errorf("lfc: Keep outside the packet's handler, or twice")
	}
	if p.n.kept >= c.opt.Keep {
		return nil, fmt.Errorf("lfc: node %d already keeps %d packets (Options.Keep)", p.n.id, c.opt.Keep)
	}
	p.n.kept++
	p.d.state = 1
	p.d.k = &Kept{n: p.n, d: p.d, landed: make(chan struct{})}
	return p.d.k, nil
}

// Kept is a packet the program kept after its upcall.
type Kept struct {
	n      *Node
	d      *delivery
	landed chan struct{} // closed once the node has kept the packet
	freed  bool
	mu     sync.Mutex
}

// Free frees a kept packet's host buffer (lfc_packet_free). It may be
// called from any goroutine, the handler that kept the packet included
// (then the packet is simply not kept).
func (k *Kept) Free() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.freed {
		return fmt.Errorf("lfc: node %d: packet freed twice", k.n.id)
	}
	c := k.n.c
	c.mu.Lock()
	inHandler := k.d.state == 1
	if inHandler {
		k.d.state = 4
		k.n.kept--
	}
	c.mu.Unlock()
	if !inHandler {
		<-k.landed // the node's keep step is done (or the cluster closed)
		if !k.n.lc.Do("free") {
			return ErrClosed
		}
		c.mu.Lock()
		k.n.kept--
		c.mu.Unlock()
	}
	k.freed = true
	return nil
}

// Default sizes.
const (
	DefaultCredits     = 8
	DefaultHostBuffers = 16
	DefaultSendBuffers = 4
	DefaultMaxPayload  = 8192
)

// ErrClosed is returned by calls on a closed cluster.
var ErrClosed = errors.New("lfc: cluster closed")

// ErrInUpcall is returned by calls made from inside a handler that would
// wait for that handler (see the package doc's Goroutines).
var ErrInUpcall = errors.New("lfc: called from inside a handler, where it would wait for the handler itself")

// ErrNoNode is returned by every method of a nil *Node, which
// Cluster.Node returns for an id out of range.
var ErrNoNode = errors.New("lfc: no such node")

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
	topo   *model.Topology
	nodes  []*Node
	ready  sync.WaitGroup // the nodes' library goroutines have started
	cancel context.CancelFunc
	done   chan struct{} // the live run has returned
	res    *live.Result
	runErr error
	mon    *monitor // with RecordMonitor

	mu       sync.Mutex
	cond     *sync.Cond
	closed   bool
	payloads map[key]*stored
	expected int // deliveries owed for every packet posted
	handled  int // deliveries handed to a handler

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
	values     []uint32 // fetch-and-add values the process got
	pendingFA  int      // FetchAndAdd calls posted and not yet answered
	queued     int      // packets in host buffers
	work       []mcast.WorkEntry
	changed    chan struct{}

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
	lo := live.Options{Client: c.client, Observe: c.observe, LinkDelay: opt.LinkDelay, Tamper: opt.tamper, Forget: !c.record}
	if opt.Record == RecordMonitor {
		if c.mon, err = newMonitor(c); err != nil {
			return nil, err
		}
		lo.Monitor = c.mon.observe
	}
	c.cond = sync.NewCond(&c.mu)
	for i := 0; i < opt.Nodes; i++ {
		n := &Node{c: c, id: model.NodeID(i), seq: map[int]int{}, changed: make(chan struct{}, 1)}
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
func newMachine(cfg model.Config, opt Options) (model.Machine, *ucast.Machine, *model.Topology, error) {
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
	um.ClientProcess = true
	if cfg.Protocol == "mcast" {
		um.FetchAdd, um.Server = true, model.NodeID(opt.Server)
	}
	um.ClearWork() // the programs post their sends
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
	// A placeholder workload, valid for any topology: Start discards it.
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

// client is node's program on the live runtime: in Upcall mode it hands
// every delivered packet to the handler; in both modes it keeps the
// node's client interface open until Close.
func (c *Cluster) client(ctx context.Context, lc *live.Client) {
	n := c.nodes[lc.Node()]
	n.lc = lc
	c.ready.Done()
	g := goid.ID()
	for {
		// LFC's signal handler checks the interrupt flag before each
		// upcall (§3.7, race 1), and a node whose interrupts were just
		// enabled finds its waiting packets here (race 2: none is left
		// unannounced).
		for n.intr.Load() && n.deliver(g) {
		}
		select {
		case <-n.changed:
		case <-ctx.Done():
			return
		}
	}
}

// observe runs in node id's goroutine after each of its steps.
func (c *Cluster) observe(id model.NodeID, mn model.Node) {
	u := c.um.NodeOf(mn)
	n := c.nodes[id]
	c.mu.Lock()
	launched := n.launchBase + u.Next
	changed := n.launched != launched || n.queued != len(u.Queue) || len(n.values) != len(u.FA.Got)
	n.launched, n.queued = launched, len(u.Queue)
	n.values = append(n.values, u.FA.Got[len(n.values):]...)
	if changed {
		c.gen++
		c.cond.Broadcast()
	}
	c.mu.Unlock()
	select {
	case n.changed <- struct{}{}:
	default:
	}
}

// Send sends payload to node dest (lfc_send_alloc + lfc_ucast_launch):
// it returns once the packet is in the NI's hands, or with an error. It
// is SendContext without a deadline.
func (n *Node) Send(dest int, payload []byte) error {
	return n.SendContext(context.Background(), dest, payload)
}

// SendContext is Send that gives up when ctx ends, returning its error.
// A packet already posted to the NI when ctx ends is still sent (LFC
// cannot take a launched packet back); the error says only that the call
// stopped waiting.
func (n *Node) SendContext(ctx context.Context, dest int, payload []byte) error {
	own, err := n.enter(ctx, "Send")
	if err != nil {
		return err
	}
	if dest < 0 || dest >= len(n.c.nodes) || dest == int(n.id) {
		return fmt.Errorf("lfc: node %d: destination %d is not another node in 0..%d", n.id, dest, len(n.c.nodes)-1)
	}
	return n.post(ctx, own, mcast.WorkEntry{Dest: dest, Count: 1}, ucast.WorkItem{Tag: ucast.TagUnicast, Dest: model.NodeID(dest)}, dest, 1, payload)
}

// Multicast sends payload to every other member of group (lfc_mcast_launch)
// on the node's spanning tree of the group ("": the first group the node
// is a member of; with a tree family, the group of all nodes, which makes
// it lfc_bcast_launch). It returns once the packet is in the NI's hands,
// or with an error. It is MulticastContext without a deadline.
func (n *Node) Multicast(group string, payload []byte) error {
	return n.MulticastContext(context.Background(), group, payload)
}

// MulticastContext is Multicast that gives up when ctx ends (see
// SendContext).
func (n *Node) MulticastContext(ctx context.Context, group string, payload []byte) error {
	own, err := n.enter(ctx, "Multicast")
	if err != nil {
		return err
	}
	t, err := n.c.topo.CastTree(model.Cast{Group: group, Root: int(n.id), Count: 1})
	if err != nil {
		return fmt.Errorf("lfc: node %d: %v", n.id, err)
	}
	dests := len(n.c.topo.Groups[n.c.topo.Trees[t].Group].Members) - 1
	return n.post(ctx, own, mcast.WorkEntry{Multicast: true, Group: group, Count: 1},
		ucast.WorkItem{Tag: mcast.TagMulticast, Tree: uint16(t)}, len(n.c.nodes)+t, dests, payload)
}

// FetchAndAdd increments the fetch-and-add variable on the server's NI
// (Options.Server) and returns the value it had (lfc_fetch_and_add, §3.8).
// The request travels on the server's credits like a unicast packet; the
// server's NI answers it at once. Concurrent calls on one node are
// served one after the other. It is FetchAndAddContext without a
// deadline.
func (n *Node) FetchAndAdd() (uint32, error) {
	return n.FetchAndAddContext(context.Background())
}

// FetchAndAddContext is FetchAndAdd that gives up when ctx ends, returning
// its error; a request already sent is still answered (and its value
// lost to the caller).
func (n *Node) FetchAndAddContext(ctx context.Context) (uint32, error) {
	own, err := n.enter(ctx, "FetchAndAdd")
	if err != nil {
		return 0, err
	}
	c := n.c
	if !c.um.FetchAdd {
		return 0, fmt.Errorf("lfc: node %d: fetch-and-add is offered with protocol mcast only", n.id)
	}
	n.send.Lock()
	c.mu.Lock()
	want := len(n.values) + n.pendingFA + 1
	n.pendingFA++
	c.mu.Unlock()
	_, err = n.postLocked(mcast.WorkEntry{FetchAdd: true, Count: 1}, ucast.WorkItem{Tag: ucast.TagFARequest}, -1, 0, nil)
	n.send.Unlock()
	if err == nil {
		err = n.await(ctx, own, func() bool { return len(n.values) >= want })
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n.pendingFA--
	if err != nil {
		return 0, err
	}
	return n.values[want-1], nil
}

// post appends one item of stream to the node's workload and waits until
// the NI has taken it.
func (n *Node) post(ctx context.Context, own bool, e mcast.WorkEntry, it ucast.WorkItem, stream, dests int, payload []byte) error {
	n.send.Lock()
	want, err := n.postLocked(e, it, stream, dests, payload)
	n.send.Unlock()
	if err != nil {
		return err
	}
	return n.await(ctx, own, func() bool { return n.launched >= want })
}

// postLocked appends one item to the node's workload (n.send held) and
// returns how many the node has posted with it.
func (n *Node) postLocked(e mcast.WorkEntry, it ucast.WorkItem, stream, dests int, payload []byte) (int, error) {
	c := n.c
	if len(payload) > c.opt.MaxPayload {
		return 0, fmt.Errorf("lfc: node %d: payload of %d bytes, more than the %d the cluster allows", n.id, len(payload), c.opt.MaxPayload)
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return 0, ErrClosed
	}
	seq := n.seq[stream]%maxSeq + 1
	if c.record {
		if n.posted >= ucast.MaxWorkPerHost {
			c.mu.Unlock()
			return 0, fmt.Errorf("lfc: node %d: more than %d sends in a recorded run (the model's limit per host)", n.id, ucast.MaxWorkPerHost)
		}
		if n.seq[stream] >= model.MaxStreamSeq {
			c.mu.Unlock()
			return 0, fmt.Errorf("lfc: node %d: more than %d packets in one stream (%s) in a recorded run: the model's limit, which a recording cluster keeps", n.id, model.MaxStreamSeq, e)
		}
	}
	it.Seq = uint16(seq)
	k := key{it.Tag, n.id, uint16(it.Dest), it.Seq}
	if it.Tag == mcast.TagMulticast {
		k.to = it.Tree
	}
	if dests > 0 {
		if _, busy := c.payloads[k]; busy {
			c.mu.Unlock()
			return 0, fmt.Errorf("lfc: node %d: %d packets of one stream (%s) are undelivered: sequence number %d is still in use", n.id, maxSeq, e, seq)
		}
		c.payloads[k] = &stored{data: append([]byte(nil), payload...), left: dests}
	}
	n.seq[stream] = seq
	c.expected += dests
	n.posted++
	if c.mon != nil {
		c.mon.post(n.id, it)
	}
	if c.record {
		if l := len(n.work); l > 0 && sameEntry(n.work[l-1], e) {
			n.work[l-1].Count++
		} else {
			n.work = append(n.work, e)
		}
	}
	posted := n.posted
	c.mu.Unlock()
	ok := n.lc.Update(func(mn model.Node) {
		c.um.AppendWork(int(n.id), it)
		if u := c.um.NodeOf(mn); !c.record && u.Next >= compactAt {
			// Nothing replays this run from its start: the launched
			// items go, and the node's launch index restarts
			// (Node.launchBase keeps the count).
			k := c.um.DropLaunched(u)
			c.mu.Lock()
			n.launchBase += k
			c.mu.Unlock()
		}
	})
	if !ok {
		return 0, ErrClosed
	}
	return posted, nil
}

func sameEntry(a, b mcast.WorkEntry) bool {
	return a.FetchAdd == b.FetchAdd && a.Multicast == b.Multicast && a.Dest == b.Dest && a.Group == b.Group
}

// await waits until done (read under c.mu) holds, the cluster closes or
// ctx ends. Meanwhile the node's goroutine drains (the model's "host H
// drain" is enabled while the node waits); a call from the node's own
// handler (own) also makes nested upcalls, unless they are off.
func (n *Node) await(ctx context.Context, own bool, done func() bool) error {
	c := n.c
	nested := own && c.um.Nested
	defer c.wakeOnEnd(ctx)()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		switch {
		case done():
			return nil
		case c.closed:
			return ErrClosed
		case ctx.Err() != nil:
			return fmt.Errorf("lfc: node %d: %w", n.id, ctx.Err())
		}
		if nested && len(n.stack) < maxNesting {
			behind := n.queued
			if d := n.stack[len(n.stack)-1]; !d.aside {
				behind-- // the waiting handler's own packet heads the queue
			}
			if behind > 0 {
				gen := c.gen
				c.mu.Unlock()
				progressed := n.nest()
				c.mu.Lock()
				if progressed || c.gen != gen {
					continue // something changed while c.mu was free
				}
			}
		}
		c.cond.Wait()
	}
}

// nest makes one nested upcall for a call of the innermost handler that
// waits: the handler's packet moves aside ("host H upcall", which the
// model allows only while the node waits), and the next packet's handler
// runs. It reports whether it handed a packet to a handler.
func (n *Node) nest() bool {
	d := n.stack[len(n.stack)-1]
	if !d.aside {
		if !n.lc.Do("upcall") {
			return false // no longer waiting, or closed
		}
		d.aside = true
	}
	return n.deliverHead(n.handlerG.Load())
}

// Poll hands the oldest packet waiting in the node's host buffers to the
// handler, in the caller's goroutine (lfc_poll, which delivers at most
// one packet), and reports whether there was one. It works with
// interrupts enabled too (then it competes with the library's upcalls).
// From inside a handler it returns ErrInUpcall.
func (n *Node) Poll() (bool, error) {
	if err := n.pollable(); err != nil {
		return false, err
	}
	return n.deliver(goid.ID()), nil
}

// DisableInterrupts stops the library's upcalls on the node
// (lfc_intr_disable): packets wait in host buffers until Poll, or until
// EnableInterrupts. An upcall already running finishes. Polling mode
// starts with interrupts disabled, Upcall mode with them enabled.
func (n *Node) DisableInterrupts() error {
	if n == nil {
		return ErrNoNode
	}
	n.intr.Store(false)
	return nil
}

// EnableInterrupts resumes the library's upcalls on the node
// (lfc_intr_enable); packets that arrived meanwhile are handed to the
// handler at once (LFC's watchdog keeps interrupting for them, §3.7: no
// interrupt is lost).
func (n *Node) EnableInterrupts() error {
	if n == nil {
		return ErrNoNode
	}
	n.intr.Store(true)
	select {
	case n.changed <- struct{}{}:
	default:
	}
	return nil
}

// PollAll is Poll until no packet waits; it returns how many it handed.
func (n *Node) PollAll() (int, error) {
	if err := n.pollable(); err != nil {
		return 0, err
	}
	g := goid.ID()
	k := 0
	for n.deliver(g) {
		k++
	}
	return k, nil
}

func (n *Node) pollable() error {
	if n == nil {
		return ErrNoNode
	}
	if u := n.c.upcallNode(); u != nil {
		return fmt.Errorf("lfc: Poll on node %d from the handler of node %d: %w", n.id, u.id, ErrInUpcall)
	}
	return nil
}

// deliver hands the oldest packet in the node's host buffers to the
// handler, on goroutine g (the caller), and frees its buffer; false when
// there is none.
func (n *Node) deliver(g uint64) bool {
	n.poll.Lock()
	defer n.poll.Unlock()
	return n.deliverHead(g)
}

// deliverHead is deliver with n.poll held (by g, perhaps in a handler
// further up its stack: a nested upcall).
func (n *Node) deliverHead(g uint64) bool {
	c := n.c
	var pkt model.Packet
	found := false
	if !n.lc.View(func(mn model.Node) {
		if q := c.um.NodeOf(mn).Queue; len(q) > 0 {
			pkt, found = q[0], true
		}
	}) || !found {
		return false
	}
	k := key{pkt.Tag, pkt.Origin, uint16(n.id), pkt.Seq}
	group := ""
	if pkt.Tag == mcast.TagMulticast {
		k.to = pkt.Tree
		group = c.topo.Groups[c.topo.Trees[pkt.Tree].Group].Name
	}
	c.mu.Lock()
	pl := c.payloads[k]
	var data []byte
	if pl != nil {
		data = pl.data
		if pl.left--; pl.left == 0 {
			delete(c.payloads, k)
		}
	}
	c.mu.Unlock()
	d := &delivery{}
	n.runHandler(g, d, Packet{From: int(pkt.Origin), Group: group, Seq: int(pkt.Seq), Payload: data, n: n, d: d})
	c.mu.Lock()
	kept := d.state == 1
	if kept {
		d.state = 3
	} else if d.state == 0 {
		d.state = 2
	}
	c.mu.Unlock()
	// The handler ran while the packet was in its host buffer, as an
	// upcall does; now the buffer is freed or kept. Only this node's
	// handler goroutine takes packets from its host queue, so the head is
	// still pkt, unless a nested upcall moved it aside: then it is the
	// innermost packet aside.
	step := "process"
	switch {
	case d.aside:
		step = "return"
	case kept:
		step = "keep"
	}
	ok := n.lc.Do(step)
	if kept {
		close(d.k.landed)
	}
	if !ok {
		return false
	}
	c.mu.Lock()
	c.handled++
	c.cond.Broadcast()
	c.mu.Unlock()
	return true
}

// runHandler runs the handler on goroutine g for delivery d, keeping the
// bookkeeping of running handlers right even if it panics.
func (n *Node) runHandler(g uint64, d *delivery, p Packet) {
	c := n.c
	n.stack = append(n.stack, d)
	prev := n.handlerG.Swap(g)
	c.upcalls.Add(1)
	defer func() {
		c.upcalls.Add(-1)
		n.handlerG.Store(prev)
		n.stack = n.stack[:len(n.stack)-1]
	}()
	c.opt.Handler(int(n.id), p)
}

// wakeOnEnd wakes every waiter when ctx ends (a waiter rechecks its
// context); the returned func stops that.
func (c *Cluster) wakeOnEnd(ctx context.Context) func() bool {
	return context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.gen++
		c.cond.Broadcast()
		c.mu.Unlock()
	})
}

// Drain waits until every packet sent so far has been handed to its
// destinations' handlers (in Polling mode, programs must keep polling),
// or until ctx ends. From inside a handler it returns ErrInUpcall.
func (c *Cluster) Drain(ctx context.Context) error {
	if u := c.upcallNode(); u != nil {
		return fmt.Errorf("lfc: Drain from the handler of node %d: %w", u.id, ErrInUpcall)
	}
	defer c.wakeOnEnd(ctx)()
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.handled < c.expected && !c.closed && ctx.Err() == nil {
		c.cond.Wait()
	}
	switch {
	case c.handled >= c.expected:
		return nil
	case c.closed:
		return ErrClosed
	}
	return fmt.Errorf("lfc: drain: %d of %d deliveries done: %w", c.handled, c.expected, ctx.Err())
}

// Report is what a cluster did, as Close returns it.
type Report struct {
	Sent      int // packets sent (multicasts count once)
	Delivered int // deliveries handed to handlers (a multicast counts once per destination)
	// InFlight lists the deliveries still owed when the cluster closed,
	// as "origin->destination #seq" (unicast) or "origin tree T #seq to
	// N destinations" (multicast), sorted.
	InFlight []string
	Steps    int // protocol steps the nodes took
	// Checked is how many of those steps the model replayed and checked
	// (Options.Record): every step when the run conforms; 0 for a cluster
	// that does not record or monitor itself.
	Checked int
	Kept    int // packets kept and not freed
	// Statistics are the protocol's statistics over the run (see
	// Recording.Statistics: RECOV's recoveries and recovery-channel
	// packets, MCAST's forwarded packets), when the cluster records
	// itself and the run conforms; nil otherwise.
	Statistics []properties.StatValue
}

// Close stops the cluster at once: sends and polls in progress return
// ErrClosed, and the report says what was still in flight. Call Drain
// first for a clean end. A recording cluster then checks its run against
// the model and returns a *ConformanceError if it does not conform.
func (c *Cluster) Close() (*Report, error) {
	if u := c.upcallNode(); u != nil {
		return nil, fmt.Errorf("lfc: Close from the handler of node %d: %w", u.id, ErrInUpcall)
	}
	c.mu.Lock()
	already := c.closed
	c.closed = true
	c.gen++
	c.cond.Broadcast()
	c.mu.Unlock()
	c.cancel()
	<-c.done
	if already {
		return c.report(), nil
	}
	if c.runErr != nil && !errors.Is(c.runErr, context.Canceled) {
		return c.report(), c.runErr
	}
	r := c.report()
	if c.mon != nil {
		c.mu.Lock()
		bases := make([]int, len(c.nodes))
		for i, n := range c.nodes {
			bases[i] = n.launchBase
		}
		c.mu.Unlock()
		ce, stats := c.mon.finish(c.res, bases)
		r.Checked = c.mon.steps
		if ce != nil {
			return r, ce
		}
		r.Statistics = stats
	}
	if c.record {
		rec, err := c.recording()
		if err != nil {
			return r, err
		}
		v, stats, err := rec.verify()
		if v != nil || err != nil {
			rec.name()
			ce := &ConformanceError{Recording: rec, Violation: v, Err: err}
			var se *traces.StepError
			if errors.As(err, &se) {
				ce.Step = se.Step
			}
			return r, ce
		}
		r.Statistics, r.Checked = stats, r.Steps
	}
	return r, nil
}

// ConformanceError says that a recorded run is not a model execution (Err:
// the model does not allow a step) or violates a property (Violation).
// Recording.TraceFile writes the run for `lfccheck replay`.
type ConformanceError struct {
	Recording *Recording
	Violation *properties.Violation
	Err       error
	// Step is the step of the recording at which the model rejected the
	// run (1-based; 0: a property, or the end state).
	Step int
	// Recent names the last steps up to the failure (at most 32), when
	// the online monitor (RecordMonitor) found it: it keeps no
	// recording, so Recording is nil.
	Recent []string
}

// Conformance returns the online monitor's verdict so far
// (RecordMonitor): its *ConformanceError once the run has stopped
// conforming, nil while it conforms, and for clusters that do not
// monitor themselves. It does not wait for the monitor to catch up; Close
// does.
func (c *Cluster) Conformance() error {
	if c.mon == nil {
		return nil
	}
	if ce := c.mon.failed.Load(); ce != nil {
		return ce
	}
	return nil
}

func (e *ConformanceError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("lfc: the run does not conform to the model: %v", e.Err)
	}
	return fmt.Sprintf("lfc: the run violates %s: %s", e.Violation.Property, e.Violation.Message)
}

func (c *Cluster) report() *Report {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := &Report{Delivered: c.handled}
	for _, n := range c.nodes {
		r.Sent += n.posted
		r.Kept += n.kept
	}
	if c.res != nil {
		r.Steps = c.res.Steps
	}
	if c.mon != nil {
		select {
		case <-c.mon.done: // the monitor's count is final
			r.Checked = c.mon.steps
		default:
		}
	}
	for k, p := range c.payloads {
		if k.tag == mcast.TagMulticast {
			r.InFlight = append(r.InFlight, fmt.Sprintf("%d tree %d #%d to %d destinations", k.origin, k.to, k.seq, p.left))
		} else {
			r.InFlight = append(r.InFlight, fmt.Sprintf("%d->%d #%d", k.origin, k.to, k.seq))
		}
	}
	sort.Strings(r.InFlight)
	return r
}

// String renders the report in one line.
func (r *Report) String() string {
	s := fmt.Sprintf("%d packets sent, %d deliveries, %d steps", r.Sent, r.Delivered, r.Steps)
	if len(r.InFlight) > 0 {
		s += fmt.Sprintf("; %d in flight: %s", len(r.InFlight), strings.Join(r.InFlight, ", "))
	}
	for i, v := range r.Statistics {
		sep := ", "
		if i == 0 {
			sep = "; statistics: "
		}
		s += fmt.Sprintf("%s%s %d", sep, v.Name, v.Value)
	}
	return s
}
