//go:build unix

package explore

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"lfccheck/internal/fileio"
)

// lockDir takes an exclusive lock on the checkpoint directory dir (a file
// in it, locked with flock), so that two searches never write the same
// checkpoint; the lock goes with the returned file or the process.
func lockDir(dir string) (*os.File, error) {
	f, err := fileio.CreateRegular(filepath.Join(dir, ckptLock), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, ckptErr("checkpoint directory: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ckptErr("%s is in use by another search", dir)
		}
		return nil, ckptErr("locking %s: %v", dir, err)
	}
	return f, nil
}
