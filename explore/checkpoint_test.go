package explore_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
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
)

// outcome is what a search must give whether or not it was stopped and
// resumed from a checkpoint.
type outcome struct {
	Verdict                   explore.Verdict
	States, Transitions       int64
	Depth                     int
	Trace                     []uint32
	Loop                      int
	Violation                 string
	SleepOn                   bool
	Skipped                   int64
	Statistics                []properties.StatValue
	Unreached                 int
	SleepNoteRestart, Resumed bool
	Levels                    []int64
}

func outcomeOf(t *testing.T, ck *properties.Checker, r explore.Result, err error) outcome {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	o := outcome{Verdict: r.Verdict, States: r.Stats.States, Transitions: r.Stats.Transitions, Depth: r.Stats.Depth,
		Trace: r.Trace, Loop: r.Loop, SleepOn: r.Sleep.On, Skipped: r.Sleep.Skipped,
		Statistics: ck.Statistics(), Unreached: len(ck.Unreached()),
		SleepNoteRestart: strings.Contains(r.Sleep.Note, "searched again"), Levels: r.Stats.Levels}
	if r.Violation != nil {
		o.Violation = r.Violation.PropertyName()
	}
	return o
}

func build(t *testing.T, cfg model.Config) *properties.Checker {
	t.Helper()
	ck, err := protocols.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ck
}

// TestCheckpointResume stops searches at a depth limit with a checkpoint,
// resumes them (with another number of workers, once more to a deeper
// limit, then to the end) and checks that the outcome is that of a search
// that was never stopped: passes with statistics, a deadlock with its
// counterexample, and a state graph that is not layered (the search runs
// again without sleep sets, before or after the checkpoint).
func TestCheckpointResume(t *testing.T) {
	cases := []struct {
		name  string
		cfg   model.Config
		stops []int // depth limits of the stopped runs
		every time.Duration
	}{
		{"mcast-binary-3-k2", mcast.Config("binary", 3, 1, 2), []int{9, 17}, 0},
		{"mcast-binary-3-k2/at-limit-only", mcast.Config("binary", 3, 1, 2), []int{12}, time.Hour},
		{"mcast-chain-4-deadlock", mcast.Config("chain", 4, 1, 1), []int{6}, 0},
		{"recov-chain-3", recov.Config("chain", 3, 1, 1), []int{4, 12}, 0},
		{"mcast-binary-2-c4-k6/restart-after", mcast.Config("binary", 2, 4, 6), []int{5}, 0},
		{"mcast-binary-2-c4-k6/restart-before", mcast.Config("binary", 2, 4, 6), []int{15, 20}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if testing.Short() && (strings.HasPrefix(c.name, "mcast-binary-3-k2") || strings.HasSuffix(c.name, "restart-before")) {
				t.Skip("searches of over 100,000 states")
			}
			ck := build(t, c.cfg)
			r, err := explore.BFS(ck, explore.Options{Workers: 2})
			want := outcomeOf(t, ck, r, err)
			dir := filepath.Join(t.TempDir(), "ckpt")
			opt := explore.Options{Checkpoint: dir, CheckpointEvery: c.every, CheckpointID: c.name}
			for i, stop := range c.stops {
				opt.MaxDepth, opt.Resume, opt.Workers = stop, i > 0, 1+i%2
				ck := build(t, c.cfg)
				r, err := explore.BFS(ck, opt)
				if err != nil {
					t.Fatal(err)
				}
				if r.Verdict != explore.Incomplete || r.Checkpoint == nil || !r.Checkpoint.Kept || r.Checkpoint.Depth != stop || r.Checkpoint.Resumed != (i > 0) {
					t.Fatalf("stopped run %d: %v %s, checkpoint %+v", i, r.Verdict, r.Reason, r.Checkpoint)
				}
				if r.Checkpoint.States != r.Stats.States {
					t.Errorf("stopped run %d: checkpoint of %d states, %d stored", i, r.Checkpoint.States, r.Stats.States)
				}
			}
			opt.MaxDepth, opt.Resume, opt.Workers = 0, true, 2
			ck = build(t, c.cfg)
			r, err = explore.BFS(ck, opt)
			got := outcomeOf(t, ck, r, err)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("resumed search differs (-uninterrupted +resumed):\n%s", diff)
			}
			if r.Checkpoint == nil || r.Checkpoint.Kept {
				t.Errorf("checkpoint after the verdict: %+v", r.Checkpoint)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the checkpoint directory is still there after the verdict: %v", err)
			}
		})
	}
}

// stoppedCheckpoint leaves a checkpoint of mcast binary P=3 K=2 at depth 9
// in dir; under the race detector, of K=1 (the tests resume it to the end:
// 2,576 states, not 171,461).
func stoppedCheckpoint(t *testing.T, dir string) model.Config {
	cfg := mcast.Config("binary", 3, 1, 2)
	if racebuild.Enabled {
		cfg = mcast.Config("binary", 3, 1, 1)
		t.Logf("race detector: a checkpoint of K=1; the test without -race uses K=2")
	}
	r, err := explore.BFS(build(t, cfg), explore.Options{Checkpoint: dir, CheckpointID: "id", MaxDepth: 9})
	if err != nil || r.Checkpoint == nil || !r.Checkpoint.Kept {
		t.Fatalf("%v %+v", err, r.Checkpoint)
	}
	return cfg
}

// TestCheckpointRefused checks the checkpoints a search must not use or
// make: another search's, a corrupt or truncated one, none, one over an
// existing checkpoint, and one of a fingerprint search.
func TestCheckpointRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ckpt")
	cfg := stoppedCheckpoint(t, dir)
	resume := func(id string) error {
		_, err := explore.BFS(build(t, cfg), explore.Options{Checkpoint: dir, CheckpointID: id, Resume: true})
		return err
	}
	var ce *explore.CheckpointError
	if err := resume("other"); !errors.As(err, &ce) || ce.Have != "id" || ce.Want != "other" {
		t.Errorf("another search's checkpoint: %v", err)
	}
	if _, err := explore.BFS(build(t, cfg), explore.Options{Checkpoint: dir, CheckpointID: "id"}); !errors.As(err, &ce) || !strings.Contains(err.Error(), "already holds a checkpoint") {
		t.Errorf("a new search over a checkpoint: %v", err)
	}
	if _, err := explore.BFS(build(t, cfg), explore.Options{Checkpoint: filepath.Join(t.TempDir(), "x"), Fingerprint: true}); !errors.As(err, &ce) {
		t.Errorf("fingerprint search with checkpoints: %v", err)
	}
	if _, err := explore.BFS(build(t, cfg), explore.Options{Checkpoint: t.TempDir(), Resume: true}); !errors.As(err, &ce) || !strings.Contains(err.Error(), "holds no checkpoint") {
		t.Errorf("resuming nothing: %v", err)
	}
	state := filepath.Join(dir, "search.ckpt")
	good, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]byte{good[:len(good)/2], good[:len(good)-1], append(append([]byte(nil), good...), 0), flip(good, len(good)/2), flip(good, len(good)-2), flip(good, 40)} {
		os.WriteFile(state, bad, 0o644)
		if err := resume("id"); !errors.As(err, &ce) {
			t.Errorf("corrupt checkpoint (%d bytes): %v", len(bad), err)
		}
	}
	os.WriteFile(state, good, 0o644)
	if _, err := explore.BFS(build(t, cfg), explore.Options{Checkpoint: dir, CheckpointID: "id", Resume: true, Frontier: true}); !errors.As(err, &ce) {
		t.Errorf("a full search's checkpoint resumed as a frontier search: %v", err)
	}
	for _, name := range []string{"keys.col", "parents.col"} {
		col := filepath.Join(dir, name)
		data, err := os.ReadFile(col)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(col, flip(data, len(data)/3), 0o644)
		if err := resume("id"); !errors.As(err, &ce) || !strings.Contains(err.Error(), name+" is corrupt") {
			t.Errorf("corrupt %s: %v", name, err)
		}
		os.WriteFile(col, data, 0o644)
	}
	if err := resume("id"); err != nil {
		t.Errorf("the restored checkpoint: %v", err)
	}
}

// A checkpoint directory that existed before the search is left (empty)
// after the verdict; one the search made is removed.
func TestCheckpointDirKept(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mine")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := stoppedCheckpoint(t, dir)
	if _, err := explore.BFS(build(t, cfg), explore.Options{Checkpoint: dir, CheckpointID: "id", Resume: true}); err != nil {
		t.Fatal(err)
	}
	if left, err := os.ReadDir(dir); err != nil || len(left) != 0 {
		t.Errorf("the user's directory after the verdict: %v %v", left, err)
	}
	made := filepath.Join(dir, "made")
	stoppedCheckpoint(t, made)
	if _, err := explore.BFS(build(t, cfg), explore.Options{Checkpoint: made, CheckpointID: "id", Resume: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(made); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the directory the search made is left: %v", err)
	}
	// Resumed through a symbolic link: the link stays.
	stoppedCheckpoint(t, made)
	link := filepath.Join(dir, "link")
	if err := os.Symlink("made", link); err != nil {
		t.Fatal(err)
	}
	if _, err := explore.BFS(build(t, cfg), explore.Options{Checkpoint: link, CheckpointID: "id", Resume: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(link); err != nil {
		t.Errorf("the symbolic link the search was given is removed: %v", err)
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte(nil), b...)
	c[i] ^= 0x10
	return c
}

// FuzzCheckpoint loads mutated checkpoints: an error or a search, never a
// panic.
func FuzzCheckpoint(f *testing.F) {
	dir := filepath.Join(f.TempDir(), "ckpt")
	cfg := mcast.Config("binary", 3, 1, 1)
	ck, err := protocols.Build(cfg)
	if err != nil {
		f.Fatal(err)
	}
	r, err := explore.BFS(ck, explore.Options{Checkpoint: dir, CheckpointID: "id", MaxDepth: 3})
	if err != nil || r.Checkpoint == nil || !r.Checkpoint.Kept {
		f.Fatalf("%v %+v", err, r.Checkpoint)
	}
	state := filepath.Join(dir, "search.ckpt")
	good, err := os.ReadFile(state)
	if err != nil {
		f.Fatal(err)
	}
	cols := map[string][]byte{}
	for _, name := range []string{"keys.col", "parents.col"} {
		if cols[name], err = os.ReadFile(filepath.Join(dir, name)); err != nil {
			f.Fatal(err)
		}
	}
	f.Add(good)
	f.Add(good[:len(good)/3])
	f.Fuzz(func(t *testing.T, b []byte) {
		for name, data := range cols { // a search may have ended and removed them
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// As it is, and with its checksum made to match (so that the
		// decoder, not the checksum, meets what is wrong with it).
		fixed := append([]byte(nil), b...)
		if n := len(fixed) - 4; n >= 0 {
			binary.LittleEndian.PutUint32(fixed[n:], crc32.ChecksumIEEE(fixed[:n]))
		}
		for k, in := range [][]byte{b, fixed} {
			if err := os.WriteFile(state, in, 0o644); err != nil {
				t.Fatal(err)
			}
			// The depth limit is the checkpoint's: a search that loads it
			// stops at once and keeps it (and its columns) for the next input.
			r, err := explore.BFS(build(t, cfg), explore.Options{Checkpoint: dir, CheckpointID: "id", Resume: true, MaxDepth: 3})
			if k == 1 && !bytes.Equal(in, b) {
				// Made to pass the checksum: anything but a panic (or a
				// hang) is an answer.
				continue
			}
			var ce *explore.CheckpointError
			if err != nil && !errors.As(err, &ce) {
				t.Fatalf("not a checkpoint error: %v", err)
			}
			if err == nil && (r.Checkpoint == nil || !r.Checkpoint.Kept) {
				t.Fatalf("the checkpoint was not kept: %v %+v", r.Verdict, r.Checkpoint)
			}
		}
	})
}
