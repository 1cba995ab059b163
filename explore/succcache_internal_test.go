package explore

import "testing"

// TestSuccCacheFind checks the successor cache's lookups: a cached
// encoding is found; another encoding under the same hash, or the same
// under another hash, is not; an encoding whose bytes were overwritten is
// not, even where the ring holds equal bytes again (written as parts of
// other encodings); encodings never wrap round the ring's end.
func TestSuccCacheFind(t *testing.T) {
	c := newSuccCache(2, 512) // encodings of up to 8 bytes
	a := []byte("abcdefgh")
	c.add(1, a, 0, 0)
	if c.find(1, a) == nil || c.find(1, []byte("abcdefgX")) != nil || c.find(5, a) != nil || c.find(1, a[:7]) != nil {
		t.Fatal("lookups of the first encoding")
	}
	// 504 more bytes fill the ring; the next 8 overwrite a's, in two
	// halves of other encodings (hashes in another slot).
	for i := 0; i < 63; i++ {
		c.add(2, []byte("........"), 0, 0)
	}
	if c.find(1, a) == nil {
		t.Fatal("a was dropped before its bytes were overwritten")
	}
	c.add(2, []byte("abcd"), 0, 0)
	c.add(2, []byte("efgh"), 0, 0)
	if string(c.ring[:8]) != "abcdefgh" {
		t.Fatalf("ring starts %q", c.ring[:8])
	}
	if c.find(1, a) != nil {
		t.Fatal("a found after its bytes were overwritten")
	}
	// An encoding that does not fit before the end starts at 0 again.
	c = newSuccCache(2, 512)
	for i := 0; i < 85; i++ {
		c.add(2, []byte("......"), 0, 0) // 510 bytes
	}
	c.add(3, a, 0, 0)
	if c.find(3, a) == nil || string(c.ring[:8]) != "abcdefgh" {
		t.Fatal("an encoding at the ring's end")
	}
	c.add(3, make([]byte, 9), 0, 0)
	if c.find(3, make([]byte, 9)) != nil || c.find(3, a) == nil {
		t.Fatal("an encoding over a 64th of the ring is not cached")
	}
}

// TestLevelPositions checks that the level buffer's chunks (growing, then
// of a fixed size) number every entry once, in order, up to 2^31.
func TestLevelPositions(t *testing.T) {
	next := func(c int, off uint32) (int, uint32) {
		if int(off)+1 < lvlSize(c) {
			return c, off + 1
		}
		return c + 1, 0
	}
	c, off := lvlPos(0)
	if c != 0 || off != 0 {
		t.Fatalf("entry 0 at %d/%d", c, off)
	}
	check := func(i uint32) {
		c2, off2 := lvlPos(i)
		if wc, woff := next(c, off); c2 != wc || off2 != woff {
			t.Fatalf("entry %d at %d/%d, want %d/%d", i, c2, off2, wc, woff)
		}
		c, off = c2, off2
	}
	for i := uint32(1); i < 1<<20; i++ {
		check(i)
	}
	c, off = lvlPos(lvlMax - 1<<17)
	for i := uint32(lvlMax - 1<<17 + 1); i < lvlMax; i++ {
		check(i)
	}
	if c != lvlChunks-1 || int(off) >= lvlSize(c) {
		t.Fatalf("the last entry is at %d/%d of %d chunks", c, off, lvlChunks)
	}
}
