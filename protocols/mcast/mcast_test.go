package mcast_test

import (
	"os"
	"strings"
	"testing"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/model/topology"
	"lfccheck/properties"
	"lfccheck/protocols"
	"lfccheck/protocols/mcast"
	"lfccheck/traces"
)

func check(t *testing.T, cfg model.Config) (explore.Result, *properties.Checker) {
	t.Helper()
	cfg.Protocol = "mcast"
	ck, err := protocols.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ck.Reduce = true
	r, err := explore.BFS(ck, explore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r, ck
}

// replayed checks that a failing result's trace reproduces its violation.
func replayed(t *testing.T, r explore.Result, ck *properties.Checker) traces.Outcome {
	t.Helper()
	o, err := traces.Run(ck, traces.FromCodes(r.Trace))
	if err != nil {
		t.Fatalf("counterexample does not replay: %v", err)
	}
	if o.Violation == nil || o.Violation.Property != r.Violation.PropertyName() {
		t.Fatalf("replay shows %v, want %s", o.Violation, r.Violation.PropertyName())
	}
	return o
}

// Fig. 4.8: four NIs, one credit per pair, every NI multicasts on its
// chain: deadlock, with the 4-NI wait-for cycle of App. A.1.
func TestChainDeadlocksFig48(t *testing.T) {
	r, ck := check(t, model.Config{Nodes: 4, Credits: 1, Packets: 1, Tree: "chain"})
	if r.Verdict != explore.Fail || r.Violation.PropertyName() != "deadlock" {
		t.Fatalf("got %v %v", r.Verdict, r.Violation)
	}
	o := replayed(t, r, ck)
	cyc := properties.WaitForCycle(o.Final)
	if len(cyc) != 4 {
		t.Fatalf("wait-for cycle %v, want 4 NIs", properties.FormatCycle(o.Final, cyc))
	}
	for _, e := range cyc {
		if e.Held == nil || e.Held.Tag != model.TagMulticast || len(e.Pool) != 1 {
			t.Fatalf("cycle edge %+v", e)
		}
	}
	if len(r.Trace) != 16 {
		t.Fatalf("trace of %d steps; the shortest has 16 (4 launches, 4 arrivals, 4 copies, 4 processes)", len(r.Trace))
	}
}

// Binary and binomial trees are deadlock-free (App. A.1); chains are not,
// from three NIs on.
func TestTreeFamilies(t *testing.T) {
	for _, c := range []struct {
		tree    string
		p, c, k int
		pass    bool
		states  int64
	}{
		{"binary", 2, 1, 2, true, 234},
		{"binary", 3, 1, 1, true, 17176},
		{"binary", 3, 2, 1, true, 17176},
		{"binomial", 3, 1, 1, true, 17176},
		{"star", 3, 1, 1, true, 17176},
		{"kary:3", 3, 1, 1, true, 17176},
		{"chain", 3, 1, 1, false, 0},
	} {
		r, _ := check(t, model.Config{Nodes: c.p, Credits: c.c, Packets: c.k, Tree: c.tree})
		if c.pass && (r.Verdict != explore.Pass || r.Stats.States != c.states) {
			t.Errorf("%s P=%d C=%d K=%d: %v %v, %d states (pinned %d)", c.tree, c.p, c.c, c.k, r.Verdict, r.Violation, r.Stats.States, c.states)
		}
		if !c.pass && (r.Verdict != explore.Fail || r.Violation.PropertyName() != "deadlock") {
			t.Errorf("%s P=%d: want deadlock, got %v %v", c.tree, c.p, r.Verdict, r.Violation)
		}
	}
}

func TestBinomialFourNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("about a minute; skipped with -short")
	}
	r, _ := check(t, model.Config{Nodes: 4, Credits: 1, Packets: 1, Tree: "binomial"})
	if r.Verdict != explore.Pass || r.Stats.States != 7348276 {
		t.Fatalf("binomial P=4: %v %v %d states", r.Verdict, r.Violation, r.Stats.States)
	}
}

func TestVariantsAreCaught(t *testing.T) {
	for _, v := range mcast.Variants() {
		if v.Catches == "" {
			continue
		}
		cfg := v.Example
		cfg.Variant = v.Name
		r, ck := check(t, cfg)
		if r.Verdict != explore.Fail || r.Violation.PropertyName() != v.Catches {
			t.Fatalf("%s: want fail %s, got %v %v", v.Name, v.Catches, r.Verdict, r.Violation)
		}
		replayed(t, r, ck)
		// The correct protocol passes the same configuration.
		cfg.Variant = ""
		if r, _ := check(t, cfg); r.Verdict != explore.Pass {
			t.Fatalf("%s example with the correct protocol: %v %v", v.Name, r.Verdict, r.Violation)
		}
	}
}

// Unicast and multicast traffic mix in one run.
func TestUnicastAndMulticastMix(t *testing.T) {
	r, _ := check(t, model.Config{Nodes: 3, Credits: 1, Tree: "binary",
		Flows: []model.Flow{{Src: 1, Dst: 0, Count: 2}, {Src: 2, Dst: 1, Count: 1}},
		Casts: []model.Cast{{Root: 0, Count: 2}, {Root: 2, Count: 1}}})
	if r.Verdict != explore.Pass {
		t.Fatalf("%v %v", r.Verdict, r.Violation)
	}
}

// App. A.2: overlapping groups deadlock although each group's binary trees
// meet the distance condition; with one group fewer they do not.
func TestOverlappingGroupsDeadlock(t *testing.T) {
	data, err := os.ReadFile("../../examples/overlap-small.topo")
	if err != nil {
		t.Fatal(err)
	}
	spec, p, err := topology.ParseFile("overlap-small.topo", data)
	if err != nil {
		t.Fatal(err)
	}
	casts := []model.Cast{{Group: "g1", Root: 0, Count: 1}, {Group: "g2", Root: 2, Count: 1}, {Group: "g3", Root: 4, Count: 1}}
	r, ck := check(t, model.Config{Nodes: p, Credits: 1, Topology: spec, Casts: casts})
	if r.Verdict != explore.Fail || r.Violation.PropertyName() != "deadlock" {
		t.Fatalf("got %v %v", r.Verdict, r.Violation)
	}
	o := replayed(t, r, ck)
	if cyc := properties.WaitForCycle(o.Final); len(cyc) != 3 {
		t.Fatalf("want a 3-NI cycle, got %v", properties.FormatCycle(o.Final, cyc))
	}
	two := &model.TopologySpec{Groups: spec.Groups[:2], Trees: spec.Trees[:2]}
	if r, _ := check(t, model.Config{Nodes: p, Credits: 1, Topology: two, Casts: casts[:2]}); r.Verdict != explore.Pass {
		t.Fatalf("two groups: %v %v", r.Verdict, r.Violation)
	}
}

func TestBadMulticastConfigs(t *testing.T) {
	for _, c := range []struct {
		cfg  model.Config
		want string
	}{
		{model.Config{Protocol: "mcast", Nodes: 3, Credits: 1, Tree: "bushy"}, "unknown tree family"},
		{model.Config{Protocol: "mcast", Nodes: 3, Credits: 1, Casts: []model.Cast{{Root: 5, Count: 1}}}, "not a member of any group"},
		{model.Config{Protocol: "mcast", Nodes: 3, Credits: 1, Casts: []model.Cast{{Group: "x", Root: 0, Count: 1}}}, `no group "x"`},
		{model.Config{Protocol: "mcast", Nodes: 3, Credits: 1, Casts: []model.Cast{{Root: 0, Count: 0}}}, "count must be at least 1"},
		{model.Config{Protocol: "mcast", Variant: "nope", Nodes: 3, Credits: 1}, "unknown mcast variant"},
		{model.Config{Protocol: "ucast", Nodes: 3, Credits: 1, Tree: "binary"}, "has no multicast"},
	} {
		if _, err := protocols.Build(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.cfg, err, c.want)
		}
	}
}
