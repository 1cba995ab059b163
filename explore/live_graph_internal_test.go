package explore

import "testing"

// The graph's arrays across block boundaries, and its code table as it
// goes from one byte per edge (at most 256 distinct codes) to two (at
// most 65,536) and past 65,536 distinct codes (where it turns to storing
// the codes themselves).
func TestGraphStorage(t *testing.T) {
	var g graph
	const n = 2<<blockBits + 100_000
	code := func(e int64) uint32 {
		switch {
		case e < 1<<blockBits:
			return uint32(e % 200) // few distinct codes: a byte each
		case e < 2<<blockBits:
			return uint32(e % 1000) // more than 256: two bytes
		}
		return uint32(e) // then more than 65,536: wide
	}
	for e := int64(0); e < n; e++ {
		g.addEdge(uint32(e*7), code(e))
		switch e {
		case 1<<blockBits - 1:
			if g.code.mid.n != 0 || g.code.small.n != e+1 || g.code.wide != nil {
				t.Fatal("200 distinct codes did not take a byte per edge")
			}
		case 2<<blockBits - 1:
			if g.code.small.n != 0 || g.code.mid.n != e+1 || g.code.wide != nil {
				t.Fatal("1000 distinct codes did not take two bytes per edge")
			}
		}
	}
	if g.code.wide == nil {
		t.Fatal("more than 65,536 distinct codes did not make the table wide")
	}
	if g.edges() != n {
		t.Fatalf("%d edges, want %d", g.edges(), n)
	}
	for e := int64(0); e < n; e += 997 {
		if g.to.at(e) != uint32(e*7) || g.code.at(e) != code(e) {
			t.Fatalf("edge %d: to %d code %d, want %d %d", e, g.to.at(e), g.code.at(e), e*7, code(e))
		}
	}
	if g.bytes() <= 0 {
		t.Fatal("no bytes counted")
	}
	// Labels and offsets: few distinct labels, offsets past a block.
	lab := func(v int64) uint64 { return uint64(v%3) << 40 }
	for v := int64(0); v <= 1<<blockBits+10; v++ {
		g.lab.add(lab(v))
		g.off.add(v * 5)
	}
	for v := int64(0); v <= 1<<blockBits+10; v += 101 {
		if g.lab.at(v) != lab(v) || g.off.at(v) != v*5 {
			t.Fatalf("state %d: label %x offset %d, want %x %d", v, g.lab.at(v), g.off.at(v), lab(v), v*5)
		}
	}
	if g.n() != 1<<blockBits+10 {
		t.Fatalf("%d states, want %d", g.n(), 1<<blockBits+10)
	}
}
