package explore_test

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"lfccheck/explore"
	"lfccheck/internal/racebuild"
	"lfccheck/model"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/topology"
	"lfccheck/protocols/ucast"
)

// layers returns the number of states at each distance from the initial
// state of the model built from cfg, by a plain breadth-first search with
// a map of encodings (no store, no workers, no sleep sets), up to the
// first violation, and whether it met one.
func layers(t *testing.T, cfg model.Config) ([]int64, bool) {
	t.Helper()
	ck := build(t, cfg)
	init, err := ck.Initial()
	if err != nil {
		return []int64{1}, true
	}
	seen := map[string]bool{string(init): true}
	front, out := [][]byte{init}, []int64{1}
	for len(front) > 0 {
		var next [][]byte
		bad := false
		for _, s := range front {
			err := ck.Successors(s, func(_ uint32, succ []byte, verr error) bool {
				if verr != nil {
					bad = true
				}
				if k := string(succ); !seen[k] {
					seen[k] = true
					next = append(next, []byte(k))
				}
				return true
			})
			if err != nil {
				bad = true
			}
		}
		if len(next) > 0 {
			out = append(out, int64(len(next)))
		}
		if bad {
			return out, true
		}
		front = next
	}
	return out, false
}

// total is the sum of levels.
func total(levels []int64) int64 {
	var n int64
	for _, v := range levels {
		n += v
	}
	return n
}

// TestLevels checks Stats.Levels against the layers of a plain
// breadth-first search of the same model, for every store and worker
// count, and that the levels add up to the states stored, also when a
// limit or a violation stops the search.
func TestLevels(t *testing.T) {
	cases := []struct {
		name string
		cfg  model.Config
	}{
		{"mcast-binary-3", mcast.Config("binary", 3, 1, 1)},
		{"ucast-2-c2-k3", ucast.Config(2, 2, 3)},
		{"mcast-chain-4-deadlock", mcast.Config("chain", 4, 1, 1)},
	}
	for _, c := range cases {
		want, failed := layers(t, c.cfg)
		for _, o := range []explore.Options{{Workers: 1}, {Workers: 2}, {Workers: 2, Fingerprint: true}, {Workers: 2, Frontier: true}} {
			t.Run(fmt.Sprintf("%s/fp=%v/frontier=%v/workers=%d", c.name, o.Fingerprint, o.Frontier, o.Workers), func(t *testing.T) {
				r, err := explore.BFS(build(t, c.cfg), o)
				if err != nil {
					t.Fatal(err)
				}
				l := r.Stats.Levels
				if sum := total(l); sum != r.Stats.States {
					t.Errorf("levels %v add up to %d, states %d", l, total(l), r.Stats.States)
				}
				if failed {
					// The search stops in the level of the violation:
					// the levels before it are complete.
					if r.Verdict != explore.Fail || !r.Stats.LevelPartial || len(l) != r.Stats.Depth+2 || !cmp.Equal(l[:len(l)-1], want[:len(l)-1]) {
						t.Errorf("%v with levels %v, want a failure and levels starting %v", r.Verdict, l, want)
					}
					return
				}
				if r.Verdict != explore.Pass || len(l) != r.Stats.Depth+1 || r.Stats.LevelPartial {
					t.Errorf("%v, depth %d, levels %v", r.Verdict, r.Stats.Depth, l)
				}
				if diff := cmp.Diff(want, l); diff != "" {
					t.Errorf("levels differ from the plain search's (-plain +search):\n%s", diff)
				}
			})
		}
	}
	// Limits: the levels reached, the last one as far as the search got.
	cfg := mcast.Config("binary", 3, 1, 1)
	want, _ := layers(t, cfg)
	r, err := explore.BFS(build(t, cfg), explore.Options{Workers: 2, MaxDepth: 5})
	if err != nil || r.Verdict != explore.Incomplete || !cmp.Equal(r.Stats.Levels, want[:6]) || r.Stats.LevelPartial {
		t.Errorf("depth limit 5: %v %v, levels %v, want %v", r.Verdict, err, r.Stats.Levels, want[:6])
	}
	// The states of levels 0 to 9: the limit stops the search in level 9
	// before it stores a state of level 10.
	upTo9 := total(want[:10])
	r, err = explore.BFS(build(t, cfg), explore.Options{Workers: 2, MaxStates: upTo9})
	if err != nil || r.Verdict != explore.Incomplete || !r.Stats.LevelPartial || !cmp.Equal(r.Stats.Levels, append(want[:10:10], 0)) {
		t.Errorf("state limit %d: %v %v, levels %v (partial %v), want %v and 0", upTo9, r.Verdict, err, r.Stats.Levels, r.Stats.LevelPartial, want[:10])
	}
	r, err = explore.BFS(build(t, cfg), explore.Options{Workers: 2, MaxStates: 1000})
	if sum := total(r.Stats.Levels); err != nil || r.Verdict != explore.Incomplete || sum != 1000 || r.Stats.States != 1000 || !r.Stats.LevelPartial {
		t.Errorf("state limit 1000: %v %v, %d states, levels %v", r.Verdict, err, r.Stats.States, r.Stats.Levels)
	}
}

// The progress lines name the level being expanded with its width and
// its growth over the level before, as Stats.Levels has them.
func TestProgressNamesTheLevel(t *testing.T) {
	var buf bytes.Buffer
	// One worker: the search takes long enough for many progress lines
	// (they come every 20 ms at most); levelNote's own test checks the
	// wording. Under the race detector, which makes it slow enough, a
	// smaller search (20,008 states, not 171,461).
	cfg := mcast.Config("binary", 3, 1, 2)
	if racebuild.Enabled {
		cfg = mcast.Casts("binary", 4, 1, topology.Cast{Root: 0, Count: 2}, topology.Cast{Root: 2, Count: 1})
		t.Logf("race detector: %s; the test without -race searches mcast binary P=3 K=2", cfg.Describe())
	}
	r, err := explore.BFS(build(t, cfg), explore.Options{Workers: 1, Progress: &buf, ProgressEvery: time.Millisecond})
	if err != nil || r.Verdict != explore.Pass {
		t.Fatal(r.Verdict, err)
	}
	re := regexp.MustCompile(`depth (\d+) \((\d+) states, ([\d.]+)x depth (\d+)\), `)
	l, n := r.Stats.Levels, 0
	for _, line := range strings.Split(buf.String(), "\n") {
		m := re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n++
		d, _ := strconv.Atoi(m[1])
		want := fmt.Sprintf("depth %d (%d states, %.2fx depth %d), ", d, l[d], float64(l[d])/float64(l[d-1]), d-1)
		if m[0] != want {
			t.Errorf("progress line %q, want %q", line, want)
		}
	}
	if n == 0 {
		t.Fatalf("no progress line names its level:\n%s", buf.String())
	}
	t.Logf("%d progress lines name their level", n)
}
