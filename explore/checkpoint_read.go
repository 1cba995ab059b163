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

	"lfccheck/internal/fileio"
)

// loadCheckpoint restores the search from its checkpoint directory and
// returns the depth of the level to expand next. id is the identity the
// checkpoint must have.
func (b *bfs) loadCheckpoint() (int, error) {
	ck := b.ck
	t0 := time.Now()
	path := filepath.Join(ck.dir, CheckpointFile)
	f, err := fileio.OpenRegular(path)
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
	path := filepath.Join(dir, CheckpointFile)
	if err := isDir(dir); err != nil {
		return CheckpointHeader{}, err
	}
	f, err := fileio.OpenRegular(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return CheckpointHeader{}, ckptErr("%s holds no checkpoint (%s)", dir, CheckpointFile)
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
