package properties

import (
	"bytes"

	"lfccheck/model"
)

// noteChanged records, for canonical, which nodes (same) and which
// segments (segSame) of w, a successor of the state being expanded, are
// as in that state: those its steps did not change.
func (c *Checker) noteChanged(w *model.World) {
	P := c.Sys.P
	c.same, c.segSame = c.same[:0], c.segSame[:0]
	for range P {
		c.same, c.segSame = append(c.same, 1), append(c.segSame, 1)
	}
	if !w.Changed(func(i int) { c.same[i], c.segSame[i] = 0, 0 }, func(l int) { c.segSame[l/P] = 0 }) {
		for i := range P {
			c.same[i], c.segSame[i] = 0, 0
		}
	}
}

// Symmetries returns the renamings of node ids under which the system maps
// onto itself (without the identity), whether or not the reduction is on.
func (c *Checker) Symmetries() []model.Perm { return c.sym }

// SymmetryOff says why the symmetry reduction cannot run, or returns "":
// the system has no symmetry, or a liveness property is checked on the
// state graph and the renamings do not give a cover for its analysis
// (liveCover).
func (c *Checker) SymmetryOff() string {
	if len(c.sym) == 0 {
		return "the configuration has no symmetry (or the protocol declares none)"
	}
	if len(c.Sys.Faults()) > 0 {
		return FaultsOff + " (the fault budgets are kept with the last node's segment, and a link's own budget need not map onto itself)"
	}
	if c.live != nil {
		var obls []obligation
		for _, o := range c.live.obls {
			if !c.OnEndStates(&c.Props[o.prop]) {
				obls = append(obls, o)
			}
		}
		if obls != nil {
			if _, why := c.liveCover(obls); why != "" {
				return "liveness on the state graph: " + why
			}
		}
	}
	return ""
}

// canonical appends to buf the canonical encoding of w: with Symmetry set,
// the smallest encoding of w and its renamings by the system's symmetries
// (one representative per orbit; the properties treat every node alike,
// so a state and its renamings satisfy the same ones, and the renamings
// commute with every action up to the renaming of its nodes), else w's.
//
// Counterexamples are found over representatives; Actions maps them back
// to a run from the real initial state.
func (c *Checker) canonical(w *model.World, buf []byte) []byte {
	buf, _ = c.orbitRep(w, buf)
	return buf
}

// orbitRep appends to buf the canonical encoding of w (see canonical) and
// returns the index in c.sym of the renaming that gives it, -1 for w
// itself.
func (c *Checker) orbitRep(w *model.World, buf []byte) ([]byte, int) {
	if c.relative() {
		return c.relRep(w, buf)
	}
	start := len(buf)
	c.ends = c.ends[:0]
	P := c.Sys.P
	for i, n := range w.Nodes {
		switch {
		case c.cacheOn && c.segSame[i] == 1:
			buf = append(buf, c.pEnc[c.pAt[2*i]:c.segEnd(i)]...)
		case c.cacheOn && c.same[i] == 1:
			buf = append(buf, c.pEnc[c.pAt[2*i]:c.pAt[2*i+1]]...)
			buf = w.AppendOutLinks(buf, i)
		case c.cacheOn && c.encoded(i) != nil:
			buf = w.AppendOutLinks(append(buf, c.encoded(i)...), i) // the step cache's (stepcache.go)
		default:
			buf = w.AppendOutLinks(n.Encode(buf), i)
		}
		c.ends = append(c.ends, len(buf)-start)
	}
	if !c.Symmetry {
		return buf, -1
	}
	if c.ren.Sys != w.Sys {
		c.ren = *w.Sys.Initial()
	}
	if !c.cacheOn {
		c.same, c.segSame = c.same[:0], c.segSame[:0]
		for range P {
			c.same, c.segSame = append(c.same, 0), append(c.segSame, 0)
		}
	}
	best := -1
	for i := range c.sym {
		var smaller bool
		if buf, smaller = c.renamedIfSmaller(w, i, buf); smaller {
			best = i
		}
	}
	return buf, best
}

// regularToZero returns, when the identity and syms act regularly on P
// nodes (each node is mapped to node 0 by exactly one of them), the index
// in syms of the one mapping node i to 0, per node (-1 for node 0);
// otherwise nil.
func regularToZero(P int, syms []model.Perm) []int {
	if P < 2 || len(syms)+1 != P {
		return nil
	}
	to := make([]int, P)
	for i := range to {
		to[i] = -1
	}
	for k, p := range syms {
		for i, n := range p.Node {
			if n != 0 {
				continue
			}
			if i == 0 || to[i] >= 0 {
				return nil // not regular: a renaming fixes node 0, or two map i to 0
			}
			to[i] = k
		}
	}
	for i := 1; i < P; i++ {
		if to[i] < 0 {
			return nil
		}
	}
	return to
}

// relative reports whether states are stored in the relative form.
func (c *Checker) relative() bool { return c.Symmetry && c.Relative && c.toZero != nil }

// RelativeForm reports whether the search stores states in the relative
// form (see relRep): the symmetry reduction is on, Relative is set, and
// the system's symmetries act regularly on its nodes.
func (c *Checker) RelativeForm() bool { return c.relative() }

// fromZero is the renaming that maps node 0 to node j (nil for j = 0):
// the inverse of the one that maps j to 0.
func (c *Checker) fromZero(j int) *model.Perm {
	if j == 0 {
		return nil
	}
	return &c.symInv[c.toZero[j]]
}

// relRep is orbitRep in the relative form, used where the symmetries act
// regularly on the nodes (toZero). Node i's relative segment R_i is its
// segment (the node, then its outgoing links) renamed by g_i, the
// symmetry that maps i to node 0, and written as node 0's. For a
// symmetry h, R_{h(i)} of h(w) is R_i of w (g_{h(i)}h maps i to 0, so it
// is g_i), so renaming a state only moves its relative segments: h(w)
// has R_i(w) at position h(i). The canonical form is the smallest of
// these arrangements, segment by segment (bytes.Compare on each); it
// determines the state up to renaming, since segment j of the state it
// stands for is its j-th relative segment renamed back from node 0 to
// node j (model.System.DecodeRenamed). Each renaming is compared without
// renaming anything: a successor renames only the nodes its steps
// changed (once each, to node 0), and takes the relative segments of the
// rest from the expanded state's encoding, where they are the segments at
// their nodes' positions.
func (c *Checker) relRep(w *model.World, buf []byte) ([]byte, int) {
	P := c.Sys.P
	if c.ren.Sys != w.Sys {
		c.ren = *w.Sys.Initial()
	}
	c.segs, c.segAt = c.segs[:0], c.segAt[:0]
	c.segRef = c.segRef[:0]
	for i := 0; i < P; i++ {
		st := len(c.segs)
		switch {
		case c.cacheOn && c.segSame[i] == 1:
			// Unchanged with its links: read in place (-1 below).
			c.segAt = append(c.segAt, -1, -1)
			continue
		case c.cacheOn && c.same[i] == 1:
			// The node is as in the expanded state, whose encoding
			// holds its relative form: only its links are renamed.
			c.segs = append(c.segs, c.pEnc[c.pAt[2*i]:c.pAt[2*i+1]]...)
			if i == 0 {
				c.segs = w.AppendOutLinks(c.segs, 0)
			} else {
				c.segs = c.renamedLinks(w, i, 0, c.toZero[i], c.segs)
			}
		case c.cacheOn && c.encoded(i) != nil:
			// Node i's relative form, from the step cache (stepcache.go).
			c.segs = append(c.segs, c.encoded(i)...)
			if i == 0 {
				c.segs = w.AppendOutLinks(c.segs, 0)
			} else {
				c.segs = c.renamedLinks(w, i, 0, c.toZero[i], c.segs)
			}
		case i == 0:
			c.segs = w.EncodeSegment(c.segs, 0)
		default:
			c.segs = c.renamedSegment(w, i, 0, c.toZero[i], c.segs)
		}
		c.segAt = append(c.segAt, st, len(c.segs))
	}
	for i := 0; i < P; i++ {
		if c.segAt[2*i] < 0 {
			c.segRef = append(c.segRef, c.pEnc[c.pAt[2*i]:c.segEnd(i)])
		} else {
			c.segRef = append(c.segRef, c.segs[c.segAt[2*i]:c.segAt[2*i+1]])
		}
	}
	// seg is the segment at position j when renaming h (an index in sym,
	// -1 for the identity) is applied: node i goes to h(i), so position j
	// holds R of h's preimage of j.
	seg := func(h, j int) []byte {
		if h >= 0 {
			j = int(c.symInv[h].Node[j])
		}
		return c.segRef[j]
	}
	best := -1
	for h := range c.sym {
		for j := 0; j < P; j++ {
			if r := bytes.Compare(seg(h, j), seg(best, j)); r != 0 {
				if r < 0 {
					best = h
				}
				break
			}
		}
	}
	start := len(buf)
	c.ends = c.ends[:0]
	for j := 0; j < P; j++ {
		buf = append(buf, seg(best, j)...)
		c.ends = append(c.ends, len(buf)-start)
	}
	return buf, best
}

// segEnd is the end offset of segment i in the encoding of the state being
// expanded.
func (c *Checker) segEnd(i int) int {
	if i+1 < c.Sys.P {
		return c.pAt[2*i+2]
	}
	return len(c.pEnc)
}

// Decode overwrites w with the state whose canonical encoding (from
// Canonical, or a successor's from Successors) is b: with the relative
// form (see relRep), the orbit representative it stands for.
func (c *Checker) Decode(b []byte, w *model.World) error {
	if c.relative() {
		_, err := c.Sys.DecodeRenamed(b, w, &c.tmp, nil, c.fromZero)
		return err
	}
	return c.Sys.Decode(b, w)
}

// Canonical appends to buf the encoding of w's orbit representative (see
// canonical); without Symmetry, w's encoding.
func (c *Checker) Canonical(w *model.World, buf []byte) []byte { return c.canonical(w, buf) }

// renamedIfSmaller compares the encoding of w renamed by p with buf, the
// smallest encoding so far, piece by piece (a node, then its outgoing
// links, in encoding order), and stops at the first piece that decides it
// is larger; a smaller one replaces buf (and it reports true). Most
// renamings are decided by their first node, so the rest is neither
// renamed nor encoded.
func (c *Checker) renamedIfSmaller(w *model.World, k int, buf []byte) ([]byte, bool) {
	p, inv := &c.sym[k], &c.symInv[k]
	n, P := len(buf), c.Sys.P
	less := false
	// cmp compares the piece just appended at buf[off:] with the same
	// bytes of the best encoding; it reports whether to go on.
	cmp := func(off int) bool {
		if less {
			return true
		}
		piece := buf[off:]
		at := off - n
		if at >= n {
			return false // the best is a proper prefix: the renaming is larger
		}
		best := buf[at:n]
		m := min(len(piece), len(best))
		switch r := bytes.Compare(piece[:m], best[:m]); {
		case r < 0:
			less = true
			return true
		case r > 0:
			return false
		case len(piece) > len(best):
			return false // equal up to the end of the best: longer is larger
		}
		return true
	}
	sym := c.Sys.M.(model.Symmetric)
	c.ends2 = c.ends2[:0]
	for i := 0; i < P; i++ {
		off := len(buf)
		if src := int(inv.Node[i]); c.cacheOn && c.segSame[src] == 1 {
			// The whole renamed segment, from the cache or made once
			// for the rest of the successors.
			slot := src*len(c.sym) + k
			if at := c.sAt[2*slot]; at >= 0 {
				buf = append(buf, c.sEnc[at:c.sAt[2*slot+1]]...)
			} else {
				buf = c.renamedSegment(w, src, i, k, buf)
				c.sAt[2*slot] = len(c.sEnc)
				c.sEnc = append(c.sEnc, buf[off:]...)
				c.sAt[2*slot+1] = len(c.sEnc)
			}
			if !cmp(off) {
				return buf[:n], false
			}
			c.ends2 = append(c.ends2, len(buf)-n)
			continue
		}
		buf = c.renamedNode(w, int(inv.Node[i]), i, k, buf)
		if !cmp(off) {
			return buf[:n], false
		}
		for j := 0; j < P; j++ {
			if i == j {
				continue
			}
			off := len(buf)
			buf = model.AppendRenamedPackets(sym, buf, w.Links[int(inv.Node[i])*P+int(inv.Node[j])], p)
			if !cmp(off) {
				return buf[:n], false
			}
		}
		c.ends2 = append(c.ends2, len(buf)-n)
	}
	if !less {
		return buf[:n], false // equal: w is fixed by p
	}
	m := copy(buf, buf[n:])
	c.ends, c.ends2 = c.ends2, c.ends
	return buf[:m], true
}

// renamedNode appends the encoding of node j of w renamed by symmetry k
// (scratch node slot i). While Successors expands a state, the renamed
// encodings of the nodes that a successor shares with that state are
// remembered and reused by the next successors: most steps change one or
// two nodes, and a node's renamed encoding depends only on its own
// encoding.
func (c *Checker) renamedNode(w *model.World, j, i, k int, buf []byte) []byte {
	slot := -1
	if c.cacheOn {
		if c.same[j] == 1 {
			slot = j*len(c.sym) + k
			if at := c.rAt[2*slot]; at >= 0 {
				return append(buf, c.rEnc[at:c.rAt[2*slot+1]]...)
			}
		}
	}
	st := len(buf)
	if rc := model.CodesRenamed(w.Nodes[j]); rc != nil {
		buf = rc.EncodeRenamed(buf, &c.sym[k], &c.symInv[k])
	} else {
		node := c.ren.Nodes[i]
		node.(model.Renamable).RenameFrom(w.Nodes[j], &c.sym[k])
		buf = node.Encode(buf)
	}
	if slot >= 0 {
		c.rAt[2*slot] = len(c.rEnc)
		c.rEnc = append(c.rEnc, buf[st:]...)
		c.rAt[2*slot+1] = len(c.rEnc)
	}
	return buf
}

// cacheNodes starts the cache of renamed node encodings (renamedNode) for
// the successors of c.cur, whose encoding is state (c.pAt holds its
// nodes' spans).
func (c *Checker) cacheNodes(state []byte) {
	c.pEnc = state
	c.rEnc, c.rAt = c.rEnc[:0], c.rAt[:0]
	c.sEnc, c.sAt = c.sEnc[:0], c.sAt[:0]
	if c.Symmetry {
		for range 2 * len(c.cur.Nodes) * len(c.sym) {
			c.rAt = append(c.rAt, -1)
			c.sAt = append(c.sAt, -1)
		}
	}
	c.cacheOn = true
}

// renamedSegment appends segment src of w renamed by symmetry k, which
// puts it at position i: the renamed node, then its links in the order of
// the renamed destinations.
func (c *Checker) renamedSegment(w *model.World, src, i, k int, buf []byte) []byte {
	return c.renamedLinks(w, src, i, k, c.renamedNode(w, src, i, k, buf))
}

// renamedLinks appends the outgoing links of node src of w renamed by
// symmetry k, which puts src at position i, in the order of the renamed
// destinations.
func (c *Checker) renamedLinks(w *model.World, src, i, k int, buf []byte) []byte {
	P := c.Sys.P
	p, inv := &c.sym[k], &c.symInv[k]
	sym := c.Sys.M.(model.Symmetric)
	for j := 0; j < P; j++ {
		if i == j {
			continue
		}
		buf = model.AppendRenamedPackets(sym, buf, w.Links[src*P+int(inv.Node[j])], p)
	}
	return buf
}
