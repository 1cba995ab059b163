package properties_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/ucast"
)

// TestWrongConservedForm: the stubborn-set search ends with an error
// naming a conserved form wrong, both where a step changes its sums while
// State holds (checked as the successor is made) and where State fails
// after a step that keeps them (checked where the successor is new, see
// CheckFresh), on one worker and on two.
func TestWrongConservedForm(t *testing.T) {
	cases := []struct {
		name     string
		launched bool // State fails once node 0 has launched a packet
		form     *model.Conservation
		want     string
	}{
		// Sum 0 counts the packets launched: it grows while credits are
		// conserved.
		{"sum changes", false, &model.Conservation{
			Sums: func(*model.System) int { return 1 },
			Node: func(w *model.World, n int, add func(int, int64)) {
				add(0, int64(ucast.NodeAt(w, n).Next))
			},
			Packet: func(*model.World, model.NodeID, model.NodeID, model.Packet, func(int, int64)) {},
			Bounds: func(*model.World, int) error { return nil },
		}, "and State holds"},
		// No sum at all, and a State that fails once node 0 has launched
		// a packet: the launch keeps every (empty) sum.
		{"state fails", true, &model.Conservation{
			Sums:   func(*model.System) int { return 1 },
			Node:   func(*model.World, int, func(int, int64)) {},
			Packet: func(*model.World, model.NodeID, model.NodeID, model.Packet, func(int, int64)) {},
			Bounds: func(*model.World, int) error { return nil },
		}, "which keeps every sum and bound"},
	}
	for _, tc := range cases {
		for _, workers := range []int{1, 2} {
			cfg := mcast.Config("binary", 3, 1, 1)
			cfg.Properties = []string{"credit-conservation", "deadlock"}
			ck, err := protocols.Build(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if why := ck.StubbornOff(); why != "" {
				t.Fatalf("%s: stubborn sets off: %s", tc.name, why)
			}
			ck.Props = slices.Clone(ck.Props)
			i := slices.IndexFunc(ck.Props, func(p properties.Property) bool { return p.Name == "credit-conservation" })
			ck.Props[i].Conserved = tc.form
			if tc.launched {
				ck.Props[i].Local = nil
				ck.Props[i].State = func(w *model.World) error {
					if ucast.NodeAt(w, 0).Next > 0 {
						return errors.New("node 0 launched a packet")
					}
					return nil
				}
			}
			r, err := explore.BFS(ck, explore.Options{Workers: workers})
			if err == nil || !strings.Contains(err.Error(), "conserved form is wrong") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s, %d workers: verdict %v, error %v; want the form named wrong (%q)", tc.name, workers, r.Verdict, err, tc.want)
			}
		}
	}
}
