package explore_test

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"lfccheck/explore"
	"lfccheck/properties"
	"lfccheck/protocols/mcast"
)

// removing is a checker whose workers, at their at-th expansion in all,
// remove a file or directory and stop the search (as a user removing a
// checkpoint directory, or a file of it, and then interrupting).
type removing struct {
	*properties.Checker
	r *removal
}

type removal struct {
	calls atomic.Int64
	at    int64
	once  sync.Once
	path  string
	stop  chan struct{}
}

func newRemoving(ck *properties.Checker, path string) removing {
	return removing{ck, &removal{at: 800, path: path, stop: make(chan struct{})}}
}

func (m removing) NewWorker() explore.Model {
	return removing{m.Checker.NewWorker().(*properties.Checker), m.r}
}

func (m removing) Successors(s []byte, visit func(uint32, []byte, error) bool) error {
	if m.r.calls.Add(1) >= m.r.at {
		m.r.once.Do(func() {
			os.RemoveAll(m.r.path)
			close(m.r.stop)
		})
	}
	return m.Checker.Successors(s, visit)
}

// A checkpoint removed while its search ran is reported lost, not kept
// (the report said to resume from a directory that no longer held it).
func TestCheckpointRemovedDuringSearch(t *testing.T) {
	cfg := mcast.Config("binary", 3, 1, 1)
	t.Run("checkpoint", func(t *testing.T) {
		dir := t.TempDir()
		m := newRemoving(safetyOnly(t, cfg), dir)
		r, err := explore.BFS(m, explore.Options{Checkpoint: dir, CheckpointEvery: 1, Stop: m.r.stop, Workers: 1})
		if err != nil || r.Verdict != explore.Incomplete || r.Checkpoint == nil {
			t.Fatalf("%v %v %+v", err, r.Verdict, r.Checkpoint)
		}
		if c := r.Checkpoint; c.Kept || !c.Lost || c.Written == 0 {
			t.Errorf("removed checkpoint: %+v", c)
		}
	})
	t.Run("disk", func(t *testing.T) {
		dir := t.TempDir()
		m := newRemoving(safetyOnly(t, cfg), filepath.Join(dir, explore.DiskManifest))
		r, err := explore.BFS(m, explore.Options{DiskDir: dir, CheckpointID: "test", Stop: m.r.stop, DiskRunBytes: 1 << 12})
		if err != nil || r.Verdict != explore.Incomplete || r.Disk == nil {
			t.Fatalf("%v %v %+v", err, r.Verdict, r.Disk)
		}
		if d := r.Disk; d.Kept || !d.Lost || d.SavedDepth == 0 {
			t.Errorf("removed manifest: %+v", d)
		}
	})
}
