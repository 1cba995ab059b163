package properties_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"lfccheck/internal/racebuild"
	"lfccheck/model"
	"lfccheck/protocols"
	"lfccheck/protocols/fa"
	"lfccheck/protocols/gsb"
	"lfccheck/protocols/intr"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/recov"
	"lfccheck/protocols/ucast"
)

// DecodeLeaves, which copies segments decoded before by their ids, gives
// the world and node spans that decoding the whole encoding gives, on
// every state of small searches, in the relative form (symmetry on) and
// the plain one (symmetry off), with one cache across all states: the
// first 20,000 states of each, or 4,000 under the race detector (the
// decoding is single-threaded).
func TestDecodeLeavesMatchesDecode(t *testing.T) {
	states := 20_000
	if racebuild.Enabled {
		states = 4_000
		t.Logf("race detector: the first %d states of each search; the test without -race checks 20,000", states)
	}
	for _, c := range []struct {
		name string
		cfg  model.Config
		sym  bool
	}{
		{"mcast-binary-3-k2/relative", mcast.Config("binary", 3, 1, 2), true},
		{"mcast-binary-3-k2/plain", mcast.Config("binary", 3, 1, 2), false},
		{"ucast-3-c2-k2/relative", ucast.Config(3, 2, 2), true},
		{"recov-chain-3/relative", recov.Config("chain", 3, 1, 1), true},
		{"fa-3", fa.Config(3, 1, 2), true},
		{"gsb-3", gsb.Config(3, 1, 1, 1), true},
		{"intr-2", intr.Config(2, 1, ucast.Flow{Src: 0, Dst: 1, Count: 2}, ucast.Flow{Src: 1, Dst: 0, Count: 1}), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ck, err := protocols.Build(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			ck.Symmetry = ck.Symmetry && c.sym
			if strings.HasSuffix(c.name, "/relative") && !ck.RelativeForm() {
				t.Fatal("the configuration is not stored in the relative form")
			}
			init, err := ck.Initial()
			if err != nil {
				t.Fatal(err)
			}
			type state struct {
				enc  []byte
				ends []int
			}
			seen := map[string]bool{string(init): true}
			todo := []state{{init, ck.Segments(nil)}}
			leaf := map[string]uint32{}
			cache := model.NewSegmentCache(1 << 10)
			var w1, w2, s1, s2 model.World
			hits := 0
			for n := 0; len(todo) > 0 && n < states; n++ {
				s := todo[0]
				todo = todo[1:]
				var ids []uint32
				st := 0
				for _, e := range s.ends {
					k := string(s.enc[st:e])
					if _, ok := leaf[k]; !ok {
						leaf[k] = uint32(len(leaf))
					} else {
						hits++
					}
					ids = append(ids, leaf[k])
					st = e
				}
				var sp1, sp2 []int
				var err1, err2 error
				if ck.RelativeForm() {
					sp1, err1 = ck.Sys.DecodeLeaves(s.enc, &w1, &s1, nil, ck.FromZero, cache, 7, ids, s.ends)
					sp2, err2 = ck.Sys.DecodeRenamed(s.enc, &w2, &s2, nil, ck.FromZero)
				} else {
					sp1, err1 = ck.Sys.DecodeLeaves(s.enc, &w1, nil, nil, nil, cache, 7, ids, s.ends)
					sp2, err2 = ck.Sys.DecodeSpans(s.enc, &w2, nil)
				}
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				if e1, e2 := w1.Encode(nil), w2.Encode(nil); !bytes.Equal(e1, e2) || !cmp.Equal(sp1, sp2) {
					t.Fatalf("state %d: DecodeLeaves gives %x spans %v, decoding %x spans %v", n, e1, sp1, e2, sp2)
				}
				for j := range w1.Nodes {
					if d1, d2 := fmt.Sprint(w1.Nodes[j].Describe()), fmt.Sprint(w2.Nodes[j].Describe()); d1 != d2 {
						t.Fatalf("state %d node %d: DecodeLeaves gives %s, decoding %s", n, j, d1, d2)
					}
				}
				ck.Successors(s.enc, func(_ uint32, succ []byte, _ error) bool {
					if succ != nil && !seen[string(succ)] {
						seen[string(succ)] = true
						todo = append(todo, state{append([]byte(nil), succ...), ck.Segments(nil)})
					}
					return true
				})
			}
			if hits == 0 {
				t.Fatal("no segment was met twice")
			}
		})
	}
}
