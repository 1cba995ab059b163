package properties

import (
	"bytes"
	"fmt"
	"slices"
	"sync/atomic"
	"unsafe"

	"lfccheck/explore"
	"lfccheck/model"
)

// The step cache memoizes the protocol's handlers in Successors. A
// handler (a delivery's Receive, another kind's Apply) reads one node's
// state, and for a delivery the packet taken off the link; it writes that
// node's state and its outbox (the packets sent, the host deliveries). So
// its effect is a function of (node, kind, peer, packet, the node's
// encoding), which the cache keys on, the node's encoding in the form the
// search stores it (the relative form renames node j to node 0, and j is
// part of the key, so a renaming never has to commute with a handler).
// A corrupted delivery's handler (model.CorruptionHandler) is memoized
// the same way; the fault budgets are the kernel's, not the handler's.
// It stores what the handler wrote: the node's new state, its encoding in
// the stored form (which the canonical form then takes instead of
// encoding the node again), the sends and the deliveries. Keys are
// compared in full, so a hit gives exactly what the handler would have.
//
// Everything else of a step runs as without the cache: the enabledness
// checks (a Quiet kind reads the links), the links, the world's change
// list, the transition rules, the statistics, fusion (whose steps go
// through the cache too), the invariants, sleep and stubborn sets. The
// rules and most invariants read the whole world, not one node, so they
// are not memoized; the checks that read the node alone (a NodeLocal
// property's Local, a conserved sum's bounds and terms) are, with the
// entry (stepcache_checks.go).
//
// A hit does not copy the entry's node into the world: the world's node
// becomes the entry's (shared, read only) until the successor is done
// (stepCache.unshare before Restore and at the end of the expansion) or
// a step not served from the cache changes it. Nothing else writes the
// nodes of the world Successors steps (the rules, invariants and
// canonical form read them).
//
// Each checker (each worker) has a cache of its own, bounded: one
// direct-mapped table per node, stepCacheEntries entries in all, a new
// entry replacing the one in its slot (a fixed hash: one worker's hits
// are the same from run to run).
//
// It is off by default (Build leaves StepCache unset; check --step-cache
// on): the handlers are a small part of a step's time, and what a hit
// saves (the handler and the node's encoding) is about what the look-up
// costs (docs/results.md, "Memoized local steps").

// stepCacheEntries bounds the entries of one worker's step cache (its
// node tables have a power of two entries each).
const stepCacheEntries = 1 << 14

// StepCacheOff says why the step cache cannot be used, or returns "":
// every system can use it (it is off unless StepCache is set).
func (c *Checker) StepCacheOff() string { return "" }

// StepCacheCounts returns the step cache's hits and misses so far (all
// workers') and its bytes (summed over the workers' caches: the tables
// and what their entries hold, a node counted at the size of its
// encoding).
func (c *Checker) StepCacheCounts() (hits, misses, bytes int64) {
	if c.scStats == nil {
		return 0, 0, 0
	}
	return c.scStats.hits.Load(), c.scStats.misses.Load(), c.scStats.bytes.Load()
}

// StepCacheCheckHits returns how many checks of one node's state (a
// NodeLocal property's Local, a Conservation's bounds and terms) the
// step cache's entries answered so far, all workers'
// (stepcache_checks.go).
func (c *Checker) StepCacheCheckHits() int64 {
	if c.scStats == nil {
		return 0
	}
	return c.scStats.checkHits.Load()
}

// stepStats are the step cache counts shared by a checker's forks.
type stepStats struct {
	hits, misses, bytes atomic.Int64
	checkHits           atomic.Int64 // checks taken from entries (stepcache_checks.go)
	// verify (for tests): every step checks the key it was looked up by
	// against the node's state, and every hit against the handler's
	// result, and the first mismatch is kept.
	verify   bool
	verified atomic.Int64
	mismatch atomic.Pointer[string]
}

type stepEntry struct {
	x, y  uint64 // the stored form, kind, peer and packet
	key   []byte // the node's encoding before
	hash  uint64
	after model.Node // the node after the handler
	enc   []byte     // its encoding in the stored form
	sends []model.Transmit
	dels  []model.Delivery
	size  int64 // bytes counted in stepStats.bytes beyond the slot
	// checks: what the checks reading the node alone found in after
	// (stepcache_checks.go).
	checks stepChecks
}

// stepCache is one checker's cache, and its record of the successor
// being built: per node, its encoding in the stored form (known) and
// whether that node was last changed by a cached step (fresh: known
// holds the encoding of its present state, for the canonical form).
type stepCache struct {
	c      *Checker
	tabs   [][]stepEntry // per node
	mask   uint64
	known  [][]byte
	fresh  []bool
	entry  []*stepEntry // per node: the entry that made it, where fresh
	active bool
	// shared[j]: node j of the world being stepped is an entry's node
	// (read only: a hit shares it rather than copying it), and own[j]
	// is the world's own node, put back by unshare.
	shared []bool
	own    []model.Node
	vnodes []model.Node // verify: per node, scratch for the handler's result
	vout   model.Outbox

	hits, misses, bytes int64 // not yet added to c.scStats
	checkHits           int64 // checks taken from entries, not yet added
}

// stepMemo returns the checker's step cache (made on first use), or nil
// when it is off.
func (c *Checker) stepMemo() *stepCache {
	if !c.StepCache {
		return nil
	}
	if c.sc == nil {
		if c.scStats == nil {
			c.scStats = new(stepStats)
		}
		P := c.Sys.P
		per := 1 // the largest power of two with per*P <= stepCacheEntries
		for 2*per*P <= stepCacheEntries {
			per *= 2
		}
		sc := &stepCache{c: c, tabs: make([][]stepEntry, P), mask: uint64(per - 1),
			known: make([][]byte, P), fresh: make([]bool, P), entry: make([]*stepEntry, P),
			shared: make([]bool, P), own: make([]model.Node, P)}
		for j := range sc.tabs {
			sc.tabs[j] = make([]stepEntry, per)
		}
		sc.bytes = int64(P*per) * int64(unsafe.Sizeof(stepEntry{}))
		c.sc = sc
	}
	return c.sc
}

// begin starts a successor of the state being expanded, whose encoding is
// state with node spans at (as Successors decoded it): every node is as
// there.
func (sc *stepCache) begin(state []byte, at []int) {
	sc.active = true
	for j := range sc.known {
		sc.known[j] = state[at[2*j]:at[2*j+1]]
		sc.fresh[j] = false
	}
}

// unshare gives w its own nodes back where a hit shared an entry's: with
// keep, as copies of the entries' (the world stays as it is); else with
// whatever they held (for a caller about to overwrite them, Restore,
// which copies back every node a step changed).
func (sc *stepCache) unshare(w *model.World, keep bool) {
	for j, sh := range sc.shared {
		if sh {
			if keep {
				sc.own[j].CopyFrom(w.Nodes[j])
			}
			w.Nodes[j], sc.shared[j] = sc.own[j], false
		}
	}
}

// end closes the expansion of a state (after unshare) and adds its
// counts to the shared ones.
func (sc *stepCache) end() {
	sc.active = false
	if sc.hits != 0 || sc.misses != 0 || sc.bytes != 0 || sc.checkHits != 0 {
		st := sc.c.scStats
		st.hits.Add(sc.hits)
		st.misses.Add(sc.misses)
		st.bytes.Add(sc.bytes)
		st.checkHits.Add(sc.checkHits)
		sc.hits, sc.misses, sc.bytes, sc.checkHits = 0, 0, 0, 0
	}
}

// encoded returns the stored-form encoding of node i of the successor
// being built when a cached step made its present state, else nil.
func (c *Checker) encoded(i int) []byte {
	if sc := c.sc; sc != nil && sc.active && sc.fresh[i] {
		return sc.known[i]
	}
	return nil
}

// Handle implements model.StepMemo.
func (sc *stepCache) Handle(w *model.World, a model.Action, pkt model.Packet, out *model.Outbox) {
	j := int(a.Node)
	if !sc.active {
		w.RunHandler(a, pkt, out)
		return
	}
	form := byte(0)
	if sc.c.relative() {
		form = 1
	}
	// The key: the step in two words, and the node's encoding.
	x := uint64(form) | uint64(a.Kind)<<8 | uint64(a.Peer)<<16 | uint64(pkt.Tag)<<24 | uint64(pkt.Src)<<32 |
		uint64(pkt.Credits)<<40 | uint64(pkt.Origin)<<48 | uint64(pkt.Hop)<<56
	y := uint64(pkt.Tree) | uint64(pkt.Seq)<<16 | uint64(pkt.Val)<<32
	node := sc.known[j]
	verify := sc.c.scStats.verify
	if verify {
		sc.checkKey(w, j)
	}
	h := explore.Hash(node) ^ (x^y*0x9e3779b97f4a7c15)*0xff51afd7ed558ccd
	h ^= h >> 29
	e := &sc.tabs[j][h&sc.mask]
	if e.after != nil && e.hash == h && e.x == x && e.y == y && bytes.Equal(e.key, node) {
		sc.hits++
		if verify {
			sc.vnodes[j].CopyFrom(w.Nodes[j])
		}
		if !sc.shared[j] {
			sc.own[j], sc.shared[j] = w.Nodes[j], true
		}
		w.Nodes[j] = e.after
		out.Sends = append(out.Sends, e.sends...)
		out.Deliveries = append(out.Deliveries, e.dels...)
		if verify {
			sc.checkHit(w, a, pkt, out, e)
		}
	} else {
		sc.misses++
		if sc.shared[j] {
			sc.own[j].CopyFrom(w.Nodes[j])
			w.Nodes[j], sc.shared[j] = sc.own[j], false
		}
		w.RunHandler(a, pkt, out)
		if e.after == nil {
			e.after = sc.c.Sys.M.NewNode(a.Node)
		}
		e.after.CopyFrom(w.Nodes[j])
		e.key, e.hash, e.x, e.y = append(e.key[:0], node...), h, x, y
		e.checks.forget()
		e.enc = sc.c.storedEncoding(w, j, e.enc[:0])
		e.sends = append(e.sends[:0], out.Sends...)
		e.dels = append(e.dels[:0], out.Deliveries...)
		size := int64(cap(e.key)+2*cap(e.enc)) +
			int64(cap(e.sends))*int64(unsafe.Sizeof(model.Transmit{})) + int64(cap(e.dels))*int64(unsafe.Sizeof(model.Delivery{})) + e.checks.bytes()
		sc.bytes += size - e.size
		e.size = size
	}
	// Entries of node j's table are replaced only here, by a step of node
	// j, which sets known[j] again: known may point into them.
	sc.known[j], sc.fresh[j], sc.entry[j] = e.enc, true, e
}

// storedEncoding appends node j of w encoded in the form the search
// stores it: renamed to node 0 in the relative form (as relRep renames a
// changed node), else as it is.
func (c *Checker) storedEncoding(w *model.World, j int, buf []byte) []byte {
	if !c.relative() || j == 0 {
		return w.Nodes[j].Encode(buf)
	}
	k := c.toZero[j]
	if rc := model.CodesRenamed(w.Nodes[j]); rc != nil {
		return rc.EncodeRenamed(buf, &c.sym[k], &c.symInv[k])
	}
	if c.ren.Sys != w.Sys {
		c.ren = *w.Sys.Initial()
	}
	node := c.ren.Nodes[0]
	node.(model.Renamable).RenameFrom(w.Nodes[j], &c.sym[k])
	return node.Encode(buf)
}

// checkKey (verify) checks that node j's encoding the cache looks the
// step up by is the node's present state's.
func (sc *stepCache) checkKey(w *model.World, j int) {
	if sc.vnodes == nil {
		for i := range sc.known {
			sc.vnodes = append(sc.vnodes, sc.c.Sys.M.NewNode(model.NodeID(i)))
		}
	}
	if !bytes.Equal(sc.known[j], sc.c.storedEncoding(w, j, nil)) {
		sc.mismatchf("node %d: the step cache's key is not the node's encoding", j)
	}
}

// checkHit (verify) runs the handler on node a.Node as it was before the
// hit (in sc.vnodes) and compares its result with the cache's.
func (sc *stepCache) checkHit(w *model.World, a model.Action, pkt model.Packet, out *model.Outbox, e *stepEntry) {
	j := int(a.Node)
	sc.c.scStats.verified.Add(1)
	w.Nodes[j], sc.vnodes[j] = sc.vnodes[j], w.Nodes[j]
	sc.vout.Reset()
	w.RunHandler(a, pkt, &sc.vout)
	handler := w.Nodes[j].Encode(nil)
	w.Nodes[j], sc.vnodes[j] = sc.vnodes[j], w.Nodes[j]
	switch {
	case !bytes.Equal(handler, w.Nodes[j].Encode(nil)):
		sc.mismatchf("%s: the cached node differs from the handler's", sc.c.Sys.ActionName(a))
	case !slices.Equal(sc.vout.Sends, out.Sends) || !slices.Equal(sc.vout.Deliveries, out.Deliveries):
		sc.mismatchf("%s: the cached outbox differs from the handler's", sc.c.Sys.ActionName(a))
	case !bytes.Equal(e.enc, sc.c.storedEncoding(w, j, nil)):
		sc.mismatchf("%s: the cached encoding differs from the node's", sc.c.Sys.ActionName(a))
	}
}

func (sc *stepCache) mismatchf(format string, args ...any) {
	m := fmt.Sprintf(format, args...)
	sc.c.scStats.mismatch.CompareAndSwap(nil, &m)
}
