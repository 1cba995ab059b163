package properties_test

import (
	"testing"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols"
	"lfccheck/protocols/mcast"
)

// A broken independence relation for sleep sets (every two actions
// independent, even two of one node) must change what the search finds:
// the test that compares searches with and without sleep sets
// (protocols.TestSleepSetsKeepStates) would catch it.
func TestSleepSetsBrokenIndependenceIsCaught(t *testing.T) {
	defer properties.SetSleepAllIndependent(true)()
	for _, cfg := range []model.Config{mcast.Config("binary", 3, 1, 1), mcast.Config("chain", 3, 1, 2)} {
		var got [2]explore.Result
		for i, noSleep := range []bool{false, true} {
			ck, err := protocols.Build(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got[i], err = explore.BFS(ck, explore.Options{NoSleep: noSleep}); err != nil {
				t.Fatal(err)
			}
		}
		on, off := got[0], got[1]
		if !on.Sleep.On || on.Verdict == explore.Incomplete || off.Verdict == explore.Incomplete {
			t.Fatalf("%v: sleep sets off (%s) or a search incomplete", cfg.Params, on.Sleep.Note)
		}
		if on.Verdict == off.Verdict && on.Stats.States == off.Stats.States && on.Stats.Depth == off.Stats.Depth {
			t.Errorf("%v: the broken sleep sets went unnoticed (%s, %d states)", cfg.Params, on.Verdict, on.Stats.States)
		}
		t.Logf("%s: broken sleep sets %s %d states, without %s %d states", cfg.Params.(*mcast.Params).Describe(), on.Verdict, on.Stats.States, off.Verdict, off.Stats.States)
	}
}
