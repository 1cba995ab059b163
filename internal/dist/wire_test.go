package dist

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// entry is a successor as a batch carries it: its encoding, its segment
// ends (nil: unknown) and its path.
type entry struct {
	s    []byte
	ends []int
	key  []byte
}

// appendEntries appends entries to a batch as expand does (appendSegs,
// appendKey), against the successor before in the batch.
func appendEntries(b []byte, nseg int, es []entry) []byte {
	p := segDelta{nseg: nseg}
	for _, e := range es {
		b = appendSegs(b, e.s, e.ends, &p)
		b = appendKey(b, e.key, &p)
	}
	return b
}

// readEntries reads a batch's entries as store1 does (dec.segs, dec.key).
func readEntries(b []byte, nseg int) ([]entry, error) {
	d := dec{b: b}
	q := segDelta{nseg: nseg}
	var out []entry
	for len(d.b) > 0 && d.err == nil {
		s, ends := d.segs(&q)
		k := d.key(&q)
		if d.err != nil {
			break
		}
		out = append(out, entry{slices.Clone(s), slices.Clone(ends), slices.Clone(k)})
	}
	return out, d.err
}

// randomEntries returns n successors of nseg segments drawn from a few
// segment values each (so that successors share segments, in place and
// elsewhere), with paths sharing prefixes; some have unknown ends.
func randomEntries(r *rand.Rand, n, nseg int) []entry {
	vals := make([][]byte, 5)
	for i := range vals {
		vals[i] = make([]byte, r.IntN(6))
		for j := range vals[i] {
			vals[i][j] = byte(r.IntN(3))
		}
	}
	var es []entry
	var key []byte
	for range n {
		var e entry
		for range nseg {
			e.s = append(e.s, vals[r.IntN(len(vals))]...)
			e.ends = append(e.ends, len(e.s))
		}
		switch r.IntN(8) {
		case 0:
			e.ends = nil // (unknown)
		case 1:
			e.ends = e.ends[:len(e.ends)-1] // (other ends: unknown)
		}
		key = append(key[:r.IntN(len(key)+1)], byte(r.IntN(256)))
		e.key = slices.Clone(key)
		es = append(es, e)
	}
	return es
}

// TestBatchEntriesRoundTrip: successors sent as the segments and path
// prefix they share with the one before come back as they were sent, with
// their ends when known (nil otherwise), and cost fewer bytes when they
// share.
func TestBatchEntriesRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, nseg := range []int{1, 2, 4, 9} {
		es := randomEntries(r, 500, nseg)
		b := appendEntries(nil, nseg, es)
		got, err := readEntries(b, nseg)
		if err != nil {
			t.Fatalf("%d segments: %v", nseg, err)
		}
		if len(got) != len(es) {
			t.Fatalf("%d segments: %d entries read, %d sent", nseg, len(got), len(es))
		}
		for i, e := range es {
			g := got[i]
			switch {
			case len(e.s) == 0:
				e.ends = make([]int, nseg) // (an empty state's segments are empty)
			case len(e.ends) != nseg:
				e.ends = nil
			}
			if !bytes.Equal(g.s, e.s) || !slices.Equal(g.ends, e.ends) || !bytes.Equal(g.key, e.key) {
				t.Fatalf("%d segments, entry %d: read %v %v %v, sent %v %v %v", nseg, i, g.s, g.ends, g.key, e.s, e.ends, e.key)
			}
		}
	}
	// Two successors equal but for their last segment, with the same
	// parent: the second costs its last segment, its lengths and a few
	// bytes more.
	s1, s2 := bytes.Repeat([]byte{7}, 40), append(bytes.Repeat([]byte{7}, 30), bytes.Repeat([]byte{8}, 10)...)
	ends := []int{10, 20, 30, 40}
	b1 := appendEntries(nil, 4, []entry{{s1, ends, []byte{1, 2, 3}}})
	b2 := appendEntries(nil, 4, []entry{{s1, ends, []byte{1, 2, 3}}, {s2, ends, []byte{1, 2, 4}}})
	if extra := len(b2) - len(b1); extra > 10+1+4+4+3 {
		t.Errorf("the second successor took %d bytes", extra)
	}
}

// FuzzBatchEntries: any bytes read as a batch's entries give entries or
// an error, never a panic; entries sent come back as sent.
func FuzzBatchEntries(f *testing.F) {
	f.Add([]byte{}, uint8(4), uint64(1))
	f.Add(appendEntries(nil, 4, randomEntries(rand.New(rand.NewPCG(3, 4)), 20, 4)), uint8(4), uint64(2))
	f.Add([]byte{3, 1, 1, 1, 1, 9, 0, 0}, uint8(2), uint64(3))
	f.Fuzz(func(t *testing.T, raw []byte, nseg uint8, seed uint64) {
		n := int(nseg%12) + 1
		_, _ = readEntries(raw, n)
		es := randomEntries(rand.New(rand.NewPCG(seed, uint64(len(raw)))), 1+len(raw)%30, n)
		got, err := readEntries(appendEntries(nil, n, es), n)
		if err != nil || len(got) != len(es) {
			t.Fatalf("%d entries sent, %d read: %v", len(es), len(got), err)
		}
		for i, e := range es {
			if !bytes.Equal(got[i].s, e.s) || !bytes.Equal(got[i].key, e.key) {
				t.Fatalf("entry %d: read %v %v, sent %v %v", i, got[i].s, got[i].key, e.s, e.key)
			}
		}
	})
}
