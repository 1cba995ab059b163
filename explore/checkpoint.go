package explore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Checkpoints of the breadth-first search (Options.Checkpoint), so that a
// search of hours can be stopped (a limit, an interrupt, a restart of the
// machine) and continued later with Options.Resume, to the same result:
// the same states, transitions, depth, statistics and counterexample as a
// search that was never stopped.
//
// A checkpoint is taken between two levels, when no worker runs, once
// CheckpointEvery has passed since the last (and when the depth limit
// stops the search). It is a directory of three files:
//
//   - keys.col and parents.col: the key and parent id of every state (the
//     columns of column.go, kept in the directory instead of temporary
//     files); a resumed search drops what was written after the checkpoint;
//   - search.ckpt: everything else, written to search.ckpt.tmp and renamed,
//     so that a crash while writing leaves the previous checkpoint: the
//     identity of the search (CheckpointID, the number of segments and the
//     initial state's hash), the counters, the keys and sleep sets of the
//     level to expand next, and the tables of the exact store (leaves,
//     pairs, visited set) as they are in memory, ending with a CRC-32 of
//     the whole file.
//
// Only the exact store without a state graph is checkpointed: fingerprint
// mode keeps encodings in per-worker arenas, and the liveness graph is
// not saved. A search that ends with a verdict (pass or fail) removes the
// checkpoint; an incomplete one keeps the newest.

const (
	ckptMagic = "LFCCKPT1"
	// CheckpointFile is the file that holds a checkpoint in its directory.
	CheckpointFile = "search.ckpt"
	ckptKeys       = "keys.col"
	ckptParents    = "parents.col"
	ckptLock       = "lock"
)

// CheckpointFiles names the files a checkpoint directory holds, so that a
// caller can keep its own outputs off them.
func CheckpointFiles() []string {
	return []string{CheckpointFile, CheckpointFile + ".tmp", ckptKeys, ckptParents, ckptLock}
}

// CheckpointInfo describes the checkpoints of a search.
type CheckpointInfo struct {
	Dir string `json:"dir"`
	// Written is the number of checkpoints this run wrote; Depth and
	// States those of the newest checkpoint in Dir (written or resumed).
	Written int   `json:"written"`
	Depth   int   `json:"depth"`
	States  int64 `json:"states"`
	// Resumed is set when the search continued a checkpoint, taken at
	// ResumedDepth with ResumedStates stored.
	Resumed       bool  `json:"resumed"`
	ResumedDepth  int   `json:"resumed_depth,omitempty"`
	ResumedStates int64 `json:"resumed_states,omitempty"`
	// Kept is set when Dir still holds a checkpoint (an incomplete search);
	// a search with a verdict removes it (with Options.KeepCheckpoint,
	// Remove does).
	Kept bool `json:"kept"`
	// Lost is set when the search ended without a verdict after writing
	// or resuming a checkpoint that Dir no longer holds (removed while the
	// search ran): nothing can continue it.
	Lost bool `json:"lost,omitempty"`
	// Restarted is set when the search resumed a checkpoint taken with
	// sleep sets, met a transition into a state already expanded (see
	// Sleeper) and so started again from the initial state without them,
	// dropping the checkpoint (the search's counts are those of one run
	// without sleep sets).
	Restarted bool `json:"restarted,omitempty"`
	remove    func()
}

// Remove removes the checkpoint of a search that ended with a verdict
// under Options.KeepCheckpoint (else it does nothing).
func (i *CheckpointInfo) Remove() {
	if i.remove != nil {
		i.remove()
		i.remove = nil
	}
}

// CheckpointError is a checkpoint that cannot be used or made as asked:
// a missing, corrupt or foreign checkpoint, or a search that cannot be
// checkpointed. (A failure to write one ends the search as incomplete.)
type CheckpointError struct {
	Msg string
	// Have and Want are the CheckpointIDs of the checkpoint and of the
	// search when they differ.
	Have, Want string
	// Exists is set when a new search was asked to checkpoint to a
	// directory that holds a checkpoint.
	Exists bool
}

func (e *CheckpointError) Error() string { return e.Msg }

func ckptErr(format string, a ...any) error {
	return &CheckpointError{Msg: fmt.Sprintf(format, a...)}
}

// ckpt is a search's checkpointing state.
type ckpt struct {
	dir   string
	every time.Duration
	last  time.Time // the last checkpoint, or the start
	info  CheckpointInfo
	id    string // the full identity written in the file
	made  int    // how many levels of the directory's path the first search made (removed with the checkpoint if empty)
	lock  *os.File
}

// startCheckpoints sets the search up to write checkpoints: the
// directory is made if need be and must not hold a checkpoint already
// (unless the search resumes it).
func (b *bfs) startCheckpoints() error {
	opt := b.opt
	if opt.Checkpoint == "" {
		if opt.Resume {
			return ckptErr("resuming needs the checkpoint's directory")
		}
		return nil
	}
	switch {
	case b.fp:
		return ckptErr("checkpoints need the exact store (not fingerprints)")
	case b.search.g != nil:
		return ckptErr("checkpoints do not cover the recorded state graph (liveness properties checked on it)")
	}
	b.ck = &ckpt{dir: opt.Checkpoint, every: opt.CheckpointEvery, last: time.Now()}
	b.ck.info.Dir = opt.Checkpoint
	state := filepath.Join(opt.Checkpoint, CheckpointFile)
	if !opt.Resume {
		b.ck.made = missingLevels(opt.Checkpoint)
		if err := os.MkdirAll(opt.Checkpoint, 0o755); err != nil {
			return ckptErr("checkpoint directory: %v", err)
		}
		if _, err := os.Stat(state); err == nil {
			return &CheckpointError{Msg: fmt.Sprintf("%s already holds a checkpoint", opt.Checkpoint), Exists: true}
		}
	} else if err := isDir(opt.Checkpoint); err != nil {
		return err
	} else if _, err := os.Stat(state); err != nil {
		return ckptErr("%s holds no checkpoint (%s)", opt.Checkpoint, CheckpointFile)
	}
	lock, err := lockDir(opt.Checkpoint)
	if err != nil {
		return err
	}
	b.ck.lock = lock
	b.keyCol.path = filepath.Join(opt.Checkpoint, ckptKeys)
	b.parent.path = filepath.Join(opt.Checkpoint, ckptParents)
	return nil
}

// ckptID is the identity a checkpoint records: the caller's
// CheckpointID, the number of segments and the initial state's hash.
func (b *bfs) ckptID(init []byte) string {
	return fmt.Sprintf("%s\nsegments %d\ninitial %016x\nsleep %v\nfrontier %v", b.opt.CheckpointID, b.tr.k, Hash(init), !b.opt.NoSleep || b.opt.restartNote != "", b.opt.Frontier)
}

// checkpointDue reports whether a checkpoint is to be taken before
// expanding the level at depth.
func (b *bfs) checkpointDue(depth int) bool {
	return b.ck != nil && !b.checkpointAt(depth) && time.Since(b.ck.last) >= b.ck.every
}

func btoi(v bool) int {
	if v {
		return 1
	}
	return 0
}

// remove deletes the checkpoint's files, and the directories the search
// made for it that this leaves empty (not through a symbolic link).
func (ck *ckpt) remove() {
	for _, f := range CheckpointFiles() {
		os.Remove(filepath.Join(ck.dir, f))
	}
	ck.unlock()
	dir := filepath.Clean(ck.dir)
	for range ck.made {
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() || os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

// isDir checks that the directory of a checkpoint to resume exists.
func isDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return ckptErr("%s: no such directory", dir)
	case err != nil:
		return ckptErr("checkpoint directory: %v", err)
	case !fi.IsDir():
		return ckptErr("%s is not a directory", dir)
	}
	return nil
}

// missingLevels is the number of trailing elements of the path dir that do
// not exist (the directories MkdirAll makes).
func missingLevels(dir string) int {
	n := 0
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); !errors.Is(err, os.ErrNotExist) {
			return n
		}
		n++
		if filepath.Dir(d) == d {
			return n
		}
	}
}

// unlock lets another search use the directory.
func (ck *ckpt) unlock() {
	if ck.lock != nil {
		ck.lock.Close()
		ck.lock = nil
	}
}

// Present says whether dir still holds the file name (a checkpoint removed
// while its search ran is not reported as kept).
func Present(dir, name string) bool {
	_, err := os.Lstat(filepath.Join(dir, name))
	return err == nil
}
