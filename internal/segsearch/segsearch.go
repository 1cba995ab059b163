// Package segsearch is a breadth-first search whose states are tuples of
// segment ids (check --engine segments): see the comment below and
// docs/checking.md, "A search over segment ids".
package segsearch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"runtime/metrics"
	"slices"
	"time"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/properties"
)

// The search's states are tuples of segment ids (a node with its
// outgoing links, in the relative naming that maps the node to node 0),
// and a step is a table look-up on what it reads: a local step of node
// n by (n's id, kind), giving n's new id; a delivery from i to n by (n's
// id, the packet, the offset of i from n, kind), giving n's new id, and
// by (i's id, the link) the id of i once the packet has left; a miss
// runs the world (model.World.Apply, then the ample steps fused as the
// checker fuses them) and remembers the result. The canonical form is the least
// rotation of the tuple (every segment is written relative to its own
// node, so a rotation of the nodes only rotates the tuple), the visited
// set a table of packed tuples.
//
// The properties are checked in the same terms: a node-local invariant
// (NodeLocal, with Local) and a conserved sum's bounds once per segment
// id, when the id is made; a conserved sum as the sum of its terms kept
// per id and position (vectors of terms interned, added pair by pair
// through a memo); the step rules (Step) and step statistics on a miss,
// remembered with the step; the other invariants (State) and state
// statistics on every new state, read from a world assembled from nodes
// and links kept decoded per id and position (no decoding), except an
// invariant whose Vacuous holds at every node's id; the end-state
// conditions (Final, liveness on end states) where nothing is enabled, on
// the same world. Every state stored keeps its parent and the action from
// it, and a counterexample is rebuilt in real naming.
//
// Where the configuration's symmetries are not the P rotations, or the
// reduction is off, it uses the absolute form (abs): a segment in real
// naming at its position, the tuple itself as the canonical form, every
// state stored. Reachability goals (Sometimes) are evaluated on new
// states until reached, and noted in the checker (SetReached).
//
// What it does not take (Off says which): more than 8 nodes (ids packed
// in one word), kinds that read the links (Quiet) or fault kinds,
// liveness on the state graph. It has no stubborn or sleep sets: it
// explores the space of check --por off --sleep-sets off, on one worker.

// segSearch is the search for one checker.
type segSearch struct {
	ck    *properties.Checker
	sys   *model.System
	P     int
	kinds []*model.ActionKind
	rot   []*model.Perm // rot[r] maps node i to node i+r (nil for r=0)
	// abs: the absolute form (no symmetry reduction: an id is a segment
	// at one position, in real naming; the canonical form is the tuple),
	// where the configuration's symmetries are not the P rotations or
	// the reduction is off; rots is the number of rotations the canonical
	// form tries (P, or 1); absNote says why a symmetry went unused.
	abs     bool
	rots    int
	absNote string
	// The interned segments, by id: its encoding in relative naming
	// (ids), its encoding at each position in real naming (real), and
	// what the search reads of it: its enabled local kinds, its nonempty
	// outgoing links by offset.
	ids        map[string]uint32
	at         []map[string]uint32 // at[p]: ids by their encoding at position p
	real       [][][]byte
	local, out []uint64
	// The memo of steps: the new ids, and the step rule that failed.
	// A local step's key is its node's id and kind; a delivery's (with
	// bit 62 set) the receiver's id, the packet (an id in pkts, in the
	// receiver's naming), the sender's offset and the kind, and its
	// value the receiver's new id: by the model's contract a handler and
	// the step rules and statistics (model.Property.Step) read only the
	// receiving node, the packet and the action, and the ample steps
	// fused after it are the receiver's (the sender's node is unchanged,
	// and no stored state has an ample step enabled). The sender's new id
	// (its link's head popped) is popped[id*P+e], e the receiver's offset
	// from it (noID: not yet known), the packet head[id*P+e]. verify
	// (tests) runs every delivery whole too and compares.
	memo         segMemo
	pkts         map[model.Packet]uint32
	head, popped []uint32
	verify       bool
	extras       []segExtra
	miss         int64
	// Checks (check): per id, the properties (by index) whose node-local
	// invariant or bounds fail at it (bad); per id and position, the
	// node and its outgoing links decoded (vnode, vlinks) and its terms
	// of the conserved sums, one property's after another's, as a vector
	// id (tv[id*P+p]); the conserved properties (cons), the invariants
	// checked on every new state (whole), the initial state's sums
	// (sums0). Vectors of terms are interned (vecs, vec): a state's sums
	// are the vector id its positions' ids add up to, pair by pair
	// through the memo vsum, and vbad[v] (computed once, vbadOK) says
	// which conserved properties vector v breaks.
	check       bool
	goals       []int // the reachability goals (Sometimes) not reached yet
	bad         []uint64
	vac         []uint64 // per id, the properties whose Vacuous holds at it
	vnode       [][]model.Node
	vlinks      [][][]model.Packet // [id][p*P+j]: the link from position p to j
	tv          []uint32
	vecs        map[string]uint32
	vec         [][]int64
	vsum        segMemo
	vbad        []uint64
	vbadOK      []bool
	cons, whole []int
	wholeMask   uint64 // whole, as bits
	nsums       int
	sums0       []int64
	view        model.World
	// Statistics (with check): the protocol's (Def.Stats) that apply,
	// gathered per step (Stat.Step, remembered with the step; acc is a
	// miss's) or as maxima over the states (Stat.State); totals by
	// Def.Stats index, handed to the checker at the end (SetCounts).
	statStep, statState []int
	acc, totals         []int64
	// The states stored, their parents and the actions to them (search),
	// and where the violation was found: the state (vAt), after the
	// action vCode from it when that is set (a step rule).
	keys        []uint64
	parent, via []uint32
	vAt         int
	vCode       uint32
	viewIDs     [segMaxNodes]uint32 // the tuple view holds, if viewOK
	viewOK      bool
	viol        error // the violation found
	// Scratch.
	w, rw, tmp model.World
	box        model.Outbox
	buf, vbuf  []byte
	err        error
	// The limit reached (reason), whether the last level is partial, the
	// heap's peak and the memory of the visited set and parent records.
	reason     string
	partial    bool
	overflow   bool   // an id of maxIDs or more was made
	lane       uint   // the bits of an id in a packed tuple: 64/P, at most 16
	maxIDs     uint32 // 2^lane-1: ids fit lane bits, and no packed tuple is all ones (the visited set stores key+1)
	peak       uint64
	sample     []metrics.Sample
	storeBytes int64
}

// segMaxNodes bounds P: P ids are packed in one word, 16 bits each up
// to 4 nodes, 64/P bits above (12 at P=5: 4,095 ids; 8 at P=8: 255).
const segMaxNodes = 8

// fuseLimit bounds a chain of fused ample steps (the checker's bound).
const fuseLimit = 1 << 16

// noID marks a popped id not yet known.
const noID = ^uint32(0)

func newSegSearch(ck *properties.Checker, check bool) (*segSearch, error) {
	if ck.Stubborn {
		return nil, errors.New("it has no stubborn sets (check's --por off)")
	}
	P := ck.Sys.P
	if P > segMaxNodes {
		return nil, fmt.Errorf("it takes at most %d nodes, not %d", segMaxNodes, P)
	}
	s := &segSearch{ck: ck, sys: ck.Sys, P: P, kinds: ck.Sys.Kinds, rot: make([]*model.Perm, P),
		ids: map[string]uint32{}, pkts: map[model.Packet]uint32{}, vecs: map[string]uint32{}, check: check}
	s.lane = min(16, 64/uint(P))
	s.maxIDs = 1<<s.lane - 1
	// The relative form where the configuration's symmetries are the P
	// rotations and the reduction is on; else the absolute form.
	s.abs, s.rots = true, 1
	if syms := ck.Symmetries(); ck.Symmetry && len(syms) == P-1 {
		s.abs, s.rots = false, P
		for i := range syms {
			r := int(syms[i].Node[0])
			for j := range P {
				if int(syms[i].Node[j]) != (j+r)%P {
					s.abs, s.rots = true, 1
				}
			}
			s.rot[r] = &syms[i]
		}
	}
	if s.abs && ck.Symmetry {
		s.absNote = fmt.Sprintf("its %d renamings of the nodes are not the %d rotations", len(ck.Symmetries())+1, P)
	}
	if len(s.kinds) > 64 {
		return nil, fmt.Errorf("%d action kinds: at most 64 taken", len(s.kinds))
	}
	for _, k := range s.kinds {
		if k.Quiet {
			return nil, fmt.Errorf("kind %s reads the links (Quiet): not taken", k.Name)
		}
		if k != model.Deliver && (k.OnLink() || k.Enabled == nil) {
			return nil, fmt.Errorf("kind %s is a fault on a link: not taken", k.Name)
		}
	}
	if ck.ReducesCycles() {
		// The checker then checks every fused step at run time
		// (properties' checker_reduction.go); this search does not.
		return nil, errors.New("the protocol does not declare this variant's runs finite, and its ample steps are then checked at run time by the checker only: not taken")
	}
	for i := range ck.Props {
		p := &ck.Props[i]
		if p.Sometimes != nil {
			s.goals = append(s.goals, i) // (and it may be an invariant too)
		}
		switch {
		case p.Live != model.NotLive && !ck.OnEndStates(p):
			return nil, fmt.Errorf("property %s is liveness on the state graph: not taken", p.Name)
		case i >= 64:
			return nil, errors.New("more than 64 properties: not taken")
		case p.State == nil:
		case p.Conserved != nil:
			s.cons = append(s.cons, i)
			s.nsums += p.Conserved.Sums(ck.Sys)
		case !(p.NodeLocal && p.Local != nil):
			s.whole = append(s.whole, i)
			s.wholeMask |= 1 << i
		}
	}
	s.w, s.rw, s.tmp, s.view = *ck.Sys.Initial(), *ck.Sys.Initial(), *ck.Sys.Initial(), *ck.Sys.Initial()
	for range P {
		s.at = append(s.at, map[string]uint32{})
	}
	if ck.Def != nil {
		for i, st := range ck.Def.Stats {
			switch {
			case st.Applies != nil && !st.Applies(ck.Sys.M):
			case st.Step != nil:
				s.statStep = append(s.statStep, i)
			case st.State != nil:
				s.statState = append(s.statState, i)
			}
		}
		s.acc, s.totals = make([]int64, len(ck.Def.Stats)), make([]int64, len(ck.Def.Stats))
	}
	return s, nil
}

// segStep is a remembered step: the node's new id (the receiver's for a
// delivery) and, where the step broke a step rule or adds to the step
// statistics (with the ample steps fused after it), extra-1 indexes
// segSearch.extras (the memo's values stay 8 bytes: most steps have
// neither).
type segStep struct {
	id    uint32
	extra uint32
}

// segExtra is a step's broken rule, if any, and what it adds to the step
// statistics (nil: nothing).
type segExtra struct {
	err   error
	stats []int64
}

// rename sets dst to src with node i renamed to i+r.
func (s *segSearch) rename(dst, src *model.World, r int) {
	if r == 0 {
		dst.CopyFrom(src)
		return
	}
	dst.RenameFrom(src, s.rot[r])
}

// intern returns the id of node i's segment in w (relative naming).
func (s *segSearch) intern(w *model.World, i int) uint32 {
	P := s.P
	// Known segments by their encoding at their position, in real naming
	// (no renaming).
	s.buf = w.EncodeSegment(s.buf[:0], i)
	if id, ok := s.at[i][string(s.buf)]; ok {
		return id
	}
	if !s.abs {
		s.rename(&s.rw, w, (P-i)%P)
		s.buf = s.rw.EncodeSegment(s.buf[:0], 0)
		if id, ok := s.ids[string(s.buf)]; ok {
			return id // (not seen at this position before)
		}
	}
	id := uint32(len(s.real))
	if id >= s.maxIDs && !s.overflow {
		// The search stops at the end of this expansion, incomplete: a
		// 17-bit id does not fit the packed tuples.
		s.overflow = true
		s.reason = fmt.Sprintf("more than %d distinct segments (the search over segment ids packs %d ids of %d bits in a word; the checker has no such bound)", s.maxIDs, s.P, s.lane)
	}
	reals := make([][]byte, P)
	s.head = append(s.head, make([]uint32, P)...)
	if s.abs {
		// Only at its position (the encoding there is s.buf).
		reals[i] = slices.Clone(s.buf)
		s.at[i][string(reals[i])] = id
		for e := 1; e < P; e++ {
			// The head of the link to offset e, in real naming.
			if l := w.Links[i*P+(i+e)%P]; len(l) > 0 {
				s.head[int(id)*P+e] = s.packetID(l[0])
			}
		}
	} else {
		s.ids[string(s.buf)] = id
		for p := range P {
			s.rename(&s.tmp, w, ((p-i)%P+P)%P)
			reals[p] = s.tmp.EncodeSegment(nil, p)
			s.at[p][string(reals[p])] = id
		}
		for p := 1; p < P; p++ {
			// As the sender at offset p from a receiver renamed node 0:
			// the head of its link to offset P-p, in the receiver's
			// naming.
			s.rename(&s.tmp, w, ((p-i)%P+P)%P)
			if l := s.tmp.Links[p*P]; len(l) > 0 {
				s.head[int(id)*P+P-p] = s.packetID(l[0])
			}
		}
	}
	s.real = append(s.real, reals)
	for range P {
		s.popped = append(s.popped, noID)
	}
	var loc, out uint64
	for ki, k := range s.kinds {
		if k != model.Deliver && k.Enabled(w.Nodes[i]) {
			loc |= 1 << ki
		}
	}
	for d := 1; d < P; d++ {
		if len(w.Links[i*P+(i+d)%P]) > 0 {
			out |= 1 << d
		}
	}
	s.local, s.out = append(s.local, loc), append(s.out, out)
	if s.check {
		s.internChecks(w, i, id)
	}
	return id
}

// packetID returns the id of packet pk.
func (s *segSearch) packetID(pk model.Packet) uint32 {
	id, ok := s.pkts[pk]
	if !ok {
		id = uint32(len(s.pkts))
		s.pkts[pk] = id
	}
	return id
}

// internChecks computes what the checks keep of new segment id, node i
// of w (in the absolute form, at its position only).
func (s *segSearch) internChecks(w *model.World, i int, id uint32) {
	P := s.P
	var bad uint64
	for k := range s.ck.Props {
		p := &s.ck.Props[k]
		switch {
		case p.State == nil:
		case p.Conserved != nil:
			if p.Conserved.Bounds(w, i) != nil {
				bad |= 1 << k
			}
		case p.NodeLocal && p.Local != nil:
			if p.Local(w, i) != nil {
				bad |= 1 << k
			}
		}
	}
	s.bad = append(s.bad, bad)
	var vac uint64
	for _, k := range s.whole {
		if v := s.ck.Props[k].Vacuous; v != nil && v(w, i) {
			vac |= 1 << k
		}
	}
	s.vac = append(s.vac, vac)
	nodes, links := make([]model.Node, P), make([][]model.Packet, P*P)
	for p := range P {
		if s.abs && p != i {
			s.tv = append(s.tv, 0) // (never read)
			continue
		}
		s.rename(&s.tmp, w, ((p-i)%P+P)%P)
		nodes[p] = s.sys.M.NewNode(model.NodeID(p))
		nodes[p].CopyFrom(s.tmp.Nodes[p])
		for j := range P {
			links[p*P+j] = slices.Clone(s.tmp.Links[p*P+j])
		}
		v := make([]int64, s.nsums)
		base := 0
		add := func(q int, x int64) { v[base+q] += x }
		for _, k := range s.cons {
			cs := s.ck.Props[k].Conserved
			cs.Node(&s.tmp, p, add)
			for j := range P {
				for _, pk := range s.tmp.Links[p*P+j] {
					cs.Packet(&s.tmp, model.NodeID(p), model.NodeID(j), pk, add)
				}
			}
			base += cs.Sums(s.sys)
		}
		s.tv = append(s.tv, s.internVec(v))
	}
	s.vnode, s.vlinks = append(s.vnode, nodes), append(s.vlinks, links)
}

// internVec returns the id of a vector of terms of the conserved sums.
func (s *segSearch) internVec(v []int64) uint32 {
	s.vbuf = s.vbuf[:0]
	for _, x := range v {
		s.vbuf = binary.AppendVarint(s.vbuf, x)
	}
	if id, ok := s.vecs[string(s.vbuf)]; ok {
		return id
	}
	id := uint32(len(s.vec))
	s.vecs[string(s.vbuf)] = id
	s.vec = append(s.vec, slices.Clone(v))
	s.vbad, s.vbadOK = append(s.vbad, 0), append(s.vbadOK, false)
	return id
}

// sumBad returns the conserved properties that the sums of state t
// break.
func (s *segSearch) sumBad(t *[segMaxNodes]uint32) uint64 {
	P := s.P
	v := s.tv[int(t[0])*P]
	for p := 1; p < P; p++ {
		b := s.tv[int(t[p])*P+p]
		key := uint64(v)<<32 | uint64(b)
		r, ok := s.vsum.get(key)
		if !ok {
			sum := slices.Clone(s.vec[v])
			for q, x := range s.vec[b] {
				sum[q] += x
			}
			r.id = s.internVec(sum)
			s.vsum.put(key, r)
		}
		v = r.id
	}
	if !s.vbadOK[v] {
		var bad uint64
		base := 0
		for _, k := range s.cons {
			n := s.ck.Props[k].Conserved.Sums(s.sys)
			if !slices.Equal(s.vec[v][base:base+n], s.sums0[base:base+n]) {
				bad |= 1 << k
			}
			base += n
		}
		s.vbad[v], s.vbadOK[v] = bad, true
	}
	return s.vbad[v]
}

// assemble makes s.view the state of tuple t from the decoded nodes and
// links (shared, read only).
func (s *segSearch) assemble(t *[segMaxNodes]uint32) *model.World {
	P := s.P
	for p := range P {
		if s.viewOK && s.viewIDs[p] == t[p] {
			continue // as assembled last time
		}
		s.view.Nodes[p] = s.vnode[t[p]][p]
		for j := range P {
			s.view.Links[p*P+j] = s.vlinks[t[p]][p*P+j]
		}
	}
	s.viewIDs, s.viewOK = *t, true
	return &s.view
}

// checkState checks the invariants of new state t; a violation is kept
// in s.viol.
func (s *segSearch) checkState(t *[segMaxNodes]uint32) {
	var bad uint64
	vac := ^uint64(0) // the properties vacuous at every node
	for p := range s.P {
		bad |= s.bad[t[p]]
		vac &= s.vac[t[p]]
	}
	whole := s.wholeMask &^ vac
	if s.nsums > 0 {
		bad |= s.sumBad(t)
	}
	if len(s.goals) > 0 {
		s.reach(t)
	}
	if bad|whole == 0 {
		return
	}
	// In the properties' order, as the checker and a replay check them:
	// the first that fails is the one reported.
	w := s.assemble(t)
	for m := bad | whole; m != 0; m &= m - 1 {
		k := bits.TrailingZeros64(m)
		p := &s.ck.Props[k]
		err := p.State(w)
		if err == nil && bad&(1<<k) != 0 {
			if s.err == nil {
				s.err = fmt.Errorf("property %s: its declared form (NodeLocal, Conserved) fails where State holds", p.Name)
			}
			return
		}
		if err != nil {
			s.viol = &properties.Violation{Property: p.Name, Message: err.Error()}
			return
		}
	}
}

// reach notes the goals that state t reaches (in the checker, which
// reports those never reached once the search is complete).
func (s *segSearch) reach(t *[segMaxNodes]uint32) {
	w := s.assemble(t)
	for j := 0; j < len(s.goals); j++ {
		p := &s.ck.Props[s.goals[j]]
		if p.Sometimes(w) {
			if err := s.ck.SetReached([]string{p.Name}); err != nil && s.err == nil {
				s.err = err
			}
			s.goals = slices.Delete(s.goals, j, j+1)
			j--
		}
	}
}

// rules checks the step rules of a, which led to s.w with outbox s.box,
// and adds its step statistics to s.acc (as the checker counts them:
// before the rules, for every step, fused ones too).
func (s *segSearch) rules(a model.Action) error {
	if !s.check {
		return nil
	}
	for _, i := range s.statStep {
		s.acc[i] += s.ck.Def.Stats[i].Step(&s.w, a, &s.box)
	}
	for k := range s.ck.Props {
		p := &s.ck.Props[k]
		if p.Step != nil {
			if err := p.Step(&s.w, a, &s.box); err != nil {
				return &properties.Violation{Property: p.Name, Message: err.Error()}
			}
		}
	}
	return nil
}

// sameStep says whether two answers of a step are the same: new ids,
// whether a rule is broken, and statistics.
func (s *segSearch) sameStep(x, y segStep) bool {
	if x.id != y.id {
		return false
	}
	var ex, ey segExtra
	if x.extra != 0 {
		ex = s.extras[x.extra-1]
	}
	if y.extra != 0 {
		ey = s.extras[y.extra-1]
	}
	// (Not the rule's message: it may name the nodes of another rotation.)
	return (ex.err == nil) == (ey.err == nil) && slices.Equal(ex.stats, ey.stats)
}

// extraOf returns a miss's segStep.extra: 0 when the step broke no rule
// (err nil) and adds nothing to the statistics (s.acc all zero), else
// the index plus one of a new entry of s.extras.
func (s *segSearch) extraOf(err error) uint32 {
	var stats []int64
	for _, v := range s.acc {
		if v != 0 {
			stats = slices.Clone(s.acc)
			break
		}
	}
	if err == nil && stats == nil {
		return 0
	}
	s.extras = append(s.extras, segExtra{err, stats})
	return uint32(len(s.extras))
}

// stateStats raises the state statistics' maxima to their values in
// state t.
func (s *segSearch) stateStats(t *[segMaxNodes]uint32) {
	if len(s.statState) == 0 {
		return
	}
	w := s.assemble(t)
	for _, i := range s.statState {
		s.totals[i] = max(s.totals[i], s.ck.Def.Stats[i].State(w))
	}
}

// decode sets s.w to the state of tuple t.
func (s *segSearch) decode(t *[segMaxNodes]uint32) {
	if s.check {
		// From the nodes and links kept decoded: a copy, not a decode.
		P := s.P
		for p := range P {
			s.w.Nodes[p].CopyFrom(s.vnode[t[p]][p])
			for j := range P {
				s.w.Links[p*P+j] = append(s.w.Links[p*P+j][:0], s.vlinks[t[p]][p*P+j]...)
			}
		}
		s.w.ClearChanges()
		return
	}
	s.buf = s.buf[:0]
	for p := range s.P {
		s.buf = append(s.buf, s.real[t[p]][p]...)
	}
	if err := s.sys.Decode(s.buf, &s.w); err != nil && s.err == nil {
		s.err = err
	}
}

// apply performs a on s.w, then fuse; it returns the step rule the steps
// broke, if any (their statistics are in s.acc).
func (s *segSearch) apply(a model.Action) error {
	clear(s.acc)
	if err := s.w.Apply(a, &s.box); err != nil && s.err == nil {
		s.err = err
	}
	if err := s.rules(a); err != nil {
		return err
	}
	return s.fuse()
}

// fuse performs the ample steps enabled in s.w as the checker fuses them
// (the first node's first enabled ample kind, again and again), where the
// checker reduces.
func (s *segSearch) fuse() error {
	if !s.ck.Reduce {
		return nil
	}
	steps := 0
	for n := 0; n < s.P; n++ {
		for ki, k := range s.kinds {
			if k != model.Deliver && k.Ample && k.Enabled(s.w.Nodes[n]) {
				if steps++; steps > fuseLimit {
					if s.err == nil {
						s.err = fmt.Errorf("internal error: more than %d ample steps fused in a row", fuseLimit)
					}
					return nil
				}
				a := model.Action{Kind: uint8(ki), Node: model.NodeID(n)}
				if err := s.w.Apply(a, &s.box); err != nil {
					if s.err == nil {
						s.err = err
					}
					return nil
				}
				if err := s.rules(a); err != nil {
					return err
				}
				n = -1 // from the first node again
				break
			}
		}
	}
	return nil
}

// pack returns the least rotation of tuple t, packed.
func (s *segSearch) pack(t *[segMaxNodes]uint32) uint64 {
	var k uint64
	b := s.lane
	for p := range s.P {
		k = k<<b | uint64(t[p])
	}
	best, w := k, b*uint(s.P)
	for r := uint(1); r < uint(s.rots); r++ {
		x := bits.RotateLeft64(k, int(b*r))
		if w < 64 {
			x = (k<<(b*r) | k>>(w-b*r)) & (1<<w - 1)
		}
		best = min(best, x)
	}
	return best
}

func (s *segSearch) unpack(k uint64) (t [segMaxNodes]uint32) {
	m := uint64(1)<<s.lane - 1
	for p := s.P - 1; p >= 0; p-- {
		t[p], k = uint32(k&m), k>>s.lane
	}
	return t
}

// search explores the state space and returns its states, transitions
// and level sizes; on a violation, the violation (its counterexample is
// then s.trace()).
func (s *segSearch) search(opt explore.Options) (states, trans int64, levels []int64, err error) {
	P := s.P
	s.reason, s.partial = "", false
	start, lastProgress := time.Now(), time.Now()
	every := opt.ProgressEvery
	if every <= 0 {
		every = 3 * time.Second
	}
	s.w.CopyFrom(s.sys.Initial())
	s.sums0 = s.sums0[:0]
	for _, k := range s.cons {
		// The conserved sums' values, in the initial state.
		s.sums0 = properties.ConservedSums(&s.ck.Props[k], &s.w, s.sums0)
	}
	clear(s.vbadOK) // against these sums
	clear(s.acc)
	clear(s.totals)
	// Every state stored is fused: none has an ample step enabled.
	initErr := s.fuse()
	for i, v := range s.acc {
		s.totals[i] += v // the statistics of the initial fusion
	}
	var t [segMaxNodes]uint32
	for i := range P {
		t[i] = s.intern(&s.w, i)
	}
	var vis segSet
	defer func() {
		s.storeBytes = int64(len(vis.tab))*8 + int64(cap(s.keys))*8 + int64(cap(s.parent)+cap(s.via))*4
	}()
	k0 := s.pack(&t)
	vis.add(k0)
	// Every state stored, in order, with its parent's index and the
	// action from it (in the parent's naming): the levels are ranges.
	s.keys, s.parent, s.via = append(s.keys[:0], k0), append(s.parent[:0], 0), append(s.via[:0], 0)
	s.vAt, s.vCode = -1, 0
	if s.check {
		s.stateStats(&t)
		if s.viol = initErr; s.viol == nil {
			s.checkState(&t)
		}
		if s.viol != nil {
			s.vAt = 0
		}
	}
	if s.check {
		defer func() { s.ck.SetCounts(s.totals) }()
	}
	// A state's successors are collected, then looked up together: their
	// probes of the visited set, independent loads, overlap.
	type succ struct {
		k    uint64
		code uint32
	}
	var succs []succ
	var from int // the state being expanded
	visit := func(t *[segMaxNodes]uint32, a model.Action, r segStep) {
		trans++
		if r.extra != 0 {
			x := &s.extras[r.extra-1]
			if x.err != nil && s.viol == nil {
				s.viol, s.vAt, s.vCode = x.err, from, a.Code()|1<<31
			}
			for i, v := range x.stats {
				s.totals[i] += v
			}
		}
		succs = append(succs, succ{k: s.pack(t), code: a.Code()})
	}
	store := func() {
		var sink uint64
		for _, x := range succs {
			sink += vis.touch(x.k)
		}
		vis.sink += sink
		for _, x := range succs {
			if opt.MaxStates > 0 && int64(vis.n) >= opt.MaxStates && s.reason == "" && !vis.has(x.k) {
				s.reason = fmt.Sprintf("state limit %d reached", opt.MaxStates)
			}
			if s.reason != "" {
				break
			}
			if vis.add(x.k) {
				s.keys, s.parent, s.via = append(s.keys, x.k), append(s.parent, uint32(from)), append(s.via, x.code)
				if s.check && s.viol == nil {
					t := s.unpack(x.k)
					s.stateStats(&t)
					if s.checkState(&t); s.viol != nil {
						s.vAt = len(s.keys) - 1
					}
				}
			}
		}
		succs = succs[:0]
	}
	for lo, hi := 0, 1; lo < hi; lo, hi = hi, len(s.keys) {
		levels = append(levels, int64(hi-lo))
		if opt.MaxDepth > 0 && len(levels)-1 >= opt.MaxDepth {
			s.reason = fmt.Sprintf("depth limit %d reached with %d states unexplored", opt.MaxDepth, hi-lo)
			return int64(vis.n), trans, levels, nil
		}
		for from = lo; from < hi; from++ {
			if s.viol != nil || s.reason != "" {
				s.partial = true
				return int64(vis.n), trans, append(levels, int64(len(s.keys)-hi)), s.viol
			}
			if from&1023 == 0 {
				if s.limits(opt, start, hi-from); s.reason != "" {
					s.partial = true
					return int64(vis.n), trans, append(levels, int64(len(s.keys)-hi)), nil
				}
				if opt.Progress != nil && time.Since(lastProgress) >= every {
					lastProgress = time.Now()
					el := time.Since(start)
					fmt.Fprintf(opt.Progress, "progress: %d states, %d transitions, depth %d (%d states), %d queued, %.0f states/s, heap %s, %s\n",
						vis.n, trans, len(levels)-1, hi-lo, hi-from, float64(vis.n)/el.Seconds(), explore.FormatBytes(s.peak), el.Round(time.Second))
				}
			}
			t := s.unpack(s.keys[from])
			before := trans
			for n := range P {
				id := t[n]
				for ki, kd := range s.kinds {
					if kd == model.Deliver {
						for d := 1; d < P; d++ {
							i := (n + d) % P // the sender
							if s.out[t[i]]&(1<<(P-d)) == 0 {
								continue
							}
							a := model.Action{Kind: uint8(ki), Node: model.NodeID(n), Peer: model.NodeID(i)}
							hp := int(t[i])*P + P - d
							key := 1<<62 | uint64(ki)<<56 | uint64(d)<<52 | uint64(s.head[hp])<<16 | uint64(id)
							r, ok := s.memo.get(key)
							if !ok || s.popped[hp] == noID || s.verify {
								if !ok || s.popped[hp] == noID {
									s.miss++
								}
								s.decode(&t)
								whole := segStep{extra: s.extraOf(s.apply(a))}
								np := s.intern(&s.w, i)
								whole.id = s.intern(&s.w, n)
								if s.verify && (ok && !s.sameStep(r, whole) || s.popped[hp] != noID && s.popped[hp] != np) && s.err == nil {
									tt := t // (a copy: t stays on the stack)
									s.err = fmt.Errorf("internal error: %s from a state with segments %v is not what the same delivery did before (a handler or step rule reads more than its node and the packet?)", s.sys.ActionName(a), tt[:P])
								}
								if !ok {
									r = whole
									s.memo.put(key, r)
								}
								s.popped[hp] = np
							}
							u := t
							u[i], u[n] = s.popped[hp], r.id
							visit(&u, a, r)
						}
						continue
					}
					if s.local[id]&(1<<ki) == 0 {
						continue
					}
					a := model.Action{Kind: uint8(ki), Node: model.NodeID(n)}
					key := uint64(id) | uint64(ki)<<16
					r, ok := s.memo.get(key)
					if !ok {
						s.miss++
						s.decode(&t)
						r.extra = s.extraOf(s.apply(a))
						r.id = s.intern(&s.w, n)
						s.memo.put(key, r)
					}
					u := t
					u[n] = r.id
					visit(&u, a, r)
				}
			}
			store()
			if trans == before && s.check && s.viol == nil {
				if err := s.ck.CheckFinal(s.assemble(&t)); err != nil {
					s.viol, s.vAt = err, from
				}
			}
			if s.err != nil {
				return 0, 0, nil, s.err
			}
			if s.overflow {
				s.partial = true
				return int64(vis.n), trans, append(levels, int64(len(s.keys)-hi)), nil
			}
		}
		if s.reason != "" || s.viol != nil {
			// Stopped by the state limit, or a violation found while
			// expanding the last state of this level.
			s.partial = true
			return int64(vis.n), trans, append(levels, int64(len(s.keys)-hi)), s.viol
		}
	}
	if s.viol != nil {
		return int64(vis.n), trans, levels, s.viol
	}
	return int64(vis.n), trans, levels, nil
}

// limits notes in s.reason the limit of opt that the search has reached,
// if any (left: the states of the level not yet expanded), and samples
// the heap.
func (s *segSearch) limits(opt explore.Options, start time.Time, left int) {
	if opt.Stop != nil {
		select {
		case <-opt.Stop:
			s.reason = fmt.Sprintf("interrupted with %d states of the level unexplored", left)
			return
		default:
		}
	}
	if opt.Timeout > 0 && time.Since(start) >= opt.Timeout {
		s.reason = fmt.Sprintf("time limit %s reached with %d states of the level unexplored", opt.Timeout, left)
		return
	}
	heap := s.heap()
	if opt.MaxMemory > 0 && heap >= opt.MaxMemory {
		s.reason = fmt.Sprintf("memory limit %s reached (heap %s) with %d states of the level unexplored", explore.FormatBytes(opt.MaxMemory), explore.FormatBytes(heap), left)
	}
}

// heap samples the Go heap in use and keeps its peak.
func (s *segSearch) heap() uint64 {
	if s.sample == nil {
		s.sample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	}
	metrics.Read(s.sample)
	var v uint64
	if s.sample[0].Value.Kind() == metrics.KindUint64 {
		v = s.sample[0].Value.Uint64()
	}
	s.peak = max(s.peak, v)
	return v
}

// Off says why Run cannot search ck's state space, or returns "".
func Off(ck *properties.Checker) string {
	if _, err := newSegSearch(ck, true); err != nil {
		return err.Error()
	}
	return ""
}

// Run searches ck's state space breadth first over segment ids (one
// worker; ck's stubborn sets must be off, its symmetry reduction on: see
// Off), with opt's limits (MaxStates, MaxDepth, Timeout, MaxMemory,
// Stop) and progress lines; the other options do not apply. It leaves
// the statistics in ck (Checker.Statistics). A counterexample's codes
// are in real naming (explore.RealCode), as traces.RunCodes replays them.
func Run(ck *properties.Checker, opt explore.Options) (explore.Result, Counts, error) {
	s, err := newSegSearch(ck, true)
	if err != nil {
		return explore.Result{}, Counts{}, err
	}
	start := time.Now()
	states, trans, levels, verr := s.search(opt)
	if s.err != nil {
		return explore.Result{}, Counts{}, s.err
	}
	s.heap()
	st := explore.Stats{States: states, Transitions: trans, Depth: max(0, len(levels)-1), Elapsed: time.Since(start),
		PeakHeapBytes: s.peak, StoreBytes: s.storeBytes, Levels: levels, LevelPartial: s.partial}
	if s.partial {
		st.Depth--
	}
	if sec := st.Elapsed.Seconds(); sec > 0 {
		st.StatesPerSec = float64(states) / sec
	}
	r := explore.Result{Verdict: explore.Pass, Stats: st, Sleep: explore.SleepInfo{Note: "the search over segment ids has none (it explores every transition)"}}
	switch {
	case s.overflow:
		// What the last expansion found is not to be trusted.
		r.Verdict, r.Reason = explore.Incomplete, s.reason
	case verr != nil:
		v := properties.AsViolation(verr)
		r.Verdict, r.Violation, r.Trace = explore.Fail, v, s.trace()
		if s.err != nil {
			return explore.Result{}, Counts{}, s.err
		}
		r.Stats.Depth = len(r.Trace) // as the checker's: the counterexample's length
	case s.reason != "":
		r.Verdict, r.Reason = explore.Incomplete, s.reason
	}
	n := Counts{Segments: int64(len(s.real)), MemoEntries: int64(s.memo.n), MemoBytes: int64(len(s.memo.tab)+len(s.vsum.tab))*16 + int64(len(s.head)+len(s.popped))*4, Misses: s.miss, Hits: max(0, trans-s.miss),
		Absolute: s.abs, AbsoluteNote: s.absNote}
	return r, n, nil
}

// Counts are what Run says of its tables: the distinct segments
// (Segments), the steps remembered (MemoEntries; MemoBytes is the memo
// of steps, of sums and of the links' heads and pops) and the
// transitions that ran the protocol's handlers (Misses) or were looked
// up (Hits).
type Counts struct {
	Segments, MemoEntries, MemoBytes, Hits, Misses int64
	// Absolute is set where the search used the absolute form (no
	// symmetry reduction); AbsoluteNote says why, where the checker
	// would have reduced by a symmetry.
	Absolute     bool
	AbsoluteNote string
}

// trace returns the counterexample of the violation search found, as
// action codes in real naming (explore.RealCode set, the form
// properties.Checker.Actions takes; the ample steps fused after each are
// left to it, as in the checker's traces): the path of stored states to
// it, each action renamed from its state's representative to the state
// the path has reached in real naming.
func (s *segSearch) trace() []uint32 {
	var path []int
	for x := s.vAt; x > 0; x = int(s.parent[x]) {
		path = append(path, x)
	}
	slices.Reverse(path)
	codes := make([]uint32, 0, len(path)+1)
	for _, x := range path {
		codes = append(codes, s.via[x])
	}
	if s.vCode != 0 {
		codes = append(codes, s.vCode&^(1<<31)) // the step that broke a rule
	}
	P := s.P
	s.w.CopyFrom(s.sys.Initial())
	s.fuse()
	var real []uint32
	for j, c := range codes {
		// The representative the action was taken in: the stored state
		// before it. Find the rotation r that makes it of the real
		// state: its node c is the real state's node c+r (in the
		// absolute form, r is 0: the stored state is the real one).
		rep := s.keys[0]
		if j > 0 {
			rep = s.keys[path[j-1]]
		}
		var t [segMaxNodes]uint32
		for i := range P {
			t[i] = s.intern(&s.w, i)
		}
		r := 0
		for r < s.rots && s.rotPack(&t, r) != rep {
			r++
		}
		if r == s.rots {
			if s.err == nil {
				s.err = errors.New("trace: the path leaves the stored states")
			}
			return nil
		}
		a := model.ActionFromCode(c)
		a.Node = model.NodeID((int(a.Node) + r) % P)
		if s.kinds[a.Kind] == model.Deliver {
			a.Peer = model.NodeID((int(a.Peer) + r) % P)
		}
		real = append(real, a.Code()|explore.RealCode)
		s.apply(a)
	}
	return real
}

// rotPack returns tuple t rotated by r (position p holding t[p+r]),
// packed.
func (s *segSearch) rotPack(t *[segMaxNodes]uint32, r int) uint64 {
	var k uint64
	for p := range s.P {
		k = k<<s.lane | uint64(t[(p+r)%s.P])
	}
	return k
}

// segSet is the visited set: open addressing over packed tuples (stored
// plus one, so that zero is empty).
type segSet struct {
	tab  []uint64
	n    int
	mask uint64
	sink uint64 // what the loads ahead of the probes read (kept, so that they stay)
}

func segSlot(x uint64) uint64 {
	h := x * 0x9e3779b97f4a7c15
	return h ^ h>>29
}

// touch loads k's first slot (so that add finds it in the cache).
func (v *segSet) touch(k uint64) uint64 {
	if v.tab == nil {
		return 0
	}
	return v.tab[segSlot(k+1)&v.mask]
}

func (v *segSet) has(k uint64) bool {
	if v.tab == nil {
		return false
	}
	x := k + 1
	for i := segSlot(x) & v.mask; ; i = (i + 1) & v.mask {
		switch v.tab[i] {
		case 0:
			return false
		case x:
			return true
		}
	}
}

func (v *segSet) add(k uint64) bool {
	if 2*(v.n+1) > len(v.tab) {
		old := v.tab
		v.tab = make([]uint64, max(1024, 2*len(old)))
		hugePages(v.tab)
		v.mask, v.n = uint64(len(v.tab)-1), 0
		for _, x := range old {
			if x != 0 {
				v.add(x - 1)
			}
		}
	}
	x := k + 1
	for i := segSlot(x) & v.mask; ; i = (i + 1) & v.mask {
		switch v.tab[i] {
		case 0:
			v.tab[i] = x
			v.n++
			return true
		case x:
			return false
		}
	}
}

// segMemo is the memo of steps: open addressing, keys stored plus one
// (zero is empty), each with its value in one 16-byte entry (one cache
// line read).
type segMemo struct {
	tab  []segEntry
	n    int
	mask uint64
}

type segEntry struct {
	key uint64
	v   segStep
}

func (m *segMemo) get(k uint64) (segStep, bool) {
	if m.tab == nil {
		return segStep{}, false
	}
	for i := segSlot(k+1) & m.mask; ; i = (i + 1) & m.mask {
		switch m.tab[i].key {
		case k + 1:
			return m.tab[i].v, true
		case 0:
			return segStep{}, false
		}
	}
}

func (m *segMemo) put(k uint64, v segStep) {
	if 2*(m.n+1) > len(m.tab) {
		old := m.tab
		n := max(1024, 2*len(old))
		m.tab, m.mask, m.n = make([]segEntry, n), uint64(n-1), 0
		for _, e := range old {
			if e.key != 0 {
				m.put(e.key-1, e.v)
			}
		}
	}
	i := segSlot(k+1) & m.mask
	for m.tab[i].key != 0 && m.tab[i].key != k+1 {
		i = (i + 1) & m.mask
	}
	if m.tab[i].key == 0 {
		m.n++
	}
	m.tab[i] = segEntry{k + 1, v}
}
