package explore

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
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
	ckptMagic   = "LFCCKPT1"
	ckptFile    = "search.ckpt"
	ckptKeys    = "keys.col"
	ckptParents = "parents.col"
	ckptLock    = "lock"
)

// CheckpointFiles names the files a checkpoint directory holds, so that a
// caller can keep its own outputs off them.
func CheckpointFiles() []string {
	return []string{ckptFile, ckptFile + ".tmp", ckptKeys, ckptParents, ckptLock}
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
	state := filepath.Join(opt.Checkpoint, ckptFile)
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
		return ckptErr("%s holds no checkpoint (%s)", opt.Checkpoint, ckptFile)
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

// writeCheckpoint takes a checkpoint before the level at depth, ids
// [lo, hi), is expanded.
func (b *bfs) writeCheckpoint(depth int) error {
	ck := b.ck
	t0 := time.Now()
	if err := b.keyCol.flush(); err != nil {
		return err
	}
	if err := b.parent.flush(); err != nil {
		return err
	}
	tmp := filepath.Join(ck.dir, ckptFile+".tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := &ckWriter{w: bufio.NewWriterSize(f, 1<<20)}
	b.encodeCheckpoint(w, depth)
	w.u32(w.crc) // the CRC of everything before it
	if err := w.flush(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, filepath.Join(ck.dir, ckptFile)); err != nil {
		os.Remove(tmp)
		return err
	}
	if d, err := os.Open(ck.dir); err == nil {
		d.Sync()
		d.Close()
	}
	ck.last = time.Now()
	ck.info.Written++
	ck.info.Depth, ck.info.States = depth, int64(b.n)
	if p := b.opt.Progress; p != nil {
		fmt.Fprintf(p, "progress: checkpoint at depth %d (%d states) written to %s in %.1fs (%s)\n",
			depth, b.n, ck.dir, time.Since(t0).Seconds(), FormatBytes(uint64(w.n)))
	}
	return nil
}

func (b *bfs) encodeCheckpoint(w *ckWriter, depth int) {
	s := b.search
	w.raw([]byte(ckptMagic))
	w.str(b.ck.id)
	w.str(b.opt.CheckpointNote)
	for _, v := range []uint64{uint64(depth), uint64(b.n), uint64(b.lo), uint64(b.hi),
		uint64(b.trans.Load()), uint64(b.skipped.Load()), uint64(time.Since(s.start)), s.peak,
		uint64(btoi(b.sleep)), uint64(b.keyCol.n), uint64(b.parent.n),
		uint64(b.keyCol.crc), uint64(b.parent.crc), uint64(b.ck.made)} {
		w.u64(v)
	}
	w.str(b.sleepNote)
	w.u64(uint64(len(b.counts)))
	for _, v := range b.counts {
		w.u64(uint64(v))
	}
	var goals []string
	if gk, ok := s.m.(GoalKeeper); ok {
		goals = gk.Reached()
	}
	w.u64(uint64(len(goals)))
	for _, g := range goals {
		w.str(g)
	}
	w.u64s(int64s(b.levels))
	w.u64s(b.frontKeys)
	w.u64s(b.frontSleep)
	for i := range b.tr.leaves.sh {
		sh := &b.tr.leaves.sh[i]
		w.u32s(sh.slots)
		w.u64s(sh.hashes)
		w.u64s(sh.refs)
		w.u64(uint64(sh.ar.base))
		w.u64(uint64(sh.ar.bytes))
		w.u64(uint64(len(sh.ar.chunks)))
		for _, c := range sh.ar.chunks {
			w.u64(uint64(cap(c)))
			w.bytes(c)
		}
	}
	for i := range b.tr.pairs.sh {
		sh := &b.tr.pairs.sh[i]
		w.u32s(sh.slots)
		w.u64(uint64(cap(sh.keys)))
		w.u64s(sh.keys)
	}
	for i := range b.roots.sh {
		sh := &b.roots.sh[i]
		w.u64(uint64(sh.n))
		if sh.n == 0 {
			w.u64s(nil) // (a frontier search's, emptied at every level)
		} else {
			w.u64s(sh.slots)
		}
	}
}

// loadCheckpoint restores the search from its checkpoint directory and
// returns the depth of the level to expand next. id is the identity the
// checkpoint must have.
func (b *bfs) loadCheckpoint() (int, error) {
	ck := b.ck
	t0 := time.Now()
	path := filepath.Join(ck.dir, ckptFile)
	f, err := os.Open(path)
	if err != nil {
		return 0, ckptErr("reading the checkpoint: %v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, ckptErr("reading the checkpoint: %v", err)
	}
	// The checksum first: a corrupt file is refused before its lengths
	// are believed.
	if ok, err := checksumOK(f, fi.Size()); err != nil {
		return 0, ckptErr("reading the checkpoint: %v", err)
	} else if !ok {
		return 0, ckptErr("%s is corrupt: its checksum does not match", path)
	}
	r := &ckReader{r: bufio.NewReaderSize(f, 1<<20), left: fi.Size() - 4}
	depth, err := b.decodeCheckpoint(r)
	if err == nil && r.left != 0 {
		err = errors.New("data after the last table")
	}
	if err != nil {
		var ce *CheckpointError
		if errors.As(err, &ce) {
			return 0, err
		}
		return 0, ckptErr("%s is corrupt: %v", path, err)
	}
	if err := b.keyCol.reopen(b.n, b.colCRC[0]); err != nil {
		return 0, ckptErr("checkpoint %s: %v", ck.dir, err)
	}
	if err := b.parent.reopen(b.n, b.colCRC[1]); err != nil {
		return 0, ckptErr("checkpoint %s: %v", ck.dir, err)
	}
	ck.info.Resumed, ck.info.ResumedDepth, ck.info.ResumedStates = true, depth, int64(b.n)
	ck.info.Depth, ck.info.States = depth, int64(b.n)
	if p := b.opt.Progress; p != nil {
		fmt.Fprintf(p, "progress: resumed the checkpoint in %s at depth %d (%d states), read in %.1fs (%s)\n",
			ck.dir, depth, b.n, time.Since(t0).Seconds(), FormatBytes(uint64(fi.Size())))
	}
	return depth, nil
}

func (b *bfs) decodeCheckpoint(r *ckReader) (int, error) {
	s := b.search
	if string(r.raw(len(ckptMagic))) != ckptMagic {
		if r.err != nil {
			return 0, r.err
		}
		return 0, errors.New("not an lfccheck checkpoint")
	}
	id := r.str()
	r.str() // the caller's note
	if r.err != nil {
		return 0, r.err
	}
	if id != b.ck.id {
		return 0, &CheckpointError{Msg: fmt.Sprintf("the checkpoint in %s is of another search (configuration, options or lfccheck build)", b.ck.dir),
			Have: callerID(id), Want: b.opt.CheckpointID}
	}
	var v [14]uint64
	for i := range v {
		v[i] = r.u64()
	}
	depth, n, lo, hi := v[0], v[1], v[2], v[3]
	if r.err == nil && (n >= 1<<32 || lo > hi || hi != n || depth >= 1<<31 || v[9] != n || v[10] != n || v[8] > 1 || v[11] >= 1<<32 || v[12] >= 1<<32 || v[13] > 1<<16) {
		return 0, errors.New("inconsistent counters")
	}
	b.n, b.lo, b.hi = int(n), int(lo), int(hi)
	b.trans.Store(int64(v[4]))
	b.skipped.Store(int64(v[5]))
	s.start = time.Now().Add(-time.Duration(v[6]))
	s.peak = max(s.peak, v[7])
	if sl := v[8] == 1; sl != b.sleep {
		if sl {
			return 0, errors.New("sleep sets on in the checkpoint, off here")
		}
		b.sleep = false
	}
	b.colCRC = [2]uint32{uint32(v[11]), uint32(v[12])}
	b.ck.made = int(v[13])
	b.sleepNote = r.str()
	nc := r.u64()
	if r.err == nil && nc != uint64(len(b.counts)) {
		return 0, fmt.Errorf("%d statistics, the model has %d", nc, len(b.counts))
	}
	for i := range b.counts {
		b.counts[i] = int64(r.u64())
	}
	var goals []string
	for k := r.u64n(uint64(r.left) + 1); k > 0 && r.err == nil; k-- {
		goals = append(goals, r.str())
	}
	if r.err == nil {
		if err := b.setGoals(goals); err != nil {
			return 0, err
		}
	}
	levels := r.u64s(nil, 0)
	if r.err == nil && !levelsMatch(levels, int(depth), n, hi-lo) {
		return 0, errors.New("the states per level do not match the counters")
	}
	b.levels = b.levels[:0]
	for _, v := range levels {
		b.levels = append(b.levels, int64(v))
	}
	b.frontKeys = r.u64s(b.frontKeys[:0], 0)
	b.frontSleep = r.u64s(b.frontSleep[:0], 0)
	if r.err == nil && (len(b.frontKeys) != b.hi-b.lo || (b.sleep && len(b.frontSleep) != len(b.frontKeys)) || (!b.sleep && len(b.frontSleep) != 0)) {
		return 0, errors.New("the level to expand does not match the counters")
	}
	for i := range b.tr.leaves.sh {
		sh := &b.tr.leaves.sh[i]
		sh.slots = r.u32s(nil)
		sh.hashes = r.u64s(nil, 0)
		sh.refs = r.u64s(nil, 0)
		sh.ar.base = int(r.u64n(1 << 31))
		sh.ar.bytes = int64(r.u64n(uint64(r.left) + 1))
		nch := r.u64n(uint64(r.left)/8 + 1)
		sh.ar.chunks = nil
		var capSum, lenSum uint64
		for j := uint64(0); j < nch && r.err == nil; j++ {
			c := r.u64()
			data := r.bytes(0)
			if r.err != nil {
				return 0, r.err
			}
			// A chunk is left for the next when a record does not fit, so
			// the chunks are more than half full but for the last.
			capSum, lenSum = capSum+c, lenSum+uint64(len(data))
			if c < uint64(len(data)) || c > uint64(max(len(data), chunkSize)) || capSum > 2*lenSum+chunkSize {
				return 0, fmt.Errorf("leaf shard %d is inconsistent", i)
			}
			sh.ar.chunks = append(sh.ar.chunks, append(make([]byte, 0, c), data...))
		}
		if r.err == nil && (len(sh.hashes) != len(sh.refs) || len(sh.refs) > len(sh.slots) || len(sh.refs) > maxLocal || !validSlots32(sh.slots, len(sh.refs)) || !validRefs(sh.refs, &sh.ar)) {
			return 0, fmt.Errorf("leaf shard %d is inconsistent", i)
		}
	}
	for i := range b.tr.pairs.sh {
		sh := &b.tr.pairs.sh[i]
		sh.slots = r.u32s(nil)
		c := r.u64n(1 << 28)
		sh.keys = r.u64s(nil, int(c))
		if r.err == nil && (len(sh.keys) > len(sh.slots) || !validSlots32(sh.slots, len(sh.keys))) {
			return 0, fmt.Errorf("pair shard %d is inconsistent", i)
		}
	}
	for i := range b.roots.sh {
		sh := &b.roots.sh[i]
		sh.n = int(r.u64n(1 << 40))
		sh.slots = r.u64s(nil, 0)
		if r.err == nil && sh.n > len(sh.slots) {
			return 0, fmt.Errorf("visited-set shard %d is inconsistent", i)
		}
		for _, e := range sh.slots {
			if e&lvlSlot != 0 {
				return 0, fmt.Errorf("visited-set shard %d holds a level entry", i)
			}
		}
	}
	return int(depth), r.err
}

// checksumOK reports whether the last 4 bytes of f, of size bytes, are
// the CRC-32 of the others, and rewinds f.
func checksumOK(f *os.File, size int64) (bool, error) {
	if size < 4 {
		return false, nil
	}
	h := crc32.NewIEEE()
	if _, err := io.Copy(h, io.LimitReader(f, size-4)); err != nil {
		return false, err
	}
	var tail [4]byte
	if _, err := io.ReadFull(f, tail[:]); err != nil {
		return false, err
	}
	_, err := f.Seek(0, io.SeekStart)
	return h.Sum32() == binary.LittleEndian.Uint32(tail[:]), err
}

// setGoals restores the model's record of reached goals (GoalKeeper).
func (b *bfs) setGoals(goals []string) error {
	gk, ok := b.search.m.(GoalKeeper)
	if !ok {
		if len(goals) != 0 {
			return fmt.Errorf("%d goals recorded, the model keeps none", len(goals))
		}
		return nil
	}
	return gk.SetReached(goals)
}

// validSlots32 checks an open-addressing table of index+1 entries.
func validSlots32(slots []uint32, n int) bool {
	for _, e := range slots {
		if int(e) > n {
			return false
		}
	}
	return true
}

// validRefs checks that every arena reference points into the arena.
func validRefs(refs []uint64, a *arena) bool {
	for _, ref := range refs {
		ci := int(ref>>32) - a.base
		if ci < 0 || ci >= len(a.chunks) {
			return false
		}
		c, off := a.chunks[ci], int(uint32(ref))
		if off >= len(c) {
			return false
		}
		n, k := binary.Uvarint(c[off:])
		if k <= 0 || n > uint64(len(c)-off-k) {
			return false
		}
	}
	return true
}

// CheckpointHeader is what ReadCheckpoint tells of a checkpoint.
type CheckpointHeader struct {
	ID, Note string // the CheckpointID and CheckpointNote of the search that wrote it
	Depth    int
	States   int64
}

// ReadCheckpoint reads the header of the checkpoint in dir (its integrity
// is checked only when a search resumes it).
func ReadCheckpoint(dir string) (CheckpointHeader, error) {
	path := filepath.Join(dir, ckptFile)
	if err := isDir(dir); err != nil {
		return CheckpointHeader{}, err
	}
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return CheckpointHeader{}, ckptErr("%s holds no checkpoint (%s)", dir, ckptFile)
		}
		return CheckpointHeader{}, ckptErr("reading the checkpoint: %v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return CheckpointHeader{}, ckptErr("reading the checkpoint: %v", err)
	}
	r := &ckReader{r: bufio.NewReader(f), left: fi.Size() - 4}
	magic := string(r.raw(len(ckptMagic)))
	h := CheckpointHeader{ID: callerID(r.str()), Note: r.str()}
	h.Depth, h.States = int(r.u64n(1<<31)), int64(r.u64n(1<<32))
	if r.err != nil || magic != ckptMagic {
		return CheckpointHeader{}, ckptErr("%s is not an lfccheck checkpoint, or is corrupt", path)
	}
	return h, nil
}

// callerID returns the CheckpointID part of a full identity (ckptID).
func callerID(full string) string {
	if i := strings.LastIndex(full, "\nsegments "); i >= 0 {
		return full[:i]
	}
	return full
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

// ckWriter writes a checkpoint, little-endian, with a running CRC-32.
type ckWriter struct {
	w   *bufio.Writer
	crc uint32
	n   int64
	err error
	buf []byte
}

func (w *ckWriter) raw(p []byte) {
	if w.err != nil {
		return
	}
	w.crc = crc32.Update(w.crc, crc32.IEEETable, p)
	w.n += int64(len(p))
	_, w.err = w.w.Write(p)
}

func (w *ckWriter) u64(v uint64) { w.raw(binary.LittleEndian.AppendUint64(w.buf[:0], v)) }
func (w *ckWriter) u32(v uint32) { w.raw(binary.LittleEndian.AppendUint32(w.buf[:0], v)) }

func (w *ckWriter) str(s string) {
	w.u64(uint64(len(s)))
	w.raw([]byte(s))
}

func (w *ckWriter) bytes(p []byte) {
	w.u64(uint64(len(p)))
	w.raw(p)
}

func (w *ckWriter) u64s(vs []uint64) {
	w.u64(uint64(len(vs)))
	for len(vs) > 0 {
		n := min(len(vs), 1<<14)
		b := w.buf[:0]
		for _, v := range vs[:n] {
			b = binary.LittleEndian.AppendUint64(b, v)
		}
		w.buf = b
		w.raw(b)
		vs = vs[n:]
	}
}

func (w *ckWriter) u32s(vs []uint32) {
	w.u64(uint64(len(vs)))
	for len(vs) > 0 {
		n := min(len(vs), 1<<15)
		b := w.buf[:0]
		for _, v := range vs[:n] {
			b = binary.LittleEndian.AppendUint32(b, v)
		}
		w.buf = b
		w.raw(b)
		vs = vs[n:]
	}
}

func (w *ckWriter) flush() error {
	if w.err != nil {
		return w.err
	}
	return w.w.Flush()
}

// ckReader reads a checkpoint; left is the number of bytes before the
// CRC (checked by checksumOK before any decoding), which bounds every
// length it reads (a corrupt length fails instead of allocating).
type ckReader struct {
	r    *bufio.Reader
	left int64
	err  error
	buf  []byte
}

func (r *ckReader) raw(n int) []byte {
	if r.err != nil {
		return nil
	}
	if int64(n) > r.left {
		r.err = io.ErrUnexpectedEOF
		return nil
	}
	if cap(r.buf) < n {
		r.buf = make([]byte, n)
	}
	b := r.buf[:n]
	if _, err := io.ReadFull(r.r, b); err != nil {
		r.err = io.ErrUnexpectedEOF
		return nil
	}
	r.left -= int64(n)
	return b
}

func (r *ckReader) u64() uint64 {
	b := r.raw(8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

func (r *ckReader) u32() uint32 {
	b := r.raw(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

// u64n reads a value that must be below max.
func (r *ckReader) u64n(max uint64) uint64 {
	v := r.u64()
	if r.err == nil && v >= max {
		r.err = fmt.Errorf("value %d out of range", v)
		return 0
	}
	return v
}

func (r *ckReader) str() string { return string(r.bytes(0)) }

// bytes reads a length-prefixed byte string into a new slice of capacity
// at least c.
func (r *ckReader) bytes(c int) []byte {
	n := int(r.u64n(uint64(r.left) + 1))
	b := r.raw(n)
	if r.err != nil {
		return nil
	}
	out := make([]byte, n, max(n, c))
	copy(out, b)
	return out
}

// int64s returns v as uint64s.
func int64s(v []int64) []uint64 {
	u := make([]uint64, len(v))
	for i, x := range v {
		u[i] = uint64(x)
	}
	return u
}

// levelsMatch reports whether levels, the states per level of a
// checkpoint taken before the level at depth was expanded, are
// depth+1 positive counts, the first 1 (the initial state), that add up
// to its n states and end with the width of the level to expand.
func levelsMatch(levels []uint64, depth int, n, width uint64) bool {
	if len(levels) != depth+1 || levels[0] != 1 || levels[depth] != width {
		return false
	}
	var sum uint64
	for _, v := range levels {
		if v == 0 || v > n {
			return false
		}
		sum += v
	}
	return sum == n
}

// u64s reads a length-prefixed array, appended to dst, with capacity at
// least c (which may exceed the length n by a quarter of it and 64, as
// the pair table's keys do).
func (r *ckReader) u64s(dst []uint64, c int) []uint64 {
	n := int(r.u64n(uint64(r.left)/8 + 1))
	if r.err == nil && c > n+n/4+64 {
		r.err = fmt.Errorf("capacity %d for %d values", c, n)
	}
	if r.err != nil {
		return dst
	}
	if cap(dst) < n || cap(dst) < c {
		dst = make([]uint64, 0, max(n, c))
	}
	for n > 0 && r.err == nil {
		k := min(n, 1<<14)
		b := r.raw(8 * k)
		for i := 0; i < k && b != nil; i++ {
			dst = append(dst, binary.LittleEndian.Uint64(b[8*i:]))
		}
		n -= k
	}
	return dst
}

func (r *ckReader) u32s(dst []uint32) []uint32 {
	n := int(r.u64n(uint64(r.left)/4 + 1))
	if r.err != nil {
		return dst
	}
	dst = make([]uint32, 0, n)
	for n > 0 && r.err == nil {
		k := min(n, 1<<15)
		b := r.raw(4 * k)
		for i := 0; i < k && b != nil; i++ {
			dst = append(dst, binary.LittleEndian.Uint32(b[4*i:]))
		}
		n -= k
	}
	return dst
}
