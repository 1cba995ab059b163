// Package explore searches the state space of a model exhaustively. Its
// breadth-first search yields shortest counterexamples; the visited set is
// either exact (full state encodings, no false merges) or a compact set of
// 64-bit fingerprints with a fixed seed, whose collision probability is
// estimated as TLC does. Limits on states, depth, time and memory end a run
// as Incomplete, never as Pass.
//
// The explorer knows nothing about LFC: a Model hands it encoded states and
// numbered actions.
package explore

import (
	"errors"
	"fmt"
	"io"
	"math"
	"runtime/metrics"
	"time"
)

// Model is a searchable transition system over canonical byte encodings.
type Model interface {
	// Initial returns the encoded initial state and the property it
	// violates, if any.
	Initial() ([]byte, error)
	// Successors calls visit for every enabled action of state with the
	// action's code, the encoded successor (valid only during the call)
	// and the violation the transition causes, if any; visit returns false
	// to stop. With no action enabled it returns the violated condition of
	// a terminal state, if any.
	Successors(state []byte, visit func(code uint32, succ []byte, err error) bool) error
}

// PropertyError is implemented by errors that report a property violation;
// any other error from a Model is an internal failure.
type PropertyError interface {
	error
	PropertyName() string
}

// Verdict is the outcome of a search.
type Verdict string

// Verdicts. Pass means every reachable state was explored and no property
// was violated.
const (
	Pass       Verdict = "pass"
	Fail       Verdict = "fail"
	Incomplete Verdict = "incomplete"
)

// Options bound and configure a search. Zero values mean no limit.
type Options struct {
	MaxStates   int64
	MaxDepth    int
	Timeout     time.Duration
	MaxMemory   uint64 // bytes of Go heap in use
	Fingerprint bool
	// Progress receives a progress line every ProgressEvery (default 3s)
	// once the search has run that long; nil disables progress output.
	Progress      io.Writer
	ProgressEvery time.Duration
	// Stop, when closed, interrupts the search: it ends promptly as
	// Incomplete with a reason starting "interrupted" and the statistics
	// so far.
	Stop <-chan struct{}
	// Live, when set, records the state graph during the search and,
	// once the search has explored everything without a violation,
	// checks the liveness properties it lists on the graph (see Live).
	// When nil, a model that implements LiveModel supplies it.
	Live *Live
}

// Stats describe a search.
type Stats struct {
	States        int64         `json:"states"`
	Transitions   int64         `json:"transitions"`
	Depth         int           `json:"depth"`
	Elapsed       time.Duration `json:"-"`
	StatesPerSec  float64       `json:"states_per_s"`
	PeakHeapBytes uint64        `json:"peak_heap_bytes"`
	StoreBytes    int64         `json:"store_bytes"`
	// GraphBytes is the memory of the recorded state graph and of the
	// liveness analysis (liveness checks only).
	GraphBytes int64 `json:"graph_bytes,omitempty"`
	// CollisionProb is TLC's optimistic estimate of the probability that
	// two distinct states shared a fingerprint (fingerprint mode only).
	CollisionProb float64 `json:"collision_probability,omitempty"`
}

// Result is the outcome of a search.
type Result struct {
	Verdict Verdict
	// Reason says which limit cut an Incomplete search short.
	Reason string
	// Violation is the property failure of a Fail.
	Violation PropertyError
	// Trace is the shortest action sequence from the initial state to the
	// violation, as action codes. For a liveness violation it is a lasso:
	// its last Loop actions form a loop that returns to the state before
	// them; with Loop 0 the run ends in a state without enabled actions.
	Trace []uint32
	Loop  int
	Stats Stats
}

// BFS explores m breadth first until it finds a violation, exhausts the
// state space or hits a limit. The error is for internal failures only.
func BFS(m Model, opt Options) (Result, error) {
	s := &search{m: m, opt: opt, start: time.Now(), store: &ExactStore{}}
	if lm, ok := m.(LiveModel); ok && opt.Live == nil {
		s.opt.Live = lm.Live()
		opt = s.opt
	}
	if opt.Fingerprint {
		s.store = &FingerprintStore{IDs: opt.Live != nil}
	}
	if opt.Live != nil {
		lb, ok := m.(Labeler)
		if !ok {
			return Result{}, errors.New("explore: liveness checking needs a model that labels its states")
		}
		s.g = &graph{labeler: lb}
	}
	return s.run()
}

type search struct {
	m     Model
	opt   Options
	start time.Time

	store  Store
	parent []uint32 // per state id
	action []uint32 // per state id: action that first reached it

	transitions int64
	depth       int
	peak        uint64
	lastProg    time.Time

	g *graph // the recorded state graph (liveness checks only)
}

const noParent = math.MaxUint32

func (s *search) add(b []byte, parent, code uint32) uint32 {
	id, fresh := s.store.Add(Hash(b), b)
	if fresh {
		s.parent = append(s.parent, parent)
		s.action = append(s.action, code)
	}
	return id
}

func (s *search) trace(id uint32, last []uint32) []uint32 {
	var rev []uint32
	for id != noParent && s.parent[id] != noParent {
		rev = append(rev, s.action[id])
		id = s.parent[id]
	}
	out := make([]uint32, 0, len(rev)+len(last))
	for i := len(rev) - 1; i >= 0; i-- {
		out = append(out, rev[i])
	}
	return append(out, last...)
}

func (s *search) finish(v Verdict, reason string) Result {
	s.sampleMemory(true)
	st := Stats{
		States:        int64(s.store.Len()),
		Transitions:   s.transitions,
		Depth:         s.depth,
		Elapsed:       time.Since(s.start),
		PeakHeapBytes: s.peak,
	}
	if sec := st.Elapsed.Seconds(); sec > 0 {
		st.StatesPerSec = float64(st.States) / sec
	}
	if s.opt.Fingerprint {
		n, g := float64(st.States), float64(st.Transitions+1)
		st.CollisionProb = n * math.Max(g-n, 0) / math.Pow(2, 64)
	}
	st.StoreBytes = s.store.MemBytes() + int64(cap(s.parent)+cap(s.action))*4
	if s.g != nil {
		st.GraphBytes = s.g.bytes()
	}
	return Result{Verdict: v, Reason: reason, Stats: st}
}

// heapSample reads the bytes of heap objects (live and not yet swept)
// through runtime/metrics, which does not stop the world.
var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}

// sampleMemory returns the heap in use and records the peak. It is cheap
// enough to call every few hundred expansions.
func (s *search) sampleMemory(force bool) uint64 {
	metrics.Read(heapSample)
	inuse := uint64(0)
	if heapSample[0].Value.Kind() == metrics.KindUint64 {
		inuse = heapSample[0].Value.Uint64()
	}
	if inuse > s.peak {
		s.peak = inuse
	}
	return inuse
}

// growthFits reports whether the visited set, about to double its table,
// still fits the memory budget afterwards; the table is the largest single
// allocation of a search, so it is checked before it is made.
func (s *search) growthFits() bool {
	if s.opt.MaxMemory == 0 {
		return true
	}
	next := s.store.GrowBytes()
	return next == 0 || s.sampleMemory(true)+next < s.opt.MaxMemory
}

func (s *search) run() (Result, error) {
	init, verr := s.m.Initial()
	s.add(init, noParent, 0)
	if verr != nil {
		return s.fail(verr, nil)
	}
	every := s.opt.ProgressEvery
	if every <= 0 {
		every = 3 * time.Second
	}
	s.lastProg = s.start
	levelEnd := 1
	var stopErr error
	var violated uint32
	var violCode uint32
	var id uint32
	full := false    // a new state was found with MaxStates already stored
	memFull := false // storing a new state would grow the set past MaxMemory
	visit := func(code uint32, succ []byte, err error) bool {
		s.transitions++
		if err != nil {
			stopErr, violated, violCode = err, id, code
			return false
		}
		if s.opt.MaxStates > 0 && int64(s.store.Len()) >= s.opt.MaxStates && !s.has(succ) {
			full = true
			return false
		}
		if !s.growthFits() && !s.has(succ) {
			memFull = true
			return false
		}
		to := s.add(succ, id, code)
		if s.g != nil {
			s.g.to = append(s.g.to, to)
			s.g.code = append(s.g.code, code)
		}
		return true
	}
	for head := 0; head < s.store.Len(); head++ {
		if head == levelEnd {
			s.depth++
			levelEnd = s.store.Len()
			if s.opt.MaxDepth > 0 && s.depth >= s.opt.MaxDepth {
				return s.finish(Incomplete, fmt.Sprintf("depth limit %d reached with %d states unexplored", s.opt.MaxDepth, s.store.Len()-head)), nil
			}
		}
		if head&255 == 0 {
			if r, stop := s.checkLimits(head); stop {
				return r, nil
			}
			if s.opt.Progress != nil && time.Since(s.lastProg) >= every {
				s.lastProg = time.Now()
				s.progress(head)
			}
		}
		id = uint32(head)
		if s.g != nil {
			s.g.off = append(s.g.off, int64(len(s.g.to)))
		}
		ferr := s.m.Successors(s.store.State(head), visit)
		if s.g != nil {
			s.g.lab = append(s.g.lab, s.g.labeler.Labels())
		}
		if memFull && stopErr == nil {
			return s.finish(Incomplete, fmt.Sprintf("memory limit %s reached (heap %s; the visited set cannot grow) with %d states unexplored",
				FormatBytes(s.opt.MaxMemory), FormatBytes(s.sampleMemory(true)), s.store.Len()-head)), nil
		}
		if full && stopErr == nil {
			return s.finish(Incomplete, fmt.Sprintf("state limit %d reached with %d states unexplored and more to store", s.opt.MaxStates, s.store.Len()-head)), nil
		}
		if stopErr != nil {
			return s.fail(stopErr, s.trace(violated, []uint32{violCode}))
		}
		if ferr != nil {
			return s.fail(ferr, s.trace(id, nil))
		}
		s.store.Release(head)
	}
	if s.g != nil {
		s.g.off = append(s.g.off, int64(len(s.g.to)))
		return s.liveness()
	}
	return s.finish(Pass, ""), nil
}

func (s *search) fail(err error, trace []uint32) (Result, error) {
	var pe PropertyError
	if !errors.As(err, &pe) {
		return Result{}, fmt.Errorf("explore: model failed: %w", err)
	}
	r := s.finish(Fail, "")
	r.Violation = pe
	r.Trace = trace
	r.Stats.Depth = len(trace)
	return r, nil
}

// has reports whether the state b is already stored.
func (s *search) has(b []byte) bool { return s.store.Has(Hash(b), b) }

func (s *search) checkLimits(head int) (Result, bool) {
	if s.opt.Stop != nil {
		select {
		case <-s.opt.Stop:
			return s.finish(Incomplete, fmt.Sprintf("interrupted with %d states unexplored", s.store.Len()-head)), true
		default:
		}
	}
	if s.opt.Timeout > 0 && time.Since(s.start) >= s.opt.Timeout {
		return s.finish(Incomplete, fmt.Sprintf("time limit %s reached with %d states unexplored", s.opt.Timeout, s.store.Len()-head)), true
	}
	if inuse := s.sampleMemory(false); s.opt.MaxMemory > 0 && inuse >= s.opt.MaxMemory {
		return s.finish(Incomplete, fmt.Sprintf("memory limit %s reached (heap %s) with %d states unexplored",
			FormatBytes(s.opt.MaxMemory), FormatBytes(inuse), s.store.Len()-head)), true
	}
	return Result{}, false
}

func (s *search) progress(head int) {
	el := time.Since(s.start)
	fmt.Fprintf(s.opt.Progress, "progress: %d states, %d transitions, depth %d, %d queued, %.0f states/s, heap %s, %s\n",
		s.store.Len(), s.transitions, s.depth, s.store.Len()-head, float64(s.store.Len())/el.Seconds(),
		FormatBytes(s.peak), el.Round(time.Second))
}

// FormatBytes renders a byte count with a binary unit.
func FormatBytes(b uint64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := uint64(unit), 0
	for n := b / unit; n >= unit; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(b)/float64(div), "KMGTPE"[exp])
}
