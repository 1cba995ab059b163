//go:build unix

package explore_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"lfccheck/explore"
)

// A checkpoint directory in use by another search (its lock held) is
// refused, to resume and to start a checkpoint in.
func TestCheckpointLocked(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ckpt")
	cfg := stoppedCheckpoint(t, dir)
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	var ce *explore.CheckpointError
	_, err = explore.BFS(build(t, cfg), explore.Options{Checkpoint: dir, CheckpointID: "id", Resume: true})
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "in use by another search") {
		t.Errorf("resuming a locked checkpoint: %v", err)
	}
	f.Close()
	if _, err := explore.BFS(build(t, cfg), explore.Options{Checkpoint: dir, CheckpointID: "id", Resume: true}); err != nil {
		t.Errorf("after the lock was released: %v", err)
	}
}
