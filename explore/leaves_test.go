package explore_test

import (
	"fmt"
	"testing"

	"lfccheck/explore"
)

func TestLeafInterner(t *testing.T) {
	a, b := explore.NewLeafInterner(), explore.NewLeafInterner()
	if a.Owner() == b.Owner() {
		t.Fatalf("two interners share owner %d", a.Owner())
	}
	ids := map[string]uint32{}
	seen := map[uint32]string{}
	for round := range 3 {
		for i := range 5000 {
			s := fmt.Sprintf("seg-%d", i%3000)
			if round == 1 {
				s = fmt.Sprintf("seg-%d", (i*7)%3000)
			}
			id, ok := a.Intern([]byte(s))
			if !ok {
				t.Fatalf("interning %q failed", s)
			}
			if old, found := ids[s]; found && old != id {
				t.Fatalf("%q: id %d, before %d", s, id, old)
			}
			if o, found := seen[id]; found && o != s {
				t.Fatalf("id %d for %q and %q", id, s, o)
			}
			ids[s], seen[id] = id, s
		}
	}
	if len(ids) != 3000 {
		t.Fatalf("%d ids, want 3000", len(ids))
	}
	if a.MemBytes() <= 0 {
		t.Fatalf("MemBytes %d", a.MemBytes())
	}
}
