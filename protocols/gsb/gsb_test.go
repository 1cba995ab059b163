package gsb_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/protocols"
	"lfccheck/protocols/gsb"
	"lfccheck/protocols/internal/checktest"
	"lfccheck/protocols/topology"
	"lfccheck/traces"
)

func twoFragments(cfg model.Config) model.Config {
	cfg.Params.(*gsb.Params).Fragments = 2
	return cfg
}

func wholeMessages(cfg model.Config) model.Config {
	cfg.Params.(*gsb.Params).Delivery = gsb.Whole
	return cfg
}

// Pinned state counts of passing configurations; every property holds and
// the hold-back is exercised (held-back is reached).
func TestPinnedStateCounts(t *testing.T) {
	checktest.NotUnderRace(t)
	for _, c := range []struct {
		cfg    model.Config
		states int64
	}{
		{gsb.Config(3, 1, 1, 2), 53579},
		{gsb.Config(3, 1, 2, 4, 1, 2), 20254},
		{gsb.Config(2, 1, 3, 1), 6313},
		{gsb.Config(3, 2, 1, 2, 0, 2), 762},
		// Streaming delivery (§6.3) frees a message's packets as its
		// handler consumes them, so fewer states than whole-message
		// delivery, which keeps the count the model had before it
		// streamed (15226).
		{twoFragments(gsb.Config(3, 1, 1, 4, 1, 2)), 11294},
		{wholeMessages(twoFragments(gsb.Config(3, 1, 1, 4, 1, 2))), 15226},
	} {
		r, ck := checktest.Search(t, c.cfg)
		if r.Verdict != explore.Pass || len(ck.Unreached()) > 0 || r.Stats.States != c.states {
			t.Errorf("%s: %v %v unreached %v, %d states; pinned %d", c.cfg.Params.Describe(), r.Verdict, r.Violation,
				ck.Unreached(), r.Stats.States, c.states)
		}
	}
}

// Every broken variant is caught, on its example, by the property it
// names (checked alone, as 'lfccheck list' prints), with a counterexample
// that replays to the same violation, and fails with all properties
// checked; the correct protocol passes the same configuration.
func TestVariantsCaught(t *testing.T) {
	checktest.NotUnderRace(t)
	for _, v := range gsb.Def.Variants {
		if v.Catches == "" {
			continue
		}
		all := v.Example.Clone()
		all.Variant = v.Name
		if r, _ := checktest.Search(t, all); r.Verdict != explore.Fail {
			t.Errorf("%s with every property: %v", v.Name, r.Verdict)
		}
		cfg := gsb.Def.VariantClaim(v).Config
		r, ck := checktest.Search(t, cfg)
		if r.Verdict != explore.Fail || r.Violation.PropertyName() != v.Catches {
			t.Errorf("%s: got %v %v, want %s violated", v.Name, r.Verdict, r.Violation, v.Catches)
			continue
		}
		o, _, err := traces.RunCodes(ck, r.Trace, r.Loop)
		if err != nil || o.Violation == nil || o.Violation.Property != v.Catches {
			t.Errorf("%s: replay: %v %v", v.Name, o.Violation, err)
		}
		if r, _ := checktest.Search(t, v.Example); r.Verdict != explore.Pass {
			t.Errorf("correct protocol on %s's example: %v %v", v.Name, r.Verdict, r.Violation)
		}
	}
}

// With too few host buffers the held-back messages stall the system: the
// deadlock is explained as a held-back stall, not a buffer cycle, and its
// trace replays.
func TestHeldBackStall(t *testing.T) {
	r, ck := checktest.Search(t, gsb.Config(3, 1, 1, 1, 1, 2))
	if r.Verdict != explore.Fail || r.Violation.PropertyName() != "deadlock" {
		t.Fatalf("got %v %v", r.Verdict, r.Violation)
	}
	o, acts, err := traces.RunCodes(ck, r.Trace, r.Loop)
	if err != nil || o.Violation == nil || o.Violation.Property != "deadlock" {
		t.Fatalf("replay: %v %v", o.Violation, err)
	}
	w := ck.Sys.Initial()
	var out model.Outbox
	for _, a := range acts {
		if err := w.Apply(a, &out); err != nil {
			t.Fatal(err)
		}
	}
	e := ck.Explain("deadlock", w)
	if e == nil || e.Field != "held_back_stall" || len(e.Lines) == 0 || !strings.Contains(e.Lines[0], "no free host buffer") {
		t.Fatalf("explanation %+v", e)
	}
}

// The broadcast beside group g closes App. A.2's kind of wait-for cycle;
// with one of g's two multicasts it passes.
func TestBroadcastBesideOverlappingGroup(t *testing.T) {
	g := func(root int) topology.Cast { return topology.Cast{Group: "g", Root: root, Count: 1} }
	r, ck := checktest.Search(t, gsb.OverlapConfig(g(1), g(3)))
	if r.Verdict != explore.Fail || r.Violation.PropertyName() != "deadlock" {
		t.Fatalf("got %v %v", r.Verdict, r.Violation)
	}
	_, acts, err := traces.RunCodes(ck, r.Trace, r.Loop)
	if err != nil {
		t.Fatal(err)
	}
	w := ck.Sys.Initial()
	var out model.Outbox
	for _, a := range acts {
		if err := w.Apply(a, &out); err != nil {
			t.Fatal(err)
		}
	}
	if e := ck.Explain("deadlock", w); e == nil || e.Field != "wait_for_cycle" || len(e.Lines) != 3 {
		t.Fatalf("explanation %+v", e)
	}
	one := gsb.OverlapConfig(g(1))
	one.Properties = []string{"deadlock", "total-order", "no-duplicates", "eventual-delivery"}
	if r, _ := checktest.Search(t, one); r.Verdict != explore.Pass {
		t.Fatalf("one cast: %v %v", r.Verdict, r.Violation)
	}
}

// Bad parameters are errors naming the problem.
func TestBadParameters(t *testing.T) {
	for _, c := range []struct {
		set  [][2]string
		want string
	}{
		{[][2]string{{"senders", "0,5"}}, "sender 5 out of range"},
		{[][2]string{{"senders", "1,1"}}, "sender 1 given twice"},
		{[][2]string{{"sequencer", "3"}}, "sequencer 3 out of range"},
		{[][2]string{{"packets", "40"}, {"fragments", "2"}}, "packets x fragments"},
		{[][2]string{{"cast", "9:1"}}, "cast 1"},
	} {
		p := gsb.Defaults()
		var err error
		for _, kv := range c.set {
			if err = p.Set(kv[0], kv[1]); err != nil {
				break
			}
		}
		if err == nil {
			_, err = protocols.Build(model.Config{Protocol: "gsb", Nodes: 3, Params: p})
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %q", c.set, err, c.want)
		}
	}
	if err := gsb.Defaults().Set("flow", "0:1:1"); err == nil {
		t.Errorf("flow accepted")
	}
}

// A small live group: three nodes broadcast 5 messages each; every node
// delivers the same 15 messages with their payloads, and the model accepts
// the recording with every property checked.
func TestLiveGroupReplaysInModel(t *testing.T) {
	cfg := gsb.Config(3, 1, 5, 16)
	var got [3][]string
	g, err := gsb.StartLive(context.Background(), gsb.LiveOptions{Config: cfg, Messages: 5,
		OnDeliver: func(n int, d gsb.Delivery) { got[n] = append(got[n], string(d.Payload)) }})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 3)
	for s := 0; s < 3; s++ {
		go func(s int) {
			for k := 1; k <= 5; k++ {
				if err := g.Broadcast(s, []byte(fmt.Sprintf("%d.%d", s, k))); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}(s)
	}
	for s := 0; s < 3; s++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	res, err := g.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Broadcast(0, nil); err != gsb.ErrClosed {
		t.Fatalf("broadcast after close: %v", err)
	}
	for n := range got {
		if len(got[n]) != 15 || strings.Join(got[n], " ") != strings.Join(got[0], " ") {
			t.Fatalf("node %d delivered %v, node 0 %v", n, got[n], got[0])
		}
		if len(res.Delivered[n]) != 15 || res.Broadcasts[n] != 5 {
			t.Fatalf("node %d: result has %d deliveries and %d broadcasts, want 15 and 5", n, len(res.Delivered[n]), res.Broadcasts[n])
		}
	}
	if res.Steps == 0 {
		t.Fatalf("no steps recorded")
	}
	if err := res.Check(); err != nil {
		t.Fatalf("the model rejects the live run: %v", err)
	}
}

// A stalled live group is reported by Close, not hidden: with one host
// buffer and two senders racing, a run may stall; a run that does not
// stall delivers everything. Either way Close's answer agrees with the
// deliveries and with the model, which accepts exactly the runs that Close
// found complete.
func TestLiveGroupStallIsReported(t *testing.T) {
	cfg := gsb.Config(3, 1, 3, 1, 1, 2)
	for try := 0; try < 10; try++ {
		g, err := gsb.StartLive(context.Background(), gsb.LiveOptions{Config: cfg, Messages: 3})
		if err != nil {
			t.Fatal(err)
		}
		// A stalled group never ends by itself: the deadline ends its
		// broadcasts and its run (a run that does not stall takes
		// milliseconds).
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		var wg sync.WaitGroup
		for _, s := range []int{1, 2} {
			wg.Add(1)
			go func(s int) {
				defer wg.Done()
				for k := 0; k < 3; k++ {
					if g.BroadcastContext(ctx, s, nil) != nil {
						return
					}
				}
			}(s)
		}
		wg.Wait()
		res, err := g.CloseContext(ctx)
		cancel()
		if res == nil {
			t.Fatalf("no result: %v", err)
		}
		total := res.Broadcasts[1] + res.Broadcasts[2]
		stalled := false
		for _, d := range res.Delivered {
			if len(d) != total {
				stalled = true
			}
		}
		if stalled && err == nil {
			t.Fatalf("try %d: a node delivered fewer than the %d messages, and Close said nothing", try, total)
		}
		cerr := res.Check()
		if err == nil && cerr != nil {
			t.Fatalf("try %d: Close found the run complete, the model rejects it: %v", try, cerr)
		}
		if err != nil && cerr == nil {
			t.Fatalf("try %d: Close said %v, the model accepts the run as complete", try, err)
		}
	}
}
