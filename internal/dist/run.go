package dist

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"lfccheck/explore"
)

// Options configure one worker of a distributed search.
type Options struct {
	// Rank is this worker's number; rank 0 coordinates.
	Rank int
	// Peers are the addresses (host:port) of every worker, by rank.
	Peers []string
	// Listener, when set, is where this worker serves (else it listens
	// on Peers[Rank]).
	Listener net.Listener
	// ConnectTimeout bounds the wait for the other workers to come up,
	// in any order, and, on a worker, for the coordinator's hello
	// (default 30s).
	ConnectTimeout time.Duration
	// PeerTimeout bounds how long a worker may be silent once the search
	// has started: the coordinator pings every worker and every worker
	// the coordinator, and one that does not answer within it ends the
	// search with an error naming it (default DefaultPeerTimeout).
	PeerTimeout time.Duration
	// SearchID identifies the search (the model, its properties and
	// reductions, the program): workers given another one refuse the
	// coordinator's hello.
	SearchID string
	// PinCPU binds this worker's process to one CPU, the Rank-th of
	// those it may run on, if there are at least as many as workers
	// (Linux only): for the worker processes of one machine, each in its
	// own process, so that the kernel does not move them from core to
	// core. Off by default: on a 2-core machine under load it made no
	// difference beyond the noise, and a process bound to a busy CPU
	// cannot move to an idle one.
	PinCPU bool
	// NoShare keeps this worker from taking states of a level from the
	// other workers when it is done with its own, and from giving them any
	// of its own (for measurements: the level then ends when the slowest
	// worker is done).
	NoShare bool
	// NoDelegate (given to every worker) keeps the owners from leaving
	// the states of a level to the workers that reached them first
	// (which then expand them among their own, neighbours in the order of
	// their paths): each worker expands the states it owns (for
	// measurements).
	NoDelegate bool
	// ProfileDir, when set, is where this worker writes its CPU profile
	// (cpu-RANK.pprof) and timings (see profile.go).
	ProfileDir string
	// Search: the limits MaxStates, MaxDepth, Timeout, the interrupt Stop,
	// and NoSleep apply; the rest of explore's options do not (Check
	// refuses them).
	Search explore.Options

	// testSlow (tests): the odd ranks pause this long after each of
	// their own states, and a worker gives away states down to one at a
	// time, so that the others take some.
	testSlow time.Duration
	// testFront (tests, with testSlow): a worker gives away the first
	// half of the states it has left, not the last.
	testFront bool
}

// Info describes a distributed search.
type Info struct {
	Workers int `json:"workers"`
	// BytesSent is what the workers sent each other in batches of
	// successors (the encodings, their paths and sleep sets).
	BytesSent int64 `json:"bytes_sent"`
	// BytesPerState is BytesSent per state stored.
	BytesPerState float64 `json:"bytes_per_state"`
	// SentSetBytes is the memory of the workers' records of what each
	// sent each other worker in a level (to send a successor once per
	// level), summed over the workers: kept from level to level at the
	// size of the level that sent the most, and not in the store's bytes
	// (the peak heap counts them).
	SentSetBytes int64 `json:"sent_set_bytes"`
	// StatesShared is the number of states expanded by another worker
	// than their owner: a worker done with its own states of a level
	// takes part of those a slower one has not expanded yet (off with
	// Options.NoShare).
	StatesShared int64 `json:"states_shared"`
	// StatesLeft is the number of states their owner left to the worker
	// that reached them first in the order of the paths, which expands
	// them among its own (so that a worker's states are neighbours; off
	// with Options.NoDelegate).
	StatesLeft int64 `json:"states_left"`
	leftTaken  int64 // (tests) of StatesLeft, those reached from a state taken from another worker
	// Checkpoint describes the checkpoints (explore.Options.Checkpoint).
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
}

// Checkpoint describes the checkpoints of a distributed search.
type Checkpoint struct {
	Dir string `json:"dir"`
	// Written is the number written; Depth is the depth of the newest
	// (or of the one resumed), -1 if none.
	Written int  `json:"written"`
	Depth   int  `json:"depth"`
	Resumed bool `json:"resumed"`
	// Kept: the search ended without a verdict and the newest checkpoint
	// stays (else they were removed).
	Kept bool `json:"kept"`
	// Lost: the search ended without a verdict after writing or resuming
	// a checkpoint that the coordinator's Dir no longer holds (removed
	// while the search ran): nothing can continue it.
	Lost bool `json:"lost,omitempty"`
}

// Check says why a search with these explore options cannot be
// distributed, or returns nil.
func Check(m explore.Model, opt explore.Options) error {
	switch {
	case opt.Live != nil:
		return errors.New("liveness on the state graph needs the whole graph in one process")
	case opt.Frontier:
		return errors.New("the frontier search is not distributed")
	case opt.Fingerprint && opt.Checkpoint != "":
		return errors.New("checkpoints need the exact store: drop --fingerprint")
	case opt.Resume:
		return errors.New("a distributed search resumes the checkpoint in the directory --checkpoint names: give that instead of --resume")
	}
	if lm, ok := m.(explore.LiveModel); ok && lm.Live() != nil {
		return errors.New("liveness on the state graph needs the whole graph in one process")
	}
	return nil
}

// Run runs this worker's part of a distributed breadth-first search of
// m. On rank 0 it returns the search's result, the same as explore.BFS
// gives; on the other ranks it returns when the coordinator says the
// search is over (a zero Result). Every worker must be given the same
// model and the same peers.
func Run(m explore.Model, o Options) (explore.Result, Info, error) {
	n := len(o.Peers)
	if n == 0 || o.Rank < 0 || o.Rank >= n {
		return explore.Result{}, Info{}, fmt.Errorf("rank %d is not one of %d workers", o.Rank, n)
	}
	if err := Check(m, o.Search); err != nil {
		return explore.Result{}, Info{}, err
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 30 * time.Second
	}
	if o.PeerTimeout <= 0 {
		o.PeerTimeout = DefaultPeerTimeout
	}
	if err := checkPeers(o.Peers); err != nil {
		if o.Listener != nil {
			o.Listener.Close()
		}
		return explore.Result{}, Info{}, err
	}
	lis := o.Listener
	if lis == nil {
		var err error
		if lis, err = net.Listen("tcp", o.Peers[o.Rank]); err != nil {
			return explore.Result{}, Info{}, fmt.Errorf("worker %d: %w", o.Rank, err)
		}
	}
	defer lis.Close() // (on every path: Serve closes it too)
	prof, err := startProfile(o.ProfileDir, o.Rank)
	if err != nil {
		return explore.Result{}, Info{}, err
	}
	if o.PinCPU {
		pinCPU(o.Rank, n)
	}
	w := newWorker(m, o.Rank, n)
	init, _ := m.Initial()
	w.peers, w.nonce, w.idHash, w.initHash = o.Peers, newNonce(), idHash(o.SearchID), explore.Hash(init)
	if o.Rank == 0 {
		w.search = w.nonce
	}
	w.share = w.share && !o.NoShare
	w.delegOK = !o.NoDelegate
	if o.testSlow > 0 {
		w.slow, w.minShare, w.giveFront = o.testSlow, 1, o.testFront
	}
	w.timed = prof != nil
	defer prof.stop(&w.tm, n)
	w.fp = o.Search.Fingerprint
	w.store = w.newStore()
	w.conns = make([]*grpc.ClientConn, n)
	for r, addr := range o.Peers {
		if r == o.Rank {
			continue
		}
		conn, err := dial(addr, o.PeerTimeout, w.outgoing)
		if err != nil {
			return explore.Result{}, Info{}, fmt.Errorf("worker %d (%s): %w", r, addr, err)
		}
		defer conn.Close()
		w.conns[r] = conn
	}
	// (Serving starts once the connections to the peers are made: a
	// command may need them.)
	srv := newServer(w, o.PeerTimeout)
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(lis)
	}()
	defer func() {
		stopServer(srv)
		<-served
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if o.Search.Stop != nil {
		go func() {
			select {
			case <-o.Search.Stop:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	if o.Rank != 0 {
		return explore.Result{}, Info{}, w.serve(ctx, o)
	}
	return coordinate(ctx, m, w, o)
}

// serve waits, on a worker, until the coordinator says the search is
// over, checking that the coordinator is still there: its hello must come
// within the connect timeout, and it must answer within the peer timeout.
func (w *worker) serve(ctx context.Context, o Options) error {
	tick := time.NewTicker(pingEvery(o.PeerTimeout))
	defer tick.Stop()
	start := time.Now()
	for {
		select {
		case <-w.done:
			return w.abort
		case <-ctx.Done():
			return fmt.Errorf("worker %d: interrupted", w.rank)
		case <-tick.C:
		}
		coord := w.searchNonce()
		limit := o.PeerTimeout
		if coord == 0 {
			limit = max(o.ConnectTimeout-time.Since(start), time.Millisecond)
		}
		pctx, pcancel := context.WithTimeout(ctx, limit)
		rep, err := call(pctx, w.conns[0], []byte{opPing}, true)
		pcancel()
		select {
		case <-w.done:
			return w.abort
		default:
		}
		if ctx.Err() != nil {
			continue
		}
		var id identity
		if err == nil {
			id, err = readIdentity(rep)
		}
		switch {
		case err == nil && id.nonce == w.nonce:
			return fmt.Errorf("worker %d: peer 0 (%s), the coordinator's entry, leads back to this worker: does every worker serve at its own entry?", w.rank, o.Peers[0])
		case err == nil && id.rank != 0:
			return fmt.Errorf("worker %d: peer 0 (%s), the coordinator's entry, leads to the worker of rank %d: does every worker serve at its own entry?", w.rank, o.Peers[0], id.rank)
		case err == nil && coord != 0 && id.nonce != coord:
			return fmt.Errorf("worker %d: peer 0 (%s) leads here to another process than the coordinator that said hello", w.rank, o.Peers[0])
		case coord == 0 && time.Since(start) >= o.ConnectTimeout:
			why := "it answers, but has not said hello"
			if err != nil {
				why = status.Convert(err).Message()
			}
			return fmt.Errorf("worker %d: no hello from the coordinator (rank 0, %s) within %s: %s", w.rank, o.Peers[0], o.ConnectTimeout, why)
		case err != nil && coord != 0:
			return fmt.Errorf("worker %d: the coordinator (rank 0, %s) has not answered for %s (stopped, overloaded or its machine lost: --peer-timeout sets how long it may be silent): %s", w.rank, o.Peers[0], o.PeerTimeout, status.Convert(err).Message())
		}
	}
}

// stopServer stops a server, letting replies in flight go out first.
func stopServer(srv *grpc.Server) {
	done := make(chan struct{})
	go func() {
		srv.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
		srv.Stop()
	}
}

func coordinate(ctx context.Context, m explore.Model, w *worker, o Options) (res explore.Result, info Info, err error) {
	n := len(o.Peers)
	c := &coord{m: m, w: w, conns: w.conns, peers: o.Peers, opt: o.Search, start: time.Now()}
	defer func() {
		// Every worker is told that the search is over, whatever its end:
		// after an error, as a failure (a worker then ends with an error
		// too, so that a scheduler that restarts failed tasks restarts
		// it with the others, to continue from the checkpoint).
		var e enc
		e.bool(err != nil)
		if err != nil {
			e.str(err.Error())
		}
		// (At once: a worker that does not answer within a second, stopped
		// or lost, holds no one up.)
		dctx, dcancel := context.WithTimeout(context.Background(), time.Second)
		defer dcancel()
		var wg sync.WaitGroup
		for r := 1; r < n; r++ {
			wg.Go(func() { _, _ = call(dctx, c.conns[r], append([]byte{opDone}, e.b...), false) })
		}
		wg.Wait()
	}()
	if err := c.greet(ctx, o.ConnectTimeout); err != nil {
		return explore.Result{}, Info{}, err
	}
	// From here, a worker silent for the peer timeout ends the search.
	lctx, lost := context.WithCancelCause(ctx)
	defer lost(nil)
	ctx = lctx
	c.watch(ctx, o.PeerTimeout, lost)
	c.start = time.Now() // (the search's time: without waiting for the workers to come up)
	sctx := ctx
	if o.Search.Timeout > 0 {
		var scancel context.CancelFunc
		sctx, scancel = context.WithTimeout(ctx, o.Search.Timeout)
		defer scancel()
		c.base = ctx
	}
	r, err := c.run(sctx)
	if err != nil {
		return explore.Result{}, Info{}, err
	}
	info = Info{Workers: n, BytesSent: c.sent, SentSetBytes: c.sentSet, StatesShared: c.taken, StatesLeft: c.left, leftTaken: c.leftTk}
	if o.Search.Checkpoint != "" {
		saved := r.Verdict == explore.Incomplete && c.ckDepth >= 0
		kept := saved && explore.Present(o.Search.Checkpoint, MetaName)
		info.Checkpoint = &Checkpoint{Dir: o.Search.Checkpoint, Written: c.written, Depth: c.ckDepth, Resumed: c.resumed,
			Kept: kept, Lost: saved && !kept}
	}
	if r.Stats.States > 0 {
		info.BytesPerState = float64(c.sent) / float64(r.Stats.States)
	}
	return r, info, nil
}
