package explore

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"lfccheck/internal/fileio"
)

// The disk search (Options.DiskDir): a breadth-first search whose memory
// does not grow with the states it has stored. The visited set lives in
// the directory as sorted files of the states' exact encodings (so a
// pass is as exact as the full search's); RAM holds the level being
// expanded only as it is read from its file, and a buffer of sorted runs
// of at most Options.DiskRunBytes (16 MiB by default), which the
// successors of a level and then its new states fill in turn.
//
// Duplicates are detected with a delay (delayed duplicate detection):
// the successors generated from level d go, with the transition that
// reached each (the parent's index in its level and the successor's
// index: the sequence key, which orders transitions as a sequential
// breadth-first search meets them), into a buffer that is sorted by
// encoding and written out as a run whenever it is full, each run
// without repeats. At the end of the level the runs are merged, keeping
// for each state its smallest sequence key, and the merged stream is
// joined with the sorted files of the visited set: the states in none of
// them are new. They form a new sorted file of the visited set (files are
// merged two by two when the older is at most twice the newer, so they
// stay few) and, sorted again by sequence key through runs of the same
// kind, the file of level d+1 in the order the full search numbers its
// states, with their parent records (parent index, action code). So the
// search expands the states in the full search's order and stops at the
// same violation, with the same counts of states and transitions.
// Counterexamples are read back from the parent records and replayed from
// the initial state.
//
// Invariants and step rules are checked as successors are generated (the
// model does not defer them); end-state conditions where a state has no
// successor. Sleep sets are not used (a transition into a state already
// expanded is seen only at the level's end): transitions count as in the
// full search without them.
//
// The directory is the checkpoint: after each level a manifest
// (lfccheck-disk.json, written atomically after the files it names are
// synced) names the files of the visited set, of the next level and of
// the parents, with their sizes and CRCs. A search started on a directory
// that holds the manifest of the same search (Options.CheckpointID)
// resumes at that level; the files are removed when the search ends with
// a verdict and kept when it is cut short.
//
// Disk per state: its encoding and length in the visited set, 8 bytes of
// parent record, and during a level the runs of successors and of new
// states. Reading the visited set once per level costs I/O that grows
// with the states stored times the levels (the files are read, not held).
//
// In the fingerprint mode (Options.DiskFingerprint, disk_keys.go) the
// visited set holds 64-bit fingerprints (SipHash-2-4 with a fixed key) of
// the encodings, Rice-coded, and the parent records are bit-packed: about
// 6 to 7 bytes per state where the exact files take 150 to 200. The runs
// of successors are then sorted by fingerprint (each record's key is the
// fingerprint, big-endian, then the encoding), and a state whose
// fingerprint is in the visited set, or is that of another successor
// already kept, is taken as seen: two states that share a fingerprint
// make the second one missed (hash compaction), which the result
// estimates (DiskInfo.OmissionProb: n^2/2^65 for n states) and, where
// two successors of one level collide, counts. The levels still hold
// the states' encodings, so a counterexample is exact: it is rebuilt by
// expanding forward from the initial state along the parent records. The
// visited files are merged only when there are more than diskMaxFPFiles
// (the two smallest), so that the disk's peak is not twice the set.

// DiskInfo describes a disk search.
type DiskInfo struct {
	Dir string `json:"dir"`
	// RunBytes bounds the memory of the buffer of sorted runs (its
	// arrays may each reach it: twice that at worst), and that of the
	// readers that merge the runs.
	RunBytes int `json:"run_bytes"`
	// Runs is the number of sorted runs written (successors and new
	// states), VisitedFiles the files of the visited set at the end.
	Runs         int64 `json:"runs"`
	VisitedFiles int   `json:"visited_files"`
	// WrittenBytes is what the search wrote in all; PeakBytes the most
	// its files took at once.
	WrittenBytes int64 `json:"written_bytes"`
	PeakBytes    int64 `json:"peak_bytes"`
	// ResumedAt is the depth of the level the search resumed at, with
	// Resumed set.
	Resumed   bool `json:"resumed"`
	ResumedAt int  `json:"resumed_at_depth,omitempty"`
	// Keys is what the visited set holds: "exact" (the encodings) or
	// "fingerprint" (64-bit fingerprints, Options.DiskFingerprint).
	Keys string `json:"keys"`
	// KeyBytes is what the visited set and the parent records took when
	// the search ended (before they were removed), PeakKeyBytes the most
	// they took at once (with the merges' copies); PeakLevelBytes is the
	// most the levels took at once: the states of the level expanded and
	// of the next, and the runs of successors and new states.
	KeyBytes       int64 `json:"key_bytes"`
	PeakKeyBytes   int64 `json:"peak_key_bytes"`
	PeakLevelBytes int64 `json:"peak_level_bytes"`
	// OmissionProb, in the fingerprint mode, bounds the probability that
	// a state was missed because its fingerprint was that of another:
	// n^2/2^65 for n states stored, fingerprints taken as random.
	// Collisions counts the pairs of successors of one level seen with
	// the same fingerprint and different encodings (each such pair is a
	// state missed; collisions with states of earlier levels cannot be
	// seen).
	OmissionProb float64 `json:"omission_probability,omitempty"`
	Collisions   int64   `json:"fingerprint_collisions_seen,omitempty"`
	// Kept is set when the files stay in Dir for the same search to
	// resume, at SavedDepth with SavedStates stored.
	Kept       bool `json:"kept"`
	SavedDepth int  `json:"saved_depth,omitempty"`
	// Lost is set when the search ended without a verdict after saving a
	// level whose manifest Dir no longer holds (removed while the search
	// ran): nothing can continue it.
	Lost        bool  `json:"lost,omitempty"`
	SavedStates int64 `json:"saved_states,omitempty"`
}

// DiskManifest is the name of the disk search's manifest in its directory.
const DiskManifest = "lfccheck-disk.json"

// defaultDiskRun is the default bound of a run buffer (16 MiB).
const defaultDiskRun = 16 << 20

// diskFormat is the manifest's format: 2 carries a checksum of what it
// states (format 1 did not, and its counts were believed as edited).
const diskFormat = 2

type diskManifest struct {
	Format      int           `json:"format"`
	ID          string        `json:"id"`
	Keys        string        `json:"keys,omitempty"`
	Note        string        `json:"note,omitempty"`
	Init        uint64        `json:"initial_hash"`
	Depth       int           `json:"depth"`
	Levels      []int64       `json:"levels"`
	States      int64         `json:"states"`
	Transitions int64         `json:"transitions"`
	Counts      []int64       `json:"counts,omitempty"`
	Goals       []string      `json:"goals,omitempty"`
	Elapsed     time.Duration `json:"elapsed"`
	Level       fileMeta      `json:"level"`
	Parents     []fileMeta    `json:"parents"`
	Visited     []fileMeta    `json:"visited"`
	Serial      int           `json:"serial"`
	Collisions  int64         `json:"fingerprint_collisions_seen,omitempty"`
	// The search's I/O so far (DiskInfo's), so that a search continued
	// from the manifest reports the whole search's: runs and bytes
	// written, and the peaks of its files.
	Runs           int64 `json:"runs,omitempty"`
	WrittenBytes   int64 `json:"written_bytes,omitempty"`
	PeakBytes      int64 `json:"peak_bytes,omitempty"`
	PeakKeyBytes   int64 `json:"peak_key_bytes,omitempty"`
	PeakLevelBytes int64 `json:"peak_level_bytes,omitempty"`
	// Checksum is the SHA-256 (hex) of the manifest's JSON encoding with
	// Checksum empty (manifestSum): a manifest that was edited or
	// damaged is refused instead of believed.
	Checksum string `json:"checksum"`
}

// manifestSum is the checksum of m (whatever its Checksum).
func manifestSum(m diskManifest) string {
	m.Checksum = ""
	return fileio.JSONSum(m)
}

type diskSearch struct {
	*search
	w, replay Model
	ct        Counter
	ctMain    Counter
	countMax  []bool
	counts    []int64
	dir       string
	man       diskManifest
	info      DiskInfo
	lock      *os.File
	total     int64
	pending   int64
	partial   bool
	bufs      []*runBuf
	diskNow   int64
	keysNow   int64 // of diskNow, the visited set's and parents' files
	fp        bool  // fingerprint mode
	key       []byte
	vEnc      []byte // the state whose expansion violated a property
	levelAt   int64  // states of the level expanded so far (progress)
	bufPeak   int64  // the most memory the run buffers held
	mem       runMem // the run buffers' memory, between two uses
}

// diskBFS runs the disk search (BFS with Options.DiskDir).
func diskBFS(m Model, opt Options) (Result, error) {
	switch {
	case opt.Live != nil:
		return Result{}, &OptionError{"the disk search does not record the state graph (liveness properties checked on it)"}
	case opt.Fingerprint:
		return Result{}, &OptionError{"the disk search stores fingerprints only in its own mode (DiskFingerprint): not with the in-memory fingerprint store"}
	case opt.Frontier:
		return Result{}, &OptionError{"the disk search is a search of its own: not with the frontier search"}
	case opt.Checkpoint != "":
		return Result{}, &OptionError{"the disk search's directory is its checkpoint: no other checkpoint"}
	}
	s := &search{m: m, opt: opt, start: time.Now()}
	s.lastProg, s.runStart = s.start, s.start
	d := &diskSearch{search: s, dir: opt.DiskDir}
	s.sized = d
	d.w = m
	if f, ok := m.(Forker); ok {
		d.w = f.NewWorker()
		if ct, ok := d.w.(Counter); ok && len(ct.CountMax()) > 0 {
			if cm, ok := m.(Counter); ok {
				d.ct, d.ctMain, d.countMax = ct, cm, ct.CountMax()
				d.counts = make([]int64, len(d.countMax))
			}
		}
	}
	d.replay = d.w
	if r, ok := m.(Replayer); ok {
		d.replay = r.NewReplayer()
	}
	d.info = DiskInfo{Dir: d.dir, RunBytes: opt.DiskRunBytes, Keys: "exact"}
	if opt.DiskFingerprint {
		d.fp, d.info.Keys = true, "fingerprint"
	}
	if d.info.RunBytes <= 0 {
		d.info.RunBytes = defaultDiskRun
		if opt.MaxMemory > 0 {
			d.info.RunBytes = int(min(uint64(defaultDiskRun), max(opt.MaxMemory/8, 1<<16)))
		}
	}
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		return Result{}, &CheckpointError{Msg: fmt.Sprintf("disk search: %v", err)}
	}
	lock, err := lockDir(d.dir)
	if err != nil {
		return Result{}, err
	}
	d.lock = lock
	r, err := d.run()
	d.removeTemp()
	d.info.KeyBytes = d.keysNow
	if err == nil && r.Verdict != Incomplete {
		d.removeAll()
	} else if err == nil {
		d.info.Kept = d.man.Format != 0 && Present(d.dir, DiskManifest)
		d.info.Lost = d.man.Format != 0 && !d.info.Kept
		d.info.SavedDepth, d.info.SavedStates = d.man.Depth, d.man.States
	}
	if d.lock != nil {
		d.lock.Close()
		if err == nil && r.Verdict != Incomplete {
			os.Remove(filepath.Join(d.dir, ckptLock))
		}
	}
	if err != nil {
		return Result{}, err
	}
	d.info.VisitedFiles = len(d.man.Visited)
	info := d.info
	if d.fp {
		n := float64(r.Stats.States)
		info.OmissionProb = min(n*n/math.Pow(2, 65), 1)
		r.Stats.CollisionProb = info.OmissionProb
	}
	r.Disk = &info
	r.Sleep = SleepInfo{Note: "the disk search does not use them"}
	return r, nil
}

// Len is the number of states stored.
func (d *diskSearch) Len() int { return int(d.total + d.pending) }

// MemBytes is the most memory the run buffers held at once.
func (d *diskSearch) MemBytes() int64 {
	n := int64(0)
	for _, b := range d.bufs {
		n += b.memBytes()
	}
	return max(n, d.bufPeak)
}

// DiskBytes is the most the search's files took at once.
func (d *diskSearch) DiskBytes() int64 { return d.info.PeakBytes }

// Levels is the number of states stored per depth (see Stats.Levels).
func (d *diskSearch) Levels() ([]int64, bool) {
	l := append([]int64(nil), d.man.Levels...)
	if d.partial {
		return append(l, d.pending), true
	}
	return l, false
}

func (d *diskSearch) path(name string) string { return filepath.Join(d.dir, name) }

// isKeyFile says whether a file of the directory is one of the visited
// set's or of the parent records (the others hold levels and runs).
func isKeyFile(name string) bool {
	return strings.HasPrefix(name, "visited-") || strings.HasPrefix(name, "parents-")
}

// grew notes n bytes written to the directory in a file of the visited
// set or the parents (key) or of the levels (later removed with shrank).
func (d *diskSearch) grew(n int64, key bool) {
	d.info.WrittenBytes += n
	d.shrank(-n, key)
}

// shrank notes n bytes removed from the directory.
func (d *diskSearch) shrank(n int64, key bool) {
	d.diskNow -= n
	if key {
		d.keysNow -= n
	}
	d.info.PeakBytes = max(d.info.PeakBytes, d.diskNow)
	d.info.PeakKeyBytes = max(d.info.PeakKeyBytes, d.keysNow)
	d.info.PeakLevelBytes = max(d.info.PeakLevelBytes, d.diskNow-d.keysNow)
}

func (d *diskSearch) remove(m fileMeta) {
	if os.Remove(d.path(m.Name)) == nil {
		d.shrank(m.Bytes, isKeyFile(m.Name))
	}
}

// removeTemp removes the runs of a level (files ending in .tmp).
func (d *diskSearch) removeTemp() {
	for _, b := range d.bufs {
		d.shrank(b.removeRuns(), false)
	}
}

// removeAll removes the files of the search.
func (d *diskSearch) removeAll() {
	man := d.man
	for _, m := range append(append([]fileMeta{man.Level}, man.Parents...), man.Visited...) {
		if m.Name != "" {
			d.remove(m)
		}
	}
	os.Remove(d.path(DiskManifest))
	os.Remove(d.path(DiskManifest + ".tmp"))
}

func (d *diskSearch) newBuf(byEnc bool, prefix string) *runBuf {
	b := &runBuf{byEnc: byEnc, limit: d.info.RunBytes, dir: d.dir, prefix: prefix, serial: &d.man.Serial, written: new(int64), pool: &d.mem}
	d.bufs = append(d.bufs, b)
	return b
}

// noteRuns counts the runs a buffer wrote.
func (d *diskSearch) noteRuns(b *runBuf) {
	d.info.Runs += int64(len(b.runs))
	d.bufPeak = max(d.bufPeak, b.peak)
	d.grew(*b.written, false)
	*b.written = 0
}

func (d *diskSearch) run() (Result, error) {
	s := d.search
	init, verr := s.m.Initial()
	resumed, err := d.load(init, verr)
	if err != nil {
		return Result{}, err
	}
	if !resumed {
		if verr != nil {
			d.total = 1
			d.man.Levels = []int64{1}
			return s.fail(verr, nil)
		}
		if err := d.start0(init); err != nil {
			return Result{}, err
		}
	}
	for {
		dep := d.man.Depth
		s.depth = dep
		n := d.man.Level.N
		if n == 0 {
			break
		}
		if s.opt.MaxDepth > 0 && dep >= s.opt.MaxDepth {
			r, _, err := d.incomplete(fmt.Sprintf("depth limit %d reached with %d states unexplored", s.opt.MaxDepth, n))
			return r, err
		}
		r, done, err := d.level()
		if err != nil || done {
			return r, err
		}
	}
	d.setCounts()
	return s.finish(Pass, ""), nil
}

// start0 writes the initial state as level 0 and the first file of the
// visited set.
func (d *diskSearch) start0(init []byte) error {
	d.man = diskManifest{Format: diskFormat, ID: d.opt.CheckpointID, Note: d.opt.CheckpointNote, Init: Hash(init), Levels: []int64{1}, States: 1}
	if d.fp {
		d.man.Keys = "fingerprint"
	}
	d.total = 1
	d.man.Serial++
	lw, err := createRecs(d.path(fmt.Sprintf("level-%d.states", d.man.Serial)), false)
	if err != nil {
		return d.ioErr(err)
	}
	lw.add(drec{enc: init})
	if d.man.Level, err = lw.close(true); err != nil {
		return d.ioErr(err)
	}
	d.man.Serial++
	var vm fileMeta
	if d.fp {
		vw, err := createFPs(d.path(fmt.Sprintf("visited-%d.fps", d.man.Serial)))
		if err != nil {
			return d.ioErr(err)
		}
		vw.add(fingerprintOf(init))
		vm, err = vw.close(true)
	} else {
		vw, err := createRecs(d.path(fmt.Sprintf("visited-%d.states", d.man.Serial)), false)
		if err != nil {
			return d.ioErr(err)
		}
		vw.add(drec{enc: init})
		vm, err = vw.close(true)
	}
	if err != nil {
		return d.ioErr(err)
	}
	d.man.Visited = []fileMeta{vm}
	d.grew(d.man.Level.Bytes, false)
	d.grew(vm.Bytes, true)
	if d.ctMain != nil {
		d.counts = d.ctMain.Counts(nil)
	}
	return d.writeManifest()
}

func (d *diskSearch) ioErr(err error) error {
	return fmt.Errorf("disk search in %s: %w", d.dir, err)
}

// writeManifest saves the manifest atomically.
func (d *diskSearch) writeManifest() error {
	d.man.Elapsed = time.Since(d.start)
	d.man.Counts = append([]int64(nil), d.counts...)
	d.man.Collisions = d.info.Collisions
	d.man.Runs, d.man.WrittenBytes = d.info.Runs, d.info.WrittenBytes
	d.man.PeakBytes, d.man.PeakKeyBytes, d.man.PeakLevelBytes = d.info.PeakBytes, d.info.PeakKeyBytes, d.info.PeakLevelBytes
	if gk, ok := d.m.(GoalKeeper); ok {
		d.man.Goals = gk.Reached()
	}
	d.man.Checksum = manifestSum(d.man)
	b, err := json.MarshalIndent(d.man, "", " ")
	if err != nil {
		return err
	}
	tmp := d.path(DiskManifest + ".tmp")
	f, err := fileio.CreateRegular(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return d.ioErr(err)
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil && diskSync {
		err = f.Sync()
	}
	if e := f.Close(); err == nil {
		err = e
	}
	if err == nil {
		err = os.Rename(tmp, d.path(DiskManifest))
	}
	if err != nil {
		return d.ioErr(err)
	}
	if dir, err := os.Open(d.dir); err == nil && diskSync {
		dir.Sync()
		dir.Close()
	}
	return nil
}

// load resumes from the manifest in the directory, if there is one.
func (d *diskSearch) load(init []byte, verr error) (bool, error) {
	b, err := fileio.ReadRegular(d.path(DiskManifest))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, diskOpenErr(d.path(DiskManifest), err)
	}
	var man diskManifest
	switch err := json.Unmarshal(b, &man); {
	case err == nil && man.Format == 1:
		return false, &CheckpointError{Msg: fmt.Sprintf("disk search: %s is of format 1, without a checksum (an older lfccheck; this one reads format %d): remove the directory to start again", d.path(DiskManifest), diskFormat)}
	case err != nil:
		return false, &CheckpointError{Msg: fmt.Sprintf("disk search: %s is not a manifest this program can read", d.path(DiskManifest))}
	case man.Format != diskFormat:
		return false, &CheckpointError{Msg: fmt.Sprintf("disk search: %s is of format %d, not %d (written by another version of lfccheck): remove the directory to start again", d.path(DiskManifest), man.Format, diskFormat)}
	case man.Checksum != manifestSum(man):
		return false, &CheckpointError{Msg: fmt.Sprintf("disk search: %s is damaged or was edited (its checksum differs): remove the directory to start again", d.path(DiskManifest))}
	}
	switch {
	case man.ID != d.opt.CheckpointID:
		return false, &CheckpointError{Msg: fmt.Sprintf("disk search: %s holds the files of another search", d.dir), Have: man.ID, Want: d.opt.CheckpointID}
	case man.Keys != "" && man.Keys != "fingerprint":
		return false, &CheckpointError{Msg: fmt.Sprintf("disk search: %s: the manifest names keys %q, which this program cannot read", d.path(DiskManifest), man.Keys)}
	case (man.Keys == "fingerprint") != d.fp:
		return false, &CheckpointError{Msg: fmt.Sprintf("disk search: %s holds the visited set of a search with %s keys, this one asks for %s", d.dir, keysName(man.Keys == "fingerprint"), keysName(d.fp))}
	case verr != nil || man.Init != Hash(init):
		return false, &CheckpointError{Msg: fmt.Sprintf("disk search: %s holds the files of a search from another initial state", d.dir)}
	case len(man.Parents) != man.Depth || len(man.Levels) < man.Depth || man.Level.N < 0:
		return false, &CheckpointError{Msg: fmt.Sprintf("disk search: %s: the manifest is inconsistent", d.path(DiskManifest))}
	case d.opt.MaxDepth > 0 && man.Depth > d.opt.MaxDepth:
		return false, &CheckpointError{Msg: fmt.Sprintf("disk search: the files in %s are at depth %d, past the depth limit %d", d.dir, man.Depth, d.opt.MaxDepth)}
	case d.opt.MaxStates > 0 && man.States > d.opt.MaxStates:
		return false, &CheckpointError{Msg: fmt.Sprintf("disk search: the files in %s hold %d states, more than the state limit %d", d.dir, man.States, d.opt.MaxStates)}
	}
	// Every file is read once and checked before any state is used.
	if err := verifyFile(d.path(man.Level.Name), man.Level, false, false); err != nil {
		return false, err
	}
	for _, m := range man.Visited {
		if err := d.verifyKeys(m, false); err != nil {
			return false, err
		}
	}
	for _, m := range man.Parents {
		if err := d.verifyKeys(m, true); err != nil {
			return false, err
		}
	}
	d.man = man
	d.total, d.s().transitions = man.States, man.Transitions
	d.start = time.Now().Add(-man.Elapsed)
	d.lastProg = time.Now()
	if d.ctMain != nil {
		if len(man.Counts) != len(d.countMax) {
			return false, &CheckpointError{Msg: fmt.Sprintf("disk search: %s: the manifest has %d statistics, the model %d", d.path(DiskManifest), len(man.Counts), len(d.countMax))}
		}
		d.counts = append([]int64(nil), man.Counts...)
	}
	if gk, ok := d.m.(GoalKeeper); ok {
		if err := gk.SetReached(man.Goals); err != nil {
			return false, &CheckpointError{Msg: fmt.Sprintf("disk search: %v", err)}
		}
	}
	d.info.Runs, d.info.WrittenBytes = man.Runs, man.WrittenBytes
	d.info.PeakBytes, d.info.PeakKeyBytes, d.info.PeakLevelBytes = man.PeakBytes, man.PeakKeyBytes, man.PeakLevelBytes
	for _, m := range append(append([]fileMeta{man.Level}, man.Parents...), man.Visited...) {
		d.shrank(-m.Bytes, isKeyFile(m.Name))
	}
	d.info.Resumed, d.info.ResumedAt = true, man.Depth
	d.info.Collisions = man.Collisions
	// Files of a level that was cut short are not named: remove them.
	named := map[string]bool{}
	for _, m := range append(append([]fileMeta{man.Level}, man.Parents...), man.Visited...) {
		named[m.Name] = true
	}
	if ents, err := os.ReadDir(d.dir); err == nil {
		for _, e := range ents {
			n := e.Name()
			if !named[n] && (strings.HasSuffix(n, ".tmp") || strings.HasSuffix(n, ".states") || strings.HasSuffix(n, ".parents") || strings.HasSuffix(n, ".fps")) {
				os.Remove(d.path(n))
			}
		}
	}
	return true, nil
}

func (d *diskSearch) s() *search { return d.search }

// limits says which limit, if any, stops the search, with left states of
// the level unexplored.
func (d *diskSearch) limits(left int64) string {
	s := d.search
	if s.opt.Stop != nil {
		select {
		case <-s.opt.Stop:
			return fmt.Sprintf("interrupted with about %d states unexplored", left)
		default:
		}
	}
	if s.opt.Timeout > 0 && time.Since(s.runStart) >= s.opt.Timeout {
		return fmt.Sprintf("time limit %s reached with about %d states unexplored", s.opt.Timeout, left)
	}
	if inuse := s.sampleMemory(false); s.opt.MaxMemory > 0 && inuse >= s.opt.MaxMemory {
		return fmt.Sprintf("memory limit %s reached (heap %s) with about %d states unexplored",
			FormatBytes(s.opt.MaxMemory), FormatBytes(inuse), left)
	}
	return ""
}

func (d *diskSearch) progress() {
	s := d.search
	if s.opt.Progress == nil || time.Since(s.lastProg) < s.opt.progressEvery() {
		return
	}
	s.lastProg = time.Now()
	el := time.Since(s.start)
	fmt.Fprintf(s.opt.Progress, "progress: %d states, %d transitions, depth %d%s, %d queued, %.0f states/s, heap %s, disk %s, %s\n",
		d.total, s.transitions, s.depth, levelNote(d.man.Levels, s.depth), d.man.Level.N-d.levelAt,
		float64(d.total)/el.Seconds(), FormatBytes(s.peak), FormatBytes(uint64(d.diskNow)), el.Round(time.Second))
}

// incomplete ends the search cut short at a level's start or in it.
func (d *diskSearch) incomplete(reason string) (Result, bool, error) {
	d.setCounts()
	return d.finish(Incomplete, reason), true, nil
}

func (d *diskSearch) setCounts() {
	if d.ctMain != nil {
		d.ctMain.SetCounts(d.counts)
	}
}

// fold adds the worker's counts of a level to the totals.
func (d *diskSearch) fold() {
	if d.ct == nil {
		return
	}
	for i, v := range d.ct.Counts(nil) {
		if i >= len(d.counts) {
			break
		}
		if d.countMax[i] {
			d.counts[i] = max(d.counts[i], v)
		} else {
			d.counts[i] += v
		}
	}
}

// level expands the level at d.man.Depth; done reports that the search
// ended (with the result).
func (d *diskSearch) level() (Result, bool, error) {
	s := d.search
	dep, n := d.man.Depth, d.man.Level.N
	d.bufs = d.bufs[:0]
	succ := d.newBuf(true, fmt.Sprintf("succ-%d-", dep+1))
	rd, err := openRecs(d.path(d.man.Level.Name), d.man.Level, false)
	if err != nil {
		return Result{}, true, err
	}
	defer rd.close()
	if d.ct != nil {
		d.ct.ResetCounts()
	}
	var (
		verr    error
		vcode   uint32
		hasCode bool
		vi      int64 = -1
		ierr    error
	)
	d.levelAt = 0
	for i := int64(0); i < n; i++ {
		d.levelAt = i
		if i%256 == 0 {
			d.progress()
			if reason := d.limits(n - i); reason != "" {
				d.fold()
				d.removeTemp()
				d.partial = i > 0
				return d.incomplete(reason)
			}
		}
		ok, err := rd.next()
		if err != nil {
			return Result{}, true, err
		}
		if !ok {
			return Result{}, true, diskFileErr(rd.path, "fewer states than written")
		}
		j := uint32(0)
		err = d.w.Successors(rd.cur.enc, func(code uint32, b []byte, e error) bool {
			seq := uint64(i)<<32 | uint64(j)
			j++
			if e != nil {
				verr, vcode, hasCode = e, code, true
				return false
			}
			key := b
			if d.fp {
				d.key = append(binary.BigEndian.AppendUint64(d.key[:0], fingerprintOf(b)), b...)
				key = d.key
			}
			if e := succ.add(key, seq, code); e != nil {
				ierr = e
				return false
			}
			return true
		})
		s.transitions += int64(j)
		if ierr != nil {
			return Result{}, true, d.ioErr(ierr)
		}
		if err != nil && verr == nil {
			var pe PropertyError
			if !errors.As(err, &pe) {
				return Result{}, true, fmt.Errorf("explore: model failed: %w", err)
			}
			verr = err
		}
		if verr != nil {
			vi = i
			d.vEnc = append(d.vEnc[:0], rd.cur.enc...)
			break
		}
	}
	d.levelAt = n
	if vi < 0 {
		// The file must end (and its CRC match) where expected.
		if ok, err := rd.next(); err != nil || ok {
			if err == nil {
				err = diskFileErr(rd.path, "more states than written")
			}
			return Result{}, true, err
		}
	}
	d.fold()
	// Merge the successors, keep those in no file of the visited set.
	news := d.newBuf(false, fmt.Sprintf("new-%d-", dep+1))
	d.man.Serial++
	var (
		vw    visitedWriter
		fresh int64
	)
	if d.fp {
		vw, fresh, err = d.joinFP(succ, news, fmt.Sprintf("visited-%d.fps", d.man.Serial))
	} else {
		vw, fresh, err = d.join(succ, news, fmt.Sprintf("visited-%d.states", d.man.Serial))
	}
	d.noteRuns(succ)
	if err != nil {
		return Result{}, true, err
	}
	if vi >= 0 {
		vw.abort()
		d.pending, d.partial = fresh, true
		var tr []uint32
		if d.fp {
			tr, err = d.traceFP(dep, uint64(vi))
		} else {
			tr, err = d.trace(dep, uint32(vi))
		}
		if err != nil {
			return Result{}, true, err
		}
		if hasCode {
			tr = append(tr, vcode)
		}
		if err := d.replayTrace(tr, hasCode); err != nil {
			return Result{}, true, err
		}
		d.setCounts()
		r, err := s.fail(verr, tr)
		return r, true, err
	}
	if max := s.opt.MaxStates; max > 0 && d.total+fresh > max {
		vw.abort()
		d.pending, d.partial = max-d.total, true
		return d.incomplete(fmt.Sprintf("state limit %d reached with more states to store", max))
	}
	if fresh == 0 {
		vw.abort()
		return Result{}, false, d.advance(fileMeta{}, fileMeta{}, fileMeta{}, 0)
	}
	vm, err := vw.close(true)
	if err != nil {
		return Result{}, true, d.ioErr(err)
	}
	d.grew(vm.Bytes, true)
	// The new states in sequence order: the next level and its parents.
	mn, err := news.merge()
	d.noteRuns(news)
	if err != nil {
		return Result{}, true, err
	}
	defer mn.close()
	news.release()
	d.man.Serial++
	lw, err := createRecs(d.path(fmt.Sprintf("level-%d.states", d.man.Serial)), false)
	if err != nil {
		return Result{}, true, d.ioErr(err)
	}
	pw, err := d.createParents(fmt.Sprintf("parents-%d.parents", dep+1))
	if err != nil {
		lw.abort()
		return Result{}, true, d.ioErr(err)
	}
	for {
		ok, err := mn.next()
		if err != nil {
			lw.abort()
			pw.abort()
			return Result{}, true, err
		}
		if !ok {
			break
		}
		lw.add(drec{enc: mn.cur.enc})
		pw.add(mn.cur.seq, mn.cur.code)
	}
	lm, err := lw.close(true)
	if err != nil {
		return Result{}, true, d.ioErr(err)
	}
	pm, err := pw.close(true)
	if err != nil {
		return Result{}, true, d.ioErr(err)
	}
	d.grew(lm.Bytes, false)
	d.grew(pm.Bytes, true)
	d.removeTemp()
	return Result{}, false, d.advance(lm, pm, vm, fresh)
}

// join merges the runs of successors, and streams those in no file of the
// visited set to the visited file vname and to news; fresh counts them.
func (d *diskSearch) join(succ, news *runBuf, vname string) (visitedWriter, int64, error) {
	ms, err := succ.merge()
	if err != nil {
		return nil, 0, err
	}
	defer ms.close()
	succ.release()
	type cursor struct {
		r  *recReader
		ok bool
	}
	var cs []*cursor
	defer func() {
		for _, c := range cs {
			c.r.close()
		}
	}()
	for _, m := range d.man.Visited {
		r, err := openRecs(d.path(m.Name), m, false)
		if err != nil {
			return nil, 0, err
		}
		c := &cursor{r: r}
		cs = append(cs, c)
		if c.ok, err = r.next(); err != nil {
			return nil, 0, err
		}
	}
	vw, err := createRecs(d.path(vname), false)
	if err != nil {
		return nil, 0, d.ioErr(err)
	}
	var fresh int64
	for {
		ok, err := ms.next()
		if err != nil {
			vw.abort()
			return nil, 0, err
		}
		if !ok {
			break
		}
		seen := false
		for _, c := range cs {
			for c.ok {
				k := bytes.Compare(c.r.cur.enc, ms.cur.enc)
				if k > 0 {
					break
				}
				if k == 0 {
					seen = true
					break
				}
				if c.ok, err = c.r.next(); err != nil {
					vw.abort()
					return nil, 0, err
				}
			}
			if seen {
				break
			}
		}
		if seen {
			continue
		}
		fresh++
		vw.add(drec{enc: ms.cur.enc})
		if err := news.add(ms.cur.enc, ms.cur.seq, ms.cur.code); err != nil {
			vw.abort()
			return nil, 0, d.ioErr(err)
		}
	}
	if d.s().opt.Progress != nil {
		d.progress()
	}
	return vw, fresh, nil
}

// advance commits the level after the one expanded: its states file lm,
// parents pm and new visited file vm (none when fresh is 0), compacts the
// visited set and writes the manifest.
func (d *diskSearch) advance(lm, pm, vm fileMeta, fresh int64) error {
	old := d.man.Level
	var drop []fileMeta
	d.man.Transitions = d.transitions
	if fresh == 0 {
		// The search ends: nothing more to save.
		d.remove(old)
		d.man.Level = fileMeta{}
		return nil
	}
	d.man.Depth++
	d.man.Level = lm
	d.total += fresh
	d.man.States = d.total
	d.man.Levels = append(d.man.Levels, fresh)
	d.man.Parents = append(d.man.Parents, pm)
	d.man.Visited = append(d.man.Visited, vm)
	for d.fp && len(d.man.Visited) > diskMaxFPFiles {
		v := d.man.Visited
		a, b := smallestTwo(v)
		m, err := d.mergeFPs(v[a], v[b])
		if err != nil {
			return err
		}
		drop = append(drop, v[a], v[b])
		v[a] = m
		d.man.Visited = append(v[:b], v[b+1:]...)
	}
	for v := d.man.Visited; !d.fp && len(v) >= 2 && v[len(v)-2].N <= 2*v[len(v)-1].N; v = d.man.Visited {
		a, b := v[len(v)-2], v[len(v)-1]
		m, err := d.mergeVisited(a, b)
		if err != nil {
			return err
		}
		drop = append(drop, a, b)
		d.man.Visited = append(v[:len(v)-2], m)
	}
	if err := d.writeManifest(); err != nil {
		return err
	}
	d.remove(old)
	for _, m := range drop {
		d.remove(m)
	}
	return nil
}

// mergeVisited merges two files of the visited set (disjoint) into one.
func (d *diskSearch) mergeVisited(a, b fileMeta) (fileMeta, error) {
	open := func(path string, m fileMeta) (*recReader, error) { return openRecs(path, m, false) }
	create := func(path string) (*recWriter, error) { return createRecs(path, false) }
	return mergeSorted(d, a, b, ".states", open, create, func(x, y drec) int { return bytes.Compare(x.enc, y.enc) }, "")
}

// sortedIn reads a sorted file of the visited set (next moves to the
// next record, head is the record moved to); sortedOut writes one.
type sortedIn[T any] interface {
	next() (bool, error)
	head() T
	close()
}

type sortedOut[T any] interface {
	add(T)
	abort()
	close(sync bool) (fileMeta, error)
}

// mergeSorted merges two files of the visited set, a and b, read with
// open, into a new one, visited-<serial><ext>, written with create; cmp
// orders the records. With twice set (what a record is called), a record
// in both files is an error: b is damaged (the files are disjoint).
func mergeSorted[T any, R sortedIn[T], W sortedOut[T]](d *diskSearch, a, b fileMeta, ext string,
	open func(string, fileMeta) (R, error), create func(string) (W, error), cmp func(x, y T) int, twice string) (fileMeta, error) {
	ra, err := open(d.path(a.Name), a)
	if err != nil {
		return fileMeta{}, err
	}
	defer ra.close()
	rb, err := open(d.path(b.Name), b)
	if err != nil {
		return fileMeta{}, err
	}
	defer rb.close()
	d.man.Serial++
	w, err := create(d.path(fmt.Sprintf("visited-%d%s", d.man.Serial, ext)))
	if err != nil {
		return fileMeta{}, d.ioErr(err)
	}
	okA, err := ra.next()
	if err != nil {
		w.abort()
		return fileMeta{}, err
	}
	okB, err := rb.next()
	if err != nil {
		w.abort()
		return fileMeta{}, err
	}
	for okA || okB {
		takeA := okA
		if okA && okB {
			c := cmp(ra.head(), rb.head())
			if c == 0 && twice != "" {
				w.abort()
				return fileMeta{}, diskFileErr(d.path(b.Name), "damaged (a %s also in %s)", twice, a.Name)
			}
			takeA = c < 0
		}
		if takeA {
			w.add(ra.head())
			okA, err = ra.next()
		} else {
			w.add(rb.head())
			okB, err = rb.next()
		}
		if err != nil {
			w.abort()
			return fileMeta{}, err
		}
	}
	m, err := w.close(true)
	if err != nil {
		return fileMeta{}, d.ioErr(err)
	}
	d.grew(m.Bytes, true)
	return m, nil
}

// trace reads the actions from the initial state to state i of level dep
// from the parent records.
func (d *diskSearch) trace(dep int, i uint32) ([]uint32, error) {
	codes := make([]uint32, dep)
	for x := dep; x >= 1; x-- {
		m := d.man.Parents[x-1]
		if int64(i) >= m.N {
			return nil, diskFileErr(d.path(m.Name), "no parent record %d (of %d)", i, m.N)
		}
		f, err := fileio.OpenRegular(d.path(m.Name))
		if err != nil {
			return nil, diskOpenErr(d.path(m.Name), err)
		}
		var b [8]byte
		_, err = f.ReadAt(b[:], int64(i)*8)
		f.Close()
		if err != nil {
			return nil, diskFileErr(d.path(m.Name), "%v", err)
		}
		codes[x-1] = binary.LittleEndian.Uint32(b[4:])
		i = binary.LittleEndian.Uint32(b[:4])
	}
	return codes, nil
}

// replayTrace checks that the actions of a trace are enabled one after
// the other from the initial state (the last only when hasLast: it is the
// violating transition).
func (d *diskSearch) replayTrace(tr []uint32, hasLast bool) error {
	enc, err := d.replay.Initial()
	if err != nil {
		return fmt.Errorf("explore: replaying the trace: %w", err)
	}
	enc = append([]byte(nil), enc...)
	var next []byte
	for k, code := range tr {
		found := false
		d.replay.Successors(enc, func(c uint32, succ []byte, e error) bool {
			if c != code {
				return true
			}
			found = true
			next = append(next[:0], succ...)
			return false
		})
		if !found {
			return fmt.Errorf("explore: cannot rebuild the trace: action %d (step %d) is not enabled", code, k+1)
		}
		if k == len(tr)-1 && hasLast {
			break
		}
		enc, next = next, enc
	}
	return nil
}
