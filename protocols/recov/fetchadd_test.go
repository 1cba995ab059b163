package recov_test

import (
	"testing"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols/internal/checktest"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/recov"
	"lfccheck/protocols/ucast"
)

// The suite's fetch-and-add row exercises what its name says: a request
// that found no credit travels on a recovery channel, and a request
// reaches the server while the client's unicast tree has an active
// channel there (its release then withholds the credit and releases the
// channel, Fig. 4.15). (Goals checked here, not in RECOV's property
// list.)
func TestFetchAddOnChannels(t *testing.T) {
	checktest.NotUnderRace(t)
	for _, tc := range []struct {
		name string
		cfg  model.Config
		goal model.Property
	}{
		{"suite row", recov.FetchAddChain(), faOnChannel},
		{"request beside a channel", faBesideConfig(), faBesideChannel},
	} {
		cfg, err := recov.Def.Resolve(tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		m, err := recov.Def.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		sys, err := model.NewSystem(cfg, m)
		if err != nil {
			t.Fatal(err)
		}
		ck := properties.NewChecker(sys, append(append([]model.Property(nil), recov.Def.Properties...), tc.goal))
		r, err := explore.BFS(ck, explore.Options{})
		if err != nil || r.Verdict != explore.Pass || len(ck.Unreached()) > 0 {
			t.Errorf("%s: %v %v %v, unreached %v", tc.name, err, r.Verdict, r.Violation, ck.Unreached())
		}
	}
}

// faBesideConfig: node 1 sends two unicast packets to the server 0 (the
// second on 1's channel) and then asks for a value, while 0 multicasts.
func faBesideConfig() model.Config {
	c := recov.FetchAddChain()
	c.Params.(*mcast.Params).Work = []mcast.Work{{Node: 0, Items: []mcast.WorkEntry{{Multicast: true, Count: 2}}},
		{Node: 1, Items: []mcast.WorkEntry{{Dest: 0, Count: 2}, {FetchAdd: true, Count: 1}}}}
	return c
}

// faOnChannel: an FA_REQUEST in flight on a recovery channel.
var faOnChannel = model.Property{Name: "fa-on-channel", Doc: "a fetch-and-add request travels on a recovery channel",
	Sometimes: func(w *model.World) bool {
		for _, l := range w.Links {
			for _, p := range l {
				if p.Tag == ucast.TagFARequest && p.Hop != 0 {
					return true
				}
			}
		}
		return false
	}}

// faBesideChannel: the next packet to arrive at the server from a client
// is a request with a credit while the client's unicast tree has an
// active channel at the server.
var faBesideChannel = model.Property{Name: "fa-beside-channel", Doc: "a request arrives while its tree has an active channel at the server",
	Sometimes: func(w *model.World) bool {
		for from := range w.Nodes {
			l := w.Link(model.NodeID(from), 0)
			if len(l) == 0 || l[0].Tag != ucast.TagFARequest || l[0].Hop != 0 {
				continue
			}
			n := w.Nodes[0].(*recov.Node)
			if q := n.Channels[len(n.Channels)-len(w.Nodes)+from]; len(q) > 0 {
				return true
			}
		}
		return false
	}}
