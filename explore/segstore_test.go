package explore_test

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"

	"lfccheck/explore"
)

// TestSegmentStore: states of 5 segments drawn from a few values each are
// stored once, keep their ids, are rebuilt byte for byte with the ends
// given, equal segments get equal leaf ids, and ends that do not split a
// state are an error, not a state stored.
func TestSegmentStore(t *testing.T) {
	const k = 5
	rng := rand.New(rand.NewSource(1))
	s := explore.NewSegmentStore(k)
	byKey := map[string]uint32{}
	var encs [][]byte
	var endsOf [][]int
	for range 20000 {
		var b []byte
		var ends []int
		for range k {
			b = append(b, fmt.Sprintf("seg%d-", rng.Intn(6))...)
			if rng.Intn(4) == 0 {
				b = append(b, 'x')
			}
			ends = append(ends, len(b))
		}
		id, fresh, err := s.Add(explore.Hash(b), b, ends)
		if err != nil {
			t.Fatal(err)
		}
		old, seen := byKey[string(b)]
		switch {
		case seen && (fresh || id != old):
			t.Fatalf("%q stored again as %d (fresh %v), was %d", b, id, fresh, old)
		case !seen && (!fresh || int(id) != len(encs)):
			t.Fatalf("new %q: id %d fresh %v, want id %d fresh", b, id, fresh, len(encs))
		case !seen:
			byKey[string(b)] = id
			encs = append(encs, b)
			endsOf = append(endsOf, ends)
		}
	}
	if s.Len() != len(encs) || len(encs) < 1000 {
		t.Fatalf("%d states stored, %d distinct", s.Len(), len(encs))
	}
	for pass := range 2 { // (the second from the cache of states met lately, mostly)
		for id, b := range encs {
			got, fresh, err := s.Add(explore.Hash(b), b, endsOf[id])
			if err != nil || fresh || int(got) != id {
				t.Fatalf("pass %d: %q again: id %d fresh %v err %v, want id %d", pass, b, got, fresh, err, id)
			}
		}
	}
	leafOf := map[string]uint32{}
	for id, want := range encs {
		got := s.State(id)
		if !bytes.Equal(got, want) {
			t.Fatalf("state %d rebuilt as %q, want %q", id, got, want)
		}
		_, ids, ends := s.Leaves()
		if fmt.Sprint(ends) != fmt.Sprint(endsOf[id]) || len(ids) != k {
			t.Fatalf("state %d: ends %v ids %v, want ends %v", id, ends, ids, endsOf[id])
		}
		start := 0
		for i, e := range ends {
			seg := string(want[start:e])
			if l, ok := leafOf[seg]; ok && l != ids[i] {
				t.Fatalf("segment %q has ids %d and %d", seg, l, ids[i])
			}
			leafOf[seg] = ids[i]
			start = e
		}
	}
	if len(leafOf) != 12 {
		t.Fatalf("%d distinct leaves, want 12", len(leafOf))
	}
	for _, ends := range [][]int{nil, {1, 2, 3, 4}, {1, 2, 3, 4, 5}, {1, 6, 3, 4, 10}, {-1, 2, 3, 4, 10}} {
		if _, _, err := s.Add(explore.Hash([]byte("0123456789")), []byte("0123456789"), ends); err == nil {
			t.Fatalf("ends %v accepted for a state of 10 bytes", ends)
		}
	}
	if s.Len() != len(encs) {
		t.Fatal("a state with wrong ends was stored")
	}
	if s.MemBytes() <= 0 {
		t.Fatal("no memory counted")
	}
}

// TestSegmentStoreLeafIDs: the segments of a state given to LeafIDs get
// the ids the stored states' equal segments have (and keep them: the
// state added later has them), the state is not stored (Len, Add), and
// ends that do not split it are an error.
func TestSegmentStoreLeafIDs(t *testing.T) {
	s := explore.NewSegmentStore(3)
	stored := []byte("aaabbcccc")
	if _, _, err := s.Add(explore.Hash(stored), stored, []int{3, 5, 9}); err != nil {
		t.Fatal(err)
	}
	s.State(0)
	owner, sids, _ := s.Leaves()
	sids = append([]uint32(nil), sids...)
	if owner != s.Owner() {
		t.Fatalf("Owner %d, Leaves gave %d", s.Owner(), owner)
	}
	b := []byte("aaaddcccc") // (its first and last segments are stored's)
	ids, err := s.LeafIDs(b, []int{3, 5, 9})
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 1 {
		t.Fatalf("LeafIDs stored a state: %d states", s.Len())
	}
	if len(ids) != 3 || ids[0] != sids[0] || ids[2] != sids[2] || ids[1] == sids[1] {
		t.Fatalf("leaf ids %v, the stored state's %v", ids, sids)
	}
	dd := ids[1]
	// The next state shares its first segment with b (not looked up
	// again) and its second with stored.
	c := []byte("aaabbeeee")
	if ids, err = s.LeafIDs(c, []int{3, 5, 9}); err != nil || ids[0] != sids[0] || ids[1] != sids[1] || ids[2] == sids[2] || ids[2] == dd {
		t.Fatalf("leaf ids %v (%v), the stored state's %v, dd %d", ids, err, sids, dd)
	}
	// The ids of b again, as before.
	if ids, err = s.LeafIDs(b, []int{3, 5, 9}); err != nil || ids[1] != dd {
		t.Fatalf("leaf ids of b again %v (%v), want %d in the middle", ids, err, dd)
	}
	if _, fresh, err := s.Add(explore.Hash(b), b, []int{3, 5, 9}); err != nil || !fresh || s.Len() != 2 {
		t.Fatalf("the state given to LeafIDs added: fresh %v, %v, %d states", fresh, err, s.Len())
	}
	s.State(1)
	if _, got, _ := s.Leaves(); fmt.Sprint(got) != fmt.Sprint([]uint32{sids[0], dd, sids[2]}) {
		t.Fatalf("the added state's leaf ids %v, LeafIDs gave %v %d %v", got, sids[0], dd, sids[2])
	}
	for _, ends := range [][]int{{3, 9}, {3, 5, 8}, {5, 3, 9}, {-1, 5, 9}} {
		if _, err := s.LeafIDs(b, ends); err == nil {
			t.Fatalf("ends %v that do not split the state: no error", ends)
		}
	}
}
