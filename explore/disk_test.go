package explore_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"lfccheck/explore"
	"lfccheck/internal/racebuild"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/recov"
	"lfccheck/traces"
)

// diskOutcome is what the disk search must give as the breadth-first
// search without sleep sets does (the disk search uses none).
func diskOutcome(t *testing.T, ck *properties.Checker, r explore.Result, err error) outcome {
	t.Helper()
	o := outcomeOf(t, ck, r, err)
	o.SleepOn, o.Skipped = false, 0
	return o
}

// safetyOnly builds cfg, leaving out the properties checked on the state
// graph (which the disk search refuses); nil when none is left.
func safetyOnly(t *testing.T, cfg model.Config) *properties.Checker {
	t.Helper()
	ck := build(t, cfg)
	if ck.Live() == nil {
		return ck
	}
	var keep []string
	for i := range ck.Props {
		if p := &ck.Props[i]; p.Live == model.NotLive || ck.OnEndStates(p) {
			keep = append(keep, p.Name)
		}
	}
	if len(keep) == 0 {
		return nil
	}
	cfg = cfg.Clone()
	cfg.Properties = keep
	return build(t, cfg)
}

// diskModes are the disk search's two kinds of visited set: the exact
// encodings and 64-bit fingerprints (Options.DiskFingerprint).
var diskModes = []struct {
	name string
	fp   bool
}{{"exact", false}, {"fingerprint", true}}

// TestDiskSearchEveryClaim runs every built-in claim and broken variant
// of up to a bound of states (properties on the state graph left out)
// with the breadth-first search without sleep sets and with the disk
// search, exact and (up to 3,000 states, 1,000 with -short or the race
// detector) with fingerprints, with small runs so that they are merged: the same verdict, violated property, states, transitions,
// levels, statistics and counterexample, which replays to the violation
// (fingerprints give the exact counts because no two of these states
// collide, which at these sizes, about 2^-40 at most, a run does not
// meet). Under the race detector, one claim in four and a smaller bound.
func TestDiskSearchEveryClaim(t *testing.T) {
	defer explore.SetDiskSync(false)()
	// The fingerprint mode is compared on the claims of up to fpLimit
	// states (the CI's time).
	limit, fpLimit := int64(5_000), int64(3_000)
	every := 1
	if testing.Short() {
		limit, fpLimit = 3_000, 1_000
	}
	if racebuild.Enabled {
		limit, fpLimit, every = 3_000, 1_000, 4
	}
	n, compared, failed := 0, 0, 0
	for _, d := range protocols.All() {
		for _, cl := range d.AllClaims() {
			n++
			if n%every != 0 {
				continue
			}
			cfg := cl.Config.Clone()
			cfg.Protocol = d.Name
			ck := safetyOnly(t, cfg)
			if ck == nil {
				continue
			}
			r, err := explore.BFS(ck, explore.Options{NoSleep: true, MaxStates: limit})
			if err != nil {
				t.Fatalf("%s %s: %v", d.Name, cl.Name, err)
			}
			if r.Verdict == explore.Incomplete {
				continue
			}
			want := diskOutcome(t, ck, r, err)
			// The two modes run side by side (the searches wait on the
			// file system more than they compute).
			type run struct {
				ck  *properties.Checker
				dir string
				r   explore.Result
				err error
			}
			modes := diskModes
			if r.Stats.States > fpLimit {
				modes = diskModes[:1]
			}
			runs := make([]run, len(modes))
			var wg sync.WaitGroup
			for i, mode := range modes {
				runs[i] = run{ck: safetyOnly(t, cfg), dir: t.TempDir()}
				wg.Add(1)
				go func(x *run) {
					defer wg.Done()
					x.r, x.err = explore.BFS(x.ck, explore.Options{DiskDir: x.dir, DiskRunBytes: 1 << 14, DiskFingerprint: mode.fp})
				}(&runs[i])
			}
			wg.Wait()
			for i, mode := range modes {
				ck, dir, r := runs[i].ck, runs[i].dir, runs[i].r
				got := diskOutcome(t, ck, r, runs[i].err)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s %s: the disk search (%s) differs (-bfs +disk):\n%s", d.Name, cl.Name, mode.name, diff)
					continue
				}
				if r.Disk == nil || r.Disk.Kept || r.Disk.WrittenBytes == 0 || r.Disk.Keys != mode.name || r.Disk.Collisions != 0 || r.Disk.KeyBytes == 0 {
					t.Errorf("%s %s: disk info %+v", d.Name, cl.Name, r.Disk)
				}
				if mode.fp != (r.Disk.OmissionProb > 0) || mode.fp != (r.Stats.CollisionProb > 0) {
					t.Errorf("%s %s (%s): omission probability %g, collision probability %g", d.Name, cl.Name, mode.name, r.Disk.OmissionProb, r.Stats.CollisionProb)
				}
				if left, _ := os.ReadDir(dir); len(left) > 0 {
					t.Errorf("%s %s: %d files left in the directory after a verdict, the first %s", d.Name, cl.Name, len(left), left[0].Name())
				}
				if r.Verdict == explore.Fail {
					failed++
					o, _, err := traces.RunCodes(ck, r.Trace, r.Loop)
					if err != nil || o.Violation == nil || o.Violation.Property != r.Violation.PropertyName() {
						t.Errorf("%s %s (%s): the counterexample does not replay to %s: %v, %v", d.Name, cl.Name, mode.name, r.Violation.PropertyName(), o.Violation, err)
					}
				}
				compared++
			}
		}
	}
	t.Logf("%d claims and variants, %d searches compared (%d failing), bound %d states, %d with fingerprints", n, compared, failed, limit, fpLimit)
	if compared < 120/every || failed < 40/every {
		t.Errorf("only %d searches compared, %d failing", compared, failed)
	}
}

// TestDiskSearchTinyRuns sets runs of a few hundred bytes, so that each
// level's successors and new states are written as many runs and the
// visited set's files are merged many times: the outcome is still the
// breadth-first search's.
func TestDiskSearchTinyRuns(t *testing.T) {
	defer explore.SetDiskSync(false)()
	for _, cfg := range []model.Config{mcast.Config("binary", 3, 1, 1), mcast.Config("chain", 4, 1, 1), recov.Config("chain", 3, 1, 1)} {
		ck := safetyOnly(t, cfg)
		r, err := explore.BFS(ck, explore.Options{NoSleep: true})
		want := diskOutcome(t, ck, r, err)
		for _, mode := range diskModes {
			ck = safetyOnly(t, cfg)
			r, err = explore.BFS(ck, explore.Options{DiskDir: t.TempDir(), DiskRunBytes: 300, DiskFingerprint: mode.fp})
			got := diskOutcome(t, ck, r, err)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%v (%s): tiny runs differ (-bfs +disk):\n%s", cfg, mode.name, diff)
			}
			if r.Disk.Runs < 3*int64(len(r.Stats.Levels)) {
				t.Errorf("%v (%s): only %d runs over %d levels", cfg, mode.name, r.Disk.Runs, len(r.Stats.Levels))
			}
			// The fingerprint mode merges its visited files past 16.
			if mode.fp && (r.Disk.VisitedFiles > 16 || len(r.Stats.Levels) > 17 && r.Disk.VisitedFiles < 16) {
				t.Errorf("%v: %d visited files after %d levels", cfg, r.Disk.VisitedFiles, len(r.Stats.Levels))
			}
			t.Logf("%v (%s): %d states, %d levels, %d runs, %d visited files at the end, %d bytes written, peak %d bytes on disk, %d of them the visited set and parents (%d at the end)", cfg.Protocol, mode.name, r.Stats.States, len(r.Stats.Levels), r.Disk.Runs, r.Disk.VisitedFiles, r.Disk.WrittenBytes, r.Disk.PeakBytes, r.Disk.PeakKeyBytes, r.Disk.KeyBytes)
		}
	}
}

// TestDiskSearchResume cuts disk searches short (at a depth limit, and
// interrupted in the middle of a level through Stop) and runs them again
// on the same directory: they resume at the last level saved and end as
// the search that was never stopped did.
func TestDiskSearchResume(t *testing.T) {
	for _, c := range []struct {
		cfg   model.Config
		depth int
	}{{mcast.Config("binary", 3, 1, 1), 7}, {mcast.Config("chain", 4, 1, 1), 5}, {recov.Config("chain", 3, 1, 1), 3}} {
		for _, mode := range diskModes {
			testDiskResume(t, c.cfg, c.depth, mode.fp)
		}
	}
}

func testDiskResume(t *testing.T, cfg model.Config, depth int, fp bool) {
	c := struct {
		cfg   model.Config
		depth int
	}{cfg, depth}
	{
		ck := safetyOnly(t, c.cfg)
		r, err := explore.BFS(ck, explore.Options{NoSleep: true})
		want := diskOutcome(t, ck, r, err)
		// The disk search's own statistics, uninterrupted: a search
		// continued from its files reports the same for the whole search.
		whole, err := explore.BFS(safetyOnly(t, c.cfg), explore.Options{DiskDir: t.TempDir(), CheckpointID: "whole", DiskRunBytes: 1 << 12, DiskFingerprint: fp})
		if err != nil || whole.Disk == nil {
			t.Fatalf("%v: uninterrupted disk search: %v", c.cfg, err)
		}
		dir := t.TempDir()
		const id = "test search"
		ck = safetyOnly(t, c.cfg)
		r, err = explore.BFS(ck, explore.Options{DiskDir: dir, MaxDepth: c.depth, CheckpointID: id, DiskRunBytes: 1 << 12, DiskFingerprint: fp})
		if err != nil || r.Verdict != explore.Incomplete || !r.Disk.Kept || !strings.Contains(r.Reason, "depth limit") {
			t.Fatalf("%v: cut at depth %d: %v %s %+v", c.cfg, c.depth, err, r.Reason, r.Disk)
		}
		// Another search's files are refused.
		_, err = explore.BFS(safetyOnly(t, c.cfg), explore.Options{DiskDir: dir, CheckpointID: "another", DiskFingerprint: fp})
		var ce *explore.CheckpointError
		if !errors.As(err, &ce) || ce.Have != id {
			t.Errorf("%v: another search's files: %v", c.cfg, err)
		}
		// Nor is the same search with the other kind of visited set.
		_, err = explore.BFS(safetyOnly(t, c.cfg), explore.Options{DiskDir: dir, CheckpointID: id, DiskFingerprint: !fp})
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "keys, this one asks for") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: the other mode's files: %v", c.cfg, err)
		}
		// Interrupted in the next level, as it starts.
		stop := make(chan struct{})
		close(stop)
		r, err = explore.BFS(safetyOnly(t, c.cfg), explore.Options{DiskDir: dir, CheckpointID: id, Stop: stop, DiskRunBytes: 1 << 12, DiskFingerprint: fp})
		if err != nil || r.Verdict != explore.Incomplete || !strings.HasPrefix(r.Reason, "interrupted") || !r.Disk.Resumed || r.Disk.ResumedAt != c.depth {
			t.Fatalf("%v: interrupted: %v %s %+v", c.cfg, err, r.Reason, r.Disk)
		}
		ck = safetyOnly(t, c.cfg)
		r, err = explore.BFS(ck, explore.Options{DiskDir: dir, CheckpointID: id, DiskRunBytes: 1 << 12, DiskFingerprint: fp})
		got := diskOutcome(t, ck, r, err)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%v (fingerprints %v): resumed search differs (-bfs +disk):\n%s", c.cfg, fp, diff)
		}
		if !r.Disk.Resumed || r.Disk.ResumedAt != c.depth || r.Disk.Kept {
			t.Errorf("%v: %+v", c.cfg, r.Disk)
		}
		io := func(d *explore.DiskInfo) []int64 {
			return []int64{d.Runs, d.WrittenBytes, d.PeakBytes, d.PeakKeyBytes, d.PeakLevelBytes, d.KeyBytes, int64(d.VisitedFiles)}
		}
		if diff := cmp.Diff(io(whole.Disk), io(r.Disk)); diff != "" {
			t.Errorf("%v (fingerprints %v): runs, bytes written, peaks, key bytes, visited files: continued search differs (-whole +continued):\n%s", c.cfg, fp, diff)
		}
	}
}

// TestDiskSearchDamagedFiles cuts a search short, then damages its files
// (a byte changed, a file cut short, a file removed, the manifest made
// unreadable): the next search on the directory ends with an error that
// names the file, and no panic.
func TestDiskSearchDamagedFiles(t *testing.T) {
	for _, mode := range diskModes {
		t.Run(mode.name, func(t *testing.T) { testDiskDamaged(t, mode.fp) })
	}
}

func testDiskDamaged(t *testing.T, fp bool) {
	cfg := mcast.Config("binary", 3, 1, 1)
	// A byte changed in a bit-coded file may break a code before the CRC
	// is read: the error then says what is damaged, and names the file.
	flipped := "CRC mismatch"
	if fp {
		flipped = "visited-"
	}
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   string
	}{
		{"byte", func(t *testing.T, dir string) { flipByte(t, diskFile(t, dir, "visited-"), 3) }, flipped},
		{"last-byte", func(t *testing.T, dir string) { flipByte(t, diskFile(t, dir, "parents-"), -1) }, "parents-"},
		{"level-byte", func(t *testing.T, dir string) { flipByte(t, diskFile(t, dir, "level-"), 0) }, "level-"},
		{"parents-cut", func(t *testing.T, dir string) {
			p := diskFile(t, dir, "parents-")
			if err := os.Truncate(p, 5); err != nil {
				t.Fatal(err)
			}
		}, "bytes, "},
		{"missing", func(t *testing.T, dir string) { os.Remove(diskFile(t, dir, "visited-")) }, "missing"},
		{"manifest", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, explore.DiskManifest), []byte("{"), 0o644)
		}, "not a manifest"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			r, err := explore.BFS(safetyOnly(t, cfg), explore.Options{DiskDir: dir, MaxDepth: 6, CheckpointID: "x", DiskFingerprint: fp})
			if err != nil || r.Verdict != explore.Incomplete {
				t.Fatalf("%v %v", r.Verdict, err)
			}
			c.damage(t, dir)
			_, err = explore.BFS(safetyOnly(t, cfg), explore.Options{DiskDir: dir, CheckpointID: "x", DiskFingerprint: fp})
			var ce *explore.CheckpointError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("got %v, want a one-line CheckpointError naming %q", err, c.want)
			}
		})
	}
}

func diskFile(t *testing.T, dir, prefix string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) {
			return filepath.Join(dir, e.Name())
		}
	}
	t.Fatalf("no file %s* in %s", prefix, dir)
	return ""
}

func flipByte(t *testing.T, path string, off int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if off < 0 {
		off += len(b)
	}
	if err != nil || off >= len(b) || off < 0 {
		t.Fatalf("%s: %v (%d bytes)", path, err, len(b))
	}
	b[off] ^= 0x5a
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDiskSearchRefuses: what the disk search cannot combine with is an
// OptionError.
func TestDiskSearchRefuses(t *testing.T) {
	cfg := mcast.Config("binary", 2, 1, 1)
	for _, opt := range []explore.Options{
		{Fingerprint: true}, {Frontier: true}, {Checkpoint: t.TempDir()},
	} {
		opt.DiskDir = t.TempDir()
		_, err := explore.BFS(safetyOnly(t, cfg), opt)
		var oe *explore.OptionError
		if !errors.As(err, &oe) {
			t.Errorf("%+v: %v", opt, err)
		}
	}
}

// stopMidLevel is a progress writer that closes stop at the first line
// written in the middle of a level: the second line at a depth with
// states still queued.
type stopMidLevel struct {
	depth string
	stop  chan struct{}
	done  bool
}

var progressDepth = regexp.MustCompile(`depth (\d+).*, (\d+) queued`)

func (s *stopMidLevel) Write(p []byte) (int, error) {
	m := progressDepth.FindSubmatch(p)
	if m != nil && !s.done {
		if string(m[1]) == s.depth && string(m[2]) != "0" {
			close(s.stop)
			s.done = true
		}
		s.depth = string(m[1])
	}
	return len(p), nil
}

// TestDiskSearchInterruptedMidLevel interrupts a disk search in the middle
// of a level (a progress line every 256 states closes Stop), leaves files
// a search killed while writing would leave (a run, a visited file the
// manifest does not name), and resumes: the stray files are removed and
// the outcome is that of a search never stopped.
func TestDiskSearchInterruptedMidLevel(t *testing.T) {
	defer explore.SetDiskSync(false)()
	for _, mode := range diskModes {
		t.Run(mode.name, func(t *testing.T) { testDiskInterruptedMidLevel(t, mode.fp) })
	}
}

func testDiskInterruptedMidLevel(t *testing.T, fp bool) {
	cfg := mcast.Config("binary", 3, 1, 1)
	ck := safetyOnly(t, cfg)
	r, err := explore.BFS(ck, explore.Options{NoSleep: true})
	want := diskOutcome(t, ck, r, err)
	dir := t.TempDir()
	w := &stopMidLevel{stop: make(chan struct{})}
	r, err = explore.BFS(safetyOnly(t, cfg), explore.Options{DiskDir: dir, CheckpointID: "x", Stop: w.stop, Progress: w, ProgressEvery: time.Nanosecond, DiskRunBytes: 1 << 12, DiskFingerprint: fp})
	if err != nil || r.Verdict != explore.Incomplete || !strings.HasPrefix(r.Reason, "interrupted") || !r.Disk.Kept || !r.Stats.LevelPartial {
		t.Fatalf("interrupted: %v %v %s %+v", err, r.Verdict, r.Reason, r.Disk)
	}
	for _, name := range []string{"succ-99-1.tmp", "visited-999.states", "level-998.states", "visited-997.fps"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ck = safetyOnly(t, cfg)
	r, err = explore.BFS(ck, explore.Options{DiskDir: dir, CheckpointID: "x", DiskFingerprint: fp})
	got := diskOutcome(t, ck, r, err)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resumed search differs (-bfs +disk):\n%s", diff)
	}
	if !r.Disk.Resumed || r.Disk.ResumedAt == 0 {
		t.Errorf("not resumed: %+v", r.Disk)
	}
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("%d files left, the first %s", len(left), left[0].Name())
	}
}

// TestDiskSearchLimits: limits cut the disk search (exact and with
// fingerprints) short as Incomplete, never Pass, with the files kept (the
// state limit within the limit).
func TestDiskSearchLimits(t *testing.T) {
	defer explore.SetDiskSync(false)()
	cfg := mcast.Config("binary", 3, 1, 1)
	for _, c := range []struct {
		opt  explore.Options
		want string
	}{
		{explore.Options{MaxMemory: 1 << 10}, "memory limit"},
		{explore.Options{MaxStates: 100}, "state limit 100"},
		{explore.Options{Timeout: time.Nanosecond}, "time limit"},
	} {
		for _, mode := range diskModes {
			c.opt.DiskDir, c.opt.DiskFingerprint = t.TempDir(), mode.fp
			r, err := explore.BFS(safetyOnly(t, cfg), c.opt)
			if err != nil || r.Verdict != explore.Incomplete || !strings.HasPrefix(r.Reason, c.want) || !r.Disk.Kept {
				t.Errorf("%s (%s): %v %v %q %+v", c.want, mode.name, err, r.Verdict, r.Reason, r.Disk)
			}
			if c.opt.MaxStates > 0 && r.Stats.States > c.opt.MaxStates {
				t.Errorf("%s: %d states past the limit %d", mode.name, r.Stats.States, c.opt.MaxStates)
			}
		}
	}
}

// TestDiskFingerprintCollisions makes fingerprints collide (64 values in
// all): the fingerprint search then misses states, and says so, with the
// collisions it saw among successors of one level; and with 1024 values
// the first broken variant of MCAST that fails still gives a
// counterexample that replays.
func TestDiskFingerprintCollisions(t *testing.T) {
	defer explore.SetDiskSync(false)()
	defer explore.SetDiskFingerprint(func(b []byte) uint64 { return explore.Hash(b) % 64 })()
	cfg := mcast.Config("binary", 3, 1, 1)
	ck := safetyOnly(t, cfg)
	exact, err := explore.BFS(ck, explore.Options{NoSleep: true})
	if err != nil || exact.Verdict != explore.Pass {
		t.Fatalf("%v %v", exact.Verdict, err)
	}
	r, err := explore.BFS(safetyOnly(t, cfg), explore.Options{DiskDir: t.TempDir(), DiskFingerprint: true})
	if err != nil || r.Verdict != explore.Pass {
		t.Fatalf("%v %v", r.Verdict, err)
	}
	if r.Stats.States > 64 || r.Stats.States >= exact.Stats.States || r.Disk.Collisions == 0 {
		t.Errorf("with 64 fingerprints: %d states of %d, %d collisions seen", r.Stats.States, exact.Stats.States, r.Disk.Collisions)
	}
	// A broken variant (fingerprints of 10 bits): what is found is real.
	defer explore.SetDiskFingerprint(func(b []byte) uint64 { return explore.Hash(b) % 1024 })()
	def, err := protocols.Lookup("mcast")
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range def.AllClaims() {
		if !strings.HasPrefix(cl.Expect, "fail") {
			continue
		}
		cfg := cl.Config.Clone()
		cfg.Protocol = "mcast"
		ck := safetyOnly(t, cfg)
		if ck == nil {
			continue
		}
		r, err := explore.BFS(ck, explore.Options{DiskDir: t.TempDir(), DiskFingerprint: true, MaxStates: 2000})
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict == explore.Fail {
			o, _, err := traces.RunCodes(ck, r.Trace, r.Loop)
			if err != nil || o.Violation == nil || o.Violation.Property != r.Violation.PropertyName() {
				t.Errorf("%s: the counterexample does not replay: %v %v", cl.Name, o.Violation, err)
			}
			return
		}
	}
	t.Error("no broken variant failed with 1024 fingerprints")
}
