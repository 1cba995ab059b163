package explore

import (
	"errors"
	"fmt"
)

// limitEvery is how many new states a worker stores between two checks
// of the limits (checkLimits).
const limitEvery = 1024

type worker struct {
	b     *bfs
	num   uint32
	m     Model
	sg    Segmenter
	lu    LeafUser // with the exact store and segments
	lb    Labeler
	fc    FreshChecker
	sl    Sleeper    // when sleep sets are in use
	ct    Counter    // nil unless the model counts something
	ref   treeRef    // the state being expanded (exact store)
	fresh int        // new states stored (for limitEvery)
	cache *treeCache // recently interned leaves and pairs (exact store)
	succs *succCache // stored states met lately (see useSuccCache)
	ends  []int
	ids   []uint32
	ar    [2]arena // fingerprint mode: encodings of the current and next level
	cur   int      // which of ar holds the current level
	pid   uint32
	idx   uint32
	skip  int64 // transitions left out by sleep sets in the chunk
	g     *graphChunk
	visit func(code uint32, succ []byte, err error) bool
	// A worker writes pid and idx at every successor: keep the next
	// allocation (another worker) off their cache line.
	_ [64]byte
}

// run expands chunks of the level until none is left.
func (w *worker) run() {
	b := w.b
	for !b.halt.Load() {
		c := int(b.nextChunk.Add(1) - 1)
		lo := b.lo + c*chunkStates
		if lo >= b.hi || uint64(lo)<<32 > b.vkey.Load() {
			return
		}
		hi := min(lo+chunkStates, b.hi)
		if b.chunkGraph != nil {
			w.g = &graphChunk{}
			b.chunkGraph[c] = w.g
		}
		var t, skip int64
		if w.ct != nil {
			w.ct.ResetCounts()
		}
		id := lo
		for ; id < hi && !b.halt.Load() && uint64(id)<<32 < b.vkey.Load(); id++ {
			enc := w.state(id)
			if w.lu != nil {
				w.lu.UseLeaves(b.serial, w.ref.ids, w.ref.ends)
			}
			w.pid, w.idx, w.skip = uint32(id), 0, 0
			if w.g != nil {
				w.g.off = append(w.g.off, int32(len(w.g.to)))
			}
			var err error
			if w.sl != nil {
				err = w.sl.SuccessorsAsleep(enc, b.frontSleep[id-b.lo], w.visit)
			} else {
				err = w.m.Successors(enc, w.visit)
			}
			t += int64(w.idx) - w.skip
			skip += w.skip
			if w.g != nil {
				w.g.lab = append(w.g.lab, w.lb.Labels())
			}
			if err != nil {
				var pe PropertyError
				if !errors.As(err, &pe) {
					b.internal(fmt.Errorf("explore: model failed: %w", err))
					return
				}
				b.violate(uint64(id)<<32|uint64(w.idx), err, 0, false)
			}
		}
		b.trans.Add(t)
		b.skipped.Add(skip)
		b.chunkSkip[c] = skip
		b.chunkTrans[c] = t
		b.chunkDone[c] = id == hi
		if w.ct != nil {
			b.chunkCounts[c] = w.ct.Counts(nil)
		}
	}
}

func (b *bfs) internal(err error) {
	b.mu.Lock()
	if b.ierr == nil {
		b.ierr = err
	}
	b.mu.Unlock()
	b.halt.Store(true)
}

// violate records a violation at key (a transition's with its code, or a
// terminal state's).
func (b *bfs) violate(key uint64, err error, code uint32, hasCode bool) {
	b.mu.Lock()
	if b.verr == nil || key < b.dkey {
		b.verr, b.dkey, b.vcode, b.vhasCode = err, key, code, hasCode
	}
	b.lower(key)
	b.mu.Unlock()
}

// lower lowers the bound vkey to key; under mu.
func (b *bfs) lower(key uint64) {
	if key < b.vkey.Load() {
		b.vkey.Store(key)
	}
}

// state returns the encoding of state id.
func (w *worker) state(id int) []byte {
	b := w.b
	if b.fp {
		r := b.front[id-b.lo]
		return b.workerArena(r.w).get(r.ref)
	}
	b.tr.load(&w.ref, b.frontKeys[id-b.lo])
	return w.ref.enc
}

// onSucc is the visit function of a worker.
func (w *worker) onSucc(code uint32, succ []byte, err error) bool {
	b := w.b
	pk := uint64(w.pid)<<32 | uint64(w.idx)
	w.idx++
	if err != nil {
		b.violate(pk, err, code, true)
		return false
	}
	if b.halt.Load() || pk > b.vkey.Load() {
		return false
	}
	var z uint64 // succ's sleep set
	if w.sl != nil {
		if succ == nil {
			w.skip++ // asleep
			return true
		}
		z = w.sl.SuccSleep()
	}
	var sh uint64 // succ's hash, with the successor cache
	if w.succs != nil {
		sh = Hash(succ)
		if e := w.succs.find(sh, succ); e != nil && !(b.opt.Frontier && e.lvl != uint32(b.search.depth)) {
			// Stored, and nothing to update (see succCache) but the
			// sleep set of a state of the level being built.
			if w.sl != nil {
				if e.lvl != uint32(b.search.depth) {
					return b.metExpanded(pk)
				}
				b.lvl.at(e.li).meet(z)
			}
			return true
		}
	}
	k, ok := w.key(succ)
	if !ok {
		return false
	}
	v, fresh, ok := b.roots.insert(k, pk, z)
	if !ok {
		b.stop("the store's capacity (2^31 states per level) is exhausted")
		return false
	}
	if w.sl != nil && v&lvlFlag == 0 {
		return b.metExpanded(pk)
	}
	if w.succs != nil {
		w.succs.add(sh, succ, v&^lvlFlag, uint32(b.search.depth))
	}
	if fresh {
		if max := b.opt.MaxStates; max > 0 && int64(b.n)+b.levelNew.Add(1) > max {
			b.stop(fmt.Sprintf("state limit %d reached with more states to store", max))
			return false
		}
		if w.fresh++; w.fresh%limitEvery == 0 && b.opt.MaxMemory > 0 {
			b.checkLimits()
		}
		if b.fp {
			li := v &^ lvlFlag
			a := b.lvl.aux(li)
			a.encW, a.enc = w.num, w.ar[w.cur^1].add(succ)
		}
		if w.fc != nil {
			if verr := w.fc.CheckFresh(); verr != nil {
				b.mu.Lock()
				b.bads = append(b.bads, v&^lvlFlag)
				b.lower(pk)
				b.mu.Unlock()
				return false
			}
		}
	}
	if w.g != nil {
		w.g.to = append(w.g.to, v)
		w.g.code = append(w.g.code, code)
	}
	return true
}

// metExpanded notes a transition, of the state with key pk, into a state
// already expanded, which sleep sets cannot handle (see Sleeper): unless a
// violation comes before it in sequential order, the level ends in a
// search again without them. Like a violation, it bounds the keys the
// workers go on with.
func (b *bfs) metExpanded(pk uint64) bool {
	b.mu.Lock()
	if pk < b.nlKey {
		b.nlKey = pk
	}
	b.lower(pk)
	b.mu.Unlock()
	return false
}

// key returns the visited set's key of succ: its hash in fingerprint
// mode, else its root key in the tree store (ok is false when the store
// is full or the model's segments are wrong; the search then stops).
func (w *worker) key(succ []byte) (k uint64, ok bool) {
	b := w.b
	if b.fp {
		return Hash(succ), true
	}
	if w.sg != nil {
		w.ends = w.sg.Segments(w.ends[:0])
	} else {
		w.ends = append(w.ends[:0], len(succ))
	}
	if len(w.ends) != b.tr.k || w.ends[len(w.ends)-1] != len(succ) {
		b.internal(fmt.Errorf("explore: a successor has %d segments, the initial state %d", len(w.ends), b.tr.k))
		return 0, false
	}
	if w.cache == nil {
		w.cache = new(treeCache)
	}
	if k, w.ids, ok = b.tr.key(succ, w.ends, w.ids, &w.ref, w.cache); !ok {
		b.stop("the store's capacity (2^26 entries per shard) is exhausted")
	}
	return k, ok
}

// succCacheFrom is the size of a level (states to expand) from which the
// workers use a successor cache (succCache): smaller searches do without
// its few megabytes. (A variable for tests, which set it to 0 or off.)
var (
	succCacheFrom      = 1 << 12
	succCacheBits uint = 14      // 2^14 entries
	succCacheRing      = 4 << 20 // bytes of encodings
)

// useSuccCache gives the workers their successor caches when the level
// about to be expanded is big enough, in the exact store without the
// state graph (whose values need the ids of states of earlier levels,
// which the cache does not hold), and when the caches take at most an
// eighth of the memory budget and fit in what is left of it (they are
// allocated at once, between two samples of the heap).
func (b *bfs) useSuccCache(ws []*worker) {
	if b.fp || b.search.g != nil || b.roots.keys != nil || b.hi-b.lo < succCacheFrom || ws[0].succs != nil {
		return
	}
	need := uint64(len(ws)) * succCacheSize(succCacheBits, succCacheRing)
	if max := b.opt.MaxMemory; max > 0 && (need > max/8 || b.sampleMemory(true)+need >= max) {
		return
	}
	for _, w := range ws {
		if w.succs == nil {
			w.succs = newSuccCache(succCacheBits, succCacheRing)
		}
	}
}

// workerArena returns the arena holding the current level's encodings of
// worker i (fingerprint mode).
func (b *bfs) workerArena(i uint32) *arena { return &b.ws[i].ar[b.ws[i].cur] }
