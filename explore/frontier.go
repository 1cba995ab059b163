package explore

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// Frontier search (Options.Frontier). In a layered state graph, where
// every transition goes from a state at depth d to one at depth d+1, a
// successor can only be a state of the level being built: the states of
// earlier levels need not be kept to tell new states from old ones. The
// frontier search keeps only that level in the visited set (its root
// table is emptied at every level's commit), so the visited set takes
// memory per level, not per state; the tree store's leaves and pairs are
// kept (about 2 bytes a state), and so are the key and parent columns on
// disk, so traces are rebuilt as before.
//
// In a graph that is not layered, a state met again at a greater depth is
// stored again, as new, at that depth: the search is then a breadth-first
// search of the pairs (state, depth), which reaches every reachable state
// (each first at its least depth, so counterexamples are still shortest)
// and checks every transition of each, so its verdicts are those of the
// full search; only the count of states is larger. That search ends when
// every run does: the model must declare every run finite (Acyclic). To
// say what the count is, a frontier search that passes then looks for
// keys stored twice in its key column (keys identify states exactly, the
// tree store being kept): none means the graph is layered and the count
// is the number of distinct states.
//
// With sleep sets, a transition into a state of an earlier level is not
// seen (it stores the state again), so the search never runs again
// without them; they are sound on the graph of pairs (state, depth),
// which is layered.

// Acyclic is implemented by models that can declare every run finite.
type Acyclic interface {
	DeclaredAcyclic() bool
}

// FrontierInfo describes a frontier search.
type FrontierInfo struct {
	// Checked is set when the key column was searched for states stored
	// twice (after a pass); Duplicates is then their number: 0 means the
	// state graph is layered and States counts distinct states.
	Checked    bool  `json:"checked"`
	Duplicates int64 `json:"duplicates"`
}

// MarshalJSON writes duplicates as null when they were not counted (a
// search that failed or was cut short), never as a 0 that would read as
// "none".
func (f FrontierInfo) MarshalJSON() ([]byte, error) {
	o := struct {
		Checked    bool   `json:"checked"`
		Duplicates *int64 `json:"duplicates"`
	}{Checked: f.Checked}
	if f.Checked {
		o.Duplicates = &f.Duplicates
	}
	return json.Marshal(o)
}

// startFrontier checks that a frontier search can run.
func (b *bfs) startFrontier() error {
	if !b.opt.Frontier {
		return nil
	}
	a, ok := b.search.m.(Acyclic)
	switch {
	case b.fp:
		return &OptionError{"the frontier search needs the exact store (not fingerprints)"}
	case b.search.g != nil:
		return &OptionError{"the frontier search does not record the state graph (liveness properties checked on it)"}
	case !ok || !a.DeclaredAcyclic():
		return &OptionError{"the frontier search needs a protocol variant whose runs are all finite (it would not end on a cycle)"}
	}
	return nil
}

// OptionError is an option that cannot apply to the search asked for.
type OptionError struct{ Msg string }

func (e *OptionError) Error() string { return e.Msg }

// frontierInfo looks, after a pass, for states stored twice.
func (b *bfs) frontierInfo(r Result) (*FrontierInfo, error) {
	info := &FrontierInfo{}
	if r.Verdict != Pass {
		return info, nil
	}
	d, err := b.keyCol.duplicates(sortChunk)
	if err != nil {
		return nil, fmt.Errorf("explore: looking for states stored twice: %w", err)
	}
	info.Checked, info.Duplicates = true, d
	return info, nil
}

// sortChunk is the number of keys sorted in memory at once (512 MiB);
// a variable for tests.
var sortChunk = 1 << 26

// read fills dst with values [i, i+len(dst)).
func (c *column) read(i int, dst []uint64) error {
	if i < 0 || i+len(dst) > c.n {
		return fmt.Errorf("explore: column range [%d, %d) out of [0, %d)", i, i+len(dst), c.n)
	}
	w := int64(c.width)
	for len(dst) > 0 {
		off := int64(i) * w
		if off < c.written {
			n := min(int64(len(dst)), (c.written-off)/w, 1<<16)
			buf := make([]byte, n*w)
			if _, err := c.f.ReadAt(buf, off); err != nil {
				return err
			}
			for j := range n {
				dst[j] = c.decode(buf[j*w:])
			}
			dst, i = dst[n:], i+int(n)
			continue
		}
		v, err := c.at(i)
		if err != nil {
			return err
		}
		dst[0] = v
		dst, i = dst[1:], i+1
	}
	return nil
}

func (c *column) decode(b []byte) uint64 {
	if c.width == 4 {
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}

// duplicates counts the values of the column equal to an earlier one,
// sorting chunks of at most chunk values in memory and merging them from
// temporary files.
func (c *column) duplicates(chunk int) (int64, error) {
	var runs []*os.File
	defer func() {
		for _, f := range runs {
			f.Close()
		}
	}()
	var dups int64
	buf := make([]uint64, min(c.n, chunk))
	for start := 0; start < c.n; start += chunk {
		vs := buf[:min(chunk, c.n-start)]
		if err := c.read(start, vs); err != nil {
			return 0, err
		}
		slices.Sort(vs)
		if c.n <= chunk {
			for j := 1; j < len(vs); j++ {
				if vs[j] == vs[j-1] {
					dups++
				}
			}
			return dups, nil
		}
		f, err := os.CreateTemp("", "lfccheck-sort-*")
		if err != nil {
			return 0, err
		}
		os.Remove(f.Name())
		runs = append(runs, f)
		w := bufio.NewWriterSize(f, 1<<20)
		var b [8]byte
		for _, v := range vs {
			binary.LittleEndian.PutUint64(b[:], v)
			w.Write(b[:])
		}
		if err := w.Flush(); err != nil {
			return 0, err
		}
	}
	// Merge the sorted runs.
	h := &runHeap{}
	for _, f := range runs {
		r := &sortedRun{r: bufio.NewReaderSize(io.NewSectionReader(f, 0, 1<<62), 1<<20)}
		if ok, err := r.next(); err != nil {
			return 0, err
		} else if ok {
			h.rs = append(h.rs, r)
		}
	}
	heap.Init(h)
	first, prev := true, uint64(0)
	for h.Len() > 0 {
		r := h.rs[0]
		if !first && r.v == prev {
			dups++
		}
		first, prev = false, r.v
		ok, err := r.next()
		if err != nil {
			return 0, err
		}
		if ok {
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	return dups, nil
}

type sortedRun struct {
	r *bufio.Reader
	v uint64
}

func (s *sortedRun) next() (bool, error) {
	var b [8]byte
	if _, err := io.ReadFull(s.r, b[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		return false, err
	}
	s.v = binary.LittleEndian.Uint64(b[:])
	return true, nil
}

type runHeap struct{ rs []*sortedRun }

func (h *runHeap) Len() int           { return len(h.rs) }
func (h *runHeap) Less(i, j int) bool { return h.rs[i].v < h.rs[j].v }
func (h *runHeap) Swap(i, j int)      { h.rs[i], h.rs[j] = h.rs[j], h.rs[i] }
func (h *runHeap) Push(x any)         { h.rs = append(h.rs, x.(*sortedRun)) }
func (h *runHeap) Pop() any {
	x := h.rs[len(h.rs)-1]
	h.rs = h.rs[:len(h.rs)-1]
	return x
}
