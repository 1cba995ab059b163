package mcast_test

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols"
	"lfccheck/protocols/internal/checktest"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/topology"
	"lfccheck/protocols/ucast"
	"lfccheck/traces"
)

func check(t *testing.T, cfg model.Config) (explore.Result, *properties.Checker) {
	t.Helper()
	return checkPOR(t, cfg, true)
}

// checkPOR is check with the stubborn-set reduction on (where the
// protocol allows it) or off.
func checkPOR(t *testing.T, cfg model.Config, por bool) (explore.Result, *properties.Checker) {
	t.Helper()
	cfg.Protocol = "mcast"
	ck, err := protocols.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ck.Reduce = true
	ck.Stubborn = ck.Stubborn && por
	r, err := explore.BFS(ck, explore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r, ck
}

// replayed checks that a failing result's trace reproduces its violation.
func replayed(t *testing.T, r explore.Result, ck *properties.Checker) traces.Outcome {
	t.Helper()
	o, _, err := traces.RunCodes(ck, r.Trace, r.Loop)
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
	r, ck := check(t, mcast.Config("chain", 4, 1, 1))
	if r.Verdict != explore.Fail || r.Violation.PropertyName() != "deadlock" {
		t.Fatalf("got %v %v", r.Verdict, r.Violation)
	}
	o := replayed(t, r, ck)
	cyc := ucast.WaitForCycle(o.Final)
	if len(cyc) != 4 {
		t.Fatalf("wait-for cycle %v, want 4 NIs", ucast.FormatCycle(o.Final, cyc))
	}
	for _, e := range cyc {
		if e.Held == nil || e.Held.Tag != mcast.TagMulticast || len(e.Pool) != 1 {
			t.Fatalf("cycle edge %+v", e)
		}
	}
	if len(o.Steps) != 16 || len(r.Trace) != 12 {
		t.Fatalf("trace of %d steps (%d transitions of the fused search); the shortest has 16 (4 launches, 4 arrivals, 4 copies, 4 processes, each process fused into its copy)", len(o.Steps), len(r.Trace))
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
		// One state per orbit of the rotations (2 at P=2, 3 at P=3):
		// without symmetry 162 and 7696. Without stubborn sets (which
		// store 65 and 2033).
		{"binary", 2, 1, 2, true, 87},
		{"binary", 3, 1, 1, true, 2576},
		{"binary", 3, 2, 1, true, 2576},
		{"binomial", 3, 1, 1, true, 2576},
		{"star", 3, 1, 1, true, 2576},
		{"kary:3", 3, 1, 1, true, 2576},
		{"chain", 3, 1, 1, false, 0},
	} {
		r, _ := checkPOR(t, mcast.Config(c.tree, c.p, c.c, c.k), false)
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
	r, _ := checkPOR(t, mcast.Config("binomial", 4, 1, 1), false)
	if r.Verdict != explore.Pass || r.Stats.States != 575478 { // one per orbit of the 4 rotations; 2301260 without; without stubborn sets (574300 with)
		t.Fatalf("binomial P=4: %v %v %d states", r.Verdict, r.Violation, r.Stats.States)
	}
}

func TestVariantsAreCaught(t *testing.T) {
	for _, v := range mcast.Def.Variants {
		if v.Catches == "" {
			continue
		}
		cfg := mcast.Def.VariantClaim(v).Config
		r, ck := check(t, cfg)
		if r.Verdict != explore.Fail || r.Violation.PropertyName() != v.Catches {
			t.Fatalf("%s: want fail %s, got %v %v", v.Name, v.Catches, r.Verdict, r.Violation)
		}
		replayed(t, r, ck)
		// The correct protocol passes the same configuration.
		if r, _ := check(t, v.Example); r.Verdict != explore.Pass {
			t.Fatalf("%s example with the correct protocol: %v %v", v.Name, r.Verdict, r.Violation)
		}
	}
}

// Unicast and multicast traffic mix in one run.
func TestUnicastAndMulticastMix(t *testing.T) {
	cfg := mcast.Config("binary", 3, 1, 1)
	p := cfg.Params.(*mcast.Params)
	p.Flows = []ucast.Flow{{Src: 1, Dst: 0, Count: 2}, {Src: 2, Dst: 1, Count: 1}}
	p.Casts = []topology.Cast{{Root: 0, Count: 2}, {Root: 2, Count: 1}}
	r, _ := check(t, cfg)
	if r.Verdict != explore.Pass {
		t.Fatalf("%v %v", r.Verdict, r.Violation)
	}
}

// An explicit workload (--work) that launches what a list of casts and
// flows launches gives the same system; its own order of unicasts and
// multicasts per node (which casts and flows cannot express) is kept.
func TestExplicitWork(t *testing.T) {
	cfg := mcast.Config("binary", 4, 1, 1)
	cfg.Params.(*mcast.Params).Casts = []topology.Cast{{Root: 0, Count: 2}, {Root: 2, Count: 1}}
	want, _ := check(t, cfg)
	cfg = mcast.Config("binary", 4, 1, 1)
	for _, w := range []string{"0:*x2", "2:*"} {
		if err := cfg.Params.Set("work", w); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := check(t, cfg)
	if got.Verdict != explore.Pass || got.Stats.States != want.Stats.States || got.Stats.Transitions != want.Stats.Transitions {
		t.Fatalf("work: %v %d states %d transitions; casts: %d, %d", got.Verdict, got.Stats.States, got.Stats.Transitions, want.Stats.States, want.Stats.Transitions)
	}
	cfg = mcast.Config("binary", 3, 1, 1)
	if err := cfg.Params.Set("work", "1:0,*,2x2,*"); err != nil {
		t.Fatal(err)
	}
	ck, err := protocols.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var items []string
	for _, it := range ucast.NodeAt(ck.Sys.Initial(), 1).M.Work[1] {
		items = append(items, fmt.Sprintf("%s:%d#%d", it.Tag.Info().Name, it.Dest, it.Seq))
	}
	if got, want := strings.Join(items, " "), "UNICAST:0#1 MULTICAST:0#1 UNICAST:2#1 UNICAST:2#2 MULTICAST:0#2"; got != want {
		t.Fatalf("node 1 launches %s, want %s", got, want)
	}
	if r, _ := check(t, cfg); r.Verdict != explore.Pass {
		t.Fatalf("%v %v", r.Verdict, r.Violation)
	}
}

// keep: a host may keep packets after their upcall and free them later;
// kept packets hold host buffers, so the NI cannot copy the next packet
// until the host frees one. Every property holds with the choice explored
// (and the protocol is still acyclic, as the liveness graph checks).
func TestKeepPackets(t *testing.T) {
	cfg := mcast.Config("binary", 3, 1, 1)
	for _, kv := range [][2]string{{"keep", "1"}, {"work", "0:1x2"}} {
		if err := cfg.Params.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	ck, err := protocols.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	acts, err := traces.ParseActions(ck.Sys, []string{"host 0 launch", "deliver 0->1", "ni 1 copy", "host 1 keep",
		"deliver 1->0", "host 0 launch", "deliver 0->1"})
	if err != nil {
		t.Fatal(err)
	}
	o, err := traces.Run(ck, acts)
	if err != nil || o.Violation != nil {
		t.Fatalf("%v %v", err, o.Violation)
	}
	var names []string
	for _, a := range o.Final.Enabled(nil) {
		names = append(names, ck.Sys.ActionName(a))
	}
	if got := strings.Join(names, ", "); got != "host 1 free" {
		t.Fatalf("with the only host buffer kept, enabled: %s; want only host 1 free", got)
	}
	if testing.Short() {
		return
	}
	cfg = mcast.Config("binary", 4, 1, 1)
	cfg.Params.(*mcast.Params).Casts = []topology.Cast{{Root: 0, Count: 1}, {Root: 2, Count: 1}}
	base, _ := check(t, cfg)
	cfg.Params.(*mcast.Params).Keep = 1
	ck, err = protocols.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ck.LivenessGraph = true
	ck.Symmetry = ck.SymmetryOff() == ""
	r, err := explore.BFS(ck, explore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != explore.Pass || r.Stats.States <= base.Stats.States {
		t.Fatalf("keep=1: %v %v, %d states (without keep %d)", r.Verdict, r.Violation, r.Stats.States, base.Stats.States)
	}
}

// Fetch-and-add beside multicast and unicast traffic (+ in work): every
// request gets a distinct value, each process's values increase, the
// server's own requests are local, and the variable ends at the number of
// requests; the variant fa-no-increment is caught (TestVariantsAreCaught
// runs it too), with a counterexample that replays.
func TestFetchAddBesideTraffic(t *testing.T) {
	cfg := mcast.Config("binary", 3, 1, 1)
	for _, kv := range [][2]string{{"server", "2"}, {"work", "0:+x2,*"}, {"work", "1:+,2,+"}, {"work", "2:+,*"}} {
		if err := cfg.Params.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	r, ck := check(t, cfg)
	if r.Verdict != explore.Pass {
		t.Fatalf("%v %v", r.Verdict, r.Violation)
	}
	// One run to the end: the values are 0..4, the variable holds 5.
	w := ck.Sys.Initial()
	var out model.Outbox
	for en := w.Enabled(nil); len(en) > 0; en = w.Enabled(nil) {
		if err := w.Apply(en[len(en)-1], &out); err != nil {
			t.Fatal(err)
		}
	}
	var got []uint32
	for i := range w.Nodes {
		got = append(got, ucast.NodeAt(w, i).FA.Got...)
	}
	slices.Sort(got)
	if fmt.Sprint(got) != "[0 1 2 3 4]" || ucast.NodeAt(w, 2).FA.Var != 5 {
		t.Fatalf("values %v, variable %d", got, ucast.NodeAt(w, 2).FA.Var)
	}
	cfg.Variant = ucast.FANoIncrement
	r, ck = check(t, cfg)
	if r.Verdict != explore.Fail || r.Violation.PropertyName() != "fa-values" {
		t.Fatalf("fa-no-increment: %v %v", r.Verdict, r.Violation)
	}
	replayed(t, r, ck)
}

// App. A.2: overlapping groups deadlock although each group's binary trees
// meet the distance condition; with one group fewer they do not.
func TestOverlappingGroupsDeadlock(t *testing.T) {
	data, err := os.ReadFile("../../examples/overlap-small.topo")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, mcast.OverlapSmallFile) {
		t.Fatal("examples/overlap-small.topo differs from the embedded copy")
	}
	r, ck := check(t, mcast.OverlapConfig(3))
	if r.Verdict != explore.Fail || r.Violation.PropertyName() != "deadlock" {
		t.Fatalf("got %v %v", r.Verdict, r.Violation)
	}
	o := replayed(t, r, ck)
	if cyc := ucast.WaitForCycle(o.Final); len(cyc) != 3 {
		t.Fatalf("want a 3-NI cycle, got %v", ucast.FormatCycle(o.Final, cyc))
	}
	if r, _ := check(t, mcast.OverlapConfig(2)); r.Verdict != explore.Pass {
		t.Fatalf("two groups: %v %v", r.Verdict, r.Violation)
	}
}

func TestBadMulticastConfigs(t *testing.T) {
	for _, c := range [][3]string{
		{"mcast", "tree=bushy", "unknown tree family"},
		{"mcast", "cast=5:1", "not a member of any group"},
		{"mcast", "cast=x/0:1", `no group "x"`},
		{"mcast", "cast=0:0", "count must be in 1..64"},
		{"mcast", "variant=nope", "unknown mcast variant"},
		{"ucast", "tree=binary", `has no parameter "tree"`},
		{"mcast", "packets=0", "nothing to send"},
		{"mcast", "packets=2 cast=0:1", "give packets or casts, not both"},
		{"ucast", "packets=2 flow=0:1:1", "give packets or flows, not both"},
		{"ucast", "refresh=0", "must be in 1..64"},
		{"ucast", "host-buffers=0", "must be in 1..255"},
		{"ucast", "send-buffers=0", "must be in 1..255"},
		{"ucast", "packets=0", "nothing to send"},
		{"mcast", "work=0:0", "destination must be another node"},
		{"mcast", "work=0:7", "destination must be another node"},
		{"mcast", "work=5:1", "node 5 out of range"},
		{"mcast", "work=0:1 work=0:2", "given twice"},
		{"mcast", "work=0:1 cast=0:1", "give work alone"},
		{"mcast", "work=0:1 packets=1", "give work alone"},
		{"mcast", "work=0:1x65", "more than 64 packets in one stream"},
		{"mcast", "work=0:*nog", `no group "nog"`},
		{"mcast", "work=0:1y", "want DEST, *, *GROUP or +"},
		{"mcast", "server=1", "no work entry is a fetch-and-add request"},
		{"mcast", "server=3 work=0:+", "server 3 out of range"},
		{"gsb", "server=1", `has no parameter "server"`},
		{"mcast", "work=0:", "want NODE:ENTRY"},
	} {
		s, err := model.SplitSettings("protocol=" + c[0] + " nodes=3 " + c[1])
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := model.ParseSettings(s)
		if err == nil {
			_, err = protocols.Build(cfg)
		}
		if err == nil || !strings.Contains(err.Error(), c[2]) {
			t.Errorf("%s %s: got %v, want %q", c[0], c[1], err, c[2])
		}
	}
}

// Request/reply through a forwarding tree (mcast.ReplyTree, docs/protocols.md's
// P=4 reply check): every member answers node 0's multicast requests from
// its upcall, and node 0 answers node 3's unicast request while its own
// second multicast waits for a send packet. The search is complete, nothing
// is violated, packets are forwarded, and the hosts drain and nest. Run
// outside -short (about 20 s).
func TestReplyThroughTree(t *testing.T) {
	if testing.Short() {
		t.Skip("a 2.7M-state search")
	}
	r, ck := checktest.Search(t, mcast.ReplyTree())
	stats := checktest.Stats(ck)
	if r.Verdict != explore.Pass || stats["forwarded-packets"] == 0 || stats["drained-buffers"] == 0 || stats["upcalls-aside"] < 2 {
		t.Fatalf("%v %v after %d states; statistics %v", r.Verdict, r.Violation, r.Stats.States, stats)
	}
	t.Logf("%d states, statistics %v", r.Stats.States, stats)
}
