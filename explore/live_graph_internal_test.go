package explore

import "testing"

// The graph's arrays across block boundaries, and its code table past
// 65,536 distinct codes (where it turns to storing the codes themselves).
func TestGraphStorage(t *testing.T) {
	var g graph
	const n = 1<<blockBits + 100_000
	code := func(e int64) uint32 {
		if e < 1<<blockBits {
			return uint32(e % 1000) // few distinct codes: narrow
		}
		return uint32(e) // then more than 65,536: wide
	}
	for e := int64(0); e < n; e++ {
		g.addEdge(uint32(e*7), code(e))
		if e == 1<<blockBits-1 && g.code.wide != nil {
			t.Fatal("1000 distinct codes made the table wide")
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
}
