package fileio

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// OpenRegular opens the file at path for reading and refuses at once,
// without waiting, anything that is not a regular file: opening a FIFO
// for reading blocks until a writer comes, and a device may never end,
// so the files a program keeps for itself (checkpoints, manifests, the
// files of a disk search) are opened with it. The file is opened without
// blocking and its kind is read from the open file (not from the path,
// which could be replaced in between).
func OpenRegular(path string) (*os.File, error) {
	return openRegular(path, os.O_RDONLY, 0)
}

// CreateRegular is os.OpenFile(path, flag, perm) (flag holding O_WRONLY
// or O_RDWR, usually with O_CREATE and O_TRUNC) that refuses at once a
// path that is not a regular file, as OpenRegular does: opening a FIFO
// for writing blocks until a reader comes.
func CreateRegular(path string, flag int, perm os.FileMode) (*os.File, error) {
	return openRegular(path, flag, perm)
}

// ReadRegular reads the file at path after OpenRegular.
func ReadRegular(path string) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// NotRegularError is the error of OpenRegular and CreateRegular for a
// path that is not a regular file.
type NotRegularError struct {
	Path string
	Kind string // "a FIFO", "a directory", ...
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s: not a regular file (%s)", e.Path, e.Kind)
}

// kindOf names the kind of a file that is not a regular one.
func kindOf(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m.IsDir():
		return "a directory"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a plain file"
}

// checkOpened refuses an open file that is not regular, closing it.
func checkOpened(f *os.File, path string) (*os.File, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Path: path, Kind: kindOf(fi.Mode())}
	}
	return f, nil
}

// openFailed words the failure to open path: a path that is there but is
// not a regular file (a FIFO without a reader fails to open for writing
// without blocking) is said to be that.
func openFailed(path string, err error) error {
	if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() && !errors.Is(err, os.ErrNotExist) {
		if fi.Mode()&os.ModeSymlink == 0 {
			return &NotRegularError{Path: path, Kind: kindOf(fi.Mode())}
		}
	}
	return err
}

// JSONSum is the SHA-256 (hex) of v's JSON encoding: the checksum of a
// manifest, taken with its own checksum field empty.
func JSONSum(v any) string {
	b, _ := json.Marshal(v)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
