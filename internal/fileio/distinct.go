package fileio

import (
	"fmt"
	"os"
	"path/filepath"
)

// Named is a file named on the command line; Flag says where it was named
// ("--trace-out", "the trace file") in errors.
type Named struct {
	Flag, Path string
}

// Distinct refuses, before any work, a command line whose outputs would
// overwrite one of its inputs or each other: every output path is compared
// with every input and every other output, after making it absolute and
// resolving symbolic links (of the file, or of its directory when the file
// does not exist yet), and existing files are also compared by identity,
// so that a hard link or a second name of the same file is caught. Empty
// paths and "-" (standard input or output, counted by the caller) are
// skipped.
func Distinct(inputs, outputs []Named) error {
	type file struct {
		Named
		path string
		info os.FileInfo
	}
	resolve := func(n Named) (file, bool) {
		if n.Path == "" || n.Path == "-" {
			return file{}, false
		}
		f := file{Named: n, path: n.Path}
		if abs, err := filepath.Abs(n.Path); err == nil {
			f.path = abs
		}
		if real, err := filepath.EvalSymlinks(f.path); err == nil {
			f.path = real
		} else if dir, err := filepath.EvalSymlinks(filepath.Dir(f.path)); err == nil {
			f.path = filepath.Join(dir, filepath.Base(f.path))
		}
		if st, err := os.Stat(f.path); err == nil {
			f.info = st
		}
		return f, true
	}
	same := func(a, b file) bool {
		if a.path == b.path {
			return true
		}
		return a.info != nil && b.info != nil && os.SameFile(a.info, b.info)
	}
	var ins, outs []file
	for _, n := range inputs {
		if f, ok := resolve(n); ok {
			ins = append(ins, f)
		}
	}
	for _, n := range outputs {
		f, ok := resolve(n)
		if !ok {
			continue
		}
		for _, in := range ins {
			if same(f, in) {
				return fmt.Errorf("%s %s is the input %s (%s): refusing to overwrite an input", f.Flag, f.Path, in.Path, in.Flag)
			}
		}
		for _, o := range outs {
			if same(f, o) {
				return fmt.Errorf("%s %s and %s %s are the same file: give each output its own", o.Flag, o.Path, f.Flag, f.Path)
			}
		}
		outs = append(outs, f)
	}
	return nil
}
