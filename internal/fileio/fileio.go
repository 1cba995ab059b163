// Package fileio reads input files with a size cap and writes result files
// the way a careful command-line tool does: never through a symlink, a
// device or a read-only file, never leaving a partial file behind, and
// always reporting write errors.
package fileio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ReadCapped reads the file at path ("-": standard input), failing with an
// error naming the file when it holds more than max bytes, is a directory,
// or cannot be read. A device or FIFO that never ends is read only up to
// max+1 bytes.
func ReadCapped(path string, max int64) ([]byte, error) {
	if path == "-" {
		return ReadCappedFrom(os.Stdin, "standard input", max)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, plainErr(path, err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, plainErr(path, err)
	}
	defer f.Close()
	return ReadCappedFrom(f, path, max)
}

// ReadCappedStop is ReadCapped that gives up when stop is closed while
// the file is not a regular one: opening a FIFO blocks until a writer
// comes, and a device may never end, so that an interrupt would otherwise
// wait for them. The abandoned read goes on in the background until the
// process ends.
func ReadCappedStop(path string, max int64, stop <-chan struct{}) ([]byte, error) {
	if stop == nil || path == "-" {
		return ReadCapped(path, max)
	}
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		return ReadCapped(path, max)
	}
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := ReadCapped(path, max)
		done <- result{data, err}
	}()
	select {
	case r := <-done:
		return r.data, r.err
	case <-stop:
		return nil, fmt.Errorf("%s: interrupted while waiting for it to be written (a FIFO or device)", path)
	}
}

// ReadCappedFrom reads r, named name in errors, up to max bytes.
func ReadCappedFrom(r io.Reader, name string, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: larger than %s; not an input file of lfccheck?", name, size(max))
	}
	return data, nil
}

func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// plainErr drops the operation and path that os errors repeat.
func plainErr(path string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%s: %v", path, err)
}

// CheckOutput verifies, before a long computation, that a result can be
// written to path: "-" (standard output) always can; otherwise its
// directory must exist and be writable, and an existing path must be a
// regular, writable file (a symlink, directory, device, FIFO or socket is
// refused, and so is a file without write permission bits, even for root).
func CheckOutput(path string) error {
	if path == "-" {
		return nil
	}
	if path == "" {
		return errors.New("empty file name")
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%s: directory %s does not exist", path, dir)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: %s is not a directory", path, dir)
	}
	if st.Mode().Perm()&0o222 == 0 {
		return fmt.Errorf("%s: directory %s is not writable", path, dir)
	}
	lst, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return plainErr(path, err)
	}
	switch m := lst.Mode(); {
	case m&os.ModeSymlink != 0:
		return fmt.Errorf("%s: is a symbolic link; refusing to replace it", path)
	case m.IsDir():
		return fmt.Errorf("%s: is a directory", path)
	case !m.IsRegular():
		return fmt.Errorf("%s: is not a regular file (a device, FIFO or socket); refusing to replace it", path)
	case m.Perm()&0o200 == 0:
		return fmt.Errorf("%s: is read-only; refusing to replace it", path)
	}
	return nil
}

// WriteOutput writes data to path ("-": to stdout) after the checks of
// CheckOutput: through a temporary file in the same directory, synced,
// mode 0644, renamed into place; on any failure the temporary file is
// removed, so no partial file is left.
func WriteOutput(path string, data []byte, stdout io.Writer) error {
	if path == "-" {
		_, err := stdout.Write(data)
		return err
	}
	if err := CheckOutput(path); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".lfccheck-*")
	if err != nil {
		return plainErr(path, err)
	}
	_, werr := tmp.Write(data)
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return plainErr(path, werr)
	}
	return nil
}
