package fileio_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lfccheck/internal/fileio"
)

func TestDistinct(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "my.topo")
	if err := os.WriteFile(in, []byte("nodes 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(in, filepath.Join(dir, "link.topo")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(in, filepath.Join(dir, "hard.topo")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(dir, "alias")); err != nil {
		t.Fatal(err)
	}
	inputs := []fileio.Named{{Flag: "--topology", Path: in}}
	for _, c := range []struct {
		outs []string
		want string // "" for no clash
	}{
		{[]string{in}, "refusing to overwrite an input"},
		{[]string{filepath.Join(dir, "sub", "..", "my.topo")}, "refusing to overwrite an input"},
		{[]string{filepath.Join(dir, "link.topo")}, "refusing to overwrite an input"},
		{[]string{filepath.Join(dir, "hard.topo")}, "refusing to overwrite an input"},
		{[]string{filepath.Join(dir, "alias", "my.topo")}, "refusing to overwrite an input"},
		{[]string{filepath.Join(dir, "s.out"), filepath.Join(dir, "alias", "s.out")}, "are the same file"},
		{[]string{filepath.Join(dir, "a.svg"), filepath.Join(dir, "b.json")}, ""},
		{[]string{"-", "-", ""}, ""}, // standard output is counted by the caller
	} {
		var outs []fileio.Named
		for i, o := range c.outs {
			outs = append(outs, fileio.Named{Flag: []string{"--svg", "--trace-out", "--html"}[i], Path: o})
		}
		err := fileio.Distinct(inputs, outs)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v, want no error", c.outs, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: %v, want an error with %q", c.outs, err, c.want)
		}
	}
}
