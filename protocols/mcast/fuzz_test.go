package mcast_test

import (
	"testing"

	"lfccheck/model"
	"lfccheck/protocols"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/ucast"
)

// FuzzParseCast: a cast that parses prints back as itself and parses to
// the same cast.
func FuzzParseCast(f *testing.F) {
	for _, s := range []string{"0:1", "g1/3:2", "/1:1", "a/b/1:1", "1:", ":1", "-1:1", "1:0", "x:y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := mcast.ParseCast(s)
		if err != nil {
			return
		}
		d, err := mcast.ParseCast(c.String())
		if err != nil || d != c || c.Count < 1 || c.Root < 0 {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, c, c.String(), d, err)
		}
	})
}

// FuzzParseFlow: likewise for flows.
func FuzzParseFlow(f *testing.F) {
	for _, s := range []string{"0:1:3", "1:0:64", "0:1:65", "a:b:c", "0:1", "0:1:2:3", "-1:0:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fl, err := ucast.ParseFlow(s)
		if err != nil {
			return
		}
		g, err := ucast.ParseFlow(fl.String())
		if err != nil || g != fl || fl.Count < 1 {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, fl, fl.String(), g, err)
		}
	})
}

// FuzzSettings: any key=value line either fails with an error or builds a
// configuration whose canonical settings build the same system again; a
// tree family that parses builds a topology. Nothing panics.
func FuzzSettings(f *testing.F) {
	for _, s := range []string{"protocol=mcast tree=kary:3 nodes=5", "protocol=mcast tree=binomial cast=0:2 flow=1:2:1",
		"protocol=ucast credits=2 refresh=1 flow=0:1:3", "protocol=mcast tree=kary:0", "protocol=mcast tree=kary:99999999999",
		"protocol=mcast topology=nodes 3", "protocol=ucast nodes=64 packets=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		set, err := model.SplitSettings(line)
		if err != nil {
			return
		}
		cfg, err := model.ParseSettings(set)
		if err != nil {
			return
		}
		if cfg.Nodes > 8 {
			return // building big systems is slow, not interesting
		}
		ck, err := protocols.Build(cfg)
		if err != nil {
			return
		}
		back, err := model.ParseSettings(ck.Sys.Cfg.Settings())
		if err != nil {
			t.Fatalf("%q: canonical settings %v do not parse: %v", line, ck.Sys.Cfg.Settings(), err)
		}
		ck2, err := protocols.Build(back)
		if err != nil || ck2.Sys.Cfg.Describe() != ck.Sys.Cfg.Describe() {
			t.Fatalf("%q: round trip gives %v, %v", line, back, err)
		}
	})
}

// FuzzParseWork: a workload that parses prints back as itself and parses
// to the same workload.
func FuzzParseWork(f *testing.F) {
	for _, s := range []string{"0:1", "3:*,1x2,*g1x3", "0:*box", "0:*gx2", "1:", ":1", "-1:1", "0:1x0", "0:*a,b", "0:1x99999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := mcast.ParseWork(s)
		if err != nil {
			return
		}
		v, err := mcast.ParseWork(w.String())
		if err != nil || v.String() != w.String() || len(v.Items) != len(w.Items) {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, w, w.String(), v, err)
		}
		for i := range w.Items {
			if w.Items[i] != v.Items[i] || w.Items[i].Count < 1 {
				t.Fatalf("%q: entry %d: %+v -> %+v", s, i, w.Items[i], v.Items[i])
			}
		}
	})
}
