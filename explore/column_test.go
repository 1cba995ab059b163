package explore

import (
	"os"
	"path/filepath"
	"testing"
)

// A column returns what was added, from its file, its in-memory chunks
// and its buffer alike, with or without a usable temporary directory.
func TestColumnRoundTrip(t *testing.T) {
	for _, tmp := range []string{"usable", "missing"} {
		dir := setTempDir(t, tmp)
		for _, width := range []int{4, 8} {
			c := newColumn(width)
			n := 3*colChunk/width + 17
			val := func(i int) uint64 {
				v := uint64(i)*0x9e3779b97f4a7c15 + 1
				if width == 4 {
					v = uint64(uint32(v))
				}
				return v
			}
			for i := 0; i < n; i++ {
				c.add(val(i))
			}
			for _, i := range []int{0, 1, colChunk/width - 1, colChunk / width, 2*colChunk/width + 5, n - 1} {
				if got, err := c.at(i); err != nil || got != val(i) {
					t.Fatalf("%s width %d: at(%d) = %d, %v; want %d", tmp, width, i, got, err, val(i))
				}
			}
			if _, err := c.at(n); err == nil {
				t.Fatalf("at(%d) past the end gave no error", n)
			}
			onDisk := c.diskBytes() == int64(3*colChunk)
			if onDisk != (tmp == "usable") {
				t.Fatalf("%s width %d: %d bytes on disk, %d in memory", tmp, width, c.diskBytes(), c.memBytes())
			}
			c.close()
		}
		if tmp == "usable" {
			if left, _ := os.ReadDir(dir); len(left) > 0 {
				t.Fatalf("temporary files left behind: %v", left)
			}
		}
	}
}

// setTempDir points TMPDIR at a new directory ("usable") or at one that
// does not exist ("missing"), and returns it.
func setTempDir(t *testing.T, kind string) string {
	dir := t.TempDir()
	if kind == "missing" {
		dir = filepath.Join(dir, "no-such-dir")
	}
	t.Setenv("TMPDIR", dir)
	return dir
}

// cube is a toy model with (n+1)^3 states (x, y, z), actions x++, y++ and
// z++, and a bad state at the far end: big enough that the search writes
// its keys and parents to files, and the trace comes back from them.
type cube struct{ n byte }

func (c cube) Initial() ([]byte, error) { return []byte{0, 0, 0}, nil }

func (c cube) Successors(s []byte, visit func(uint32, []byte, error) bool) error {
	for code := range 3 {
		next := [3]byte{s[0], s[1], s[2]}
		if next[code] == c.n {
			continue
		}
		next[code]++
		var err error
		if next == [3]byte{c.n, c.n, c.n - 1} {
			err = violation("bad state")
		}
		if !visit(uint32(code), next[:], err) {
			return nil
		}
	}
	return nil
}

func TestTraceFromSpilledColumns(t *testing.T) {
	for _, tmp := range []string{"usable", "missing"} {
		dir := setTempDir(t, tmp)
		for _, fp := range []bool{false, true} {
			r, err := BFS(cube{n: 70}, Options{Fingerprint: fp, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict != Fail || len(r.Trace) != 3*70-1 {
				t.Fatalf("%s fingerprint=%v: %v, trace of %d steps", tmp, fp, r.Verdict, len(r.Trace))
			}
			var at [3]int
			for _, c := range r.Trace {
				at[c]++
			}
			if at != [3]int{70, 70, 69} {
				t.Fatalf("%s fingerprint=%v: the trace leads to %v", tmp, fp, at)
			}
			if spilled := r.Stats.DiskBytes > 0; spilled != (tmp == "usable") || r.Stats.States < 300000 {
				t.Fatalf("%s fingerprint=%v: %d states, %d bytes on disk", tmp, fp, r.Stats.States, r.Stats.DiskBytes)
			}
		}
		if tmp == "usable" {
			if left, _ := os.ReadDir(dir); len(left) > 0 {
				t.Fatalf("temporary files left behind: %v", left)
			}
		}
	}
}
