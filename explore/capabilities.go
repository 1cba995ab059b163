package explore

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
