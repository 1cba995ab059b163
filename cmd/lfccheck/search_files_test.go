package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// The files a search keeps for itself (checkpoints, the disk search's
// directory, a distributed search's checkpoint) are believed only as
// written: these tests put a FIFO, an edited counter or another search's
// files in their place.

// searchCLI is runCLI that fails the test instead of hanging when the
// command has not ended within limit.
func searchCLI(t *testing.T, limit time.Duration, args ...string) (int, string, string) {
	t.Helper()
	type ran struct {
		code      int
		out, errs string
	}
	done := make(chan ran, 1)
	go func() {
		code, out, errs := runCLI(args...)
		done <- ran{code, out, errs}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.errs
	case <-time.After(limit):
		t.Fatalf("%v: still running after %s", args, limit)
	}
	return 0, "", ""
}

// copyDir copies the regular files of the directory src into a new
// directory dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// dirFiles lists the names of the files in dir.
func dirFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// refusedOneLine checks that a command was refused with one line holding want.
func refusedOneLine(t *testing.T, what string, code int, out, errs, want string) {
	t.Helper()
	if code != 2 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, want) {
		t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", what, code, out, errs, want)
	}
}

var mcast32 = []string{"--protocol", "mcast", "--nodes", "3", "--packets", "2", "-q"}

// A FIFO in place of any file of a checkpoint, of the disk search's
// directory or of a distributed checkpoint is refused at once (opening it
// blocked for ever, and the first interrupt was not heard), naming the
// file; in place of a file the search writes, the write fails at once.
func TestSearchFilesFIFO(t *testing.T) {
	if err := mkfifo(filepath.Join(t.TempDir(), "probe")); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	const limit = 30 * time.Second
	base := t.TempDir()
	for _, c := range []struct {
		name  string
		first []string // leaves the files in DIR
		again []string // reads them
		files int      // at least these many
	}{
		{"checkpoint", []string{"check", "--checkpoint", "DIR", "--max-depth", "6"}, []string{"check", "--resume", "DIR", "-q"}, 4},
		{"disk", []string{"check", "--disk-visited", "DIR", "--max-depth", "6"}, []string{"check", "--disk-visited", "DIR", "--max-depth", "8"}, 5},
		{"disk-fp", []string{"check", "--disk-visited", "DIR", "--disk-keys", "fingerprint", "--max-depth", "6"},
			[]string{"check", "--disk-visited", "DIR", "--disk-keys", "fingerprint", "--max-depth", "8"}, 5},
		{"distributed", []string{"check", "--distributed", "2", "--checkpoint", "DIR", "--max-depth", "6"},
			[]string{"check", "--distributed", "2", "--checkpoint", "DIR", "--max-depth", "8"}, 3},
	} {
		with := func(args []string, dir string) []string {
			var out []string
			for _, a := range args {
				out = append(out, strings.ReplaceAll(a, "DIR", dir))
			}
			if args[1] != "--resume" {
				out = append(out, mcast32...)
			}
			return out
		}
		orig := filepath.Join(base, c.name)
		if code, _, errs := searchCLI(t, limit, with(c.first, orig)...); code != 3 {
			t.Fatalf("%s: exit %d %s", c.name, code, errs)
		}
		files := dirFiles(t, orig)
		if len(files) < c.files {
			t.Fatalf("%s: files %v", c.name, files)
		}
		for _, f := range files {
			dir := filepath.Join(base, c.name+"-"+f)
			copyDir(t, orig, dir)
			os.Remove(filepath.Join(dir, f))
			if err := mkfifo(filepath.Join(dir, f)); err != nil {
				t.Fatal(err)
			}
			code, out, errs := searchCLI(t, limit, with(c.again, dir)...)
			refusedOneLine(t, c.name+" "+f, code, out, errs, filepath.Join(dir, f)+": not a regular file (a FIFO)")
		}
	}
	// The files written beside and renamed.
	for _, c := range []struct {
		file string
		args []string
	}{
		{"search.ckpt.tmp", []string{"check", "--checkpoint", "DIR", "--max-depth", "6", "--json"}},
		{"lfccheck-disk.json.tmp", []string{"check", "--disk-visited", "DIR", "--max-depth", "6", "--json"}},
		{"dist.json.tmp", []string{"check", "--distributed", "2", "--checkpoint", "DIR", "--max-depth", "6", "--json"}},
	} {
		dir := filepath.Join(base, "new-"+c.file)
		os.MkdirAll(dir, 0o755)
		if err := mkfifo(filepath.Join(dir, c.file)); err != nil {
			t.Fatal(err)
		}
		var args []string
		for _, a := range c.args {
			args = append(args, strings.ReplaceAll(a, "DIR", dir))
		}
		code, out, errs := searchCLI(t, limit, append(args, mcast32...)...)
		want := filepath.Join(dir, c.file) + ": not a regular file (a FIFO)"
		if (code != 2 && code != 3) || !strings.Contains(out+errs, want) {
			t.Errorf("%s: exit %d, %s%s; want the write to fail with %q", c.file, code, out, errs, want)
		}
	}
}
