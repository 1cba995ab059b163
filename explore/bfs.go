package explore

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Forker is implemented by models that can be expanded by several
// goroutines at once: NewWorker returns a model for another goroutine,
// sharing the model's static parts. Without it a search uses one worker.
type Forker interface {
	NewWorker() Model
}

// FreshChecker is implemented by models that can leave the invariants of
// the successors they pass to visit unchecked (after DeferStateChecks):
// the explorer calls CheckFresh, during visit, for each successor it has
// not stored before, so each reachable state is checked once. The
// explorer defers only on the workers it forks.
type FreshChecker interface {
	DeferStateChecks()
	CheckFresh() error
}

// Replayer is implemented by models whose expansions count something
// (statistics): NewReplayer returns a model for expanding states again
// (to rebuild a trace) that counts nothing in the original.
type Replayer interface {
	NewReplayer() Model
}

// Counter is implemented by models that gather statistics while they
// expand states (sums over transitions, or maxima over states). The
// explorer resets each worker's counts at every chunk of states it
// expands and collects them per chunk, so that the totals are those of the
// transitions a sequential search explores, whatever the number of
// workers; a search stopped at a violation counts up to it. SetCounts
// gives the model the totals at the end (on the model passed to BFS).
type Counter interface {
	Counts(dst []int64) []int64
	ResetCounts()
	CountMax() []bool // per count: a maximum (else a sum)
	SetCounts(c []int64)
}

// GoalKeeper is implemented by models that remember, across the states
// they check, which goals some state has reached (the Sometimes goals of
// package properties): a search that resumes from a checkpoint does not
// check the states before it again, so the checkpoint saves that record
// and resuming restores it.
type GoalKeeper interface {
	Reached() []string // the names of the goals reached
	SetReached([]string) error
}

// Segmenter is implemented by models whose state encodings split into a
// fixed number of segments (for LFC: one per node); the exact store then
// shares equal segments between states (see treestore.go). Segments
// appends to dst the end offset of each segment of the encoding the model
// returned last (from Initial, or the successor last passed to visit).
type Segmenter interface {
	Segments(dst []int) []int
}

// LeafUser is implemented by Segmenters that can use what the exact store
// knows of a state about to be expanded: UseLeaves, called just before
// the state is passed to Successors (or SuccessorsAsleep), gives the
// store's id of each of its segments and their end offsets. Equal ids of
// one owner (a number that identifies the store among all searches) are
// equal bytes, so the model may keep what it made of a segment (its
// decoded node) by id. It is not called in fingerprint mode.
type LeafUser interface {
	UseLeaves(owner uint64, ids []uint32, ends []int)
}

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
}

type encRef struct {
	w   uint32
	ref uint64
}

// graphChunk is the part of the state graph that one chunk of parents
// records; slot values are resolved to ids when the level is committed.
type graphChunk struct {
	off  []int32
	to   []uint32
	code []uint32
	lab  []uint64
}

const chunkStates = 64

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
			ck.info.Kept = true
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
		s.g.off = append(s.g.off, int64(len(s.g.to)))
		return s.liveness()
	}
	return s.finish(Pass, ""), nil
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

// level expands ids [lo, hi) with the workers and commits the states they
// find; done reports that the search ended (with the result).
func (b *bfs) level(ws []*worker) (Result, bool, error) {
	s := b.search
	nch := (b.hi - b.lo + chunkStates - 1) / chunkStates
	b.nextChunk.Store(0)
	b.chunkTrans = make([]int64, nch)
	b.chunkSkip = make([]int64, nch)
	b.chunkDone = make([]bool, nch)
	b.chunkCounts = make([][]int64, nch)
	if s.g != nil {
		b.chunkGraph = make([]*graphChunk, nch)
	}
	b.vkey.Store(math.MaxUint64)
	b.verr, b.bads = nil, b.bads[:0]
	b.nlKey = math.MaxUint64
	b.lvl.n.Store(0)
	b.levelNew.Store(0)
	b.transBase = b.trans.Load()
	b.skipBase = b.skipped.Load()
	b.useSuccCache(ws)
	b.checkLimits()
	if nch <= smallLevel {
		ws[0].run()
	} else {
		b.runWorkers(ws)
	}
	if b.ierr != nil {
		return Result{}, true, b.ierr
	}
	// The violation is the one first in sequential order: the direct one
	// with the smallest key, or a successor that violates an invariant, at
	// the smallest key that reaches it.
	vk, bad := uint64(math.MaxUint64), false
	if b.verr != nil {
		vk = b.dkey
	}
	for _, li := range b.bads {
		if k := b.lvl.at(li).minKey; k < vk {
			vk, bad = k, true
		}
	}
	if b.nlKey < vk { // (keys name transitions: never equal)
		// A transition into an expanded state comes first: sleep sets
		// cannot be trusted from there on; search again without them.
		return Result{}, true, notLayered{depth: s.depth, states: b.n}
	}
	if b.verr != nil || len(b.bads) > 0 {
		// A limit may have stopped the workers before every state ahead
		// of the violation was expanded: then it is not known to come
		// first, and the search ends as incomplete like any other.
		complete := !b.halt.Load()
		if !complete {
			complete = true
			for _, done := range b.chunkDone[:(int(vk>>32)-b.lo)/chunkStates] {
				complete = complete && done
			}
		}
		if complete {
			return b.failAt(vk, bad)
		}
	}
	if b.halt.Load() {
		return b.incomplete(b.reason)
	}
	if b.n+b.lvl.len() >= 1<<32-1 {
		return b.incomplete("the store's capacity (2^32 states) is exhausted")
	}
	b.commit(b.lo)
	b.fold(b.chunkCounts)
	for _, w := range ws {
		if b.fp {
			w.ar[w.cur] = arena{}
			w.cur ^= 1
		}
	}
	return Result{}, false, nil
}

// smallLevel is the number of chunks up to which a level is expanded by
// one worker on the search's goroutine: starting the workers and a ticker
// would cost more than sharing so little saves (the first and last levels
// of a search are small). Limits are checked before such a level.
const smallLevel = 2

// runWorkers expands the level with every worker, checking the limits and
// printing progress while they run.
func (b *bfs) runWorkers(ws []*worker) {
	s := b.search
	var wg sync.WaitGroup
	done := make(chan struct{})
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run()
		}()
	}
	go func() {
		wg.Wait()
		close(done)
	}()
	every := s.opt.progressEvery()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			b.checkLimits()
			if s.opt.Progress != nil && time.Since(s.lastProg) >= every {
				s.lastProg = time.Now()
				b.progress()
			}
		}
	}
}

// incomplete ends the search, stopped in the level, as incomplete: the
// level's new states count as stored (no more than a state limit allows).
func (b *bfs) incomplete(reason string) (Result, bool, error) {
	s := b.search
	s.transitions = b.trans.Load()
	b.pending = b.lvl.len()
	if max := s.opt.MaxStates; max > 0 && b.n+b.pending > int(max) {
		b.pending = int(max) - b.n
	}
	// Stopped in the middle of the level, or before any worker took a
	// chunk of it (a limit checked as the level began).
	b.partial = b.nextChunk.Load() > 0 || s.transitions > b.transBase
	b.fold(b.chunkCounts)
	b.setCounts()
	return s.finish(Incomplete, reason), true, nil
}

// fold adds the counts of chunks to b.counts (sums, or maxima).
func (b *bfs) fold(chunks [][]int64) {
	for _, cc := range chunks {
		for i, v := range cc {
			if i >= len(b.counts) {
				break
			}
			if b.countMax[i] {
				b.counts[i] = max(b.counts[i], v)
			} else {
				b.counts[i] += v
			}
		}
	}
}

// setCounts gives the model passed to BFS the statistics of the search.
func (b *bfs) setCounts() {
	if b.ctMain != nil {
		b.ctMain.SetCounts(b.counts)
	}
}

// checkLimits halts the level when a limit is reached. The search's
// goroutine calls it every 20 ms while the workers run, and each worker
// every limitEvery new states, so that a busy machine that keeps the
// former waiting cannot let the heap run far past its budget.
func (b *bfs) checkLimits() {
	b.limMu.Lock()
	defer b.limMu.Unlock()
	s := b.search
	unexplored := func() int {
		return b.hi - b.lo - int(min(b.nextChunk.Load()*chunkStates, int64(b.hi-b.lo))) + b.lvl.len()
	}
	reason := ""
	if s.opt.Stop != nil {
		select {
		case <-s.opt.Stop:
			reason = fmt.Sprintf("interrupted with about %d states unexplored", unexplored())
		default:
		}
	}
	if reason == "" && s.opt.Timeout > 0 && time.Since(s.runStart) >= s.opt.Timeout {
		reason = fmt.Sprintf("time limit %s reached with about %d states unexplored", s.opt.Timeout, unexplored())
	}
	if inuse := s.sampleMemory(false); reason == "" && s.opt.MaxMemory > 0 && inuse >= s.opt.MaxMemory {
		reason = fmt.Sprintf("memory limit %s reached (heap %s) with about %d states unexplored",
			FormatBytes(s.opt.MaxMemory), FormatBytes(inuse), unexplored())
	}
	if reason != "" {
		b.stop(reason)
	}
}

// stop halts every worker for the reason given (the first reason wins).
func (b *bfs) stop(reason string) {
	b.mu.Lock()
	if b.reason == "" {
		b.reason = reason
	}
	b.mu.Unlock()
	b.halt.Store(true)
}

// levelNote describes, for a progress line, the level at depth d being
// expanded: its width and its growth over the one before (on a long
// search, whether the levels are still growing).
func levelNote(levels []int64, d int) string {
	if d < 1 || d >= len(levels) {
		return ""
	}
	return fmt.Sprintf(" (%d states, %.2fx depth %d)", levels[d], float64(levels[d])/float64(levels[d-1]), d-1)
}

func (b *bfs) progress() {
	b.limMu.Lock() // s.peak: workers sample memory too
	defer b.limMu.Unlock()
	s := b.search
	el := time.Since(s.start)
	n := b.n + b.lvl.len()
	fmt.Fprintf(s.opt.Progress, "progress: %d states, %d transitions, depth %d%s, %d queued, %.0f states/s, heap %s, %s\n",
		n, b.trans.Load(), s.depth, levelNote(b.levels, s.depth), b.hi-b.lo-int(min(b.nextChunk.Load()*chunkStates, int64(b.hi-b.lo)))+b.lvl.len(),
		float64(n)/el.Seconds(), FormatBytes(s.peak), el.Round(time.Second))
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

// commit gives the level's new states their ids, in the order of their
// smallest (parent, successor index), and records their parents; lo is the
// first id of the level expanded (whose ids the parents are).
func (b *bfs) commit(lo int) {
	n := b.lvl.len()
	width := max(b.hi-lo, 1)
	cnt := make([]uint32, width+1)
	for i := 0; i < n; i++ {
		cnt[int(b.lvl.at(uint32(i)).minKey>>32)-lo+1]++
	}
	for i := 1; i <= width; i++ {
		cnt[i] += cnt[i-1]
	}
	order := make([]uint32, n)
	for i := 0; i < n; i++ {
		p := int(b.lvl.at(uint32(i)).minKey>>32) - lo
		order[cnt[p]] = uint32(i)
		cnt[p]++
	}
	// Within a parent, order by successor index (few entries each).
	for i := 1; i < n; i++ {
		for j := i; j > 0; j-- {
			x, y := b.lvl.at(order[j-1]), b.lvl.at(order[j])
			if x.minKey>>32 != y.minKey>>32 || x.minKey < y.minKey {
				break
			}
			order[j-1], order[j] = order[j], order[j-1]
		}
	}
	var front []encRef
	b.frontKeys = b.frontKeys[:0]
	b.frontSleep = b.frontSleep[:0]
	for _, li := range order {
		e := b.lvl.at(li)
		id := uint32(b.n)
		b.n++
		if b.roots.keys != nil {
			b.keys.add(e.root)
		} else {
			b.keyCol.add(e.root)
		}
		b.parent.add(e.minKey >> 32)
		if !b.fp {
			b.frontKeys = append(b.frontKeys, e.root)
		}
		if b.sleep {
			b.frontSleep = append(b.frontSleep, e.sleep)
		}
		if b.search.g != nil {
			b.lvl.aux(li).id = id
		}
		if !b.opt.Frontier {
			b.roots.commit(e.root, li, id)
		}
		if b.fp {
			a := b.lvl.aux(li)
			front = append(front, encRef{a.encW, a.enc})
		}
	}
	if n > 0 {
		b.levels = append(b.levels, int64(n))
	}
	if b.fp {
		b.front = front
	}
	if b.opt.Frontier {
		b.roots.clear()
	}
	if b.chunkGraph != nil {
		g := b.search.g
		for c, gc := range b.chunkGraph {
			for i := range gc.lab {
				g.off = append(g.off, int64(len(g.to)))
				end := len(gc.to)
				if i+1 < len(gc.off) {
					end = int(gc.off[i+1])
				}
				for e := int(gc.off[i]); e < end; e++ {
					v := gc.to[e]
					if v&lvlFlag != 0 {
						v = b.lvl.aux(v &^ lvlFlag).id
					} else {
						v--
					}
					g.to = append(g.to, v)
					g.code = append(g.code, gc.code[e])
				}
				g.lab = append(g.lab, gc.lab[i])
			}
			b.chunkGraph[c] = nil
		}
	}
}

// failAt ends the search at the violation with key vk: a direct one
// (b.verr), or, with bad, the successor with that key violates an
// invariant.
func (b *bfs) failAt(vk uint64, bad bool) (Result, bool, error) {
	s := b.search
	vp, vi := int(vk>>32), uint32(vk)
	fresh := 0
	for i := 0; i < b.lvl.len(); i++ {
		if b.lvl.at(uint32(i)).minKey < vk {
			fresh++
		}
	}
	// Transitions and statistics before the violation: those of the whole
	// chunks before its parent's chunk, then those of its chunk's parents
	// up to it, counted again by expanding them (the violating transition
	// included, as a sequential search counts it).
	c := (vp - b.lo) / chunkStates
	t, sk := b.transBase, b.skipBase
	for i, n := range b.chunkTrans[:c] {
		t += n
		sk += b.chunkSkip[i]
	}
	b.fold(b.chunkCounts[:c])
	m := b.replay
	rct, _ := m.(Counter)
	if rct != nil {
		rct.ResetCounts()
	}
	if bad {
		b.verr = nil
	}
	for id := b.lo + c*chunkStates; id <= vp; id++ {
		i := uint32(0)
		visit := func(code uint32, succ []byte, err error) bool {
			if id == vp && i == vi {
				if bad {
					// Word the violation as in the state this transition
					// reaches.
					b.vcode, b.vhasCode, b.verr = code, true, m.(FreshChecker).CheckFresh()
				}
				return false
			}
			if succ != nil || err != nil || !b.sleep {
				t++
			} else {
				sk++ // left out by the sleep set
			}
			i++
			return true
		}
		var err error
		if b.sleep {
			err = m.(Sleeper).SuccessorsAsleep(b.ws[0].state(id), b.frontSleep[id-b.lo], visit)
		} else {
			err = m.Successors(b.ws[0].state(id), visit)
		}
		var pe PropertyError
		if err != nil && !errors.As(err, &pe) {
			return Result{}, true, err
		}
	}
	if bad && b.verr == nil {
		return Result{}, true, fmt.Errorf("explore: successor %d of state %d no longer violates an invariant", vi, vp)
	}
	if rct != nil && b.ctMain != nil {
		b.fold([][]int64{rct.Counts(nil)})
	}
	if b.vhasCode {
		t++
	}
	b.skipped.Store(sk)
	tr, err := b.path(uint32(vp))
	if err != nil {
		return Result{}, true, err
	}
	if b.vhasCode {
		tr = append(tr, b.vcode)
	}
	s.transitions = t
	b.pending, b.partial = fresh, true
	b.setCounts()
	r, err := s.fail(b.verr, tr)
	return r, true, err
}

// path rebuilds the actions from the initial state to state id.
func (b *bfs) path(id uint32) ([]uint32, error) {
	var ids []uint32
	for x := id; x != 0; {
		ids = append(ids, x)
		p, err := b.parent.at(int(x))
		if err != nil {
			return nil, err
		}
		x = uint32(p)
	}
	m := b.replay
	var enc, target, next []byte
	if b.fp {
		enc = append(enc, b.front0...)
	} else {
		k0, err := b.keyAt(0)
		if err != nil {
			return nil, err
		}
		var r treeRef
		b.tr.load(&r, k0)
		enc = r.enc
	}
	codes := make([]uint32, 0, len(ids))
	for i := len(ids) - 1; i >= 0; i-- {
		want, err := b.keyAt(int(ids[i]))
		if err != nil {
			return nil, err
		}
		if !b.fp {
			var r treeRef
			b.tr.load(&r, want)
			target = r.enc
		}
		found := false
		err = m.Successors(enc, func(code uint32, succ []byte, err error) bool {
			if err != nil {
				return true
			}
			if b.fp && Hash(succ) == want || !b.fp && bytes.Equal(succ, target) {
				codes = append(codes, code)
				next = append(next[:0], succ...)
				found = true
				return false
			}
			return true
		})
		if !found {
			return nil, fmt.Errorf("explore: cannot rebuild the trace: state %d is not a successor of its parent (%v)", ids[i], err)
		}
		enc, next = next, enc
	}
	return codes, nil
}

// DefaultWorkers is the number of workers a search uses by default: the
// number of CPUs the process may use.
func DefaultWorkers() int { return runtime.GOMAXPROCS(0) }
