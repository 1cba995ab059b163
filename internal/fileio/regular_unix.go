//go:build unix

package fileio

import (
	"os"
	"syscall"
)

// openRegular opens without blocking (O_NONBLOCK: a FIFO opens at once,
// or fails for writing without a reader), checks the open file's kind and
// turns blocking back on for a regular file (where it changes nothing but
// is what the caller expects).
func openRegular(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NONBLOCK, perm)
	if err != nil {
		return nil, openFailed(path, err)
	}
	if f, err = checkOpened(f, path); err != nil {
		return nil, err
	}
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { syscall.SetNonblock(int(fd), false) })
	}
	return f, nil
}
