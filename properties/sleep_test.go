package properties_test

import (
	"testing"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/topology"
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
			ck.Stubborn = false // sleep sets are off while stubborn sets are on
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

// The sleep-set table tracks every action's name up to 64 and 64 beyond
// (App. A.2's 9 nodes: 99 names), and renames consistently, dropping the
// names that renaming maps onto untracked ones.
func TestSleepTabRenames(t *testing.T) {
	for _, c := range []struct {
		cfg            model.Config
		tracked, names int
		drops          bool
	}{
		{mcast.Config("binary", 4, 1, 1), 24, 24, false},
		{mcast.Config("chain", 7, 1, 1), 63, 63, false},
		{mcast.Config("chain", 8, 1, 1), 64, 80, true},
		{mcast.OverlapA2Config(topology.Cast{Group: "g1", Root: 0, Count: 1}, topology.Cast{Group: "g2", Root: 3, Count: 1},
			topology.Cast{Group: "g3", Root: 6, Count: 1}), 64, 99, true},
	} {
		ck, err := protocols.Build(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		tracked, names, drops, err := properties.CheckSleepTab(ck)
		if err != nil {
			t.Fatalf("%v: %v", c.cfg.Params, err)
		}
		if tracked != c.tracked || names != c.names || (drops > 0) != c.drops {
			t.Errorf("%v: %d of %d names tracked, %d dropped by renamings; want %d of %d, drops %v", c.cfg.Params, tracked, names, drops, c.tracked, c.names, c.drops)
		}
		if note := ck.SleepNote(); (note != "") != (tracked < names) {
			t.Errorf("%v: note %q", c.cfg.Params, note)
		}
	}
}
