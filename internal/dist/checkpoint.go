package dist

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"time"

	"lfccheck/explore"
	"lfccheck/internal/fileio"
)

// Checkpoints of a distributed search (explore.Options.Checkpoint): at a
// level's barrier, every worker writes the states it owns (each with its
// segments' lengths when the model's states split into segments, so that
// a resumed search keeps them in the tree store again), the level to
// expand with its paths and sleep sets, its statistics and goals to
// DIR/dist-R-of-N-D.ckpt (D the depth), and then the coordinator writes
// DIR/dist.json, which names the depth; older files are removed after.
// A search given a directory that holds a checkpoint continues from it,
// every worker from its file: on a shared volume, a search whose worker
// was lost is started again with the same flags and goes on from the
// last checkpoint. A search that ends with a verdict removes them.

// MetaName is the coordinator's file in a distributed checkpoint's
// directory: what each worker's file holds.
const MetaName = "dist.json"

// ckptFormat begins a worker's checkpoint file.
const ckptFormat = "lfccheck-dist-2"

// metaFormat is the format of dist.json: 1 carries a checksum of what it
// states (the files before it had no format and no checksum, and their
// counts were believed as edited).
const metaFormat = 1

// meta is the coordinator's part of a checkpoint.
type meta struct {
	Format  int     `json:"format"`
	ID      string  `json:"id"`
	Workers int     `json:"workers"`
	Depth   int     `json:"depth"`
	Levels  []int64 `json:"levels"`
	States  int64   `json:"states"`
	Trans   int64   `json:"transitions"`
	Skipped int64   `json:"skipped"`
	Sleep   bool    `json:"sleep"`
	Note    string  `json:"sleep_note"`
	Elapsed int64   `json:"elapsed_ns"`
	// Checksum is the SHA-256 (hex) of the JSON encoding of the meta with
	// Checksum empty (metaSum).
	Checksum string `json:"checksum"`
}

// metaSum is the checksum of m (whatever its Checksum).
func metaSum(m meta) string {
	m.Checksum = ""
	return fileio.JSONSum(m)
}

// marshal encodes m as dist.json, with its format and checksum.
func (m meta) marshal() []byte {
	m.Format = metaFormat
	m.Checksum = metaSum(m)
	data, _ := json.MarshalIndent(m, "", "  ")
	return append(data, '\n')
}

func workerFile(dir string, rank, n, depth int) string {
	return filepath.Join(dir, fmt.Sprintf("dist-%d-of-%d-%d.ckpt", rank, n, depth))
}

// writeFile writes data beside path and renames it into place.
func writeFile(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := fileio.CreateRegular(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// checkpoint writes this worker's part of the checkpoint before the level
// at depth (between opAdvance and opExpand).
func (w *worker) checkpoint(dir string, depth int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var e enc
	e.str(ckptFormat)
	e.u(uint64(w.rank))
	e.u(uint64(w.n))
	e.u(uint64(depth))
	e.bool(w.sleep)
	e.u(uint64(w.store.Len()))
	e.u(uint64(w.flo))
	ts, tree := w.store.(treeStates)
	if w.nseg > 0 && !tree {
		return fmt.Errorf("worker %d: checkpoints need the exact store", w.rank)
	}
	e.u(uint64(w.nseg))
	for id := range w.store.Len() {
		e.bytes(w.store.State(id))
		if w.nseg > 0 {
			_, _, ends := ts.Leaves() // (of the state just rebuilt)
			e.b = appendLengths(e.b, ends)
		}
	}
	for i := range w.fpath {
		e.bytes(w.fpath[i])
		e.u(w.fz[i])
	}
	var counts []int64
	if w.ct != nil {
		counts = w.ct.Counts(nil)
	}
	e.countsAndReached(counts, w.m)
	e.i(w.sent.Load())
	e.b = binary.BigEndian.AppendUint32(e.b, crc32.ChecksumIEEE(e.b))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return writeFile(workerFile(dir, w.rank, w.n, depth), e.b)
}

// load reads this worker's part of the checkpoint at depth.
func (w *worker) load(dir string, depth int) error {
	path := workerFile(dir, w.rank, w.n, depth)
	data, err := fileio.ReadRegular(path)
	if err != nil {
		return fmt.Errorf("worker %d: the checkpoint at depth %d: %v", w.rank, depth, err)
	}
	if len(data) < 4 || crc32.ChecksumIEEE(data[:len(data)-4]) != binary.BigEndian.Uint32(data[len(data)-4:]) {
		return fmt.Errorf("worker %d: %s is damaged (its CRC differs)", w.rank, path)
	}
	d := dec{b: data[:len(data)-4]}
	if f := d.str(); f != ckptFormat {
		if len(f) > 32 || d.err != nil {
			return fmt.Errorf("worker %d: %s is not a worker's checkpoint of lfccheck", w.rank, path)
		}
		return fmt.Errorf("worker %d: %s is in format %q, not %q (written by another version of lfccheck)", w.rank, path, f, ckptFormat)
	}
	if int(d.u()) != w.rank || int(d.u()) != w.n || int(d.u()) != depth {
		return fmt.Errorf("worker %d: %s is not this worker's checkpoint at depth %d", w.rank, path, depth)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sleep = d.bool()
	w.sl = nil
	if w.sleep {
		sl, ok := w.m.(explore.Sleeper)
		if !ok {
			return errors.New("dist: the model has no sleep sets")
		}
		w.sl = sl
	}
	n, flo, nseg := d.count(), d.count(), int(d.u())
	if d.err != nil || flo > n || nseg != w.nseg {
		return fmt.Errorf("worker %d: %s is malformed", w.rank, path)
	}
	w.store = w.newStore()
	w.resetDelegation()
	w.storeErr = nil
	var ends []int
	for range n {
		s := d.bytes()
		ends = d.ends(ends, nseg)
		if d.err != nil {
			break
		}
		var se []int
		if nseg > 0 {
			se = ends
		}
		_, fresh, err := w.store.add(explore.Hash(s), s, se)
		switch {
		case err != nil:
			return fmt.Errorf("worker %d: %s is malformed (a state that does not split into its segments)", w.rank, path)
		case !fresh:
			return fmt.Errorf("worker %d: %s is malformed (a state stored twice)", w.rank, path)
		}
	}
	w.flo, w.levelStart = flo, w.store.Len()
	w.fpath, w.fz, w.npath, w.nz, w.nbad, w.nl = nil, nil, nil, nil, nil, nil
	w.depth = -1
	w.fends, w.nends, w.leaves = nil, nil, nil
	for range n - flo {
		w.fpath = append(w.fpath, slices.Clone(d.bytes()))
		w.fz = append(w.fz, d.u())
	}
	counts := make([]int64, d.count())
	for i := range counts {
		counts[i] = d.i()
	}
	reached := make([]string, d.count())
	for i := range reached {
		reached[i] = d.str()
	}
	w.sent.Store(d.i())
	if d.err != nil || len(d.b) != 0 || w.store.Len() != n {
		return fmt.Errorf("worker %d: %s is malformed", w.rank, path)
	}
	if w.ct != nil {
		w.ct.SetCounts(counts)
	}
	if gk, ok := w.m.(explore.GoalKeeper); ok {
		if err := gk.SetReached(reached); err != nil {
			return fmt.Errorf("worker %d: %s: %v", w.rank, path, err)
		}
	}
	w.countsFail = nil
	w.order = w.order[:0]
	for i := range w.fpath {
		w.order = append(w.order, int32(i))
	}
	slices.SortFunc(w.order, func(a, b int32) int { return bytes.Compare(w.fpath[a], w.fpath[b]) })
	return nil
}

// prune removes this worker's checkpoint files of other depths than keep
// (all of them with keep < 0).
func (w *worker) prune(dir string, keep int) error {
	files, err := filepath.Glob(filepath.Join(dir, fmt.Sprintf("dist-%d-of-%d-*.ckpt", w.rank, w.n)))
	if err != nil {
		return err
	}
	for _, f := range files {
		if keep >= 0 && f == workerFile(dir, w.rank, w.n, keep) {
			continue
		}
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// readMeta reads the coordinator's part of the checkpoint in dir, or nil
// if there is none.
func readMeta(dir string) (*meta, error) {
	path := filepath.Join(dir, MetaName)
	data, err := fileio.ReadRegular(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m meta
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	switch {
	case m.Format == 0 && m.Checksum == "":
		return nil, fmt.Errorf("%s is of an older format, without a checksum (this lfccheck reads format %d): remove the directory to start again", path, metaFormat)
	case m.Format != metaFormat:
		return nil, fmt.Errorf("%s is of format %d, not %d (written by another version of lfccheck): remove the directory to start again", path, m.Format, metaFormat)
	case m.Checksum != metaSum(m):
		return nil, fmt.Errorf("%s is damaged or was edited (its checksum differs): remove the directory to start again", path)
	}
	return &m, nil
}

// ckptCmd encodes a checkpoint command.
func ckptCmd(op byte, dir string, depth int) []byte {
	var e enc
	e.str(dir)
	e.i(int64(depth))
	return append([]byte{op}, e.b...)
}

// depthCmd encodes a command about the level at depth (opExpand, opSteal).
func depthCmd(op byte, depth int64) []byte {
	var e enc
	e.u(uint64(depth))
	return append([]byte{op}, e.b...)
}

// writeCheckpoint has every worker write its part before the level at
// depth, then writes the coordinator's, then removes the older ones. The
// checkpoint commands run without the search's time limit: a limit that
// passes while a checkpoint is written ends the search at the next
// level, with the checkpoint complete, instead of failing the write.
func (c *coord) writeCheckpoint(t *tally, depth int, sleep bool, note string) error {
	dir := c.opt.Checkpoint
	if _, err := c.each(c.untimed(c.ctx), ckptCmd(opCheckpoint, dir, depth)); err != nil {
		return err
	}
	m := meta{ID: c.opt.CheckpointID, Workers: len(c.peers), Depth: depth, Levels: t.levels, States: t.n, Trans: t.trans,
		Skipped: t.skipped, Sleep: sleep, Note: note, Elapsed: int64(c.before + time.Since(c.start))}
	if err := writeFile(filepath.Join(dir, MetaName), m.marshal()); err != nil {
		return err
	}
	c.lastCkpt = time.Now()
	c.written++
	c.ckDepth = depth
	_, err := c.each(c.untimed(c.ctx), ckptCmd(opPrune, dir, depth))
	return err
}

// resume loads the checkpoint in the directory, if there is one: the
// depth to go on from, the tally, and whether sleep sets are on.
func (c *coord) resume() (*meta, error) {
	dir := c.opt.Checkpoint
	m, err := readMeta(dir)
	if err != nil || m == nil {
		return nil, err
	}
	switch {
	case m.ID != c.opt.CheckpointID:
		return nil, fmt.Errorf("the checkpoint in %s is of another search (configuration, properties, reductions or lfccheck build)", dir)
	case m.Workers != len(c.peers):
		return nil, fmt.Errorf("the checkpoint in %s is of %d workers, not %d", dir, m.Workers, len(c.peers))
	}
	if _, err := c.each(c.untimed(c.ctx), ckptCmd(opLoad, dir, m.Depth)); err != nil {
		return nil, err
	}
	c.before = time.Duration(m.Elapsed)
	c.resumed, c.ckDepth = true, m.Depth
	return m, nil
}

// removeCheckpoint removes the checkpoint of a search that ended with a
// verdict.
func (c *coord) removeCheckpoint() error {
	dir := c.opt.Checkpoint
	if _, err := c.each(c.untimed(c.ctx), ckptCmd(opPrune, dir, -1)); err != nil {
		return err
	}
	err := os.Remove(filepath.Join(dir, MetaName))
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	return err
}
