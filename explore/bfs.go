package explore

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// storeSerial numbers the searches' stores (LeafUser's owner).
var storeSerial atomic.Uint64

// The parallel breadth-first search.
//
// The search runs level by level. The workers take the states of the
// current level in chunks of consecutive ids, expand them with models of
// their own (Forker) and insert the successors into the shared visited set
// (sharded by hash, a lock per shard). A state first found in the level
// records the smallest (parent id, successor index) that reaches it; when
// the level is done, its new states get ids in that order, which is the
// order a sequential breadth-first search finds them in. So ids, parents,
// counterexamples, and the counts of states and transitions, even those of
// a search that stops at a violation, are the same for any number of
// workers: a violation is the one with the smallest (parent, successor)
// of its level, and the counts are those of the states and transitions
// that come before it in that order.
//
// Traces are rebuilt from the parent ids alone: from the initial state,
// each step expands the state reached and takes the first successor that
// is the next state of the path (so no action codes are stored).
type bfs struct {
	*search
	models []Model
	replay Model // expands states again for traces and counts
	fp     bool
	tr     tree
	roots  rootTable
	lvl    levelBuf
	keys   big[uint64] // key by state id, when the state graph is recorded
	n      int         // states of the levels committed
	// The key (unless keys holds it) and the parent id of every state, by
	// id (written once, read to rebuild traces; see column.go).
	keyCol, parent *column
	frontKeys      []uint64 // keys of ids [lo, hi)

	lo, hi      int // the level being expanded: ids [lo, hi)
	nextChunk   atomic.Int64
	chunkTrans  []int64
	chunkDone   []bool    // per chunk: every state of it was expanded
	chunkCounts [][]int64 // per chunk: the statistics its expansions counted (Counter)
	counts      []int64   // the statistics of the levels committed
	countMax    []bool
	ctMain      Counter // the model passed to BFS, when its workers count apart from it
	chunkGraph  []*graphChunk
	front       []encRef // fingerprint mode: encodings of ids [lo, hi)
	front0      []byte   // fingerprint mode: the initial state's encoding
	ws          []*worker

	vkey      atomic.Uint64 // a bound on the level's smallest violation key, or MaxUint64
	bads      []uint32      // level entries whose state violates an invariant (FreshChecker), under mu
	mu        sync.Mutex
	verr      error // the direct violation with the smallest key, dkey
	dkey      uint64
	vcode     uint32
	vhasCode  bool
	ierr      error
	halt      atomic.Bool // a limit was hit or a worker failed: every worker stops
	limMu     sync.Mutex  // checkLimits runs on the search's goroutine and in workers
	reason    string      // why it halted (a limit), under mu
	trans     atomic.Int64
	levelNew  atomic.Int64 // fresh states of the level, for the state limit
	pending   int          // states of the level counted as stored at the end
	levels    []int64      // states committed per depth (Stats.Levels)
	partial   bool         // the search stopped while expanding a level (Levels)
	serial    uint64       // the store's number (LeafUser)
	transBase int64        // transitions before the level

	// Sleep sets (see Sleeper): in use, the sleep sets of ids [lo, hi),
	// the transitions left out, a transition into an expanded state
	// seen, and why sleep sets are off.
	sleep      bool
	frontSleep []uint64
	skipped    atomic.Int64
	chunkSkip  []int64 // per chunk: the transitions left out
	skipBase   int64   // left out before the level
	// nlKey is the smallest key of a transition into an expanded state
	// met in the level (MaxUint64: none), under mu: like a violation key,
	// it bounds what the workers go on with, so that which of the two
	// comes first in sequential order, and so the result, does not depend
	// on how the workers were scheduled.
	nlKey     uint64
	sleepNote string

	ck     *ckpt     // checkpoints (Options.Checkpoint), or nil
	colCRC [2]uint32 // the checkpoint's CRCs of the key and parent columns

	// storeBytes is MemBytes once the search freed its tables for the
	// liveness analysis (releaseStore), else 0.
	storeBytes int64
}

type encRef struct {
	w   uint32
	ref uint64
}

const chunkStates = 64

func newBFS(m Model, opt Options) *bfs {
	s := &search{m: m, opt: opt, start: time.Now()}
	s.lastProg, s.runStart = s.start, s.start
	b := &bfs{search: s, fp: opt.Fingerprint, serial: storeSerial.Add(1)}
	s.traceFn = b.path
	s.sized = b
	b.roots.lvl = &b.lvl
	if opt.Live != nil {
		b.roots.keys = &b.keys
	}
	b.keyCol, b.parent = newColumn(8), newColumn(4)
	n := opt.Workers
	if n <= 0 {
		n = 1
	}
	f, ok := m.(Forker)
	if !ok {
		n = 1
	}
	b.models = []Model{m}
	if ok {
		b.models = b.models[:0]
	}
	for len(b.models) < n {
		b.models = append(b.models, f.NewWorker())
	}
	// Traces are rebuilt by a model of their own: deferring invariant
	// checks like the workers, counting no statistics twice.
	b.replay = b.models[0]
	if r, ok := m.(Replayer); ok {
		b.replay = r.NewReplayer()
		if fc, ok := b.replay.(FreshChecker); ok {
			fc.DeferStateChecks()
		}
	}
	return b
}

// Len is the number of states stored.
func (b *bfs) Len() int { return b.n + b.pending }

// Levels is the number of states stored at each depth, and whether the
// search stopped while expanding the last complete level: then the states
// of the next level it stored so far (perhaps none) come last
// (Stats.Levels).
func (b *bfs) Levels() ([]int64, bool) {
	l := append([]int64(nil), b.levels...)
	if b.partial {
		return append(l, int64(b.pending)), true
	}
	return l, false
}

// MemBytes is the memory of the visited set, the keys (and sleep sets) of
// the level being expanded and what the key and parent columns hold in
// memory.
func (b *bfs) MemBytes() int64 {
	if b.storeBytes > 0 {
		return b.storeBytes
	}
	n := b.roots.memBytes() + b.keys.memBytes(8) + b.keyCol.memBytes() + b.parent.memBytes() + int64(cap(b.frontKeys)+cap(b.frontSleep))*8
	if !b.fp {
		n += b.tr.memBytes()
	}
	return n
}

// DiskBytes is what the key and parent columns wrote to their temporary
// files.
func (b *bfs) DiskBytes() int64 { return b.keyCol.diskBytes() + b.parent.diskBytes() }

// keyAt returns the key of state id.
func (b *bfs) keyAt(id int) (uint64, error) {
	if b.roots.keys != nil {
		return b.keys.at(id), nil
	}
	return b.keyCol.at(id)
}

func (b *bfs) run() (Result, error) {
	defer b.keyCol.close()
	defer b.parent.close()
	defer func() {
		if b.ck != nil {
			b.ck.unlock()
		}
	}()
	r, err := b.search1()
	r.Sleep = SleepInfo{On: b.sleep, Skipped: b.skipped.Load(), Note: b.sleepNote}
	if err == nil && b.opt.Frontier {
		r.Frontier, err = b.frontierInfo(r)
	}
	if ck := b.ck; ck != nil && err == nil {
		switch {
		case r.Verdict == Incomplete && ck.info.Written+btoi(ck.info.Resumed) > 0:
			ck.info.Kept = Present(ck.dir, CheckpointFile)
			ck.info.Lost = !ck.info.Kept
		case b.opt.KeepCheckpoint:
			ck.unlock()
			ck.info.remove = ck.remove
		default:
			ck.remove()
		}
		info := ck.info
		r.Checkpoint = &info
	}
	return r, err
}

// useSleep decides whether the search uses sleep sets.
func (b *bfs) useSleep() {
	switch {
	case b.opt.restartNote != "":
		b.sleepNote = b.opt.restartNote
	case b.opt.NoSleep:
		b.sleepNote = "turned off"
	case b.search.g != nil:
		b.sleepNote = "the state graph is recorded (liveness)"
	default:
		for _, m := range b.models {
			sl, ok := m.(Sleeper)
			if !ok {
				b.sleepNote = "the model has none"
				return
			}
			if why := sl.SleepOff(); why != "" {
				b.sleepNote = why
				return
			}
		}
		if _, ok := b.replay.(Sleeper); !ok {
			b.sleepNote = "the model has none"
			return
		}
		b.sleep = true
		if n, ok := b.models[0].(SleepNoter); ok {
			b.sleepNote = n.SleepNote()
		}
	}
}

func (b *bfs) search1() (Result, error) {
	s := b.search
	b.useSleep()
	b.ws = make([]*worker, len(b.models))
	for i, m := range b.models {
		w := &worker{b: b, num: uint32(i), m: m}
		w.sg, _ = m.(Segmenter)
		if w.sg != nil && !b.fp {
			w.lu, _ = m.(LeafUser)
		}
		w.lb, _ = m.(Labeler)
		if fc, ok := m.(FreshChecker); ok && m != s.m {
			fc.DeferStateChecks()
			w.fc = fc
		}
		if ct, ok := m.(Counter); ok && m != s.m && len(ct.CountMax()) > 0 {
			w.ct = ct
		}
		if b.sleep {
			w.sl = m.(Sleeper)
		}
		w.visit = w.onSucc
		b.ws[i] = w
	}
	ws := b.ws
	if err := b.startFrontier(); err != nil {
		return Result{}, err
	}
	if err := b.startCheckpoints(); err != nil {
		return Result{}, err
	}
	init, verr := s.m.Initial()
	var ends []int
	if sg, ok := s.m.(Segmenter); ok && !b.fp {
		ends = sg.Segments(nil)
		b.tr.k = len(ends)
	} else {
		b.tr.k, ends = 1, []int{len(init)}
	}
	if b.ck != nil {
		b.ck.id = b.ckptID(init)
	}
	if ct, ok := s.m.(Counter); ok && ws[0].ct != nil {
		b.ctMain, b.countMax = ct, ct.CountMax()
	}
	start := 0
	if b.opt.Resume {
		b.counts = make([]int64, len(b.countMax))
		if verr != nil {
			return Result{}, ckptErr("the initial state violates a property: there is nothing to resume")
		}
		var err error
		if start, err = b.loadCheckpoint(); err != nil {
			return Result{}, err
		}
		switch o := b.opt; {
		case o.MaxStates > 0 && int64(b.n) > o.MaxStates:
			return Result{}, ckptErr("the checkpoint holds %d states, more than the state limit %d", b.n, o.MaxStates)
		case o.MaxDepth > 0 && start > o.MaxDepth:
			return Result{}, ckptErr("the checkpoint is at depth %d, past the depth limit %d", start, o.MaxDepth)
		}
		if !b.sleep {
			// The checkpoint is of the search run again without them.
			for _, w := range ws {
				w.sl = nil
			}
		}
	} else {
		if err := b.store0(init, ends); err != nil {
			return Result{}, err
		}
		if verr != nil {
			return s.fail(verr, nil)
		}
		b.lo, b.hi = 0, 1
	}
	for depth := start; b.lo < b.hi; depth++ {
		s.depth = depth
		if b.checkpointDue(depth) || (b.ck != nil && s.opt.MaxDepth > 0 && depth >= s.opt.MaxDepth && !b.checkpointAt(depth)) {
			if err := b.writeCheckpoint(depth); err != nil {
				s.transitions = b.trans.Load()
				b.setCounts()
				return s.finish(Incomplete, fmt.Sprintf("writing the checkpoint to %s failed: %v", b.ck.dir, err)), nil
			}
		}
		if s.opt.MaxDepth > 0 && depth >= s.opt.MaxDepth {
			s.transitions = b.trans.Load()
			b.setCounts()
			return s.finish(Incomplete, fmt.Sprintf("depth limit %d reached with %d states unexplored", s.opt.MaxDepth, b.hi-b.lo)), nil
		}
		if r, done, err := b.level(ws); done || err != nil {
			return r, err
		}
		b.lo, b.hi = b.hi, b.n
	}
	s.transitions = b.trans.Load()
	b.setCounts()
	if s.g != nil {
		s.g.off.add(s.g.edges())
		ws = nil
		b.releaseStore()
		return s.liveness()
	}
	return s.finish(Pass, ""), nil
}

// releaseStore frees, before the liveness analysis, the tables that only
// served to find states again during the search: the workers and their
// caches, the level buffer and the root table's slots; and with a cover
// (Live.Cover), whose counterexamples are built from the graph alone, the
// trees and keys of the states too (without one, path needs them). The
// analysis then has their memory. MemBytes goes on reporting the visited
// set as it was.
func (b *bfs) releaseStore() {
	b.storeBytes = max(b.MemBytes(), 1)
	b.ws = nil
	b.frontKeys, b.frontSleep, b.front = nil, nil, nil
	b.chunkGraph, b.chunkTrans, b.chunkSkip, b.chunkDone, b.chunkCounts = nil, nil, nil, nil, nil
	// Chunks are made in order as entries are reserved (an aux chunk
	// only beside its entries' chunk): the first nil one ends them. (All
	// 2 x 65,536 pointers stored one by one made every small search with
	// a liveness property several times slower.)
	for c := range b.lvl.chunks {
		if b.lvl.chunks[c].Load() == nil {
			break
		}
		b.lvl.chunks[c].Store(nil)
		b.lvl.auxs[c].Store(nil)
	}
	for i := range b.roots.sh {
		b.roots.sh[i].slots = nil
	}
	if cv := b.opt.Live.Cover; cv == nil || cv.Size <= 1 {
		return
	}
	b.keys = big[uint64]{}
	for i := range b.tr.pairs.sh {
		sh := &b.tr.pairs.sh[i]
		sh.slots, sh.keys = nil, nil
	}
	for i := range b.tr.leaves.sh {
		sh := &b.tr.leaves.sh[i]
		sh.slots, sh.hashes, sh.refs, sh.ar = nil, nil, nil, arena{}
	}
}

// store0 stores the initial state, with the encoding init and segment
// ends, as the first level.
func (b *bfs) store0(init []byte, ends []int) error {
	ws := b.ws
	k := Hash(init)
	if !b.fp {
		var ok bool
		if b.tr.k == 0 || ends[len(ends)-1] != len(init) {
			return errors.New("explore: the model's segments do not cover the initial state")
		}
		if k, _, ok = b.tr.key(init, ends, nil, nil, nil); !ok {
			return errors.New("explore: the initial state cannot be stored")
		}
	}
	if _, _, ok := b.roots.insert(k, 0, 0); !ok {
		return errors.New("explore: the initial state cannot be stored")
	}
	if b.fp {
		b.front0 = append([]byte(nil), init...)
		b.lvl.aux(0).enc = ws[0].ar[ws[0].cur^1].add(init)
	}
	b.commit(0)
	ws[0].cur ^= 1
	if b.ctMain != nil {
		b.counts = b.ctMain.Counts(nil)
	}
	return nil
}

// checkpointAt reports whether the newest checkpoint is the one before
// the level at depth.
func (b *bfs) checkpointAt(depth int) bool {
	ck := b.ck
	return ck.info.Written+btoi(ck.info.Resumed) > 0 && ck.info.Depth == depth
}

// DefaultWorkers is the number of workers a search uses by default: the
// number of CPUs the process may use.
func DefaultWorkers() int { return runtime.GOMAXPROCS(0) }
