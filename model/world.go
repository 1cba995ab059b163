package model

import (
	"errors"
	"fmt"
	"strings"
)

// Node is one node's protocol state: its NI and its host, including any
// history (ghost) state the protocol's properties declare. Each protocol
// defines its own node type; the kernel composes P of them with the links
// into a World and asks them to encode, copy, describe and diff themselves.
// A node keeps a reference to its static configuration (its id, its
// workload), which is not part of the encoding.
type Node interface {
	// Encode appends the node's canonical encoding: every field that
	// distinguishes states, keeping the order of every FIFO queue.
	Encode(buf []byte) []byte
	// Decode overwrites the node with the encoding read from d, reusing
	// its storage.
	Decode(d *Decoder)
	// CopyFrom makes the node a deep copy of src (of the same type),
	// reusing its storage.
	CopyFrom(src Node)
	// Describe renders the node's state, one line per part (NI, host).
	Describe() []string
	// Diff reports through change every difference from prev: what
	// changed (e.g. "ni 1 recv pool"), its old and its new rendering.
	Diff(prev Node, change func(what, from, to string))
}

// Marker is implemented by nodes that can say, for pictures, which of
// their parts are in a notable condition (a blocked send, a full pool):
// short texts, keyed by the part's owner (OwnerNI or OwnerHost).
type Marker interface {
	Marks() []Mark
}

// Mark is a notable condition of a node's NI or host.
type Mark struct {
	Part Owner
	Text string
}

// Machine is a protocol bound to a configuration: the static part of a
// model, which world states refer to.
type Machine interface {
	// Kinds lists the protocol's action kinds, including the kernel's
	// Deliver, in the order in which World.Enabled enumerates the actions
	// of one node.
	Kinds() []*ActionKind
	// NewNode builds node id in its initial state.
	NewNode(id NodeID) Node
	// Receive is the NI's packet-arrival handler: pkt arrived at node n
	// from NI from.
	Receive(n Node, from NodeID, pkt Packet, out *Outbox)
}

// System is a machine composed with its configuration: everything static
// that the explorer, the step-by-step driver and the live runtime share.
type System struct {
	Cfg   Config
	P     int
	M     Machine
	Kinds []*ActionKind

	faults *faultTab // nil: reliable links
}

// NewSystem composes a machine with the configuration it was built from.
func NewSystem(cfg Config, m Machine) (*System, error) {
	if cfg.Nodes < 2 || cfg.Nodes > MaxNodes {
		return nil, fmt.Errorf("nodes must be in 2..%d, got %d", MaxNodes, cfg.Nodes)
	}
	s := &System{Cfg: cfg, P: cfg.Nodes, M: m, Kinds: m.Kinds()}
	deliver := 0
	for _, k := range s.Kinds {
		if k == Deliver {
			deliver++
		} else if k.fault != 0 {
			return nil, fmt.Errorf("model: a machine lists no fault kind (%q): the configuration's faults add them", k.Name)
		} else if k.Enabled == nil || k.Apply == nil {
			return nil, fmt.Errorf("model: action kind %q lacks Enabled or Apply", k.Name)
		}
	}
	if len(cfg.Faults) > 0 {
		if err := cfg.Faults.Check(s.P); err != nil {
			return nil, err
		}
		s.faults = newFaultTab(cfg.Faults, s.P)
		for _, fk := range FaultKinds() {
			for _, b := range cfg.Faults {
				if b.Kind == fk.fault {
					s.Kinds = append(s.Kinds, fk)
					break
				}
			}
		}
	}
	if deliver != 1 || len(s.Kinds) > 255 {
		return nil, fmt.Errorf("model: a machine lists the Deliver kind exactly once, among at most 255 kinds")
	}
	return s, nil
}

// World is one global state: every node's state and every FIFO link.
type World struct {
	Sys   *System
	Nodes []Node
	Links [][]Packet // Links[i*P+j] is the FIFO link i->j, head first
	// Budget is what is left of each fault budget of the system's
	// configuration (Config.Faults, in its order); nil without faults.
	Budget []uint8

	// changed lists what Apply changed since the world was last made a
	// copy (CopyFrom, Decode, Restore): node i as i, link l as P+l;
	// changedAll when the list grew too long to be worth keeping.
	changed    []int
	changedAll bool
	dec        Decoder  // Decode's, which would escape to the heap at every call as a local
	memo       StepMemo // see SetStepMemo
	// held: after DecodeLeaves, the cached segment (of heldBy) that each
	// position holds a copy of, so that the next DecodeLeaves need not
	// copy a segment again where it holds it already; emptied by every
	// change and copy (noteChange, clearChanges).
	held   []*decodedSegment
	heldBy *SegmentCache
}

// StepMemo performs the protocol's handler calls of World.Apply for a
// world it is set on (SetStepMemo): it leaves node a.Node of w and out as
// the handler (Receive with pkt for a delivery, the machine's Corrupted
// for a corrupted one, the kind's Apply otherwise) would, by calling
// w.RunHandler or from what it remembers of earlier calls. Apply does
// everything else (the enabledness checks, the links, the fault budgets,
// the change list) as without it.
type StepMemo interface {
	Handle(w *World, a Action, pkt Packet, out *Outbox)
}

// SetStepMemo makes m perform the handler calls of w's Apply (nil: Apply
// calls the handlers). A copy of another system's world (CopyFrom,
// Decode) drops it.
func (w *World) SetStepMemo(m StepMemo) { w.memo = m }

// RunHandler calls the protocol's handler for action a, enabled in w, on
// node a.Node with out (a delivery of pkt: the machine's Receive; a
// corruption of pkt: its Corrupted; another protocol kind: its Apply),
// and nothing else: Apply's part that a StepMemo may remember.
func (w *World) RunHandler(a Action, pkt Packet, out *Outbox) {
	switch k := w.Sys.Kinds[a.Kind]; {
	case k == Deliver:
		w.Sys.M.Receive(w.Nodes[a.Node], a.Peer, pkt, out)
	case k.fault == FaultCorrupt:
		w.Sys.M.(CorruptionHandler).Corrupted(w.Nodes[a.Node], a.Peer, pkt, out)
	default:
		k.Apply(w.Nodes[a.Node], out)
	}
}

// maxChanged bounds World.changed: a world that took more steps than
// this since its last copy is restored in full.
const maxChanged = 64

func (w *World) noteChange(k int) {
	w.held = w.held[:0]
	if w.changedAll {
		return
	}
	if len(w.changed) == maxChanged {
		w.changed, w.changedAll = w.changed[:0], true
		return
	}
	w.changed = append(w.changed, k)
}

func (w *World) clearChanges() {
	w.changed, w.changedAll, w.held = w.changed[:0], false, w.held[:0]
}

// ClearChanges makes w's present state the base that Changed reports the
// changes from (as CopyFrom, Decode and Restore do), for a driver that
// steps one world along a run and checks each step incrementally.
func (w *World) ClearChanges() { w.clearChanges() }

// Changed calls node for every node and link for every link (index
// i*P+j) that Apply changed since w was last made a copy of a state
// (CopyFrom, Decode, Restore), possibly more than once each; it reports
// false, calling nothing, when it no longer knows (after too many steps).
func (w *World) Changed(node func(i int), link func(l int)) bool {
	if w.changedAll {
		return false
	}
	P := w.Sys.P
	for _, k := range w.changed {
		if k < P {
			node(k)
		} else {
			link(k - P)
		}
	}
	return true
}

// Restore makes w a copy of src again, where w was a copy of src (by
// CopyFrom, Decode of the same state, or Restore) before the Apply steps
// it took since: only what those steps changed is copied back. src must
// not have changed meanwhile.
func (w *World) Restore(src *World) {
	if w.changedAll || w.Sys != src.Sys || len(w.Nodes) != len(src.Nodes) {
		w.CopyFrom(src)
		return
	}
	P := w.Sys.P
	for _, k := range w.changed {
		if k < P {
			w.Nodes[k].CopyFrom(src.Nodes[k])
		} else if k-P == budgetLink(P) {
			copy(w.Budget, src.Budget)
		} else {
			w.Links[k-P] = append(w.Links[k-P][:0], src.Links[k-P]...)
		}
	}
	w.clearChanges()
}

// Link returns the contents of link i->j, head first.
func (w *World) Link(i, j NodeID) []Packet { return w.Links[int(i)*w.Sys.P+int(j)] }

// Initial builds the initial world state.
func (s *System) Initial() *World {
	w := &World{Sys: s, Nodes: make([]Node, s.P), Links: make([][]Packet, s.P*s.P)}
	for i := range w.Nodes {
		w.Nodes[i] = s.M.NewNode(NodeID(i))
	}
	if s.faults != nil {
		for _, b := range s.faults.faults {
			w.Budget = append(w.Budget, uint8(b.N))
		}
	}
	return w
}

// ErrNotEnabled is returned (wrapped) by Apply for an action that is not
// enabled in the state.
var ErrNotEnabled = errors.New("action not enabled")

// Enabled appends the enabled actions to buf and returns it: node by node,
// and within a node in the order of the machine's kinds (Deliver once per
// nonempty link into the node, by sender).
func (w *World) Enabled(buf []Action) []Action {
	P := w.Sys.P
	for n := 0; n < P; n++ {
		for ki, k := range w.Sys.Kinds {
			if k == Deliver {
				for i := 0; i < P; i++ {
					if i != n && len(w.Links[i*P+n]) > 0 {
						buf = append(buf, Action{Kind: uint8(ki), Node: NodeID(n), Peer: NodeID(i)})
					}
				}
				continue
			}
			if k.fault != 0 {
				for i := 0; i < P; i++ {
					if i != n && len(w.Links[i*P+n]) > 0 && w.faultEnabled(k.fault, i*P+n) {
						buf = append(buf, Action{Kind: uint8(ki), Node: NodeID(n), Peer: NodeID(i)})
					}
				}
				continue
			}
			if k.Enabled(w.Nodes[n]) && (!k.Quiet || w.Quiet(NodeID(n))) {
				buf = append(buf, Action{Kind: uint8(ki), Node: NodeID(n)})
			}
		}
	}
	return buf
}

// Apply performs action a, with out as its (reset) outbox, and puts the
// transmissions on their links. An action that is not enabled leaves the
// world unchanged and returns an error wrapping ErrNotEnabled.
func (w *World) Apply(a Action, out *Outbox) error {
	out.Reset()
	P := w.Sys.P
	if int(a.Kind) >= len(w.Sys.Kinds) || int(a.Node) >= P || int(a.Peer) >= P {
		return fmt.Errorf("%s: %w: out of range", w.Sys.ActionName(a), ErrNotEnabled)
	}
	k := w.Sys.Kinds[a.Kind]
	n := w.Nodes[a.Node]
	if k == Deliver {
		l := int(a.Peer)*P + int(a.Node)
		if a.Peer == a.Node || len(w.Links[l]) == 0 {
			return fmt.Errorf("%s: %w", k.Format(a), ErrNotEnabled)
		}
		w.noteChange(P + l)
		pkt := w.Links[l][0]
		copy(w.Links[l], w.Links[l][1:])
		w.Links[l] = w.Links[l][:len(w.Links[l])-1]
		out.Arrived, out.Arrival = pkt, true
		if w.memo != nil {
			w.memo.Handle(w, a, pkt, out)
		} else {
			w.RunHandler(a, pkt, out)
		}
	} else if k.fault != 0 {
		l := int(a.Peer)*P + int(a.Node)
		if a.Peer == a.Node || len(w.Links[l]) == 0 || !w.faultEnabled(k.fault, l) {
			return fmt.Errorf("%s: %w", k.Format(a), ErrNotEnabled)
		}
		w.applyFault(k.fault, a, l, out)
	} else {
		if a.Peer != 0 || !k.Enabled(n) || k.Quiet && !w.Quiet(a.Node) {
			return fmt.Errorf("%s: %w", k.Format(a), ErrNotEnabled)
		}
		if w.memo != nil {
			w.memo.Handle(w, a, Packet{}, out)
		} else {
			w.RunHandler(a, Packet{}, out)
		}
	}
	w.noteChange(int(a.Node))
	for _, t := range out.Sends {
		l := int(a.Node)*P + int(t.To)
		w.Links[l] = append(w.Links[l], t.Pkt)
		w.noteChange(P + l)
	}
	return nil
}

// Encode appends the canonical encoding of w to buf: for each node in
// order, the node, then the packets of each of its outgoing links in order
// of destination. Two worlds are the same state exactly when their
// encodings are equal, in every run and process. Each node's part (the
// node and its outgoing links) is a segment: compact stores share equal
// segments between states (see EncodeSegment).
func (w *World) Encode(buf []byte) []byte {
	for i := range w.Nodes {
		buf = w.EncodeSegment(buf, i)
	}
	return buf
}

// EncodeSegment appends node i's segment of the encoding: the node, then
// its outgoing links.
func (w *World) EncodeSegment(buf []byte, i int) []byte {
	return w.AppendOutLinks(w.Nodes[i].Encode(buf), i)
}

// AppendOutLinks appends the encoding of node i's outgoing links, in order
// of destination (the rest of its segment after the node).
func (w *World) AppendOutLinks(buf []byte, i int) []byte {
	P := w.Sys.P
	for j := 0; j < P; j++ {
		if i != j {
			buf = AppendPackets(buf, w.Links[i*P+j])
		}
	}
	if i == P-1 && w.Budget != nil {
		buf = append(buf, w.Budget...)
	}
	return buf
}

// Decode overwrites w with the state encoded in b, reusing w's storage.
func (s *System) Decode(b []byte, w *World) error {
	_, err := s.decode(b, w, nil, false)
	return err
}

// DecodeSpans is Decode that also appends to spans, for each node, the
// start and end offset in b of the node's own encoding (without its
// links).
func (s *System) DecodeSpans(b []byte, w *World, spans []int) ([]int, error) {
	return s.decode(b, w, spans, true)
}

func (s *System) decode(b []byte, w *World, spans []int, withSpans bool) ([]int, error) {
	if w.Sys != s || len(w.Nodes) != s.P {
		*w = *s.Initial()
	}
	d := &w.dec
	*d = Decoder{b: b}
	for j := 0; j < s.P && d.err == nil; j++ {
		st, end := s.decodeSegment(d, len(b), w, nil, j, nil)
		if withSpans {
			spans = append(spans, st, end)
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = errCorrupt
	}
	w.clearChanges()
	return spans, d.err
}

// decodeSegment reads segment j of an encoding of total bytes from d into
// w: with scratch nil, node j's own segment (its node, then its outgoing
// links); else, in the relative form (see DecodeRenamed), node 0's segment
// renamed by p, which maps node 0 to node j (nil: the identity, for j = 0
// only), decoded through scratch where the node cannot rename while it
// decodes. It returns the start and end offsets of the node's own
// encoding.
func (s *System) decodeSegment(d *Decoder, total int, w, scratch *World, j int, p *Perm) (int, int) {
	P := s.P
	st := total - len(d.b)
	if scratch == nil || p == nil {
		if scratch != nil && j != 0 {
			d.err = fmt.Errorf("model: DecodeRenamed: no renaming for node %d", j)
			return st, st
		}
		w.Nodes[j].Decode(d)
		end := total - len(d.b)
		for k := 0; k < P; k++ {
			if k != j {
				w.Links[j*P+k] = d.Packets(w.Links[j*P+k])
			}
		}
		s.decodeBudget(d, w, j)
		return st, end
	}
	sym := s.M.(Symmetric)
	if rc := CodesRenamed(w.Nodes[j]); rc != nil {
		// Renamed while decoded, straight into node j.
		rc.DecodeRenamed(d, 0, p)
		end := total - len(d.b)
		for k := 1; k < P; k++ {
			dst := &w.Links[j*P+int(p.Node[k])]
			*dst = d.Packets(*dst)
			*dst = RenamePackets(sym, (*dst)[:0], *dst, p) // in place
		}
		s.decodeBudget(d, w, j)
		return st, end
	}
	scratch.Nodes[0].Decode(d)
	end := total - len(d.b)
	for k := 1; k < P; k++ {
		scratch.Links[k] = d.Packets(scratch.Links[k])
	}
	w.Nodes[j].(Renamable).RenameFrom(scratch.Nodes[0], p)
	for k := 1; k < P; k++ {
		dst := &w.Links[j*P+int(p.Node[k])]
		*dst = RenamePackets(sym, (*dst)[:0], scratch.Links[k], p)
	}
	s.decodeBudget(d, w, j)
	return st, end
}

// decodeBudget reads the fault budgets at the end of the last node's
// segment (see AppendOutLinks).
func (s *System) decodeBudget(d *Decoder, w *World, j int) {
	if j != s.P-1 || s.faults == nil {
		return
	}
	w.Budget = w.Budget[:0]
	for range s.faults.faults {
		w.Budget = append(w.Budget, d.Byte())
	}
}

// DecodeRenamed overwrites w with the state encoded in b in the relative
// form a symmetry reduction may store (see properties.Checker): b is P
// segments, each written as node 0's segment of some renaming of the
// state. Segment j is decoded into node 0 of scratch, with node 0's
// outgoing links, and renamed by perm(j), which maps node 0 to node j (nil
// for j = 0, the identity: segment 0 is decoded in place). It appends to spans, for each segment, the
// start and end offset in b of its node's own encoding (as DecodeSpans).
// The machine must be Symmetric and its nodes Renamable.
func (s *System) DecodeRenamed(b []byte, w, scratch *World, spans []int, perm func(j int) *Perm) ([]int, error) {
	s.prepare(w, scratch)
	d := &w.dec
	*d = Decoder{b: b}
	for j := 0; j < s.P && d.err == nil; j++ {
		st, end := s.decodeSegment(d, len(b), w, scratch, j, perm(j))
		spans = append(spans, st, end)
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = errCorrupt
	}
	w.clearChanges()
	return spans, d.err
}

// prepare makes w and scratch (when not nil) worlds of s.
func (s *System) prepare(w, scratch *World) {
	if w.Sys != s || len(w.Nodes) != s.P {
		*w = *s.Initial()
	}
	if scratch != nil && (scratch.Sys != s || len(scratch.Nodes) != s.P) {
		*scratch = *s.Initial()
	}
}

// SegmentCache remembers decoded segments by the ids a store gave them
// (equal ids, equal bytes), for DecodeLeaves.
type SegmentCache struct {
	owner uint64 // the store the ids are of
	segs  map[uint64]*decodedSegment
	max   int
	// hot: a direct-mapped cache of segs' entries in front of it.
	hot []segHit
}

type segHit struct {
	key uint64
	ds  *decodedSegment
}

// segHotBits is log2 of the number of entries of SegmentCache.hot.
const segHotBits = 12

type decodedSegment struct {
	node    Node
	links   [][]Packet // node j's outgoing links, by destination (its own empty)
	nodeLen int        // bytes of the node's own encoding
	segLen  int        // bytes of the segment
	budget  []uint8    // the last segment's: the fault budgets left
}

// NewSegmentCache returns a cache of at most max decoded segments (it is
// emptied when full).
func NewSegmentCache(max int) *SegmentCache { return &SegmentCache{max: max} }

// DecodeLeaves is DecodeRenamed (with scratch and perm, the relative form)
// or DecodeSpans (scratch and perm nil) for an encoding b whose segments a
// store has interned: segment j is the store's ids[j] and ends at ends[j]
// in b. A segment decoded before at the same position, with ids of the
// same store (owner, a number no other store has), is copied from c
// instead of decoded: most states share their segments with many others
// (a few thousand segments make up the 808,510 states of multicasts on
// binary trees at P=4).
func (s *System) DecodeLeaves(b []byte, w, scratch *World, spans []int, perm func(j int) *Perm, c *SegmentCache, owner uint64, ids []uint32, ends []int) ([]int, error) {
	P := s.P
	s.prepare(w, scratch)
	if len(ids) != P || len(ends) != P || ends[P-1] != len(b) {
		return spans, errCorrupt
	}
	if c.owner != owner || c.segs == nil || len(c.segs) >= c.max {
		c.owner, c.segs = owner, make(map[uint64]*decodedSegment)
		if c.hot == nil {
			c.hot = make([]segHit, 1<<segHotBits)
		} else {
			clear(c.hot)
		}
	}
	// held: the segments w holds from the last DecodeLeaves with c, if
	// nothing changed w since (consecutive states share many).
	held := w.held
	if w.heldBy != c || len(held) != P {
		held = append(held[:0], make([]*decodedSegment, P)...)
	}
	w.held = nil // until w is whole again
	d := &w.dec
	st := 0
	for j := 0; j < P; j++ {
		key := uint64(ids[j])<<16 | uint64(j)
		if ends[j] < st {
			return spans, errCorrupt
		}
		hot := &c.hot[(key*0x9e3779b97f4a7c15)>>(64-segHotBits)]
		ds := hot.ds
		if ds == nil || hot.key != key {
			ds = c.segs[key]
			if ds != nil {
				*hot = segHit{key, ds}
			}
		}
		if ds == nil || ds.segLen != ends[j]-st {
			*d = Decoder{b: b[st:ends[j]]}
			var p *Perm
			if perm != nil {
				p = perm(j)
			}
			_, end := s.decodeSegment(d, ends[j], w, scratch, j, p)
			if d.err == nil && len(d.b) != 0 {
				d.err = errCorrupt
			}
			if d.err != nil {
				return spans, d.err
			}
			ds = &decodedSegment{node: s.M.NewNode(NodeID(j)), links: make([][]Packet, P), nodeLen: end - st, segLen: ends[j] - st}
			if j == P-1 {
				ds.budget = append([]uint8(nil), w.Budget...)
			}
			ds.node.CopyFrom(w.Nodes[j])
			for k := 0; k < P; k++ {
				if k != j {
					ds.links[k] = append([]Packet(nil), w.Links[j*P+k]...)
				}
			}
			c.segs[key] = ds
			*hot = segHit{key, ds}
		} else if held[j] != ds {
			w.Nodes[j].CopyFrom(ds.node)
			for k := 0; k < P; k++ {
				if k != j {
					w.Links[j*P+k] = append(w.Links[j*P+k][:0], ds.links[k]...)
				}
			}
			if j == P-1 && ds.budget != nil {
				w.Budget = append(w.Budget[:0], ds.budget...)
			}
		}
		held[j] = ds
		spans = append(spans, st, st+ds.nodeLen)
		st = ends[j]
	}
	w.clearChanges()
	w.held, w.heldBy = held, c
	return spans, nil
}

// CopyFrom makes w a deep copy of src, reusing w's storage.
func (w *World) CopyFrom(src *World) {
	if w.Sys != src.Sys || len(w.Nodes) != len(src.Nodes) {
		*w = *src.Sys.Initial()
	}
	for i, n := range src.Nodes {
		w.Nodes[i].CopyFrom(n)
	}
	for k := range src.Links {
		w.Links[k] = append(w.Links[k][:0], src.Links[k]...)
	}
	if src.Budget != nil {
		w.Budget = append(w.Budget[:0], src.Budget...)
	}
	w.clearChanges()
}

// Clone returns a deep copy of w.
func (w *World) Clone() *World {
	c := &World{}
	c.CopyFrom(w)
	return c
}

// Diff lists, one short line each, what differs between a and b: node by
// node as the protocol describes it, then the links.
func Diff(a, b *World) []string {
	var out []string
	ch := func(what, x, y string) {
		if x != y {
			out = append(out, fmt.Sprintf("%s: %s -> %s", what, x, y))
		}
	}
	for n := range a.Nodes {
		b.Nodes[n].Diff(a.Nodes[n], ch)
	}
	P := a.Sys.P
	for i := 0; i < P; i++ {
		for j := 0; j < P; j++ {
			if i != j {
				ch(fmt.Sprintf("link %d->%d", i, j), PacketList(a.Links[i*P+j]), PacketList(b.Links[i*P+j]))
			}
		}
	}
	ch("faults left", a.budgetString(), b.budgetString())
	return out
}

// Format renders the whole state: each node's lines, then every non-empty
// link.
func (w *World) Format() string {
	var b strings.Builder
	for _, n := range w.Nodes {
		for _, l := range n.Describe() {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	P := w.Sys.P
	for i := 0; i < P; i++ {
		for j := 0; j < P; j++ {
			if l := w.Links[i*P+j]; i != j && len(l) > 0 {
				fmt.Fprintf(&b, "link %d->%d: %s\n", i, j, PacketList(l))
			}
		}
	}
	if w.Budget != nil {
		fmt.Fprintf(&b, "faults left: %s\n", w.budgetString())
	}
	return b.String()
}

// Quiet reports whether no packet is in flight on a link from or to node
// n (see ActionKind.Quiet), nor, if the machine is a Holder, held by
// another node that has not yet handled it.
func (w *World) Quiet(n NodeID) bool {
	P := w.Sys.P
	for i := 0; i < P; i++ {
		if len(w.Links[i*P+int(n)]) > 0 || len(w.Links[int(n)*P+i]) > 0 {
			return false
		}
	}
	if h, ok := w.Sys.M.(Holder); ok {
		for i := 0; i < P; i++ {
			if i != int(n) && h.Holds(w.Nodes[i], n) {
				return false
			}
		}
	}
	return true
}

// Holder is implemented by machines whose nodes keep packets that have
// left the link but are still under way: received into a buffer that
// the protocol has not yet handled (a host that handles its receive
// buffers when it polls). A packet node x holds that came from node n
// keeps n from being Quiet, as a packet on a link does. World.Quiet
// consults it, and so does the live runtime's quiet check (model/live).
type Holder interface {
	// Holds reports whether node x holds a packet from node from that
	// it has not yet handled.
	Holds(x Node, from NodeID) bool
}

// LinksEmpty reports whether no packet is in flight.
func (w *World) LinksEmpty() bool {
	for _, l := range w.Links {
		if len(l) > 0 {
			return false
		}
	}
	return true
}

// InFlight counts the packets on all links.
func (w *World) InFlight() int {
	n := 0
	for _, l := range w.Links {
		n += len(l)
	}
	return n
}

// budgetString renders the fault budgets left ("loss:1,dup:0"; "" without
// faults).
func (w *World) budgetString() string {
	if w.Sys.faults == nil {
		return ""
	}
	f := w.Sys.faults.faults.Clone()
	for i := range f {
		f[i].N = int(w.Budget[i])
	}
	return f.String()
}
