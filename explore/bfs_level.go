package explore

import (
	"fmt"
	"math"
	"sync"
	"time"
)

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
