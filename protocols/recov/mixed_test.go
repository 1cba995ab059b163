package recov_test

import (
	"testing"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols/internal/checktest"
	"lfccheck/protocols/recov"
	"lfccheck/protocols/ucast"
)

// The suite's fork and mixed rows exercise what their names say: on the
// fork a recovery tree spans 4 NIs; on the mixed chain a unicast packet
// travels on a recovery channel, and one is in the network while a
// recovery is active. (Goals checked here, not in RECOV's property list,
// which the suite prints.)
func TestForkAndMixedRowsExercise(t *testing.T) {
	checktest.NotUnderRace(t)
	r, ck := checktest.Search(t, recov.ForkConfig())
	if r.Verdict != explore.Pass || checktest.Stats(ck)["largest-recovery-tree"] != 4 {
		t.Fatalf("fork: %v %v, statistics %v", r.Verdict, r.Violation, checktest.Stats(ck))
	}
	cfg, err := recov.Def.Resolve(recov.MixedChain())
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
	props := append(append([]model.Property(nil), recov.Def.Properties...), unicastOnChannel, unicastBesideRecovery)
	ck = properties.NewChecker(sys, props)
	if r, err = explore.BFS(ck, explore.Options{}); err != nil || r.Verdict != explore.Pass || len(ck.Unreached()) > 0 {
		t.Fatalf("mixed chain: %v %v %v, unreached %v", err, r.Verdict, r.Violation, ck.Unreached())
	}
}

// unicastOnChannel: a UNICAST packet on a recovery channel (in flight, or
// in a channel's receive buffer).
var unicastOnChannel = model.Property{Name: "unicast-on-channel", Doc: "a unicast packet travels on a recovery channel",
	Sometimes: func(w *model.World) bool {
		for _, l := range w.Links {
			for _, p := range l {
				if p.Tag == ucast.TagUnicast && p.Hop != 0 {
					return true
				}
			}
		}
		for i := range w.Nodes {
			for _, r := range w.Nodes[i].(*recov.Node).Recv {
				if r.Pkt.Tag == ucast.TagUnicast && r.Chan != 0 {
					return true
				}
			}
		}
		return false
	}}

// unicastBesideRecovery: a unicast packet is in flight or buffered while
// some NI has a recovery active.
var unicastBesideRecovery = model.Property{Name: "unicast-beside-recovery", Doc: "a unicast packet is in the network during a recovery",
	Sometimes: func(w *model.World) bool {
		active, uni := false, false
		for i := range w.Nodes {
			n := w.Nodes[i].(*recov.Node)
			active = active || n.Active
			for _, r := range n.Recv {
				uni = uni || r.Pkt.Tag == ucast.TagUnicast
			}
		}
		for _, l := range w.Links {
			for _, p := range l {
				uni = uni || p.Tag == ucast.TagUnicast
			}
		}
		return active && uni
	}}
