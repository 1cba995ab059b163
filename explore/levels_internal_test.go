package explore

import "testing"

func TestLevelNote(t *testing.T) {
	for _, c := range []struct {
		levels []int64
		d      int
		want   string
	}{
		{[]int64{1, 3, 6}, 2, " (6 states, 2.00x depth 1)"},
		{[]int64{1, 3, 6}, 1, " (3 states, 3.00x depth 0)"},
		{[]int64{1, 3, 6}, 0, ""},
		{[]int64{1, 3}, 2, ""},
	} {
		if got := levelNote(c.levels, c.d); got != c.want {
			t.Errorf("levelNote(%v, %d) = %q, want %q", c.levels, c.d, got, c.want)
		}
	}
}

// A checkpoint's levels must be its depth+1 positive counts, the first 1,
// adding up to its states and ending with the level to expand.
func TestLevelsMatch(t *testing.T) {
	for _, c := range []struct {
		levels   []uint64
		depth    int
		n, width uint64
		ok       bool
	}{
		{[]uint64{1, 3, 6}, 2, 10, 6, true},
		{[]uint64{1, 3, 6}, 1, 10, 6, false},                  // one level too many
		{[]uint64{1, 3, 6}, 2, 11, 6, false},                  // another sum
		{[]uint64{1, 3, 6}, 2, 10, 5, false},                  // another width
		{[]uint64{2, 2, 6}, 2, 10, 6, false},                  // two initial states
		{[]uint64{1, 0, 9}, 2, 10, 9, false},                  // an empty level
		{[]uint64{1, 1 << 63, 1 << 63}, 2, 1, 1 << 63, false}, // overflow
	} {
		if got := levelsMatch(c.levels, c.depth, c.n, c.width); got != c.ok {
			t.Errorf("levelsMatch(%v, %d, %d, %d) = %v, want %v", c.levels, c.depth, c.n, c.width, got, c.ok)
		}
	}
}
