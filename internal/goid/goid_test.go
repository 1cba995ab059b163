package goid

import (
	"sync"
	"testing"
)

func TestIDDistinctAndStable(t *testing.T) {
	me := ID()
	if me == 0 || ID() != me {
		t.Fatalf("ID() = %d, then %d", me, ID())
	}
	const n = 50
	ids := make([]uint64, n)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func(i int) { defer wg.Done(); ids[i] = ID() }(i)
	}
	wg.Wait()
	seen := map[uint64]bool{me: true}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("goroutine id %d seen twice (ids %v, main %d)", id, ids, me)
		}
		seen[id] = true
	}
}

func BenchmarkID(b *testing.B) {
	for i := 0; i < b.N; i++ {
		ID()
	}
}
