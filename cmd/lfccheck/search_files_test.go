package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"lfccheck/explore"
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

// edited returns the JSON object data with the value of key changed (a
// number's last digit, a string lengthened, a bool negated, the first
// element of an array or the first field of an object changed), or
// false when there is nothing there to change (an empty array).
func edited(t *testing.T, data []byte, key string) ([]byte, bool) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	var change func(v any) (any, bool)
	change = func(v any) (any, bool) {
		switch x := v.(type) {
		case json.Number:
			s := []byte(x.String())
			s[len(s)-1] = '0' + (s[len(s)-1]-'0'+1)%10
			return json.Number(s), true
		case string:
			return x + "x", true
		case bool:
			return !x, true
		case []any:
			if len(x) == 0 {
				return nil, false
			}
			c, ok := change(x[0])
			x[0] = c
			return x, ok
		case map[string]any:
			var keys []string
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if c, ok := change(x[k]); ok {
					x[k] = c
					return x, true
				}
			}
		}
		return nil, false
	}
	c, ok := change(m[key])
	if !ok {
		return nil, false
	}
	m[key] = c
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return b, true
}

// Every field of the disk search's manifest (lfccheck-disk.json) and of a
// distributed checkpoint's dist.json, edited, makes the same command
// refuse the directory with one line (an edited count of states or
// transitions was believed, and a search could pass with it); so does a
// manifest without its checksum, and one of the format before it.
func TestSearchManifestsRefuseEdits(t *testing.T) {
	base := t.TempDir()
	for _, c := range []struct {
		name, file string
		first      []string
		again      []string
		old        func(m map[string]any) // made a manifest of the format before checksums
		oldWant    string
	}{
		{"disk", explore.DiskManifest, []string{"--disk-visited", "DIR", "--max-depth", "6"}, []string{"--disk-visited", "DIR", "--max-depth", "8"},
			func(m map[string]any) { m["format"] = 1; delete(m, "checksum") }, "is of format 1, without a checksum (an older lfccheck; this one reads format 2)"},
		{"disk-fp", explore.DiskManifest, []string{"--disk-visited", "DIR", "--disk-keys", "fingerprint", "--max-depth", "6"},
			[]string{"--disk-visited", "DIR", "--disk-keys", "fingerprint", "--max-depth", "8"},
			func(m map[string]any) { m["format"] = 1; delete(m, "checksum") }, "is of format 1, without a checksum"},
		{"distributed", "dist.json", []string{"--distributed", "2", "--checkpoint", "DIR", "--max-depth", "6"},
			[]string{"--distributed", "2", "--checkpoint", "DIR", "--max-depth", "8"},
			func(m map[string]any) { delete(m, "format"); delete(m, "checksum") }, "is of an older format, without a checksum (this lfccheck reads format 1)"},
	} {
		with := func(args []string, dir string) []string {
			out := []string{"check"}
			for _, a := range args {
				out = append(out, strings.ReplaceAll(a, "DIR", dir))
			}
			return append(out, mcast32...)
		}
		orig := filepath.Join(base, c.name)
		if code, _, errs := searchCLI(t, 60*time.Second, with(c.first, orig)...); code != 3 {
			t.Fatalf("%s: exit %d %s", c.name, code, errs)
		}
		data, err := os.ReadFile(filepath.Join(orig, c.file))
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]any
		if err := json.Unmarshal(data, &fields); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"states", "transitions", "levels", "checksum", "format"} {
			if _, ok := fields[k]; !ok {
				t.Fatalf("%s: %s has no %q: %s", c.name, c.file, k, data)
			}
		}
		try := func(what string, data []byte, want string) {
			t.Helper()
			dir := filepath.Join(base, c.name+"-"+what)
			copyDir(t, orig, dir)
			if err := os.WriteFile(filepath.Join(dir, c.file), data, 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errs := searchCLI(t, 60*time.Second, with(c.again, dir)...)
			refusedOneLine(t, c.name+" "+what, code, out, errs, want)
		}
		edits := 0
		for k := range fields {
			if b, ok := edited(t, data, k); ok {
				want := filepath.Join(base, c.name+"-"+k, c.file) + " is damaged or was edited (its checksum differs): remove the directory to start again"
				if k == "format" {
					want = filepath.Join(base, c.name+"-"+k, c.file) + " is of format "
				}
				try(k, b, want)
				edits++
			}
		}
		if edits < 8 {
			t.Errorf("%s: only %d fields edited", c.name, edits)
		}
		delete(fields, "checksum")
		b, _ := json.Marshal(fields)
		try("no-checksum", b, "is damaged or was edited (its checksum differs)")
		json.Unmarshal(data, &fields)
		c.old(fields)
		b, _ = json.Marshal(fields)
		try("old-format", b, c.oldWant)
		// Unedited, the copy continues.
		dir := filepath.Join(base, c.name+"-unedited")
		copyDir(t, orig, dir)
		if code, _, errs := searchCLI(t, 60*time.Second, with(c.again, dir)...); code != 3 {
			t.Errorf("%s unedited: exit %d %s", c.name, code, errs)
		}
	}
}
