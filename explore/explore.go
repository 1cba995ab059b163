// Package explore searches the state space of a model exhaustively.
//
// Its breadth-first search (BFS) yields shortest counterexamples. It runs
// on Options.Workers goroutines, level by level, over a visited set shared
// through shards with a lock each, and numbers states in the order a
// sequential search would find them, so that every result (verdict,
// counts, counterexample) is the same for any number of workers (see
// bfs.go). The visited set is either exact, with states tree-compressed
// (equal segments and subtrees of states stored once, treestore.go), or a
// set of 64-bit fingerprints with a fixed seed, whose collision
// probability is estimated as TLC does. Limits on states, depth, time and
// memory end a run as Incomplete, never as Pass. DFS and random walks
// (hunt.go) hunt for deep violations past what BFS can reach, and a
// best-first search (bestfirst.go) goes first where a heuristic points.
//
// The explorer knows nothing about LFC: a Model hands it encoded states and
// numbered actions; optional interfaces let it fork the model for workers
// (Forker), split encodings into segments (Segmenter), defer invariant
// checks to new states (FreshChecker), leave out transitions with sleep
// sets (Sleeper) and label states for liveness (Labeler, LiveModel).
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
	// a terminal state, if any. The explorers expand only the initial
	// state and states visited with no violation, so a model may check a
	// successor's invariants only where it differs from state.
	Successors(state []byte, visit func(code uint32, succ []byte, err error) bool) error
}

// Sleeper is implemented by models that offer sleep sets to the
// breadth-first search: a sleep set (a bit per action; which bit is the
// model's business) names transitions of a state that need not be
// explored because their successors are reached through other, explored
// interleavings. The model must guarantee that sleep sets leave out
// transitions only, never states, and that every violation of a
// transition rule on a transition left out is found on one explored.
//
// The search gives the initial state an empty sleep set and every new
// state the intersection of the sets its incoming transitions give it.
// That is complete only when every transition into a state comes from
// the level before it (a layered state graph, as when every step
// advances some count by one): a transition into a state already
// expanded could need transitions its sleep set left out. So the search
// watches for such transitions and, on the first one, searches again
// without sleep sets (Result.Sleep says so).
type Sleeper interface {
	// SleepOff says why sleep sets cannot be used with this model, or
	// returns "".
	SleepOff() string
	// SuccessorsAsleep is Successors for a state with sleep set z: a
	// transition in z is passed to visit with a nil successor and no
	// error (so successors keep their indexes); for the others SuccSleep
	// gives, during visit, the successor's sleep set.
	SuccessorsAsleep(state []byte, z uint64, visit func(code uint32, succ []byte, err error) bool) error
	SuccSleep() uint64
}

// SleepNoter is implemented by a Sleeper that has something to say about
// its sleep sets when they are on (the search's SleepInfo.Note).
type SleepNoter interface {
	SleepNote() string
}

// SleepInfo says whether a breadth-first search used sleep sets.
type SleepInfo struct {
	On bool `json:"on"`
	// Skipped is the number of transitions left out.
	Skipped int64 `json:"skipped_transitions"`
	// Note says why they were off, or why the search was run again
	// without them; when on, what the model says of them (SleepNoter).
	Note string `json:"note,omitempty"`
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
	// Workers is the number of goroutines that expand states in a
	// breadth-first search (0 or 1: one); it needs a model that implements
	// Forker. Results do not depend on it.
	Workers int
	// NoSleep turns sleep sets off (see Sleeper).
	NoSleep bool
	// Checkpoint, when not empty, is a directory where the breadth-first
	// search keeps a checkpoint (see checkpoint.go): it is made if need
	// be and must not hold one already, unless Resume is set, which
	// continues the checkpoint there (and keeps checkpointing to it).
	// CheckpointID identifies the search for the caller (its model,
	// configuration and options): a checkpoint is resumed only by a search
	// with the same ID. The explorer adds only what it sees (the number
	// of segments, the initial state's hash, sleep sets asked for), which
	// does not tell every two configurations apart: the ID must.
	// CheckpointEvery is the time between two checkpoints (0: at every
	// level).
	// CheckpointNote is stored beside the ID for the caller to read back
	// (ReadCheckpoint) and is not compared.
	// KeepCheckpoint leaves the checkpoint of a search that ends with a
	// verdict in place for the caller to remove (CheckpointInfo.Remove)
	// once it has delivered the result, so that a result that could not be
	// written can be had again by resuming.
	// A resumed search refuses limits the checkpoint is already past
	// (MaxStates below its states, MaxDepth below its depth).
	Checkpoint      string
	CheckpointEvery time.Duration
	CheckpointID    string
	CheckpointNote  string
	Resume          bool
	KeepCheckpoint  bool
	// Frontier keeps in the visited set only the states of the level being
	// built (see frontier.go): memory per level instead of per state. It
	// needs the exact store, no state graph, and a model that declares
	// every run finite (Acyclic).
	Frontier bool
	// DiskDir, when not empty, runs the disk search (see disk.go): the
	// visited set in sorted files in this directory (made if need be),
	// duplicates found level by level, memory that does not grow with
	// the states stored; the directory is its checkpoint (CheckpointID
	// names the search). DiskRunBytes bounds its buffer of sorted runs
	// (0: 16 MiB, or an eighth of MaxMemory if less).
	DiskDir      string
	DiskRunBytes int
	// DiskFingerprint stores in the disk search's visited set the 64-bit
	// fingerprints of the states instead of their encodings (see
	// disk_keys.go): a few bytes per state on disk, at the risk, which
	// the result estimates (DiskInfo.OmissionProb), that two states
	// share a fingerprint and one of them is never explored.
	DiskFingerprint bool
	// restartNote, on the search that BFS runs again without sleep sets,
	// says why.
	restartNote string
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
	// DiskBytes is what the breadth-first search wrote to temporary files
	// (unlinked, so removed when it ends): the key and parent id of every
	// state, read back only to rebuild traces. For the disk search
	// (Options.DiskDir), the most its files took at once.
	DiskBytes int64 `json:"disk_bytes,omitempty"`
	// GraphBytes is the memory of the recorded state graph and of the
	// liveness analysis (liveness checks only).
	GraphBytes int64 `json:"graph_bytes,omitempty"`
	// ComponentBytes is, for the on-the-fly liveness search (LiveDFS),
	// the memory of the largest strongly connected component it expanded
	// again into a graph of its own, with its analysis.
	ComponentBytes int64 `json:"component_bytes,omitempty"`
	// Levels is the number of states stored at each depth of a
	// breadth-first search, from the initial state's (depth 0) to the
	// deepest (LevelPartial says whether the last was complete). A
	// frontier search counts a state stored again at a greater depth at
	// each (Frontier says how many were).
	Levels []int64 `json:"levels,omitempty"`
	// LevelPartial is set when the search stopped (a limit, a violation)
	// while expanding the level at Depth: the last of Levels is then the
	// level after it, as far as the search got (perhaps 0 states).
	LevelPartial bool `json:"level_partial,omitempty"`
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
	// Sleep says whether the breadth-first search used sleep sets.
	Sleep SleepInfo
	// Checkpoint describes the checkpoints (Options.Checkpoint), or is nil.
	Checkpoint *CheckpointInfo
	// Frontier describes a frontier search (Options.Frontier), or is nil.
	Frontier *FrontierInfo
	// Disk describes a disk search (Options.DiskDir), or is nil.
	Disk *DiskInfo
}

// BFS explores m breadth first until it finds a violation, exhausts the
// state space or hits a limit. The error is for internal failures, and a
// *CheckpointError for checkpoints that cannot be used or made.
func BFS(m Model, opt Options) (Result, error) {
	// The model learns what to label before it is forked for workers.
	if lm, ok := m.(LiveModel); ok && opt.Live == nil {
		opt.Live = lm.Live()
	}
	var lb Labeler
	if opt.Live != nil {
		var ok bool
		if lb, ok = m.(Labeler); !ok {
			return Result{}, errors.New("explore: liveness checking needs a model that labels its states")
		}
	}
	if opt.DiskDir != "" {
		return diskBFS(m, opt)
	}
	b := newBFS(m, opt)
	if opt.Live != nil {
		b.search.g = &graph{labeler: lb}
	}
	r, err := b.run()
	var nl notLayered
	if errors.As(err, &nl) {
		// (Sleep sets are off with the state graph, so there is none.)
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, "progress: %s; searching again without sleep sets\n", nl.Error())
		}
		resumed := opt.Resume
		opt.NoSleep, opt.restartNote, opt.Resume = true, nl.Error()+": searched again without them", false
		if b.ck != nil {
			b.ck.remove()
		}
		first := b.search
		b = newBFS(m, opt)
		// Time, rates and peak heap are those of both searches.
		b.search.start, b.search.runStart, b.search.peak = first.start, first.runStart, first.peak
		r, err = b.run()
		if resumed && r.Checkpoint != nil {
			r.Checkpoint.Restarted = true
		}
	}
	return r, err
}

// notLayered ends a search with sleep sets that met a transition into a
// state already expanded (see Sleeper).
// The note names the depth and the states of the levels before it, which
// do not depend on the number of workers.
type notLayered struct {
	depth, states int
}

func (e notLayered) Error() string {
	return fmt.Sprintf("a transition from depth %d reached a state of an earlier level (the state graph is not layered), after %d states with sleep sets",
		e.depth, e.states)
}

type search struct {
	m     Model
	opt   Options
	start time.Time // elapsed time counts from here (a resumed search's includes the time before its checkpoint)
	// runStart is when this run started: Timeout counts from here.
	runStart time.Time

	store  Store
	parent []uint32 // per state id
	action []uint32 // per state id: action that first reached it

	transitions int64
	depth       int
	peak        uint64
	lastProg    time.Time

	g *graph // the recorded state graph (liveness checks only)

	// sized counts the states stored and their memory (the store, or the
	// parallel search's tables); traceFn rebuilds the actions that reach a
	// stored state.
	sized interface {
		Len() int
		MemBytes() int64
	}
	traceFn func(id uint32) ([]uint32, error)
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

// size returns what counts the states stored.
func (s *search) size() interface {
	Len() int
	MemBytes() int64
} {
	if s.sized != nil {
		return s.sized
	}
	return s.store
}

// traceTo rebuilds the actions that reach stored state id.
func (s *search) traceTo(id uint32) ([]uint32, error) {
	if s.traceFn != nil {
		return s.traceFn(id)
	}
	return s.trace(id, nil), nil
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
		States:        int64(s.size().Len()),
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
	st.StoreBytes = s.size().MemBytes() + int64(cap(s.parent)+cap(s.action))*4
	if d, ok := s.size().(interface{ DiskBytes() int64 }); ok {
		st.DiskBytes = d.DiskBytes()
	}
	if l, ok := s.size().(interface{ Levels() ([]int64, bool) }); ok {
		st.Levels, st.LevelPartial = l.Levels()
	}
	if s.g != nil {
		st.GraphBytes = s.g.bytes()
	}
	return Result{Verdict: v, Reason: reason, Stats: st}
}

// heapMetric is the bytes of heap objects (live and not yet swept), read
// through runtime/metrics, which does not stop the world.
const heapMetric = "/memory/classes/heap/objects:bytes"

// sampleMemory returns the heap in use and records the peak. It is cheap
// enough to call every few hundred expansions. (Its sample is its own:
// searches run side by side in one process, and metrics.Read writes it.)
func (s *search) sampleMemory(force bool) uint64 {
	sample := [1]metrics.Sample{{Name: heapMetric}}
	metrics.Read(sample[:])
	inuse := uint64(0)
	if sample[0].Value.Kind() == metrics.KindUint64 {
		inuse = sample[0].Value.Uint64()
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

// storeNew stores successor b of state parent, reached by action code, as
// the searches that store a state when they first generate it (DFS,
// best-first) do: fresh is false for a state already stored; limit names
// the state or memory limit that forbids storing it (the search then
// ends, adding where it stood).
func (s *search) storeNew(b []byte, parent, code uint32) (id uint32, fresh bool, limit string) {
	if s.has(b) {
		return 0, false, ""
	}
	if s.opt.MaxStates > 0 && int64(s.store.Len()) >= s.opt.MaxStates {
		return 0, false, fmt.Sprintf("state limit %d reached", s.opt.MaxStates)
	}
	if !s.growthFits() {
		return 0, false, fmt.Sprintf("memory limit %s reached", FormatBytes(s.opt.MaxMemory))
	}
	return s.add(b, parent, code), true, ""
}

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

// progressEvery is the interval of progress lines (ProgressEvery, 3s by
// default).
func (o *Options) progressEvery() time.Duration {
	if o.ProgressEvery > 0 {
		return o.ProgressEvery
	}
	return 3 * time.Second
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
