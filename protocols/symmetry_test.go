package protocols_test

import (
	"fmt"
	"math/rand"
	"testing"

	"lfccheck/explore"
	"lfccheck/internal/racebuild"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols/intr"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/topology"
	"lfccheck/protocols/ucast"
	"lfccheck/traces"
)

// symmetryVerdicts checks cfg with the symmetry reduction on (and two
// workers) and off (and one worker), and on with the absolute canonical
// form where Build chose the relative one, and fails t unless the
// verdicts, the violated property and the unreached goals agree, the
// counterexamples replay from the real initial state to the same
// violation, a symmetric pass stores fewer states, and both canonical
// forms store the same number of orbits. It reports whether the
// configuration had a symmetry to compare.
func symmetryVerdicts(t *testing.T, cfg model.Config, limit int64) bool {
	t.Helper()
	var got [3]string
	var states [3]int64
	for i, sym := range []bool{true, false, true} {
		ck, err := properties.Build(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if sym && !ck.Symmetry {
			return false
		}
		ck.Symmetry = sym
		if i == 2 {
			if !ck.Relative || !ck.RelativeForm() {
				break
			}
			ck.Relative = false
		}
		// Without -short the reduced search runs on two workers, the full
		// one on one: the parallel search is compared with the sequential
		// one too.
		workers := 1
		if sym && !testing.Short() {
			workers = 2
		}
		r, err := explore.BFS(ck, explore.Options{MaxStates: limit, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict == explore.Incomplete {
			return false
		}
		got[i], states[i] = string(r.Verdict), r.Stats.States
		for _, u := range ck.Unreached() {
			got[i] += " unreached " + u.Property
		}
		if r.Verdict == explore.Fail && r.Violation != nil {
			got[i] += " " + r.Violation.PropertyName()
			o, _, err := traces.RunCodes(ck, r.Trace, r.Loop)
			if err != nil || o.Violation == nil || o.Violation.Property != r.Violation.PropertyName() {
				t.Fatalf("symmetry=%v: the counterexample does not reproduce %s: %v %v", sym, r.Violation.PropertyName(), o.Violation, err)
			}
		}
	}
	if got[0] != got[1] {
		t.Fatalf("verdicts differ: with symmetry %q, without %q", got[0], got[1])
	}
	if got[2] != "" && (got[2] != got[0] || got[0] == "pass" && states[2] != states[0]) {
		t.Fatalf("the canonical forms differ: relative %q, %d states; absolute %q, %d states", got[0], states[0], got[2], states[2])
	}
	if got[0] == "pass" && states[0] >= states[1] {
		t.Errorf("the symmetric search stored %d states, the full one %d", states[0], states[1])
	}
	return true
}

// TestSymmetryKeepsVerdicts compares every claim and broken-variant
// example that has a symmetry, with the symmetry reduction on and off.
// Under the race detector: a sixth of the configurations, with a
// smaller state limit (raceSample).
func TestSymmetryKeepsVerdicts(t *testing.T) {
	limit := int64(150_000)
	if testing.Short() {
		limit = 60_000
	}
	s := raceSample(3)
	if s.every > 1 {
		limit = 20_000
	}
	eachClaimOf(t, s, 8, func(t *testing.T, cfg model.Config) {
		if !symmetryVerdicts(t, cfg, limit) {
			t.Skip("no symmetry, or beyond the limit")
		}
	})
}

// Random small MCAST configurations: tree families, credits, packets and
// sometimes casts from a random subset of roots (which usually breaks the
// symmetry, and then none may be found); every configuration with a
// symmetry must keep its verdict. Under the race detector, a smaller
// state limit leaves out the largest.
func TestSymmetryOnRandomConfigurations(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	n, limit := 40, int64(300_000)
	if testing.Short() {
		n = 12
	}
	if racebuild.Enabled {
		limit = 30_000
		t.Logf("race detector: configurations over %d states are not compared; the test without -race compares them", limit)
	}
	compared := 0
	for i := 0; i < n; i++ {
		cfg, p := randomMCAST(rng)
		if len(p.Casts) == 0 && cfg.Nodes == 4 {
			p.Casts = []topology.Cast{{Root: 0, Count: 1}, {Root: 2, Count: 1}}
		}
		t.Run(fmt.Sprintf("%d %s", i, p.Describe()), func(t *testing.T) {
			if symmetryVerdicts(t, cfg, limit) {
				compared++
			}
		})
	}
	if compared < n/4 {
		t.Fatalf("only %d of %d random configurations had a symmetry to compare", compared, n)
	}
}

// Symmetry is found only where the configuration has it.
func TestSymmetryDetection(t *testing.T) {
	ring := ucast.Flows(3, 1, ucast.Flow{Src: 0, Dst: 1, Count: 2}, ucast.Flow{Src: 1, Dst: 2, Count: 2}, ucast.Flow{Src: 2, Dst: 0, Count: 2})
	oneWay := ucast.Flows(3, 1, ucast.Flow{Src: 0, Dst: 1, Count: 2})
	rootZero := mcast.Config("binary", 4, 1, 1)
	rootZero.Params.(*mcast.Params).Casts = []topology.Cast{{Root: 0, Count: 1}}
	opposite := mcast.Config("binary", 4, 1, 1)
	opposite.Params.(*mcast.Params).Casts = []topology.Cast{{Root: 0, Count: 1}, {Root: 2, Count: 1}}
	for _, c := range []struct {
		name string
		cfg  model.Config
		want int
	}{
		{"ucast all-to-all P=4", ucast.Config(4, 1, 1), 3},
		{"ucast ring flows", ring, 2},
		{"ucast one flow", oneWay, 0},
		{"mcast binary P=4", mcast.Config("binary", 4, 1, 1), 3},
		{"mcast chain P=4", mcast.Config("chain", 4, 1, 1), 3},
		{"mcast casts from 0", rootZero, 0},
		{"mcast casts from 0 and 2", opposite, 1},
		{"mcast overlapping groups (rotations by 2 and 4 map g1->g2->g3)", mcast.OverlapConfig(3), 2},
		{"fa", model.Config{Protocol: "fa", Nodes: 3, Params: must(model.Lookup("fa")).NewParams()}, 0},
	} {
		ck, err := properties.Build(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(ck.Symmetries()); got != c.want {
			t.Errorf("%s: %d symmetries, want %d", c.name, got, c.want)
		}
	}
}

func must(d *model.Def, err error) *model.Def {
	if err != nil {
		panic(err)
	}
	return d
}

// The checker's canonical forms, on the states of random runs: every
// renaming of a state has the state's canonical form, and the canonical
// form decodes to a renaming of the state (so two states share it exactly
// when they are renamings of each other). Both forms are checked: the
// relative one (Build's default where every node has one renaming to node
// 0) and the absolute one, which is also the smallest encoding among the
// state's renamings, computed naively.
func TestCanonicalForms(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, cfg := range []model.Config{mcast.Config("binary", 4, 1, 2), mcast.Config("chain", 4, 2, 1), ucast.Config(3, 1, 2), mcast.OverlapConfig(3), mcast.Config("binomial", 5, 1, 1)} {
		for _, rel := range []bool{true, false} {
			ck, err := properties.Build(cfg)
			if err != nil || !ck.Symmetry {
				t.Fatalf("%v: symmetry %v", err, ck != nil && ck.Symmetry)
			}
			ck.Relative = rel
			for run := 0; run < 30; run++ {
				w := ck.Sys.Initial()
				var out model.Outbox
				for step := 0; ; step++ {
					where := fmt.Sprintf("%s relative=%v run %d step %d", cfg.Params.Describe(), rel, run, step)
					canon := ck.Canonical(w, nil)
					naive := w.Encode(nil)
					renamings := [][]byte{naive}
					var ren model.World
					for _, p := range ck.Symmetries() {
						ren.RenameFrom(w, &p)
						e := ren.Encode(nil)
						renamings = append(renamings, e)
						if string(e) < string(naive) {
							naive = e
						}
						if got := ck.Canonical(&ren, nil); string(got) != string(canon) {
							t.Fatalf("%s: the renaming %s has another canonical form", where, p.String())
						}
					}
					if !rel && string(canon) != string(naive) {
						t.Fatalf("%s: the absolute canonical form is not the smallest renaming", where)
					}
					var dec model.World
					if ck.Decode(canon[:len(canon)-1], &dec) == nil || ck.Decode(append(canon[:len(canon):len(canon)], 0), &dec) == nil {
						t.Fatalf("%s: a truncated or extended canonical form decodes", where)
					}
					if err := ck.Decode(canon, &dec); err != nil {
						t.Fatalf("%s: %v", where, err)
					}
					found := false
					for _, e := range renamings {
						found = found || string(dec.Encode(nil)) == string(e)
					}
					if !found {
						t.Fatalf("%s: the canonical form decodes to a state that is no renaming of the state", where)
					}
					if !randomStep(t, w, rng, &out) {
						break
					}
				}
			}
		}
	}
}

// TestRenamedCodec checks the nodes' fast path for renamed states
// (model.RenamingCoder) against renaming a copy: on random runs, every
// node renamed by every symmetry encodes as RenameFrom then Encode would
// give, and decoding a node's encoding renamed gives the renamed node.
// Protocols whose nodes embed UCAST's with state of their own must not
// take the fast path.
func TestRenamedCodec(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	keep := mcast.Config("binary", 4, 1, 2)
	keep.Params.(*mcast.Params).Keep = 1
	fast := 0
	ip := intr.Defaults()
	ip.Credits, ip.Packets = 1, 1
	for _, cfg := range []model.Config{mcast.Config("binary", 4, 2, 2), mcast.Config("chain", 5, 1, 1), keep, ucast.Config(3, 2, 2), mcast.OverlapConfig(3),
		{Protocol: "recov", Nodes: 4, Params: mcast.Config("chain", 4, 1, 1).Params}, {Protocol: "intr", Nodes: 3, Params: ip}} {
		ck, err := properties.Build(cfg)
		if err != nil {
			t.Fatal(err)
		}
		syms := ck.Symmetries()
		if len(syms) == 0 {
			t.Fatalf("%s: no symmetry", cfg.Params.Describe())
		}
		ren := ck.Sys.Initial()
		dec := ck.Sys.Initial()
		for run := 0; run < 20; run++ {
			w := ck.Sys.Initial()
			var out model.Outbox
			for step := 0; ; step++ {
				for k := range syms {
					p := &syms[k]
					inv := p.Inverse()
					for i, n := range w.Nodes {
						rc := model.CodesRenamed(n)
						if cfg.Protocol == "recov" {
							if rc != nil {
								t.Fatalf("recov nodes take UCAST's renaming codec, which misses their recovery state")
							}
							continue
						}
						if rc == nil {
							t.Fatalf("%s: node %d has no renaming codec", cfg.Params.Describe(), i)
						}
						fast++
						to := ren.Nodes[p.Node[i]]
						to.(model.Renamable).RenameFrom(n, p)
						want := to.Encode(nil)
						where := fmt.Sprintf("%s run %d step %d node %d renamed by %s", cfg.Params.Describe(), run, step, i, p.String())
						if got := rc.EncodeRenamed(nil, p, inv); string(got) != string(want) {
							t.Fatalf("%s: EncodeRenamed differs from RenameFrom and Encode", where)
						}
						d := model.NewDecoder(n.Encode(nil))
						into := model.CodesRenamed(dec.Nodes[p.Node[i]])
						into.DecodeRenamed(d, model.NodeID(i), p)
						if d.Err() != nil || d.Len() != 0 {
							t.Fatalf("%s: DecodeRenamed: %v, %d bytes left", where, d.Err(), d.Len())
						}
						if got := dec.Nodes[p.Node[i]].Encode(nil); string(got) != string(want) {
							t.Fatalf("%s: DecodeRenamed differs from RenameFrom", where)
						}
					}
				}
				// INTR's hosts may toggle interrupts for ever: runs are
				// cut at 200 steps.
				if step == 200 || !randomStep(t, w, rng, &out) {
					break
				}
			}
		}
	}
	if fast == 0 {
		t.Fatal("no node took the fast path")
	}
}

// randomStep applies one of w's enabled actions, chosen by rng, and
// reports whether there was any.
func randomStep(t *testing.T, w *model.World, rng *rand.Rand, out *model.Outbox) bool {
	t.Helper()
	acts := w.Enabled(nil)
	if len(acts) == 0 {
		return false
	}
	if err := w.Apply(acts[rng.Intn(len(acts))], out); err != nil {
		t.Fatal(err)
	}
	return true
}
