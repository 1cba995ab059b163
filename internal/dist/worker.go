package dist

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"lfccheck/explore"
)

// The coordinator's commands (the first byte of a Control request).
const (
	opHello      = 1 + iota // the number of workers, the search and the rank must agree; the worker says who it is
	opInit                  // start a search (with or without sleep sets)
	opExpand                // expand the level (at this depth), sending successors to their owners
	opSummary               // the new states of the level, the first transition into an expanded state
	opAdvance               // the new states become the level to expand
	opFailAt                // what comes before the violation with this key
	opStats                 // the model's statistics, goals reached, memory, bytes sent
	opDone                  // the search is over
	opPing                  // are you there (and who are you)
	opCheckpoint            // write this worker's part of a checkpoint
	opLoad                  // continue from this worker's part of a checkpoint
	opPrune                 // remove this worker's other checkpoints
	opSteal                 // (from another worker) give away part of the states not expanded yet
	opNotes                 // (from another worker, the owner) expand these states it sent of the next level
	opPeers                 // check the connections to the other workers against these nonces
)

// minShare is the fewest states a worker gives away at once (steal): a
// chunk costs a round trip.
const minShare = 32

// shareBytes is about the most bytes of states given away at once.
const shareBytes = 4 << 20

// stealRetry is the wait before asking again a worker that has not
// started on the level yet.
const stealRetry = 200 * time.Microsecond

// batchBytes bounds a batch of successors sent to one owner.
const batchBytes = 128 << 10

// inboxBytes bounds the batches received that wait for the expanding
// goroutine to store them; beyond it, gRPC's goroutine stores a batch
// itself (as it does outside the expansion of this worker's states).
const inboxBytes = 32 << 20

// worker holds the states one rank owns.
type worker struct {
	m     explore.Model
	rank  int
	n     int
	conns []*grpc.ClientConn // by rank, nil for this one
	peers []string           // their addresses

	// Identity (peers.go): this process's nonce, the hash of the
	// search's identity, and the nonce of the coordinator it works for
	// (0 before the hello; under idMu).
	nonce    uint64
	idHash   uint64
	initHash uint64 // (the initial state's: the model is not called from gRPC's goroutines for it)
	idMu     sync.Mutex
	search   uint64

	mu         sync.Mutex // the store and the level being built (receive runs on gRPC's goroutines)
	store      states     // exact (the tree store with segments), or fingerprints (fp)
	fp         bool
	levelStart int      // ids from here are the level being built
	npath      [][]byte // per state of the level being built: the smallest path that reaches it
	nz         []uint64 // its sleep set (the intersection over its incoming transitions)
	nbad       []bool   // per state of the level being built: its invariants were checked here and failed (markBad)
	nl         []byte   // with sleep sets: the smallest key of a transition into an expanded state
	arena      []byte   // where the paths of npath and nl are kept (see keep)

	// Delegation: the worker that reached a state first expands it. A
	// successor sent goes with a reference to its entry in the sender's
	// sent sets (sentRef: sentTo, or the set of the chunk taken it came
	// from), where the sender keeps its path and segment ends with it;
	// the owner of a new state whose smallest key came with a reference
	// keeps the state and its path, but leaves its expansion to the
	// sender (opAdvance sends it a note: the reference and the state's
	// sleep set), which interns it in its own tree store and expands it
	// among its own states in the order of their paths. A worker then
	// expands the children of the states it expanded, neighbours in the
	// order of the paths as in one process, and each state once; without
	// delegation its states would be every other state of the level,
	// whose successors the model's and the store's caches of the last
	// states serve worse, and more of the successors would be reached by
	// both workers and sent.
	delegate bool        // send references (the tree store, whose leaf table gives the states left to this worker their leaf ids)
	delegOK  bool        // delegate with the tree store (not Options.NoDelegate)
	nsrc     []int32     // per state of the level being built: the rank that sent its smallest key with a reference, -1 if none
	nref     []uint64    // and that reference
	notes    []note      // the states of the next level left to this one (opNotes)
	dlg      []delegated // the states of the level expanded left to this one (order holds ^i for dlg[i])
	dbuf     []byte      // their encodings (delegated.at)
	dends    []int       // and their segment ends, nseg per state in the order of dlg
	dperm    []int32     // (scratch: takeNotes)

	// Leaf ids (explore.LeafUser): with a model that is a Segmenter and a
	// LeafUser, every successor is sent with its nseg segment lengths in
	// its batch, and the model is given the ids of a state's segments
	// before the state is expanded, so that what it caches by leaf id
	// (decoded segments, sends) serves this worker too. The ids are the
	// tree store's (treeStates) or, with fingerprints, those of leaves:
	// every state stored then keeps its segment ends (nends for the level
	// being built, fends for the level expanded; nseg per state, all 0
	// when unknown), and its segments are interned before it is expanded.
	sg     explore.Segmenter
	lu     explore.LeafUser
	nseg   int
	leaves *explore.LeafInterner
	nends  []int32
	fends  []int32
	ends   []int // scratch
	gends  []int // (scratch: frontEnds)
	ids    []uint32

	// While expand runs through this worker's states (inActive), the
	// batches received wait in inbox and the expanding goroutine stores
	// them between two states, under mu, which it holds while it expands
	// a state: the store is then written by one goroutine, without a lock
	// taken per successor, and a process keeps one busy thread.
	inMu      sync.Mutex
	inActive  bool
	inbox     [][]byte
	inBytes   int
	inFree    [][]byte    // the inbox's buffers, stored and free again
	inPending atomic.Bool // inbox is not empty

	sleep  bool
	sl     explore.Sleeper
	fc     explore.FreshChecker // invariants checked on a successor the first time this worker sends it in a level
	flo    int                  // the level being expanded: ids [flo, levelStart)
	fpath  [][]byte             // its paths
	fz     []uint64             // its sleep sets
	order  []int32              // its indexes to expand here, and ^i for dlg[i], in the order of their paths
	ftrans []int64              // per state expanded: transitions counted
	fskip  []int64              // per state expanded: transitions left out by sleep sets

	// The model's statistics (explore.Counter) before the level being
	// expanded, and, once a violation ends the search, those of the states
	// before it in breadth-first order.
	ct         explore.Counter
	countsPrev []int64
	countsFail []int64

	// Work sharing (expand, steal, giveAway): while expand runs through
	// this worker's own states (stealable), order[next:end] are those not
	// expanded yet, and another worker may take part of them (under mu).
	share     bool // take states from the others, and give them some (not Options.NoShare)
	stealable bool
	depth     int64 // of the level expand last started on (-1 before)
	next, end int
	stealTo   [][]*sentSet  // per chunk taken in the level, what it sent each worker (kept until the next level's notes are taken)
	nchunks   int           // the chunks taken in the level
	stolen    []stolenCount // the states taken in the level
	taken     atomic.Int64  // states taken from the others, in all
	left      atomic.Int64  // states left to this worker by their owners, in all
	leftTaken atomic.Int64  // of which reached from a state taken from another worker
	minShare  int           // fewest states given away at once (minShare)
	slow      time.Duration // (tests) pause of odd ranks after each state of their own
	giveFront bool          // (tests) give away the first half of the states left instead of the last

	storeErr  error        // the store failed (see insertH); under mu
	recvDelta segDelta     // the state stored before, in the batch being stored (store1); under mu
	pool      batchPool    // buffers for the batches sent
	sentTo    []*sentSet   // by rank: what expand sent that worker in the level (kept for its table)
	sent      atomic.Int64 // bytes of batches sent to other workers
	timed     bool         // Options.ProfileDir is set: tm is kept
	tm        timing
	done      chan struct{}
	doneOnce  sync.Once
	abort     error // set before done is closed: the search ended with an error
}

func newWorker(m explore.Model, rank, n int) *worker {
	w := &worker{m: m, rank: rank, n: n, done: make(chan struct{}), store: plainStates{new(explore.ExactStore)},
		share: n > 1, minShare: minShare, depth: -1, delegOK: true}
	if ct, ok := m.(explore.Counter); ok && len(ct.CountMax()) > 0 {
		w.ct = ct
	}
	if fc, ok := m.(explore.FreshChecker); ok {
		fc.DeferStateChecks()
		w.fc = fc
	}
	sg, sok := m.(explore.Segmenter)
	lu, lok := m.(explore.LeafUser)
	if sok && lok {
		m.Initial()
		if n := len(sg.Segments(nil)); n > 0 {
			w.sg, w.lu, w.nseg = sg, lu, n
			w.recvDelta.nseg = n
		}
	}
	return w
}

// owner is the rank that owns a state with hash h (the high half: the
// store's table uses the low bits).
func owner(h uint64, n int) int { return int((h >> 32) % uint64(n)) }

// receive takes a batch of successors: while expand runs through this
// worker's states, it queues a copy for the expanding goroutine to store
// (an owner's batch is stored before its expand returns, so before the
// level's barrier); otherwise it stores the batch itself.
func (w *worker) receive(batch []byte) error {
	w.inMu.Lock()
	if w.inActive && w.inBytes+len(batch) <= inboxBytes {
		var c []byte
		if n := len(w.inFree); n > 0 {
			c, w.inFree = w.inFree[n-1][:0], w.inFree[:n-1]
		}
		w.inbox = append(w.inbox, append(c, batch...))
		w.inBytes += len(batch)
		w.inPending.Store(true)
		w.inMu.Unlock()
		return nil
	}
	w.inMu.Unlock()
	w.lock()
	defer w.mu.Unlock()
	return w.store1(batch)
}

// startInbox makes receive queue the batches for the expanding goroutine.
func (w *worker) startInbox() {
	w.inMu.Lock()
	w.inActive = true
	w.inMu.Unlock()
}

// stopInbox makes receive store the batches itself again, and returns
// those queued (none when called again).
func (w *worker) stopInbox() [][]byte {
	w.inMu.Lock()
	defer w.inMu.Unlock()
	w.inActive = false
	q := w.takeInbox()
	w.inFree = nil // (kept for one level only)
	return q
}

// freeInbox gives the buffers of batches stored back to receive.
func (w *worker) freeInbox(q [][]byte) {
	w.inMu.Lock()
	if w.inActive {
		w.inFree = append(w.inFree, q...)
	}
	w.inMu.Unlock()
}

// takeInbox empties the inbox. Under inMu.
func (w *worker) takeInbox() [][]byte {
	q := w.inbox
	w.inbox, w.inBytes = nil, 0
	w.inPending.Store(false)
	return q
}

// drainPending stores the batches queued, if any. Under mu, on the
// expanding goroutine.
func (w *worker) drainPending() error {
	if !w.inPending.Load() {
		return nil
	}
	return w.drainInbox()
}

// drainInbox stores the batches queued. Under mu, on the expanding goroutine.
func (w *worker) drainInbox() error {
	w.inMu.Lock()
	q := w.takeInbox()
	w.inMu.Unlock()
	if err := w.storeAll(q); err != nil {
		return err
	}
	w.freeInbox(q)
	return nil
}

// storeAll stores the batches q. Under mu.
func (w *worker) storeAll(q [][]byte) error {
	for _, b := range q {
		if err := w.store1(b); err != nil {
			return err
		}
	}
	return nil
}

// store1 stores a batch of successors. Under mu.
func (w *worker) store1(batch []byte) error {
	if w.timed {
		t0 := time.Now()
		defer func() { w.tm.recvWall.Add(int64(time.Since(t0))); w.tm.batches.Add(1) }()
	}
	d := dec{b: batch}
	from := d.u() // (the sender's rank)
	if d.err == nil && (from >= uint64(w.n) || int(from) == w.rank) {
		return fmt.Errorf("worker %d: a batch from worker %d", w.rank, from)
	}
	w.recvDelta.reset()
	for len(d.b) > 0 && d.err == nil {
		var e []byte
		var ends []int
		if w.nseg > 0 {
			e, ends = d.segs(&w.recvDelta)
		} else {
			e = d.bytes()
		}
		k := d.key(&w.recvDelta)
		ref := d.u()
		var z uint64
		if w.sleep {
			z = d.u()
		}
		if d.err != nil {
			break
		}
		src := int32(from)
		if ref == 0 {
			src = -1
		}
		fresh, _ := w.insertH(explore.Hash(e), e, k, z, ends, src, ref)
		if w.timed {
			w.tm.succRecv.Add(1)
			if fresh {
				w.tm.succRecvNew.Add(1)
			}
		}
	}
	return d.err
}

// lock takes mu, timing the wait.
func (w *worker) lock() {
	if !w.timed {
		w.mu.Lock()
		return
	}
	t0 := time.Now()
	w.mu.Lock()
	w.tm.lockWall.Add(int64(time.Since(t0)))
}

// insertH stores successor e, whose hash is h, reached by the transition
// with key k (its path), whose sleep set is z, and whose segments end at
// ends (nil: unknown), sent by worker src with reference ref (-1 and 0:
// found here, or sent without one; see delegate); it reports whether e
// is a new state, and whether k is a smaller key than the state of this
// level had and the state violates an invariant (markBad; see expand). An error (the tree store's:
// ends that do not split e, a full table) is kept in storeErr, and ends
// the search. Under mu.
func (w *worker) insertH(h uint64, e, k []byte, z uint64, ends []int, src int32, ref uint64) (fresh, smallerBad bool) {
	id, fresh, err := w.store.add(h, e, ends)
	if err != nil {
		if w.storeErr == nil {
			w.storeErr = fmt.Errorf("worker %d: %w", w.rank, err)
		}
		return false, false
	}
	if w.timed {
		switch {
		case fresh:
			w.tm.succNew.Add(1)
		case int(id) >= w.levelStart:
			w.tm.succThisLevel.Add(1)
		default:
			w.tm.succOlder.Add(1)
		}
	}
	switch {
	case fresh:
		w.npath = append(w.npath, w.keep(k))
		w.nz = append(w.nz, z)
		w.nbad = append(w.nbad, false)
		w.nsrc = append(w.nsrc, src)
		w.nref = append(w.nref, ref)
		if w.nseg > 0 && w.leaves != nil {
			w.keepEnds(ends)
		}
	case int(id) >= w.levelStart:
		j := int(id) - w.levelStart
		if bytes.Compare(k, w.npath[j]) < 0 {
			w.npath[j] = w.keep(k)
			w.nsrc[j], w.nref[j] = src, ref
			smallerBad = w.nbad[j]
		}
		w.nz[j] &= z
	case w.sleep && (w.nl == nil || bytes.Compare(k, w.nl) < 0):
		w.nl = slices.Clone(k)
	}
	return fresh, smallerBad
}

// markBad records that the state of the level being built that was
// stored last violates an invariant. Under mu.
func (w *worker) markBad() { w.nbad[len(w.nbad)-1] = true }

// keepEnds records the segment ends of the state just stored (zeros when
// unknown). Under mu.
func (w *worker) keepEnds(ends []int) {
	if len(ends) != w.nseg {
		w.nends = append(w.nends, make([]int32, w.nseg)...)
		return
	}
	for _, e := range ends {
		w.nends = append(w.nends, int32(e))
	}
}

// useLeaves gives the model the leaf ids of state, at position i of order
// (see front), when its segment ends are known. Under mu.
func (w *worker) useLeaves(i int, state []byte) {
	if ts, ok := w.store.(treeStates); ok && i >= 0 {
		w.lu.UseLeaves(ts.Leaves()) // (of the state just rebuilt)
		return
	}
	w.leavesOf(state, w.frontEnds(int32(i), state))
}

// frontEnds returns the segment ends of state, which front(e) returned
// last, or nseg zeros when they are not known. Under mu.
func (w *worker) frontEnds(e int32, state []byte) []int {
	ends := w.gends[:0]
	ts, tree := w.store.(treeStates)
	switch i := int(e); {
	case w.nseg == 0:
	case i < 0:
		ends = append(ends, w.dends[^i*w.nseg:(^i+1)*w.nseg]...)
	case tree:
		_, _, te := ts.Leaves()
		ends = append(ends, te...)
	case len(w.fends) >= (i+1)*w.nseg:
		for _, x := range w.fends[i*w.nseg : (i+1)*w.nseg] {
			ends = append(ends, int(x))
		}
	}
	if len(ends) != w.nseg || (w.nseg > 0 && ends[w.nseg-1] != len(state)) {
		ends = append(ends[:0], make([]int, w.nseg)...)
	}
	w.gends = ends
	return ends
}

// splitsInto reports whether ends (ascending, none below 0, the last n)
// split an encoding of n bytes into segments.
func splitsInto(ends []int, n int) bool {
	return len(ends) > 0 && ends[0] >= 0 && ends[len(ends)-1] == n && slices.IsSorted(ends)
}

// leavesOf gives the model the leaf ids of state, from this worker's
// tables, if ends split it into its nseg segments. Under mu.
func (w *worker) leavesOf(state []byte, ends []int) {
	if w.nseg == 0 || len(ends) != w.nseg || !splitsInto(ends, len(state)) {
		return
	}
	if ts, ok := w.store.(treeStates); ok {
		ids, err := ts.LeafIDs(state, ends)
		if err != nil {
			if w.storeErr == nil {
				w.storeErr = fmt.Errorf("worker %d: %w", w.rank, err)
			}
			return
		}
		w.lu.UseLeaves(ts.Owner(), ids, ends)
		return
	}
	if w.leaves == nil {
		return
	}
	w.ids = w.ids[:0]
	start := 0
	for _, e := range ends {
		id, ok := w.leaves.Intern(state[start:e])
		if !ok {
			return
		}
		w.ids = append(w.ids, id)
		start = e
	}
	w.lu.UseLeaves(w.leaves.Owner(), w.ids, ends)
}

// keep returns a copy of path k, in a block shared with other paths (one
// allocation per 64 KiB of paths instead of one per path). Under mu.
func (w *worker) keep(k []byte) []byte {
	if cap(w.arena)-len(w.arena) < len(k) {
		w.arena = make([]byte, 0, max(64<<10, len(k)))
	}
	n := len(w.arena)
	w.arena = append(w.arena, k...)
	return w.arena[n:len(w.arena):len(w.arena)]
}

// sentSetBytes is the memory of the records of what expand sent each
// other worker, for its own states and for those it took (kept from level
// to level, at the size of the level that sent the most).
func (w *worker) sentSetBytes() int64 {
	var n int64
	for _, sets := range append([][]*sentSet{w.sentTo}, w.stealTo...) {
		for _, s := range sets {
			if s != nil {
				n += s.st.MemBytes() + int64(cap(s.z))*8 + int64(cap(s.kat)+cap(s.ends))*4 + int64(cap(s.kbuf))
			}
		}
	}
	return n
}

// control serves the coordinator's commands.
func (w *worker) control(ctx context.Context, req []byte) ([]byte, error) {
	if len(req) == 0 {
		return nil, errors.New("dist: empty command")
	}
	d := dec{b: req[1:]}
	var out enc
	switch req[0] {
	case opHello:
		return w.hello(&d)
	case opPing:
		var e enc
		identity{rank: w.rank, nonce: w.nonce}.append(&e)
		return e.b, nil
	}
	if err := w.fromSearch(ctx); err != nil {
		return nil, err
	}
	switch req[0] {
	case opPeers:
		if err := w.checkPeersCmd(ctx, &d); err != nil {
			return nil, err
		}
	case opInit:
		if err := w.init(d.bool()); err != nil {
			return nil, err
		}
	case opExpand:
		var t0 time.Time
		var c0 time.Duration
		if w.timed {
			t0, c0 = time.Now(), processCPU()
		}
		depth := int64(d.u())
		if d.err != nil {
			return nil, d.err
		}
		loop0 := w.tm.loopWall.Load()
		r, err := w.expand(ctx, depth)
		if w.timed {
			w.tm.level(time.Duration(w.tm.loopWall.Load()-loop0), time.Since(t0))
			w.tm.expandWall.Add(int64(time.Since(t0)))
			w.tm.expandCPU.Add(int64(processCPU() - c0))
			w.tm.levels.Add(1)
		}
		if err != nil {
			return nil, err
		}
		out = r
	case opSummary:
		w.mu.Lock()
		if err := w.storeErr; err != nil {
			// (A batch stored by gRPC's goroutine after this worker's
			// expand had ended.)
			w.mu.Unlock()
			return nil, err
		}
		out.u(uint64(w.store.Len() - w.levelStart))
		out.bytes(w.nl)
		out.bool(w.nl != nil)
		w.mu.Unlock()
	case opAdvance:
		w.mu.Lock()
		w.flo, w.levelStart = w.levelStart, w.store.Len()
		w.fpath, w.fz, w.npath, w.nz, w.nbad = w.npath, w.nz, nil, nil, nil
		w.fends, w.nends = w.nends, nil
		src, ref := w.nsrc, w.nref
		w.nsrc, w.nref = nil, nil
		if w.fp && w.flo < w.levelStart {
			w.store.Release(w.flo) // (the encodings of the states expanded)
		}
		w.mu.Unlock()
		// Expanded in the order of their paths, a worker sends every
		// successor first with the smallest key it has for it, so it
		// need not send it again (see expand). The states whose smallest
		// key came with a reference are left to their sender (delegate).
		w.order = w.order[:0]
		notes := make([][]note, w.n)
		for i := range w.fpath {
			if i < len(src) && src[i] >= 0 {
				notes[src[i]] = append(notes[src[i]], note{ref: ref[i], z: w.fz[i]})
				continue
			}
			w.order = append(w.order, int32(i))
		}
		slices.SortFunc(w.order, func(a, b int32) int { return bytes.Compare(w.fpath[a], w.fpath[b]) })
		if err := w.sendNotes(ctx, notes); err != nil {
			return nil, err
		}
	case opNotes:
		from, n := d.u(), d.count()
		if d.err == nil && (from >= uint64(w.n) || int(from) == w.rank) {
			return nil, fmt.Errorf("worker %d: notes from worker %d", w.rank, from)
		}
		w.mu.Lock()
		for range n {
			nt := note{from: int(from), ref: d.u(), z: d.u()}
			if d.err != nil {
				break
			}
			w.notes = append(w.notes, nt)
		}
		w.mu.Unlock()
	case opFailAt:
		vk := d.bytes()
		if d.err != nil {
			return nil, d.err
		}
		vp, _, err := splitLast(vk)
		if err != nil {
			return nil, err
		}
		var fresh, t, sk int64
		w.mu.Lock()
		for _, p := range w.npath {
			if bytes.Compare(p, vk) < 0 {
				fresh++
			}
		}
		w.mu.Unlock()
		for i, p := range w.fpath {
			if i < len(w.ftrans) && bytes.Compare(p, vp) < 0 {
				t += w.ftrans[i]
				sk += w.fskip[i]
			}
		}
		for _, c := range w.stolen {
			if bytes.Compare(c.path, vp) < 0 {
				t += c.trans
				sk += c.skip
			}
		}
		if err := w.countBefore(vk); err != nil {
			return nil, err
		}
		out.i(fresh)
		out.i(t)
		out.i(sk)
	case opStats:
		var counts []int64
		switch {
		case w.countsFail != nil:
			counts = w.countsFail
		case w.ct != nil:
			counts = w.ct.Counts(nil)
		}
		out.countsAndReached(counts, w.m)
		w.mu.Lock()
		mem := w.store.MemBytes()
		if w.leaves != nil {
			mem += w.leaves.MemBytes()
		}
		out.i(mem)
		w.mu.Unlock()
		out.i(w.sent.Load())
		out.i(w.sentSetBytes())
		out.i(w.taken.Load())
		out.i(w.left.Load())
		out.i(w.leftTaken.Load())
	case opDone:
		failed := d.bool()
		msg := d.str()
		w.doneOnce.Do(func() {
			if failed {
				w.abort = fmt.Errorf("worker %d: the coordinator ended the search: %s", w.rank, msg)
			}
			close(w.done)
		})
	case opSteal:
		depth := int64(d.u())
		if d.err != nil {
			return nil, d.err
		}
		w.mu.Lock()
		out = w.giveAway(depth)
		w.mu.Unlock()
	case opCheckpoint, opLoad, opPrune:
		dir, depth := d.str(), int(d.i())
		if d.err != nil {
			return nil, d.err
		}
		var err error
		switch req[0] {
		case opCheckpoint:
			err = w.checkpoint(dir, depth)
		case opLoad:
			err = w.load(dir, depth)
		default:
			err = w.prune(dir, depth)
		}
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("dist: unknown command %d", req[0])
	}
	if d.err != nil {
		return nil, d.err
	}
	return out.b, nil
}

// init starts a search: the owner of the initial state stores it as the
// level to expand.
func (w *worker) init(sleep bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sleep, w.sl, w.depth = false, nil, -1
	if sleep {
		sl, ok := w.m.(explore.Sleeper)
		if !ok {
			return errors.New("dist: the model has no sleep sets")
		}
		w.sleep, w.sl = true, sl
	}
	w.store = w.newStore()
	w.storeErr = nil
	w.countsFail = nil
	if w.ct != nil {
		w.ct.ResetCounts()
	}
	w.npath, w.nz, w.nbad, w.nl, w.fpath, w.fz = nil, nil, nil, nil, nil, nil
	w.nends, w.fends, w.leaves = nil, nil, nil
	w.resetDelegation()
	if _, tree := w.store.(treeStates); w.nseg > 0 && !tree {
		w.leaves = explore.NewLeafInterner()
	}
	w.flo, w.levelStart = 0, 0
	init, _ := w.m.Initial()
	if owner(explore.Hash(init), w.n) == w.rank {
		var ends []int
		if w.nseg > 0 {
			ends = w.sg.Segments(w.ends[:0])
			w.ends = ends
		}
		if _, _, err := w.store.add(explore.Hash(init), init, ends); err != nil {
			return fmt.Errorf("worker %d: %w", w.rank, err)
		}
		w.fpath, w.fz = [][]byte{{}}, []uint64{0}
		if w.nseg > 0 && w.leaves != nil {
			w.keepEnds(ends)
			w.fends, w.nends = w.nends, nil
		}
	}
	w.order = w.order[:0]
	for i := range w.fpath {
		w.order = append(w.order, int32(i))
	}
	w.levelStart = w.store.Len()
	return nil
}

// sentSet is what a worker sent one other worker in the level being
// expanded: the successors' encodings, and by id the sleep set sent;
// with references (delegate), also by id the path it was first sent with
// (kbuf[kat[id]:kat[id+1]]) and its segment ends (nseg of them from
// ends[id*nseg], zeros when unknown: sent without a reference).
type sentSet struct {
	st   explore.ExactStore
	z    []uint64
	kat  []int32
	kbuf []byte
	ends []int32
}

// note is a state of the next level that its owner left to this worker:
// the sender's rank (the owner's), the reference this worker sent it
// with, and the state's sleep set.
type note struct {
	from int
	ref  uint64
	z    uint64
}

// delegated is a state of the level expanded that its owner left to this
// worker: where its encoding is in dbuf (at, end), its path and sleep set.
type delegated struct {
	at, end int
	path    []byte
	z       uint64
}

// sentRef is a reference to a successor sent (delegate): 1 + its id in
// the sent set, and above 32 bits which set: 0 for sentTo, k+1 for the
// k-th chunk taken (stealTo).
func sentRef(set int, id uint32) uint64 { return uint64(set)<<32 | (uint64(id) + 1) }

// resetDelegation forgets the references and notes of an earlier search,
// and sets delegate for the store.
func (w *worker) resetDelegation() {
	w.nsrc, w.nref, w.notes, w.dlg = nil, nil, nil, nil
	_, tree := w.store.(treeStates)
	w.delegate = tree && w.n > 1 && w.delegOK
}

// noteBytes bounds the notes sent in one call.
const noteBytes = 4 << 20

// sendNotes sends each worker the states of the next level left to it.
func (w *worker) sendNotes(ctx context.Context, notes [][]note) error {
	for r, ns := range notes {
		for len(ns) > 0 {
			k := min(len(ns), noteBytes/16)
			var e enc
			e.b = append(e.b, opNotes)
			e.u(uint64(w.rank))
			e.u(uint64(k))
			for _, nt := range ns[:k] {
				e.u(uint64(nt.ref))
				e.u(nt.z)
			}
			if _, err := call(ctx, w.conns[r], e.b, false); err != nil {
				return ctxOr(ctx, fmt.Errorf("worker %d: leaving states to worker %d: %w", w.rank, r, err))
			}
			ns = ns[k:]
		}
	}
	return nil
}

// takeNotes copies the states left to this worker for the level about to
// be expanded, kept in its sent sets of the level before (sentTo, not
// reset yet), with their segment ends to dbuf and dends, in dlg, and puts
// them in order among its own. They are not stored: the tree store's leaf
// table gives them leaf ids when they are expanded (useLeaves). Under mu.
func (w *worker) takeNotes() error {
	w.dlg = nil // (a new one each level: w.stolen may hold the last one's paths)
	if len(w.notes) == 0 {
		return nil
	}
	if _, ok := w.store.(treeStates); !ok || w.sentTo == nil {
		return fmt.Errorf("worker %d: states left to it that it did not send", w.rank)
	}
	type kept struct { // a state left, where it was kept in the sent sets
		path []byte
		z    uint64
		set  *sentSet
		id   int
	}
	left := make([]kept, 0, len(w.notes))
	for _, nt := range w.notes {
		var s *sentSet
		switch set := int(nt.ref >> 32); {
		case nt.from < 0 || nt.from >= w.n:
		case set == 0:
			s = w.sentTo[nt.from]
		case set <= w.nchunks:
			s = w.stealTo[set-1][nt.from]
			w.leftTaken.Add(1)
		}
		id := int(uint32(nt.ref)) - 1
		if s == nil || id < 0 || id >= s.st.Len() || id+1 >= len(s.kat) || len(s.ends) < (id+1)*w.nseg {
			return fmt.Errorf("worker %d: worker %d left it a state it did not send", w.rank, nt.from)
		}
		// (The path is kept beyond the sent set's reset: keep.)
		left = append(left, kept{path: w.keep(s.kbuf[s.kat[id]:s.kat[id+1]]), z: nt.z, set: s, id: id})
	}
	// In the order of their paths (sorted by index: the entries are
	// large to move).
	perm := w.dperm[:0]
	for i := range left {
		perm = append(perm, int32(i))
	}
	slices.SortFunc(perm, func(a, b int32) int { return bytes.Compare(left[a].path, left[b].path) })
	w.dperm = perm
	w.dlg = make([]delegated, 0, len(left))
	w.dbuf, w.dends = w.dbuf[:0], w.dends[:0]
	for _, i := range perm {
		d := left[i]
		st := d.set.st.State(d.id)
		n := len(w.dends)
		for _, e := range d.set.ends[d.id*w.nseg : (d.id+1)*w.nseg] {
			w.dends = append(w.dends, int(e))
		}
		if !splitsInto(w.dends[n:], len(st)) {
			return fmt.Errorf("worker %d: a state left to it was sent without its segments", w.rank)
		}
		at := len(w.dbuf)
		w.dbuf = append(w.dbuf, st...)
		w.dlg = append(w.dlg, delegated{at: at, end: len(w.dbuf), path: d.path, z: d.z})
	}
	w.left.Add(int64(len(w.notes)))
	w.notes = w.notes[:0]
	// Merge: both in the order of their paths.
	own := w.order
	w.order = make([]int32, 0, len(own)+len(w.dlg))
	j := 0
	for i := range w.dlg {
		for j < len(own) && bytes.Compare(w.fpath[own[j]], w.dlg[i].path) < 0 {
			w.order = append(w.order, own[j])
			j++
		}
		w.order = append(w.order, ^int32(i))
	}
	w.order = append(w.order, own[j:]...)
	return nil
}

// front returns the state at position e of order (see order), its path
// and sleep set; the state and the tree store's Leaves are valid until
// the store rebuilds another. Under mu.
func (w *worker) front(e int32) (state, path []byte, z uint64) {
	if e < 0 {
		d := &w.dlg[^e]
		return w.dbuf[d.at:d.end], d.path, d.z
	}
	i := int(e)
	state = w.store.State(w.flo + i)
	if w.sleep {
		z = w.fz[i]
	}
	return state, w.fpath[i], z
}

// ctxOr returns ctx's error once ctx is done (the search is being ended,
// and the coordinator reports the cause), else err.
func ctxOr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return err
}

// newSets returns a sent set for each other worker.
func (w *worker) newSets() []*sentSet {
	sets := make([]*sentSet, w.n)
	for r := range sets {
		if r != w.rank {
			sets[r] = new(sentSet)
		}
	}
	return sets
}

// resetSets empties sent sets.
func resetSets(sets []*sentSet) {
	for _, s := range sets {
		if s != nil {
			s.st.Reset()
			s.z, s.kat, s.kbuf, s.ends = s.z[:0], s.kat[:0], s.kbuf[:0], s.ends[:0]
		}
	}
}

// stolenCount is a state of another worker's that this one expanded in
// the level: its path, and the transitions counted and left out (opFailAt
// counts them, as the owner counts those of its own: ftrans, fskip).
type stolenCount struct {
	path        []byte
	trans, skip int64
}

// stolenState is a state taken from another worker, to expand.
type stolenState struct {
	path, state []byte
	z           uint64
	ends        []int // its segment ends (zeros: unknown)
}

// steal asks worker r for part of the states of the level at depth that
// it has not expanded yet; none when it has too few left, or is done with
// its own, and later when it has not started on the level yet.
func (w *worker) steal(ctx context.Context, r int, depth int64) (_ []stolenState, later bool, _ error) {
	rep, err := call(ctx, w.conns[r], depthCmd(opSteal, depth), false)
	if err != nil {
		return nil, false, ctxOr(ctx, fmt.Errorf("worker %d: taking states from worker %d: %w", w.rank, r, err))
	}
	d := dec{b: rep}
	n := d.count()
	if n == 0 {
		later = d.bool()
	}
	out := make([]stolenState, 0, n)
	ends := make([]int, 0, n*w.nseg) // (the chunk's segment ends, nseg per state)
	for range n {
		var c stolenState
		c.path = d.bytes()
		if w.sleep {
			c.z = d.u()
		}
		c.state = d.bytes()
		if w.nseg > 0 {
			c.ends = d.ends(ends[len(ends):], w.nseg)
			ends = ends[:len(ends)+w.nseg]
		}
		if d.err != nil {
			break
		}
		out = append(out, c)
	}
	if d.err != nil || len(d.b) > 0 {
		return nil, false, fmt.Errorf("worker %d: taking states from worker %d: malformed reply", w.rank, r)
	}
	w.taken.Add(int64(len(out)))
	if w.timed && n > 0 {
		w.tm.steals.Add(1)
		w.tm.stolen.Add(int64(len(out)))
	}
	return out, later, nil
}

// giveAway answers a steal for the level at depth: the last half of the
// states this worker has not expanded yet in its own loop (in the order
// of their paths; at most about shareBytes of them), if it shares
// (not Options.NoShare) and has at least twice minShare left; expand stops before
// them. Else none, and whether to ask again: it has not started on that
// level yet. (Any states could be given: the taker expands them in the
// order of their paths with sent sets of their own; the last ones are
// those the owner would come to last.) Each goes with its segment
// lengths (zeros when unknown), for the taker's own leaf ids. Under mu.
func (w *worker) giveAway(depth int64) enc {
	var out enc
	left := 0
	if w.stealable && w.share {
		left = w.end - w.next
	}
	if left < 2*w.minShare || left < 2 {
		out.u(0)
		out.bool(w.share && w.depth < depth) // (later: not started on the level)
		return out
	}
	// At most about shareBytes at once, by the size of the last state
	// left (a level's states are of similar sizes; the reply must stay
	// well under gRPC's maxMsg, and the store is held while it is made).
	k := left / 2
	st, p, _ := w.front(w.order[w.end-1])
	if per := len(st) + len(p) + 16 + 3*w.nseg; k*per > shareBytes { // (3 bytes or fewer per segment length)
		k = max(1, shareBytes/per)
	}
	lo, hi := w.end-k, w.end
	if w.giveFront {
		lo, hi = w.next, w.next+k
	}
	out.u(uint64(hi - lo))
	for _, e := range w.order[lo:hi] {
		st, p, z := w.front(e)
		out.bytes(p)
		if w.sleep {
			out.u(z)
		}
		out.bytes(st)
		if w.nseg > 0 {
			out.b = appendLengths(out.b, w.frontEnds(e, st))
		}
	}
	if w.giveFront {
		w.next = hi
	} else {
		w.end = lo
	}
	return out
}

// candidate is a violation found while expanding: the key (path) of the
// transition, or of a terminal state's violation (its index is then the
// number of successors), and the transitions of that state counted and
// left out before it.
type candidate struct {
	key      []byte
	tBefore  int64
	skBefore int64
	hasCode  bool
}

func (c *candidate) offer(key []byte, t, sk int64, hasCode bool) {
	if c.key == nil || bytes.Compare(key, c.key) < 0 {
		*c = candidate{key: key, tBefore: t, skBefore: sk, hasCode: hasCode}
	}
}

// expand expands the level, sending every successor to its owner, and
// returns once every owner has stored what it was sent. A worker done
// with its own states of the level then expands states that another has
// not expanded yet (steal), so that the level ends about when its last
// state is expanded, not when the slowest worker is done with its own.
func (w *worker) expand(ctx context.Context, depth int64) (enc, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	streams := make([]*pushStream, w.n)
	for r := range w.n {
		if r == w.rank {
			continue
		}
		st, err := openPush(ctx, w.conns[r])
		if err != nil {
			return enc{}, fmt.Errorf("worker %d: sending to worker %d: %w", w.rank, r, err)
		}
		streams[r] = st
	}
	bufs := make([][]byte, w.n)
	// (With segments, a successor goes to its owner as the segments that
	// differ from those of the one sent before it in the batch.)
	deltas := make([]segDelta, w.n)
	for r := range deltas {
		deltas[r].nseg = w.nseg
	}
	// What was sent to each other worker in this level, with the sleep
	// set sent: the states are expanded in the order of their paths, so a
	// successor sent again would come with a greater key, and is sent
	// again only when it clears bits of the sleep set sent. A successor's
	// invariants are checked when it is first sent (at this worker's
	// smallest key for it, so the smallest over the workers is the first
	// violation in breadth-first order), or, for one this worker owns,
	// when it is new in the store. (Whether a state passes its checks
	// does not depend on the transition that reached it; only the key of
	// a violation does, which is why a state taken from another worker
	// that reaches one that failed here offers its key too: markBad.)
	// The states taken from another worker come in the order of their
	// paths too, and are expanded with sets of their own (stealTo), new
	// for each chunk taken.
	if w.sentTo == nil {
		w.sentTo = w.newSets()
	}
	w.lock()
	err := w.takeNotes()
	w.mu.Unlock()
	if err != nil {
		return enc{}, err
	}
	resetSets(w.sentTo)
	w.nchunks = 0
	sets := w.sentTo
	refs := w.delegate // (successors sent with references: see delegate)
	refSet := 0        // (which sets: sentRef)
	var key []byte
	var full []int // the owners whose batch is to be sent once the state is expanded
	flush := func(r int) error {
		b := bufs[r]
		bufs[r] = nil
		w.sent.Add(int64(len(b)))
		var t0 time.Time
		if w.timed {
			t0 = time.Now()
		}
		err := streams[r].send(b, &w.pool)
		if w.timed {
			w.tm.sendWall.Add(int64(time.Since(t0)))
		}
		if err != nil {
			return ctxOr(ctx, fmt.Errorf("worker %d: sending to worker %d: %w", w.rank, r, err))
		}
		return nil
	}
	var (
		state     []byte
		best      candidate
		trans, sk int64
		ferr      error
		path      []byte
		idx       uint32
		skip      int64
	)
	visit := func(code uint32, succ []byte, err error) bool {
		i := idx
		idx++
		if err != nil {
			best.offer(appendIdx(slices.Clone(path), i), int64(i)-skip, skip, true)
			return false
		}
		if succ == nil { // asleep
			skip++
			return true
		}
		var z uint64
		if w.sleep {
			z = w.sl.SuccSleep()
		}
		h := explore.Hash(succ)
		var ends []int // the successor's segment ends, stored with it or sent
		if w.nseg > 0 {
			ends = w.sg.Segments(w.ends[:0])
			w.ends = ends
		}
		r := owner(h, w.n)
		if r == w.rank {
			// Stored at once: the store says whether it is new (its
			// invariants are then checked).
			if w.timed {
				w.tm.succOwn.Add(1)
			}
			key = appendIdx(append(key[:0], path...), i)
			fresh, smallerBad := w.insertH(h, succ, key, z, ends, -1, 0)
			if w.storeErr != nil {
				return false
			}
			switch {
			case fresh && w.fc != nil:
				if verr := w.fc.CheckFresh(); verr != nil {
					w.markBad()
					best.offer(slices.Clone(key), int64(i)-skip, skip, true)
					return false
				}
			case smallerBad:
				// (A state taken from another worker reaches one that
				// failed its checks here before, with a smaller key.)
				best.offer(slices.Clone(key), int64(i)-skip, skip, true)
				return false
			}
			return true
		}
		if w.timed {
			w.tm.succPeer.Add(1)
		}
		sent := sets[r]
		id, fresh := sent.st.Add(h, succ)
		switch {
		case fresh:
			sent.z = append(sent.z, z)
			if refs {
				if len(sent.kat) == 0 {
					sent.kat = append(sent.kat, 0)
				}
				sent.kbuf = appendIdx(append(sent.kbuf, path...), i)
				sent.kat = append(sent.kat, int32(len(sent.kbuf)))
				if len(ends) == w.nseg {
					for _, e := range ends {
						sent.ends = append(sent.ends, int32(e))
					}
				} else {
					sent.ends = append(sent.ends, make([]int32, w.nseg)...)
				}
			}
			if w.fc != nil {
				if verr := w.fc.CheckFresh(); verr != nil {
					// Never sent in this level (an empty sleep set
					// is cleared by none): no worker sends a state
					// that fails its checks.
					sent.z[id] = 0
					best.offer(appendIdx(slices.Clone(path), i), int64(i)-skip, skip, true)
					return false
				}
			}
		case z&sent.z[id] == sent.z[id]:
			return true
		default:
			sent.z[id] &= z
		}
		if w.timed {
			w.tm.succSent.Add(1)
		}
		b := bufs[r]
		if b == nil {
			// (A batch is sent once it holds batchBytes, after the
			// successors of the state that filled it.)
			b = appendUvarint(*w.pool.Get(0), uint64(w.rank))
			deltas[r].reset()
		}
		if w.nseg > 0 {
			b = appendSegs(b, succ, ends, &deltas[r])
		} else {
			b = appendUvarint(b, uint64(len(succ)))
			b = append(b, succ...)
		}
		key = appendIdx(append(key[:0], path...), i)
		b = appendKey(b, key, &deltas[r])
		var ref uint64 // (if kept with its segments: delegate)
		if refs && sent.ends[(int(id)+1)*w.nseg-1] == int32(len(succ)) {
			ref = sentRef(refSet, id)
		}
		b = appendUvarint(b, ref)
		if w.sleep {
			b = appendUvarint(b, z)
		}
		if len(b) >= batchBytes && len(bufs[r]) < batchBytes {
			full = append(full, r)
		}
		bufs[r] = b
		return true
	}
	w.ftrans, w.fskip = make([]int64, len(w.fpath)), make([]int64, len(w.fpath))
	clear(w.stolen) // (their paths)
	w.stolen = w.stolen[:0]
	if w.ct != nil {
		w.countsPrev = w.ct.Counts(w.countsPrev[:0])
	}
	// expanded follows the expansion of a state that ended with err,
	// with mu released: it sends the batches filled, and returns the
	// transitions counted and left out.
	expanded := func(err error) (int64, int64, error) {
		for _, r := range full {
			if ferr = flush(r); ferr != nil {
				break
			}
		}
		full = full[:0]
		if ferr != nil {
			return 0, 0, ferr
		}
		if w.storeErr != nil {
			return 0, 0, w.storeErr
		}
		if err != nil {
			var pe explore.PropertyError
			if !errors.As(err, &pe) {
				return 0, 0, fmt.Errorf("explore: model failed: %w", err)
			}
			best.offer(appendIdx(slices.Clone(path), idx), int64(idx)-skip, skip, false)
		}
		t := int64(idx) - skip
		trans += t
		sk += skip
		return t, skip, nil
	}
	// one expands state, reached by path p, with sleep set z, with mu
	// held; it releases mu and sends the batches filled (expanded).
	one := func(state, p []byte, z uint64) (int64, int64, error) {
		path, idx, skip = p, 0, 0
		var err error
		if w.sleep {
			err = w.sl.SuccessorsAsleep(state, z, visit)
		} else {
			err = w.m.Successors(state, visit)
		}
		w.mu.Unlock()
		return expanded(err)
	}
	var tLoop time.Time
	if w.timed {
		tLoop = time.Now()
	}
	// The batches received are stored here, between two states (see
	// receive), and the batches to send are sent between two states, with
	// mu released, so that a sender blocked by an owner's flow control
	// does not keep its own store from the batches that owner sends.
	w.startInbox()
	defer w.stopInbox() // (on an early return; a second call finds it empty)
	if w.slow > 0 && w.rank%2 == 1 {
		time.Sleep(10 * w.slow) // (tests: the others ask before this one started)
	}
	w.lock()
	w.next, w.end, w.stealable, w.depth = 0, len(w.order), w.n > 1, depth
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.stealable = false
		w.mu.Unlock()
	}()
	for n := 0; ; n++ {
		if n%256 == 0 && ctx.Err() != nil {
			return enc{}, ctx.Err()
		}
		w.lock()
		if w.next >= w.end { // (the rest may have been given away: giveAway)
			w.stealable = false
			w.mu.Unlock()
			break
		}
		e := w.order[w.next]
		w.next++
		if err := w.drainPending(); err != nil {
			w.mu.Unlock()
			return enc{}, err
		}
		st, p, z := w.front(e)
		state = append(state[:0], st...)
		w.useLeaves(int(e), state)
		t, s, err := one(state, p, z)
		if err != nil {
			return enc{}, err
		}
		if e >= 0 {
			w.ftrans[e], w.fskip[e] = t, s
		} else { // (left to this worker: counted as those taken)
			w.stolen = append(w.stolen, stolenCount{path: p, trans: t, skip: s})
		}
		if w.slow > 0 && w.rank%2 == 1 {
			time.Sleep(w.slow)
		}
	}
	// Then take states of the others', asking each in turn, until each
	// in a row had none to give (too few left, or done with its own); one
	// that has not started on the level yet is asked again.
	for miss, r := 0, w.rank; w.share && miss < w.n-1; {
		if r = (r + 1) % w.n; r == w.rank {
			continue
		}
		chunk, later, err := w.steal(ctx, r, depth)
		if err != nil {
			return enc{}, err
		}
		if later {
			// (r has not started on this level: ask again soon.)
			select {
			case <-ctx.Done():
				return enc{}, ctx.Err()
			case <-time.After(stealRetry):
			}
			continue
		}
		if len(chunk) == 0 {
			miss++
			continue
		}
		miss = 0
		if w.nchunks == len(w.stealTo) {
			w.stealTo = append(w.stealTo, w.newSets())
		}
		sets = w.stealTo[w.nchunks]
		resetSets(sets)
		w.nchunks++
		refSet = w.nchunks
		for j, c := range chunk {
			if j%256 == 0 && ctx.Err() != nil {
				return enc{}, ctx.Err()
			}
			w.lock()
			if err := w.drainPending(); err != nil {
				w.mu.Unlock()
				return enc{}, err
			}
			w.leavesOf(c.state, c.ends) // (this worker's ids, not the giver's)
			t, s, err := one(c.state, c.path, c.z)
			if err != nil {
				return enc{}, err
			}
			w.stolen = append(w.stolen, stolenCount{path: slices.Clone(c.path), trans: t, skip: s})
		}
	}
	for r := range w.n {
		if len(bufs[r]) > 0 {
			if err := flush(r); err != nil {
				return enc{}, err
			}
		}
	}
	q := w.stopInbox()
	w.lock()
	err = w.storeAll(q)
	if err == nil {
		err = w.storeErr
	}
	w.mu.Unlock()
	if err != nil {
		return enc{}, err
	}
	var tClose time.Time
	if w.timed {
		tClose = time.Now()
		w.tm.loopWall.Add(int64(tClose.Sub(tLoop)))
	}
	for r, st := range streams {
		if st != nil {
			if err := st.close(); err != nil {
				return enc{}, ctxOr(ctx, fmt.Errorf("worker %d: sending to worker %d: %w", w.rank, r, err))
			}
		}
	}
	if w.timed {
		w.tm.closeWall.Add(int64(time.Since(tClose)))
	}
	var out enc
	out.i(trans)
	out.i(sk)
	out.bool(best.key != nil)
	out.bytes(best.key)
	out.i(best.tBefore)
	out.i(best.skBefore)
	out.bool(best.hasCode)
	return out, nil
}

// countBefore sets the statistics to report to those of the levels before
// and of the expansions that come before the violation with key vk in
// breadth-first order (the violating transition's own included, as
// explore.BFS counts them), by expanding those states of the level again.
func (w *worker) countBefore(vk []byte) error {
	if w.ct == nil {
		return nil
	}
	vp, vi, err := splitLast(vk)
	if err != nil {
		return err
	}
	w.ct.ResetCounts()
	var state []byte
	for i, p := range w.fpath {
		c := bytes.Compare(p, vp)
		if c > 0 {
			continue
		}
		w.mu.Lock()
		state = append(state[:0], w.store.State(w.flo+i)...)
		w.mu.Unlock()
		k := uint32(0)
		visit := func(uint32, []byte, error) bool {
			if c == 0 && k == vi {
				return false
			}
			k++
			return true
		}
		var err error
		if w.sleep {
			err = w.sl.SuccessorsAsleep(state, w.fz[i], visit)
		} else {
			err = w.m.Successors(state, visit)
		}
		var pe explore.PropertyError
		if err != nil && !errors.As(err, &pe) {
			return fmt.Errorf("explore: model failed: %w", err)
		}
	}
	now := w.ct.Counts(nil)
	max := w.ct.CountMax()
	w.countsFail = make([]int64, len(now))
	for i, v := range now {
		prev := int64(0)
		if i < len(w.countsPrev) {
			prev = w.countsPrev[i]
		}
		if i < len(max) && max[i] {
			w.countsFail[i] = maxInt(prev, v)
		} else {
			w.countsFail[i] = prev + v
		}
	}
	return nil
}

// newStore returns an empty visited set: exact, or 64-bit fingerprints
// (with the encodings of the states not yet expanded) and their ids. The
// exact set is the tree store when the model's states split into segments
// (every state stored then comes with its segment ends, a resumed
// search's from its checkpoint).
func (w *worker) newStore() states {
	switch {
	case w.fp:
		return plainStates{&explore.FingerprintStore{IDs: true}}
	case w.nseg > 0:
		return treeStates{explore.NewSegmentStore(w.nseg)}
	}
	return plainStates{new(explore.ExactStore)}
}

// states is a worker's visited set with the encodings of its states.
type states interface {
	// add stores state e (hash h, segments ending at ends, nil if
	// unknown) unless it was stored before; see explore.Store.Add.
	add(h uint64, e []byte, ends []int) (id uint32, fresh bool, err error)
	State(id int) []byte
	Release(id int)
	Len() int
	MemBytes() int64
}

// plainStates is a store of package explore (whole encodings, or
// fingerprints), which needs no segments.
type plainStates struct{ explore.Store }

func (p plainStates) add(h uint64, e []byte, _ []int) (uint32, bool, error) {
	id, fresh := p.Add(h, e)
	return id, fresh, nil
}

// treeStates is the tree store (explore.SegmentStore): a state costs
// its key and a slot, plus the segments and pairs it does not share.
type treeStates struct{ *explore.SegmentStore }

func (t treeStates) add(h uint64, e []byte, ends []int) (uint32, bool, error) {
	return t.Add(h, e, ends)
}

// Release implements states: the tree store frees nothing.
func (treeStates) Release(int) {}
