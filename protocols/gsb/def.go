package gsb

import (
	_ "embed"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols/fa"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/topology"
	"lfccheck/protocols/ucast"
)

// DefaultPinned is GSB's default pinned-memory limit, in host receive
// buffers per host: enough for the default workload, so that a default
// check tests the ordering rather than the missing flow control (§6.1.1).
const DefaultPinned = 4

// Delivery modes: streaming (Panda's, §6.3) or whole messages.
const (
	Stream = "stream"
	Whole  = "whole"
)

// Params are GSB's parameters: MCAST's credits, buffers and broadcast
// trees (HostBuffers is the receive ring's initial size, §3.6), the
// senders, the sequencer, the packets per message, the pinned-memory
// limit, the delivery mode and the sequencer's reply memory.
type Params struct {
	mcast.Params
	// Senders are the broadcasting nodes (nil: every node).
	Senders   []int `json:"senders,omitempty"`
	Sequencer int   `json:"sequencer"`
	Fragments int   `json:"fragments"`
	// Pinned is the most host receive buffers a host can pin (§6.6.4).
	Pinned int `json:"pinned"`
	// Delivery is Stream (default) or Whole.
	Delivery string `json:"delivery,omitempty"`
	// ReplyMemory is the FA_REPLY packets the sequencer's NI has memory
	// for (§3.8); 0: one per node.
	ReplyMemory int `json:"reply_memory,omitempty"`
}

// Defaults returns GSB's default parameters.
func Defaults() *Params {
	return &Params{Params: *mcast.Defaults(), Fragments: 1, Pinned: DefaultPinned}
}

// delivery is the delivery mode, Stream when unset.
func (p *Params) delivery() string {
	if p.Delivery == "" {
		return Stream
	}
	return p.Delivery
}

// ParamSpecs declares GSB's parameters.
func ParamSpecs() []model.ParamSpec {
	var specs []model.ParamSpec
	for _, s := range ucast.WithoutHostLibrary(mcast.ParamSpecs()) {
		switch s.Key {
		case "flow", "work", "keep", "server":
			continue
		case "cast":
			s.Doc = "plain (unordered) multicast entry [GROUP/]ROOT:COUNT beside the ordered broadcast, repeatable; a node launches its casts before its messages"
		case "packets":
			s.Doc = "messages every sender broadcasts, K"
		case "host-buffers":
			s.Doc = "initial host receive buffers per host (§3.6); the ring grows up to --pinned"
		case "tree":
			s.Doc = "tree family of the broadcast trees: binary, binomial, chain, star, kary:K"
		case "topology":
			s.Doc = "topology file; its first group of every node is the broadcast group (see 'lfccheck help topology')"
		}
		specs = append(specs, s)
	}
	return append(specs,
		model.ParamSpec{Key: "senders", Doc: "the broadcasting nodes, comma-separated (default: every node)"},
		model.ParamSpec{Key: "sequencer", Doc: "the NI whose fetch-and-add variable numbers the messages", Default: "0"},
		model.ParamSpec{Key: "fragments", Doc: "packets per message (§6.3)", Default: "1"},
		model.ParamSpec{Key: "pinned", Doc: "pinned-memory limit: the most host receive buffers a host can pin (§3.6, §6.6.4); held-back packets occupy them (no flow control, §6.1.1)", Default: strconv.Itoa(DefaultPinned)},
		model.ParamSpec{Key: "delivery", Doc: "stream: a message's handler runs from its first packet and consumes the rest as they arrive (Panda, §6.3); whole: delivered once every packet is held", Default: Stream},
		model.ParamSpec{Key: "reply-memory", Doc: "FA_REPLY packets the sequencer's NI has memory for (§3.8); 0: one per node", Default: "0"},
	)
}

// ParseSenders reads a comma-separated list of node ids.
func ParseSenders(v string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := ucast.IntIn(strings.TrimSpace(f), 0, model.MaxNodes-1)
		if err != nil {
			return nil, fmt.Errorf("senders %q: %v", v, err)
		}
		out = append(out, n)
	}
	return out, nil
}

// Set applies one setting.
func (p *Params) Set(key, v string) (err error) {
	switch key {
	case "senders":
		p.Senders, err = ParseSenders(v)
	case "sequencer":
		p.Sequencer, err = ucast.IntIn(v, 0, model.MaxNodes-1)
	case "fragments":
		p.Fragments, err = ucast.IntIn(v, 1, model.MaxStreamSeq)
	case "pinned":
		p.Pinned, err = ucast.IntIn(v, 1, ucast.MaxBuffers)
	case "reply-memory":
		p.ReplyMemory, err = ucast.IntIn(v, 0, ucast.MaxBuffers)
	case "delivery":
		if v != Stream && v != Whole {
			return fmt.Errorf("delivery %q: want %s or %s", v, Stream, Whole)
		}
		p.Delivery = v
	case "flow":
		err = fmt.Errorf("gsb has no parameter %q", key)
	default:
		err = p.Params.Set(key, v)
	}
	return err
}

// Settings returns the non-default parameters.
func (p *Params) Settings() []model.Setting {
	var s []model.Setting
	for _, x := range p.Params.Settings() {
		if x.Key == "host-buffers" || x.Key == "packets" {
			continue
		}
		s = append(s, x)
	}
	if p.Packets != 1 {
		s = append(s, model.Setting{Key: "packets", Value: strconv.Itoa(p.Packets)})
	}
	if p.HostBuffers != 1 {
		s = append(s, model.Setting{Key: "host-buffers", Value: strconv.Itoa(p.HostBuffers)})
	}
	if p.Pinned != DefaultPinned {
		s = append(s, model.Setting{Key: "pinned", Value: strconv.Itoa(p.Pinned)})
	}
	if p.Senders != nil {
		s = append(s, model.Setting{Key: "senders", Value: joinInts(p.Senders)})
	}
	if p.Sequencer != 0 {
		s = append(s, model.Setting{Key: "sequencer", Value: strconv.Itoa(p.Sequencer)})
	}
	if p.Fragments != 1 {
		s = append(s, model.Setting{Key: "fragments", Value: strconv.Itoa(p.Fragments)})
	}
	if p.delivery() != Stream {
		s = append(s, model.Setting{Key: "delivery", Value: p.delivery()})
	}
	if p.ReplyMemory != 0 {
		s = append(s, model.Setting{Key: "reply-memory", Value: strconv.Itoa(p.ReplyMemory)})
	}
	return s
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// Describe renders every parameter.
func (p *Params) Describe() string {
	senders := "all"
	if p.Senders != nil {
		senders = joinInts(p.Senders)
	}
	d := p.Params.Describe()
	if len(p.Casts) > 0 { // MCAST's omits packets when casts are given
		d = strings.Replace(d, fmt.Sprintf("credits=%d ", p.Credits), fmt.Sprintf("credits=%d packets=%d ", p.Credits, p.Packets), 1)
	}
	rm := "per-node"
	if p.ReplyMemory > 0 {
		rm = strconv.Itoa(p.ReplyMemory)
	}
	return fmt.Sprintf("%s senders=%s sequencer=%d fragments=%d pinned=%d delivery=%s reply-memory=%s", d, senders, p.Sequencer, p.Fragments, p.Pinned, p.delivery(), rm)
}

// Resolve validates; the node count defaults to the topology's, else 3.
func (p *Params) Resolve(nodes int) (int, error) {
	nodes, err := p.Params.ResolveBase(nodes)
	if err != nil {
		return 0, err
	}
	if len(p.Flows) > 0 || len(p.Work) > 0 || p.Keep > 0 || p.Server != 0 {
		return 0, fmt.Errorf("gsb takes no flows, work, keep or server (its processes broadcast messages and hold back packets themselves; its sequencer is the fetch-and-add server)")
	}
	if p.Packets < 1 {
		return 0, fmt.Errorf("packets must be at least 1 (messages per sender)")
	}
	if p.Fragments < 1 || p.Packets*p.Fragments > model.MaxStreamSeq {
		return 0, fmt.Errorf("packets x fragments must be in 1..%d, got %d x %d", model.MaxStreamSeq, p.Packets, p.Fragments)
	}
	if p.Pinned < p.HostBuffers {
		return 0, fmt.Errorf("pinned (%d) must be at least host-buffers (%d), the receive ring's initial size", p.Pinned, p.HostBuffers)
	}
	if p.Sequencer < 0 || p.Sequencer >= nodes {
		return 0, fmt.Errorf("sequencer %d out of range 0..%d", p.Sequencer, nodes-1)
	}
	if p.Senders != nil {
		if len(p.Senders) == 0 {
			return 0, fmt.Errorf("senders is empty: nothing to broadcast")
		}
		seen := map[int]bool{}
		for _, s := range p.Senders {
			if s < 0 || s >= nodes {
				return 0, fmt.Errorf("sender %d out of range 0..%d", s, nodes-1)
			}
			if seen[s] {
				return 0, fmt.Errorf("sender %d given twice", s)
			}
			seen[s] = true
		}
		sort.Ints(p.Senders)
	}
	return nodes, nil
}

// Clone returns a deep copy.
func (p *Params) Clone() model.Params {
	c := *p
	c.Params = *p.Params.Clone().(*mcast.Params)
	c.Senders = slices.Clone(p.Senders)
	return &c
}

// Config is a GSB configuration on nodes NIs with binary broadcast trees:
// credits C, K messages per sender, the given senders (none: every node)
// and a pinned-memory limit of pinned host receive buffers per host (the
// ring starts with one).
func Config(nodes, credits, messages, pinned int, senders ...int) model.Config {
	p := Defaults()
	p.Credits, p.Packets, p.Pinned = credits, messages, pinned
	if len(senders) > 0 {
		p.Senders = senders
	}
	return model.Config{Protocol: "gsb", Nodes: nodes, Params: p}
}

// broadcastGroup is the first group with every node.
func broadcastGroup(t *topology.Topology, nodes int) (int, error) {
	for g := range t.Groups {
		if len(t.Groups[g].Members) == nodes {
			return g, nil
		}
	}
	return 0, fmt.Errorf("the topology has no group of all %d nodes to broadcast in", nodes)
}

// New builds GSB for a resolved configuration.
func New(cfg model.Config) (*Machine, error) {
	p := cfg.Params.(*Params)
	if err := p.NoHostLibrary("gsb"); err != nil {
		return nil, err
	}
	return build(cfg, p, p.Packets, false)
}

// build builds the machine with messages messages per sender; a live group
// (live set) may have more packets per tree than a stream log records.
func build(cfg model.Config, p *Params, messages int, live bool) (*Machine, error) {
	topo, err := topology.Resolve(p.Tree, p.Topology, cfg.Nodes)
	if err != nil {
		return nil, err
	}
	g, err := broadcastGroup(topo, cfg.Nodes)
	if err != nil {
		return nil, err
	}
	senders := p.Senders
	if senders == nil {
		for i := 0; i < cfg.Nodes; i++ {
			senders = append(senders, i)
		}
	}
	work := make([][]ucast.WorkItem, cfg.Nodes)
	items := make([][]itemInfo, cfg.Nodes)
	tseq := make([]uint16, len(topo.Trees))
	add := func(root, tree int, info itemInfo) error {
		tseq[tree]++
		if tseq[tree] > model.MaxStreamSeq && !live {
			return fmt.Errorf("more than %d packets multicast on the tree of %d", model.MaxStreamSeq, root)
		}
		work[root] = append(work[root], ucast.WorkItem{Tag: mcast.TagMulticast, Tree: uint16(tree), Seq: tseq[tree]})
		items[root] = append(items[root], info)
		return nil
	}
	// A node's program: its plain multicasts first, then its messages.
	for i, c := range p.Casts {
		t, err := topo.CastTree(c)
		if err != nil {
			return nil, fmt.Errorf("cast %d (%s): %v", i+1, c, err)
		}
		for k := 0; k < c.Count; k++ {
			if err := add(c.Root, t, itemInfo{msg: -1}); err != nil {
				return nil, err
			}
		}
	}
	ordered := make([]bool, len(topo.Trees))
	for t := range topo.Trees {
		ordered[t] = topo.Trees[t].Group == g
	}
	count := make([]int, cfg.Nodes)
	trees := make([]int, cfg.Nodes)
	for i := range trees {
		trees[i] = -1
	}
	for _, s := range senders {
		t := topo.TreeOf(g, model.NodeID(s))
		if t < 0 {
			return nil, fmt.Errorf("sender %d has no tree in the broadcast group", s)
		}
		trees[s] = t
		count[s] = messages
		for k := 0; k < messages; k++ {
			for f := 0; f < p.Fragments; f++ {
				if err := add(s, t, itemInfo{msg: k, frag: f}); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := ucast.CheckWork(work); err != nil {
		return nil, err
	}
	u := ucast.NewMachine(cfg, &p.Params.Params, work)
	mm := &mcast.Machine{Machine: u, Topo: topo}
	replyMemory := p.ReplyMemory
	if replyMemory == 0 {
		replyMemory = cfg.Nodes
	}
	m := &Machine{Machine: mm, Sequencer: model.NodeID(p.Sequencer), Fragments: p.Fragments, Messages: count,
		Pinned: p.Pinned, ReplyMemory: replyMemory, WholeMessages: p.delivery() == Whole,
		Total: messages * len(senders), item: items, trees: trees, ordered: ordered, casts: len(p.Casts) > 0, variant: cfg.Variant}
	// The client keeps a message's packets until it delivers the message.
	mm.Attach(m, ucast.Features{KeepsPackets: true}, cfg.Variant)
	return m, nil
}

// BcastOverlapFile is topologies/bcast-overlap.topo: the broadcast group
// of 4 nodes beside a multicast group whose trees close a wait-for cycle
// with the broadcast tree of 0 (examples/bcast-overlap.topo links to it).
//
//go:embed topologies/bcast-overlap.topo
var BcastOverlapFile []byte

// OverlapConfig is node 0 broadcasting one message on bcast-overlap.topo
// while the given casts multicast in group g.
func OverlapConfig(casts ...topology.Cast) model.Config {
	p := Defaults()
	if err := p.SetTopologyFile("bcast-overlap.topo", BcastOverlapFile); err != nil {
		panic("gsb: embedded topology: " + err.Error())
	}
	p.Senders = []int{0}
	p.Casts = casts
	return model.Config{Protocol: "gsb", Nodes: 4, Params: p}
}

// faCatches names the property that catches each of fetch-and-add's bug
// variants in GSB: a repeated sequence number breaks the total order; a
// lost reply leaves its sender waiting for ever.
func faCatches(v string) string {
	if v == ucast.FADropReply {
		return "deadlock"
	}
	return "total-order"
}

// Def is GSB's protocol definition.
var Def = &model.Def{
	Name:      "gsb",
	Doc:       "Panda's totally-ordered broadcast: fetch-and-add sequence numbers, then broadcast (thesis §6.4)",
	Params:    ParamSpecs(),
	NewParams: func() model.Params { return Defaults() },
	Variants: append([]model.Variant{
		{Name: Correct, Doc: "receivers and senders hold back every message until its predecessors are delivered (§6.4)"},
		{Name: NoHoldback, Doc: "every process delivers a message as soon as it has it whole, its own at once",
			Catches: "total-order", Example: Config(3, 1, 1, 4)},
		{Name: SelfImmediate, Doc: "a sender delivers its own message as soon as it has its sequence number",
			Catches: "total-order", Example: Config(3, 1, 1, 4)},
		{Name: TwoOutstanding, Doc: "a process requests its next sequence number before broadcasting the current message: the sequencer's NI must hold more FA_REPLY packets than the one per process its memory is sized for (§3.8)",
			Catches: ReplyMemory.Name, Example: Config(3, 2, 2, 4, 1, 2)},
		{Name: PrefetchLIFO, Doc: "a process fetches the numbers of its next two messages ahead (results queued, not overwritten) and uses them newest first",
			Catches: "sender-order", Example: Config(3, 1, 2, 4, 1)},
		{Name: DoubleOwn, Doc: "a sender delivers its own message as soon as it has its number, and again when the number comes up",
			Catches: "no-duplicates", Example: Config(2, 1, 1, 1)},
		{Name: NoFree, Doc: "the client never frees (lfc_packet_free) the packets of a delivered message: host buffers leak until nothing can be copied",
			Catches: "eventual-delivery", Example: Config(2, 1, 2, 1)}},
		// Fetch-and-add's own bugs, at the sequencer (ucast/fetchadd.go).
		ucast.FAVariants(Config(3, 1, 1, 4), faCatches)...),
	Properties: props(),
	Stats:      []model.Stat{PinnedBuffers},
	Acyclic:    true,
	New:        func(cfg model.Config) (model.Machine, error) { return New(cfg) },
	Claims:     append(claims(), model.UnreliableClaim("P=3 3 senders K=1 pinned=2", Config(3, 1, 1, 2), "credit-conservation")),
	Sweep:      []model.Setting{{Key: "host-buffers", Value: "1,2,3,4"}, {Key: "packets", Value: "1,2"}},
}

// props are GSB's properties, in checking order.
func props() []model.Property {
	return []model.Property{Deadlock, TotalOrder, SenderOrder, NoDuplicates, ucast.CreditConservation, ucast.PoolBound,
		properties.FIFO, ucast.ExactlyOnce, mcast.BufferHeld, ReplyMemory, HeldBack, EventualDelivery}
}

func claims() []model.Claim {
	const doc = "every process delivers every message, in one order that respects each sender's order"
	return []model.Claim{
		{Name: "P=3 3 senders K=1 pinned=2", Config: Config(3, 1, 1, 2), Expect: "pass", Ref: "§6.4", Doc: doc},
		{Name: "P=3 senders 1,2 K=2 pinned=4", Config: Config(3, 1, 2, 4, 1, 2), Expect: "pass", Ref: "§6.4",
			Doc: doc + "; two messages per sender"},
		{Name: "P=3 senders 1,2 K=1 fragments=2", Config: fragments(Config(3, 1, 1, 4, 1, 2), 2), Expect: "pass", Ref: "§6.3, §6.4",
			Doc: doc + "; two-packet messages are streamed: the handler runs from the first packet and consumes the rest as they arrive"},
		{Name: "P=3 senders 1,2 K=1 fragments=2 pinned=3", Config: fragments(Config(3, 1, 1, 3, 1, 2), 2), Expect: "pass", Ref: "§6.3, §6.6.4",
			Doc: "streaming frees the next message's packets as they arrive: three pinned buffers suffice for two two-packet messages"},
		{Name: "P=3 senders 1,2 K=1 fragments=2 pinned=3 delivery=whole", Config: whole(fragments(Config(3, 1, 1, 3, 1, 2), 2)), Expect: "fail deadlock", Ref: "§6.3, §6.6.4",
			Doc: "whole-message delivery (a modelling alternative, not Panda's) holds the next message's first packet until its second can be copied: the same three buffers stall"},
		{Name: "P=4 senders 1,2,3 K=1 pinned=3", Config: Config(4, 1, 1, 3, 1, 2, 3), Expect: "pass", Ref: "§6.4",
			Doc: doc + "; binary trees forward at P=4"},
		{Name: "P=3 1 sender K=2", Config: Config(3, 1, 2, 4, 1), Expect: "fail held-back", Ref: "§6.4",
			Doc: "with one sender nothing is ever held back: the goal fails, so the other claims' held-back goal is meaningful"},
		{Name: "P=2 2 senders K=3 pinned=1", Config: Config(2, 1, 3, 1), Expect: "pass", Ref: "§6.1.1, §6.6.4",
			Doc: "two nodes never stall: the one other sender's messages arrive in order, one pinned buffer suffices"},
		{Name: "P=3 senders 1,2 K=1 pinned=1", Config: Config(3, 1, 1, 1, 1, 2), Expect: "fail deadlock", Ref: "§6.1.1, §6.6.4",
			Doc: "no flow control for ordered broadcast: the ring grows (§3.6) until pinned memory is exhausted (§6.6.4); with one pinned buffer a held-back message fills it and the missing one can never be copied"},
		{Name: "P=3 senders 1,2 K=1 pinned=2", Config: Config(3, 1, 1, 2, 1, 2), Expect: "pass", Ref: "§6.1.1, §6.6.4",
			Doc: "two pinned buffers per host are what two senders' messages need at P=3"},
		{Name: "P=4 senders 1,2,3 K=1 pinned=2", Config: Config(4, 1, 1, 2, 1, 2, 3), Expect: "fail deadlock", Ref: "§6.1.1, §6.6.4",
			Doc: "one pinned buffer fewer than the packets a receiver gets stalls"},
		{Name: "broadcast beside group g P=4", Config: OverlapConfig(topology.Cast{Group: "g", Root: 1, Count: 1}, topology.Cast{Group: "g", Root: 3, Count: 1}),
			Expect: "fail deadlock", Ref: "§4.2.6", Doc: "the broadcast group overlaps every group: with g's trees it closes a wait-for cycle (RECOV's case)"},
		{Name: "broadcast beside group g, one cast P=4", Config: oneSender(OverlapConfig(topology.Cast{Group: "g", Root: 1, Count: 1})),
			Expect: "pass", Ref: "§4.2.6", Doc: "the cycle needs both of g's multicasts (one sender: held-back cannot occur and is not checked)"},
	}
}

// whole sets whole-message delivery.
func whole(cfg model.Config) model.Config {
	cfg.Params.(*Params).Delivery = Whole
	return cfg
}

// fragments sets the packets per message of cfg.
func fragments(cfg model.Config, f int) model.Config {
	cfg.Params.(*Params).Fragments = f
	return cfg
}

// oneSender checks cfg, which has one broadcasting node, against every
// property but held-back, which needs two senders.
func oneSender(cfg model.Config) model.Config {
	for _, p := range props() {
		if p.Name != HeldBack.Name {
			cfg.Properties = append(cfg.Properties, p.Name)
		}
	}
	return cfg
}

func gnode(w *model.World, i int) *Node { return w.Nodes[i].(*Node) }

func gmach(w *model.World) *Machine { return w.Sys.M.(*Machine) }

// TotalOrder: every two processes deliver the same sequence.
var TotalOrder = model.Property{
	Name: "total-order",
	Doc:  "every two processes deliver the same sequence of messages (one is a prefix of the other), own messages included",
	State: func(w *model.World) error {
		for i := range w.Nodes {
			a := gnode(w, i).Delivered
			for j := i + 1; j < len(w.Nodes); j++ {
				b := gnode(w, j).Delivered
				for x := 0; x < len(a) && x < len(b); x++ {
					if a[x] != b[x] {
						return fmt.Errorf("delivery %d: host %d delivered %s, host %d delivered %s", x+1, i, a[x], j, b[x])
					}
				}
			}
		}
		return nil
	},
}

// SenderOrder: each sender's messages are delivered in send order.
var SenderOrder = model.Property{
	Name: "sender-order",
	Doc:  "every process delivers each sender's messages in the order they were sent, without gaps",
	State: func(w *model.World) error {
		for i := range w.Nodes {
			next := make([]uint16, len(w.Nodes))
			for _, d := range gnode(w, i).Delivered {
				if d.K != next[d.From]+1 {
					return fmt.Errorf("host %d delivered %s after %d.%d", i, d, d.From, next[d.From])
				}
				next[d.From] = d.K
			}
		}
		return nil
	},
}

// NoDuplicates: no message is delivered twice by one process; at a proper
// end every process has delivered every message.
var NoDuplicates = model.Property{
	Name: "no-duplicates",
	Doc:  "no process delivers a message twice; at the end every process has delivered every message",
	State: func(w *model.World) error {
		for i := range w.Nodes {
			seen := map[Msg]bool{}
			for _, d := range gnode(w, i).Delivered {
				if seen[d] {
					return fmt.Errorf("host %d delivered %s twice", i, d)
				}
				seen[d] = true
			}
		}
		return nil
	},
	Final: func(w *model.World) error {
		m := gmach(w)
		for i := range w.Nodes {
			if n := len(gnode(w, i).Delivered); n != m.Total {
				return fmt.Errorf("host %d delivered %d of %d messages", i, n, m.Total)
			}
		}
		return nil
	},
}

// HeldBack: some process holds back a whole message because an earlier
// one is missing.
var HeldBack = model.Property{
	Name: "held-back",
	Doc:  "some process holds back a whole message that arrived before an earlier one",
	Sometimes: func(w *model.World) bool {
		m := gmach(w)
		for i := range w.Nodes {
			n := gnode(w, i)
			for _, p := range n.Held {
				if p.Val > n.NextSeq && m.whole(n, p.Val) {
					return true
				}
			}
		}
		return false
	},
}

// requestedDelivered reports whether every message whose number was
// requested has been delivered by every process.
func requestedDelivered(w *model.World) bool {
	for i := range w.Nodes {
		got := make([]int, len(w.Nodes))
		for _, d := range gnode(w, i).Delivered {
			got[d.From]++
		}
		for s := range w.Nodes {
			if got[s] < int(gnode(w, s).Requested) {
				return false
			}
		}
	}
	return true
}

// EventualDelivery: every message whose sequence number was requested is
// eventually delivered by every process.
var EventualDelivery = properties.AlwaysEventually("eventual-delivery",
	"every message whose sequence number was requested is eventually delivered by every process, on every fair run",
	requestedDelivered)

// Deadlock: a state with no enabled action has every message launched and
// delivered everywhere, and nothing left in buffers or on links.
var Deadlock = properties.Deadlock(func(w *model.World) error {
	m := gmach(w)
	short := 0
	for i := range w.Nodes {
		short += m.Total - len(gnode(w, i).Delivered)
	}
	if ucast.Finished(w) && short == 0 {
		return nil
	}
	var stalls []string
	for _, i := range heldFull(w) {
		n := gnode(w, i)
		stalls = append(stalls, fmt.Sprintf("host %d waits for message #%d with every host buffer held (%s)", i, n.NextSeq, model.PacketList(n.Held)))
	}
	s := properties.Counts(short, "deliveries missing") + "; " + ucast.Remaining(w)
	if len(stalls) > 0 {
		s += "; " + strings.Join(stalls, "; ")
	}
	return fmt.Errorf("%s", s)
}, explain)

// heldFull lists the hosts whose pinned host buffers are all in use,
// with held-back packets among them.
func heldFull(w *model.World) []int {
	var out []int
	for i := range w.Nodes {
		if n := gnode(w, i); len(n.Held) > 0 && n.HostBuffersUsed() >= gmach(w).Pinned {
			out = append(out, i)
		}
	}
	return out
}

// explain explains a deadlock: App. A.1's wait-for cycle of full receive
// pools if there is one, else the held-back stall: hosts waiting for a
// message that their NI cannot copy because every host buffer holds a
// later one.
func explain(w *model.World) model.Explanation {
	if ucast.WaitForCycle(w) != nil {
		return ucast.ExplainCycle(w)
	}
	m := gmach(w)
	e := model.Explanation{Field: "held_back_stall",
		Head: "held-back messages fill every buffer the host can pin (no flow control for ordered broadcast, §6.1.1; pinned memory, §6.6.4):"}
	for _, i := range heldFull(w) {
		n := gnode(w, i)
		held := model.ListOf(n.Held, func(p model.Packet) string { return fmt.Sprintf("%s (message #%d)", p, p.Val) })
		line := fmt.Sprintf("host %d waits for message #%d; its %d pinned host buffers hold %s, held back", i, n.NextSeq, m.Pinned, held)
		for _, rb := range n.Recv {
			if !rb.Copied && rb.Pkt.Val == n.NextSeq && m.ordered[rb.Pkt.Tree] {
				line += fmt.Sprintf("; ni %d holds %s (message #%d) but has no free host buffer to copy it to", i, rb.Pkt, rb.Pkt.Val)
			}
		}
		e.Lines = append(e.Lines, line)
	}
	if len(e.Lines) == 0 {
		e.Head = "no wait-for cycle of receive pools holding every credit and no host whose buffers are all held back"
	}
	return e
}

// ReplyMemory: the sequencer's NI never holds more FA_REPLY packets than
// it has memory for (§3.8). A reply occupies the NI's memory from the
// request's handler, which creates it, until the link has delivered it
// (the model's link from the sequencer stands for its transmit queue).
var ReplyMemory = model.Property{
	Name: "reply-memory",
	Doc:  "the sequencer's NI never holds more FA_REPLY packets than its reply memory (§3.8: one per process with one outstanding request each)",
	State: func(w *model.World) error {
		m := gmach(w)
		k := 0
		for j := range w.Nodes {
			for _, p := range w.Link(m.Sequencer, model.NodeID(j)) {
				if p.Tag == fa.TagReply {
					k++
				}
			}
		}
		if k > m.ReplyMemory {
			return fmt.Errorf("the sequencer's NI %d holds %d FA_REPLY packets, memory for %d", m.Sequencer, k, m.ReplyMemory)
		}
		return nil
	},
}

// PinnedBuffers is the pinned memory the library used: the most host
// receive buffers a host's ring held (the initial ones and those taken from
// the pool, §3.6), in any state. The library appends a buffer before an
// upcall when no empty one is left, so this is one more than the most
// buffers in use; with a pinned limit at least this large the limit is
// never reached.
var PinnedBuffers = model.Stat{Name: "pinned-buffers",
	Doc: "most host receive buffers one host's ring held in any state (§3.6): the pinned memory the library used",
	State: func(w *model.World) int64 {
		best := 0
		m := gmach(w)
		for i := range w.Nodes {
			best = max(best, m.HostBuffers+gnode(w, i).Extra)
		}
		return int64(best)
	}}
