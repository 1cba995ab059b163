package dist

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"lfccheck/explore"
)

// coord is the coordinator: rank 0, which is also a worker.
type coord struct {
	m       explore.Model
	w       *worker
	conns   []*grpc.ClientConn
	peers   []string
	opt     explore.Options
	start   time.Time
	sent    int64 // bytes of batches the workers sent each other
	sentSet int64 // memory of the workers' records of what they sent (sentSetBytes)
	taken   int64 // states taken from a slower worker
	left    int64 // states left by their owner to the worker that reached them first
	leftTk  int64 // of which reached from a state taken
	ctx     context.Context
	base    context.Context // ctx without the time limit (nil: ctx has none)

	// Checkpoints: the time searched before the checkpoint resumed, when
	// the last was written, how many were, the depth of the newest, and
	// whether the search resumed one.
	before   time.Duration
	lastCkpt time.Time
	written  int
	ckDepth  int
	resumed  bool
	lastProg time.Time
}

// each sends a command to every worker at once (to itself directly) and
// returns the replies by rank; the first failure cancels the others.
func (c *coord) each(ctx context.Context, req []byte) ([][]byte, error) {
	reps, _, err := c.ask(ctx, req, false)
	return reps, err
}

// ask is each; with tolerate, the others go on when a worker fails, and
// failed holds the errors by rank (nil for those that answered).
func (c *coord) ask(ctx context.Context, req []byte, tolerate bool) (reps [][]byte, failed []error, err error) {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := len(c.peers)
	reps = make([][]byte, n)
	errs := make([]error, n)
	// rank[r] orders the errors: a worker gone (its connection lost)
	// first, then one that failed on its own, then those stopped because
	// of another (canceled).
	rank := make([]int, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() {
			if r == 0 {
				reps[r], errs[r] = c.w.control(context.WithValue(ctx, direct{}, true), req)
				if errs[r] != nil && errors.Is(errs[r], context.Canceled) {
					rank[r] = 2
				}
			} else {
				reps[r], errs[r] = call(ctx, c.conns[r], req, false)
				if err := errs[r]; err != nil {
					st := status.Convert(err)
					switch {
					case st.Code() == codes.Canceled || errors.Is(err, context.Canceled) || st.Message() == context.Canceled.Error():
						rank[r] = 2
						errs[r] = fmt.Errorf("worker %d (%s): %s", r, c.peers[r], st.Message())
					case st.Code() == codes.Unavailable && ctx.Err() == nil:
						errs[r] = fmt.Errorf("worker %d (%s) is gone (its connection lost: the process ended or its machine cannot be reached): %s", r, c.peers[r], st.Message())
					default:
						rank[r] = 1
						errs[r] = fmt.Errorf("worker %d (%s): %s", r, c.peers[r], st.Message())
					}
				}
			}
			if errs[r] != nil && !tolerate {
				cancel()
			}
		})
	}
	wg.Wait()
	if tolerate {
		return reps, errs, nil
	}
	// A worker found silent is why the others were stopped.
	var lost *peerLost
	if errors.As(context.Cause(parent), &lost) {
		return nil, nil, lost
	}
	for k := range 3 {
		for r, err := range errs {
			if err != nil && rank[r] == k {
				return nil, nil, err
			}
		}
	}
	return reps, nil, nil
}

// restart ends a search with sleep sets that met a transition into a state
// already expanded (as explore.BFS does, it is searched again without).
type restart struct{ depth, states int64 }

func (e restart) Error() string {
	return fmt.Sprintf("a transition from depth %d reached a state of an earlier level (the state graph is not layered), after %d states with sleep sets", e.depth, e.states)
}

// tally is what the search counted.
type tally struct {
	levels            []int64
	n, trans, skipped int64
	depth             int
	partial           bool
}

// sleepChoice decides whether the search uses sleep sets, as explore.BFS
// does, and why not.
func (c *coord) sleepChoice() (bool, string) {
	if c.opt.NoSleep {
		return false, "turned off"
	}
	sl, ok := c.m.(explore.Sleeper)
	if !ok {
		return false, "the model has none"
	}
	if why := sl.SleepOff(); why != "" {
		return false, why
	}
	if n, ok := c.m.(explore.SleepNoter); ok {
		return true, n.SleepNote()
	}
	return true, ""
}

func (c *coord) run(ctx context.Context) (explore.Result, error) {
	c.ctx, c.lastCkpt, c.ckDepth = ctx, c.start, -1
	sleep, note := c.sleepChoice()
	var m *meta
	if c.opt.Checkpoint != "" {
		var err error
		if m, err = c.resume(); err != nil {
			return explore.Result{}, err
		}
	}
	for {
		r, err := c.search(ctx, &sleep, &note, m)
		var rs restart
		if errors.As(err, &rs) && sleep {
			sleep, note, m = false, rs.Error()+": searched again without them", nil
			continue
		}
		if err != nil {
			return r, err
		}
		r.Sleep.On, r.Sleep.Note = sleep, note
		if c.opt.Checkpoint != "" && r.Verdict != explore.Incomplete {
			if err := c.removeCheckpoint(); err != nil {
				return r, fmt.Errorf("removing the checkpoint: %v", err)
			}
		}
		return r, nil
	}
}

// search searches from the initial state, or from the checkpoint m.
func (c *coord) search(ctx context.Context, sleep *bool, note *string, m *meta) (explore.Result, error) {
	t := &tally{levels: []int64{1}, n: 1}
	start := 0
	if m != nil {
		t = &tally{levels: slices.Clone(m.Levels), n: m.States, trans: m.Trans, skipped: m.Skipped}
		start, *sleep, *note = m.Depth, m.Sleep, m.Note
		if start >= len(t.levels) {
			return explore.Result{}, fmt.Errorf("the checkpoint in %s is malformed (depth %d, %d levels)", c.opt.Checkpoint, start, len(t.levels))
		}
	} else {
		var e enc
		e.bool(*sleep)
		if _, err := c.each(ctx, append([]byte{opInit}, e.b...)); err != nil {
			// (The time limit can end the search before it starts: the
			// initial state is then the level not expanded.)
			return c.cut(ctx, t, 1, err)
		}
		_, verr := c.m.Initial()
		if verr != nil {
			return c.finish(c.untimed(ctx), explore.Fail, "", verr, nil, t)
		}
	}
	for depth := start; ; depth++ {
		t.depth = depth
		width := t.levels[depth]
		max := c.opt.MaxDepth
		if c.opt.Checkpoint != "" && c.ckDepth != depth &&
			(depth > start && time.Since(c.lastCkpt) >= c.opt.CheckpointEvery || max > 0 && depth >= max) {
			if err := c.writeCheckpoint(t, depth, *sleep, *note); err != nil {
				// An interrupt while it is written ends the search as
				// interrupted, with the checkpoint before it kept.
				if r, ok := c.stopped(ctx, t, width); ok {
					return r, nil
				}
				return explore.Result{}, fmt.Errorf("writing the checkpoint to %s: %v", c.opt.Checkpoint, err)
			}
		}
		if max > 0 && depth >= max {
			return c.finish(c.untimed(ctx), explore.Incomplete, fmt.Sprintf("depth limit %d reached with %d states unexplored", max, width), nil, nil, t)
		}
		reps, err := c.each(ctx, depthCmd(opExpand, int64(depth)))
		if err != nil {
			return c.cut(ctx, t, width, err)
		}
		var lt, lsk int64
		var best *candidate
		for _, rep := range reps {
			d := dec{b: rep}
			lt += d.i()
			lsk += d.i()
			has := d.bool()
			cd := candidate{key: d.bytes(), tBefore: d.i(), skBefore: d.i(), hasCode: d.bool()}
			if d.err != nil {
				return explore.Result{}, d.err
			}
			if has && (best == nil || bytes.Compare(cd.key, best.key) < 0) {
				cd.key = slices.Clone(cd.key)
				best = &cd
			}
		}
		reps, err = c.each(ctx, []byte{opSummary})
		if err != nil {
			return c.cut(ctx, t, width, err)
		}
		var fresh int64
		var nl []byte
		for _, rep := range reps {
			d := dec{b: rep}
			fresh += int64(d.u())
			k := d.bytes()
			if d.bool() && (nl == nil || bytes.Compare(k, nl) < 0) {
				nl = slices.Clone(k)
			}
			if d.err != nil {
				return explore.Result{}, d.err
			}
		}
		if *sleep && nl != nil && (best == nil || bytes.Compare(nl, best.key) < 0) {
			return explore.Result{}, restart{depth: int64(depth), states: t.n}
		}
		if best != nil {
			return c.failAt(c.untimed(ctx), t, best)
		}
		t.trans += lt
		t.skipped += lsk
		if max := c.opt.MaxStates; max > 0 && t.n+fresh > max {
			t.levels = append(t.levels, max-t.n)
			t.n, t.partial = max, true
			return c.finish(c.untimed(ctx), explore.Incomplete, fmt.Sprintf("state limit %d reached with more states to store", max), nil, nil, t)
		}
		if fresh == 0 {
			return c.finish(c.untimed(ctx), explore.Pass, "", nil, nil, t)
		}
		// The level found is complete: cut short while the workers take
		// it as the next to expand, the search reports it as the next
		// level's expansion cut short would.
		t.levels = append(t.levels, fresh)
		t.n += fresh
		if _, err := c.each(ctx, []byte{opAdvance}); err != nil {
			t.depth = depth + 1
			return c.cut(ctx, t, fresh, err)
		}
		c.progress(t)
	}
}

// progress prints a progress line at a level's end, every
// Options.ProgressEvery (default 3s).
func (c *coord) progress(t *tally) {
	if c.opt.Progress == nil {
		return
	}
	every := c.opt.ProgressEvery
	if every <= 0 {
		every = 3 * time.Second
	}
	if c.lastProg.IsZero() {
		c.lastProg = c.start
	}
	if time.Since(c.lastProg) < every {
		return
	}
	c.lastProg = time.Now()
	el := c.before + time.Since(c.start)
	fmt.Fprintf(c.opt.Progress, "progress: %d states, %d transitions, depth %d done (%d states at depth %d), %.0f states/s, %d workers, %s\n",
		t.n, t.trans, t.depth, t.levels[len(t.levels)-1], t.depth+1, float64(t.n)/el.Seconds(), len(c.peers), el.Round(time.Second))
}

// untimed is ctx without the search's time limit: a search that has its
// verdict (or a violation) gathers the counts and the counterexample even
// if the limit passes meanwhile, instead of failing on it.
func (c *coord) untimed(ctx context.Context) context.Context {
	if c.base != nil {
		return c.base
	}
	return ctx
}

// stopping reports whether the time limit or an interrupt ends the search.
// (gRPC may report a deadline exceeded a moment before ctx's own timer
// fires: the deadline is compared with the clock too.)
func (c *coord) stopping(ctx context.Context) bool {
	if c.opt.Stop != nil && isClosed(c.opt.Stop) {
		return true
	}
	if c.opt.Timeout <= 0 {
		return false
	}
	dl, ok := ctx.Deadline()
	return errors.Is(ctx.Err(), context.DeadlineExceeded) || ok && !time.Now().Before(dl)
}

// cut ends the search on err, from a command to the workers: as a search
// cut short (stopped, with width states unexplored) when the time limit
// or an interrupt is why, else with err.
func (c *coord) cut(ctx context.Context, t *tally, width int64, err error) (explore.Result, error) {
	if r, ok := c.stopped(ctx, t, width); ok {
		return r, nil
	}
	return explore.Result{}, err // (a worker found silent: ask's peerLost)
}

// stopGather bounds the wait for the workers' statistics once the time
// limit or an interrupt has stopped the search: a worker that does not
// answer by then (stopped, or lost) is left out of them.
const stopGather = 2 * time.Second

// stopped turns a level cut short by the time limit or an interrupt into
// an incomplete result.
func (c *coord) stopped(ctx context.Context, t *tally, width int64) (explore.Result, bool) {
	reason := ""
	switch {
	case !c.stopping(ctx):
		return explore.Result{}, false
	case c.opt.Stop != nil && isClosed(c.opt.Stop):
		reason = fmt.Sprintf("interrupted with about %d states unexplored", width)
	default:
		reason = fmt.Sprintf("time limit %s reached with about %d states unexplored", c.opt.Timeout, width)
	}
	t.partial = true
	t.levels = append(t.levels, 0)
	gctx, cancel := context.WithTimeout(context.Background(), stopGather)
	defer cancel()
	g, missing, err := c.gatherFrom(gctx, true)
	if err != nil {
		return explore.Result{}, false
	}
	for _, m := range missing {
		reason += fmt.Sprintf("; the statistics leave out %v", m)
	}
	r, err := c.result(g, explore.Incomplete, reason, nil, nil, t)
	return r, err == nil
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// failAt ends the search at the violation with key best: what comes before
// it in breadth-first order is counted, and the counterexample rebuilt.
func (c *coord) failAt(ctx context.Context, t *tally, best *candidate) (explore.Result, error) {
	var e enc
	e.bytes(best.key)
	reps, err := c.each(ctx, append([]byte{opFailAt}, e.b...))
	if err != nil {
		return explore.Result{}, err
	}
	var fresh int64
	for _, rep := range reps {
		d := dec{b: rep}
		fresh += d.i()
		t.trans += d.i()
		t.skipped += d.i()
		if d.err != nil {
			return explore.Result{}, d.err
		}
	}
	t.trans += best.tBefore
	t.skipped += best.skBefore
	if best.hasCode {
		t.trans++
	}
	t.levels = append(t.levels, fresh)
	t.n += fresh
	t.partial = true
	// The statistics are the workers', gathered before the coordinator
	// expands states again to rebuild the counterexample.
	g, err := c.gather(ctx)
	if err != nil {
		return explore.Result{}, err
	}
	trace, verr, err := c.rebuild(best.key)
	if err != nil {
		return explore.Result{}, err
	}
	return c.result(g, explore.Fail, "", verr, trace, t)
}

// rebuild follows a path of successor indexes from the initial state: the
// action codes, and the violation at its end (of the last transition, or
// of the state reached when the last index is past its successors).
func (c *coord) rebuild(key []byte) ([]uint32, error, error) {
	idx, err := pathIdx(key)
	if err != nil {
		return nil, nil, err
	}
	// A model of its own when the model has one (it counts nothing), with
	// the invariants checked where the workers defer them.
	m := c.m
	if r, ok := m.(explore.Replayer); ok {
		m = r.NewReplayer()
	}
	fc, _ := m.(explore.FreshChecker)
	state, _ := m.Initial()
	state = slices.Clone(state)
	var codes []uint32
	for j, want := range idx {
		last := j == len(idx)-1
		var (
			k     uint32
			found bool
			verr  error
			next  []byte
		)
		err := m.Successors(state, func(code uint32, succ []byte, err error) bool {
			if k != want {
				k++
				return true
			}
			if err == nil && fc != nil {
				err = fc.CheckFresh()
			}
			found = true
			codes = append(codes, code)
			verr, next = err, slices.Clone(succ)
			return false
		})
		switch {
		case last && found && verr != nil:
			return codes, verr, nil
		case last && !found && err != nil:
			return codes, err, nil
		case !found || verr != nil || last:
			return nil, nil, fmt.Errorf("dist: cannot rebuild the counterexample: step %d of the path found no %s", j+1, map[bool]string{true: "violation", false: "successor"}[last])
		}
		state = next
	}
	return nil, nil, errors.New("dist: cannot rebuild the counterexample: empty path")
}

// gathered is what the workers report at the end.
type gathered struct {
	counts  []int64
	reached []string
	store   int64
	sent    int64
	sentSet int64 // the workers' records of what they sent (sentSetBytes)
	taken   int64 // states taken from a slower worker (steal)
	left    int64 // states left by their owner to the worker that reached them first (delegate)
	leftTk  int64 // of which reached from a state taken
}

// finish gathers the workers' statistics into the result.
func (c *coord) finish(ctx context.Context, v explore.Verdict, reason string, verr error, trace []uint32, t *tally) (explore.Result, error) {
	g, err := c.gather(ctx)
	if err != nil {
		return explore.Result{}, err
	}
	return c.result(g, v, reason, verr, trace, t)
}

// gather collects the workers' statistics, goals reached, memory and
// bytes sent.
func (c *coord) gather(ctx context.Context) (*gathered, error) {
	g, _, err := c.gatherFrom(ctx, false)
	return g, err
}

// gatherFrom is gather; with tolerate, from the workers that answer (the
// others named in missing).
func (c *coord) gatherFrom(ctx context.Context, tolerate bool) (*gathered, []error, error) {
	reps, failed, err := c.ask(ctx, []byte{opStats}, tolerate)
	if err != nil {
		return nil, nil, err
	}
	var missing []error
	var (
		counts  []int64
		reached []string
		store   int64
		sent    int64
		sentSet int64
		taken   int64
		left    int64
		leftTk  int64
	)
	ct, _ := c.m.(explore.Counter)
	var max []bool
	if ct != nil {
		max = ct.CountMax()
	}
	for r, rep := range reps {
		if failed != nil && failed[r] != nil {
			missing = append(missing, failed[r])
			continue
		}
		d := dec{b: rep}
		nc := d.count()
		for i := 0; i < nc && d.err == nil; i++ {
			x := d.i()
			switch {
			case i >= len(counts):
				counts = append(counts, x)
			case i < len(max) && max[i]:
				counts[i] = maxInt(counts[i], x)
			default:
				counts[i] += x
			}
		}
		nr := d.count()
		for i := 0; i < nr && d.err == nil; i++ {
			if s := d.str(); !slices.Contains(reached, s) {
				reached = append(reached, s)
			}
		}
		store += d.i()
		sent += d.i()
		sentSet += d.i()
		taken += d.i()
		left += d.i()
		leftTk += d.i()
		if d.err != nil {
			return nil, nil, d.err
		}
	}
	return &gathered{counts: counts, reached: reached, store: store, sent: sent, sentSet: sentSet, taken: taken, left: left, leftTk: leftTk}, missing, nil
}

// result makes the search's result.
func (c *coord) result(g *gathered, v explore.Verdict, reason string, verr error, trace []uint32, t *tally) (explore.Result, error) {
	counts, reached, store, sent := g.counts, g.reached, g.store, g.sent
	ct, _ := c.m.(explore.Counter)
	r := explore.Result{Verdict: v, Reason: reason}
	if v == explore.Fail {
		var pe explore.PropertyError
		if !errors.As(verr, &pe) {
			return explore.Result{}, fmt.Errorf("explore: model failed: %w", verr)
		}
		r.Violation, r.Trace = pe, trace
	}
	if ct != nil && counts != nil {
		ct.SetCounts(counts)
	}
	if gk, ok := c.m.(explore.GoalKeeper); ok {
		slices.Sort(reached)
		if err := gk.SetReached(reached); err != nil {
			return explore.Result{}, err
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	st := explore.Stats{
		States: t.n, Transitions: t.trans, Depth: t.depth, Elapsed: c.before + time.Since(c.start),
		PeakHeapBytes: ms.HeapAlloc, StoreBytes: store, Levels: t.levels, LevelPartial: t.partial,
	}
	if v == explore.Fail {
		st.Depth = len(trace)
	}
	if sec := st.Elapsed.Seconds(); sec > 0 {
		st.StatesPerSec = float64(st.States) / sec
	}
	if c.opt.Fingerprint {
		// TLC's optimistic estimate, as explore.BFS gives it.
		n, g := float64(st.States), float64(st.Transitions+1)
		st.CollisionProb = n * math.Max(g-n, 0) / math.Pow(2, 64)
	}
	r.Stats = st
	r.Sleep.Skipped = t.skipped
	c.sent, c.sentSet, c.taken, c.left, c.leftTk = sent, g.sentSet, g.taken, g.left, g.leftTk
	return r, nil
}

func maxInt(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}
