package fileio

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestReadCapped(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	if _, err := ReadCapped("/dev/zero", 1024); err == nil || !strings.Contains(err.Error(), "/dev/zero: larger than 1 KiB") {
		t.Fatalf("/dev/zero: %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("reading /dev/zero took too long")
	}
	if _, err := ReadCapped(dir, 10); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("directory: %v", err)
	}
	if _, err := ReadCapped(filepath.Join(dir, "none"), 10); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("missing: %v", err)
	}
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("hello"), 0o644)
	if b, err := ReadCapped(p, 5); err != nil || string(b) != "hello" {
		t.Fatalf("exact size: %q %v", b, err)
	}
	if _, err := ReadCapped(p, 4); err == nil {
		t.Fatal("a file over the cap was read")
	}
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestOutputs(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	ro := filepath.Join(dir, "ro")
	os.WriteFile(ro, []byte("keep"), 0o444)
	for _, c := range []struct{ path, want string }{
		{link, "symbolic link"}, {ro, "read-only"}, {dir, "is a directory"}, {"/dev/full", "not a regular file"},
		{filepath.Join(dir, "no", "f"), "does not exist"}, {target + "/x", "is not a directory"},
	} {
		if err := CheckOutput(c.path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckOutput(%s): %v, want %q", c.path, err, c.want)
		}
		if err := WriteOutput(c.path, []byte("new"), nil); err == nil {
			t.Errorf("WriteOutput(%s) succeeded", c.path)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatal("the link's target changed")
	}
	var out bytes.Buffer
	if err := WriteOutput("-", []byte("x"), &out); err != nil || out.String() != "x" {
		t.Fatalf("stdout: %q %v", out.String(), err)
	}
	if err := WriteOutput("-", []byte("x"), failing{}); err == nil {
		t.Fatal("a failing stdout was not reported")
	}
	p := filepath.Join(dir, "ok.json")
	if err := WriteOutput(p, []byte("data"), nil); err != nil {
		t.Fatal(err)
	}
	if err := WriteOutput(p, []byte("data2"), nil); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	b, _ := os.ReadFile(p)
	if st.Mode().Perm() != 0o644 || string(b) != "data2" {
		t.Fatalf("mode %v content %q", st.Mode(), b)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".lfccheck-") {
			t.Fatalf("temporary file %s left", e.Name())
		}
	}
}
