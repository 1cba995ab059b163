//go:build unix

package fileio

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within fails the test if f has not returned after a few seconds (a
// FIFO opened the blocking way waits for ever).
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: still waiting after 5s", what)
	}
}

func TestOpenRegularRefusesAtOnce(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	for _, c := range []struct {
		name string
		open func(string) error
	}{
		{"OpenRegular", func(p string) error { f, err := OpenRegular(p); f.Close(); return err }},
		{"ReadRegular", func(p string) error { _, err := ReadRegular(p); return err }},
		{"CreateRegular write-only", func(p string) error {
			f, err := CreateRegular(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
			f.Close()
			return err
		}},
		{"CreateRegular read-write", func(p string) error { f, err := CreateRegular(p, os.O_RDWR, 0); f.Close(); return err }},
	} {
		for _, p := range []struct{ path, kind string }{{fifo, "(a FIFO)"}, {"/dev/null", "(a character device)"}, {dir, "(a directory)"}} {
			if p.path == dir && strings.HasPrefix(c.name, "CreateRegular") {
				continue // (refused by the system already)
			}
			var err error
			within(t, c.name+" "+p.path, func() { err = c.open(p.path) })
			var nr *NotRegularError
			if !errors.As(err, &nr) || err.Error() != p.path+": not a regular file "+p.kind {
				t.Errorf("%s(%s): %v, want %q", c.name, p.path, err, p.path+": not a regular file "+p.kind)
			}
		}
	}
	reg := filepath.Join(dir, "reg")
	f, err := CreateRegular(reg, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("hello"))
	f.Close()
	if b, err := ReadRegular(reg); err != nil || string(b) != "hello" {
		t.Fatalf("a regular file: %q %v", b, err)
	}
	if _, err := OpenRegular(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}
}
