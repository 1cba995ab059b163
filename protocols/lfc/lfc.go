// Package lfc is LFC as a library: an in-process cluster of P nodes that
// run the very handlers lfccheck checks (MCAST on UCAST's credits, or
// RECOV for trees that MCAST would deadlock on) on the live runtime
// (model/live, one goroutine per node), behind LFC's client interface
// (thesis Table 3.1, §3.1):
//
//   - Node.Send (lfc_send) and Node.Multicast (lfc_mcast) copy the payload
//     into a send packet and return once the NI has taken the packet (so a
//     sender whose destinations stop consuming blocks: flow control, not
//     loss);
//   - delivery in one of LFC's two modes: Upcall, where the library hands
//     every packet to the handler as soon as the NI has copied it to a host
//     buffer (LFC's interrupt-driven upcalls), or Polling, where packets
//     wait in host buffers until the program calls Node.Poll (lfc_poll),
//     which runs the handler for each;
//   - the host buffer of a packet is freed when the handler returns
//     (lfc_upcall returning 0), unless the handler calls Packet.Keep
//     (lfc_upcall returning nonzero): then the program frees it later with
//     Kept.Free (lfc_packet_free), and until then the packet holds one of
//     the node's host buffers (at most Options.Keep at once);
//   - Node.FetchAndAdd (lfc_fetch_and_add, §3.8) increments the variable
//     on the NI of Options.Server and returns its old value; the program
//     waits for it (one outstanding request per process), and its NI
//     sends nothing else meanwhile.
//
// # Conformance
//
// A recording cluster (Options.Record: by default in tests, that is in a
// test binary, and not otherwise) records every step of every node as the
// model action it is, and every send as the node's workload (the MCAST
// parameter work), so that Cluster.Recording returns a model execution.
// Close replays it through the model with every property of the protocol
// (Recording.Check) and returns a *ConformanceError if the model rejects a
// step or a property fails; Recording.TraceFile writes the run as a trace
// file that `lfccheck replay` accepts. A bug seen live becomes a
// counterexample a person can read. The same replay counts the protocol's
// statistics over the run (Report.Statistics, Recording.Statistics:
// RECOV's recoveries and recovery-channel packets, Table 5.2's RC and D;
// MCAST's forwarded packets). The model numbers at most 64 packets
// per stream (per ordered pair for unicast, per tree for multicast) and
// 16384 per host, so a recording cluster refuses sends beyond that;
// without recording the limits are 65535 per stream and none per host.
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
	"testing"
	"time"

	"lfccheck/model"
	"lfccheck/model/live"
	"lfccheck/properties"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/recov"
	"lfccheck/protocols/ucast"
)

// Mode is how packets reach the program.
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
	// Handler is the upcall: it receives every packet delivered to node,
	// in delivery order per node (per sender and tree, the send order).
	// In Upcall mode it runs in the node's library goroutine, so it must
	// not wait for deliveries to its own node; it may send, and keep the
	// packet (Packet.Keep); it must not call Poll.
	Handler func(node int, p Packet)
	// Record says whether the cluster records itself as a model execution
	// and checks it against the model on Close (see Cluster.Recording);
	// the default records in tests only.
	Record RecordMode
	// Server is the NI whose fetch-and-add variable Node.FetchAndAdd
	// increments (default 0; mcast only).
	Server int
	// LinkDelay is the time every packet spends on a link (see
	// live.Options.LinkDelay; default 0: none).
	LinkDelay time.Duration
}

// RecordMode says whether a cluster records itself.
type RecordMode int

// Record modes.
const (
	// RecordInTests records when the program is a test binary
	// (testing.Testing), and not otherwise.
	RecordInTests RecordMode = iota
	RecordOn
	RecordOff
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

// delivery is one handler call's keep state, guarded by c.mu.
type delivery struct {
	state int   // 0: in the handler, 1: kept, 2: returned, not kept, 3: returned, kept, 4: kept and freed in the handler
	k     *Kept // when kept
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

	mu       sync.Mutex
	cond     *sync.Cond
	closed   bool
	payloads map[key]*stored
	expected int // deliveries owed for every packet posted
	handled  int // deliveries handed to a handler
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
	posted    int      // workload items posted
	kept      int      // packets kept (Packet.Keep) and not freed
	launched  int      // workload items the NI took (the node's Next)
	values    []uint32 // fetch-and-add values the process got
	pendingFA int      // FetchAndAdd calls posted and not yet answered
	queued    int      // packets in host buffers
	work      []mcast.WorkEntry
	changed   chan struct{}
}

// Start starts a cluster. It runs until Close.
func Start(opt Options) (*Cluster, error) {
	cfg, err := configFor(&opt)
	if err != nil {
		return nil, err
	}
	def, err := model.Lookup(cfg.Protocol)
	if err != nil {
		return nil, fmt.Errorf("lfc: %v", err)
	}
	m, err := def.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("lfc: %v", err)
	}
	var mm *mcast.Machine
	switch m := m.(type) {
	case *mcast.Machine:
		mm = m
	case *recov.Machine:
		mm = m.Machine
	}
	um := mm.Machine
	um.ClientProcess = true
	if cfg.Protocol == "mcast" {
		um.FetchAdd, um.Server = true, model.NodeID(opt.Server)
	}
	for i := range um.Work {
		um.Work[i] = nil // the programs post their sends
	}
	sys, err := model.NewSystem(cfg, m)
	if err != nil {
		return nil, fmt.Errorf("lfc: %v", err)
	}
	c := &Cluster{opt: opt, cfg: cfg, sys: sys, um: um, topo: mm.Topo, payloads: map[key]*stored{}, done: make(chan struct{}),
		record: opt.Record == RecordOn || opt.Record == RecordInTests && testing.Testing()}
	c.cond = sync.NewCond(&c.mu)
	for i := 0; i < opt.Nodes; i++ {
		c.nodes = append(c.nodes, &Node{c: c, id: model.NodeID(i), seq: map[int]int{}, changed: make(chan struct{}, 1)})
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.ready.Add(opt.Nodes)
	go func() {
		defer close(c.done)
		c.res, c.runErr = live.RunWith(ctx, sys, live.Options{Client: c.client, Observe: c.observe, LinkDelay: opt.LinkDelay})
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
	if opt.Record < RecordInTests || opt.Record > RecordOff {
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

// Node returns node i's interface.
func (c *Cluster) Node(i int) *Node { return c.nodes[i] }

// Nodes is the number of nodes.
func (c *Cluster) Nodes() int { return len(c.nodes) }

// client is node's program on the live runtime: in Upcall mode it hands
// every delivered packet to the handler; in both modes it keeps the
// node's client interface open until Close.
func (c *Cluster) client(ctx context.Context, lc *live.Client) {
	n := c.nodes[lc.Node()]
	n.lc = lc
	c.ready.Done()
	for {
		if c.opt.Mode == Upcall {
			for n.deliver() {
			}
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
	changed := n.launched != u.Next || n.queued != len(u.Queue) || len(n.values) != len(u.FA.Got)
	n.launched, n.queued = u.Next, len(u.Queue)
	n.values = append(n.values, u.FA.Got[len(n.values):]...)
	if changed {
		c.cond.Broadcast()
	}
	c.mu.Unlock()
	select {
	case n.changed <- struct{}{}:
	default:
	}
}

// Send sends payload to node dest (lfc_send): it returns once the packet
// is in the NI's hands, or with an error.
func (n *Node) Send(dest int, payload []byte) error {
	if dest < 0 || dest >= len(n.c.nodes) || dest == int(n.id) {
		return fmt.Errorf("lfc: node %d: destination %d is not another node in 0..%d", n.id, dest, len(n.c.nodes)-1)
	}
	return n.post(mcast.WorkEntry{Dest: dest, Count: 1}, ucast.WorkItem{Tag: ucast.TagUnicast, Dest: model.NodeID(dest)}, dest, 1, payload)
}

// Multicast sends payload to every other member of group (lfc_mcast) on
// the node's spanning tree of the group ("": the first group the node is
// a member of; with a tree family, the group of all nodes). It returns
// once the packet is in the NI's hands, or with an error.
func (n *Node) Multicast(group string, payload []byte) error {
	t, err := n.c.topo.CastTree(model.Cast{Group: group, Root: int(n.id), Count: 1})
	if err != nil {
		return fmt.Errorf("lfc: node %d: %v", n.id, err)
	}
	dests := len(n.c.topo.Groups[n.c.topo.Trees[t].Group].Members) - 1
	return n.post(mcast.WorkEntry{Multicast: true, Group: group, Count: 1},
		ucast.WorkItem{Tag: mcast.TagMulticast, Tree: uint16(t)}, len(n.c.nodes)+t, dests, payload)
}

// FetchAndAdd increments the fetch-and-add variable on the server's NI
// (Options.Server) and returns the value it had (lfc_fetch_and_add, §3.8).
// The request travels on the server's credits like a unicast packet; the
// server's NI answers it at once. Concurrent calls on one node are
// served one after the other.
func (n *Node) FetchAndAdd() (uint32, error) {
	c := n.c
	if !c.um.FetchAdd {
		return 0, fmt.Errorf("lfc: node %d: fetch-and-add is offered with protocol mcast only", n.id)
	}
	n.send.Lock()
	c.mu.Lock()
	want := len(n.values) + n.pendingFA + 1
	n.pendingFA++
	c.mu.Unlock()
	err := n.postLocked(mcast.WorkEntry{FetchAdd: true, Count: 1}, ucast.WorkItem{Tag: ucast.TagFARequest}, -1, 0, nil)
	n.send.Unlock()
	if err != nil {
		c.mu.Lock()
		n.pendingFA--
		c.mu.Unlock()
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(n.values) < want && !c.closed {
		c.cond.Wait()
	}
	n.pendingFA--
	if len(n.values) < want {
		return 0, ErrClosed
	}
	return n.values[want-1], nil
}

// post appends one item of stream to the node's workload and waits until
// the NI has taken it.
func (n *Node) post(e mcast.WorkEntry, it ucast.WorkItem, stream, dests int, payload []byte) error {
	n.send.Lock()
	err := n.postLocked(e, it, stream, dests, payload)
	n.send.Unlock()
	if err != nil {
		return err
	}
	return n.waitLaunched()
}

// postLocked appends one item to the node's workload (n.send held).
func (n *Node) postLocked(e mcast.WorkEntry, it ucast.WorkItem, stream, dests int, payload []byte) error {
	c := n.c
	if len(payload) > c.opt.MaxPayload {
		return fmt.Errorf("lfc: node %d: payload of %d bytes, more than the %d the cluster allows", n.id, len(payload), c.opt.MaxPayload)
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	limit := 65535
	if c.record {
		limit = model.MaxStreamSeq
		if n.posted >= ucast.MaxWorkPerHost {
			c.mu.Unlock()
			return fmt.Errorf("lfc: node %d: more than %d sends in a recorded run (the model's limit per host)", n.id, ucast.MaxWorkPerHost)
		}
	}
	if n.seq[stream] >= limit {
		c.mu.Unlock()
		return fmt.Errorf("lfc: node %d: more than %d packets in one stream (%s)%s", n.id, limit, e, recordNote(c.record))
	}
	n.seq[stream]++
	it.Seq = uint16(n.seq[stream])
	k := key{it.Tag, n.id, uint16(it.Dest), it.Seq}
	if it.Tag == mcast.TagMulticast {
		k.to = it.Tree
	}
	if dests > 0 {
		c.payloads[k] = &stored{data: append([]byte(nil), payload...), left: dests}
	}
	c.expected += dests
	n.posted++
	if c.record {
		if l := len(n.work); l > 0 && sameEntry(n.work[l-1], e) {
			n.work[l-1].Count++
		} else {
			n.work = append(n.work, e)
		}
	}
	c.mu.Unlock()
	ok := n.lc.Update(func(model.Node) { c.um.Work[n.id] = append(c.um.Work[n.id], it) })
	if !ok {
		return ErrClosed
	}
	return nil
}

func recordNote(rec bool) string {
	if rec {
		return ": the model's limit, which a recording cluster keeps"
	}
	return ""
}

func sameEntry(a, b mcast.WorkEntry) bool {
	return a.FetchAdd == b.FetchAdd && a.Multicast == b.Multicast && a.Dest == b.Dest && a.Group == b.Group
}

// waitLaunched waits until the NI took every item posted so far.
func (n *Node) waitLaunched() error {
	c := n.c
	c.mu.Lock()
	defer c.mu.Unlock()
	want := n.posted
	for n.launched < want && !c.closed {
		c.cond.Wait()
	}
	if n.launched < want {
		return ErrClosed
	}
	return nil
}

// Poll hands every packet waiting in the node's host buffers to the
// handler, in the caller's goroutine (lfc_poll), and returns how many it
// handed. In Upcall mode the library does this by itself and Poll
// returns 0 at once.
func (n *Node) Poll() int {
	if n.c.opt.Mode == Upcall {
		return 0
	}
	k := 0
	for n.deliver() {
		k++
	}
	return k
}

// deliver hands the oldest packet in the node's host buffers to the
// handler and frees its buffer; false when there is none.
func (n *Node) deliver() bool {
	n.poll.Lock()
	defer n.poll.Unlock()
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
	c.opt.Handler(int(n.id), Packet{From: int(pkt.Origin), Group: group, Seq: int(pkt.Seq), Payload: data, n: n, d: d})
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
	// client takes packets from its host queue, so the head is still pkt.
	step := "process"
	if kept {
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

// Drain waits until every packet sent so far has been handed to its
// destinations' handlers (in Polling mode, programs must keep polling),
// or until ctx ends.
func (c *Cluster) Drain(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	defer stop()
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
	Kept     int // packets kept and not freed
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
	c.mu.Lock()
	already := c.closed
	c.closed = true
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
	if c.record {
		rec, err := c.Recording()
		if err != nil {
			return r, err
		}
		v, stats, err := rec.verify()
		if v != nil || err != nil {
			return r, &ConformanceError{Recording: rec, Violation: v, Err: err}
		}
		r.Statistics = stats
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
		r.Steps = len(c.res.Actions)
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
