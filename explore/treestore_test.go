package explore

import (
	"bytes"
	"fmt"
	"math/rand"
	"sync"
	"testing"
)

// randomState returns an encoding of k segments drawn from a small
// alphabet of segments (so that states share segments and subtrees) and
// its segment ends.
func randomState(rng *rand.Rand, k int) ([]byte, []int) {
	var b []byte
	var ends []int
	for i := 0; i < k; i++ {
		n := rng.Intn(4)
		for j := 0; j < n; j++ {
			b = append(b, byte(rng.Intn(3)))
		}
		ends = append(ends, len(b))
	}
	return b, ends
}

// The tree store maps states to keys one to one and rebuilds each state
// from its key, with and without a reference state and a worker cache,
// from several goroutines at once.
func TestTreeKeysAreExact(t *testing.T) {
	for _, k := range []int{1, 2, 3, 5, 8} {
		t.Run(fmt.Sprint(k, " segments"), func(t *testing.T) {
			tr := &tree{k: k}
			var mu sync.Mutex
			keyOf := map[string]uint64{}
			stateOf := map[uint64]string{}
			var wg sync.WaitGroup
			for g := 0; g < 4; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewSource(int64(g)))
					var ref treeRef
					cache := new(treeCache)
					for i := 0; i < 3000; i++ {
						b, ends := randomState(rng, k)
						useRef := &ref
						if i%3 == 0 {
							useRef = nil
						}
						key, _, ok := tr.key(b, ends, nil, useRef, cache)
						if !ok {
							t.Error("store full")
							return
						}
						var back treeRef
						tr.load(&back, key)
						if !bytes.Equal(back.enc, b) || fmt.Sprint(back.ends) != fmt.Sprint(ends) {
							t.Errorf("state %x %v came back as %x %v", b, ends, back.enc, back.ends)
							return
						}
						ref = back
						// A state is its bytes and their split into
						// segments (a model's encodings delimit themselves).
						st := fmt.Sprintf("%x %v", b, ends)
						mu.Lock()
						if old, seen := keyOf[st]; seen && old != key {
							t.Errorf("state %s has keys %x and %x", st, old, key)
						}
						if old, seen := stateOf[key]; seen && old != st {
							t.Errorf("key %x stands for %s and %s", key, old, st)
						}
						keyOf[st], stateOf[key] = key, st
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
		})
	}
}
