package panda_test

import (
	"strings"
	"testing"

	"lfccheck/model"
	"lfccheck/protocols"
	"lfccheck/protocols/panda"
)

// search visits every reachable state of cfg (a plain breadth-first
// search over the kernel) and calls visit on each transition.
func search(t *testing.T, cfg model.Config, visit func(w *model.World, a model.Action, out *model.Outbox, next *model.World)) int {
	t.Helper()
	d, err := protocols.Lookup("panda")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err = d.Resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := d.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sys, err := model.NewSystem(cfg, m)
	if err != nil {
		t.Fatal(err)
	}
	w0 := sys.Initial()
	seen := map[string]bool{string(w0.Encode(nil)): true}
	frontier := []*model.World{w0}
	var out model.Outbox
	for len(frontier) > 0 {
		w := frontier[0]
		frontier = frontier[1:]
		for _, a := range w.Enabled(nil) {
			next := w.Clone()
			out.Reset()
			if err := next.Apply(a, &out); err != nil {
				t.Fatal(err)
			}
			visit(w, a, &out, next)
			if k := string(next.Encode(nil)); !seen[k] {
				seen[k] = true
				frontier = append(frontier, next)
			}
		}
	}
	return len(seen)
}

func claim(t *testing.T, name string) model.Config {
	t.Helper()
	for _, c := range panda.Def.Claims {
		if c.Name == name {
			return c.Config
		}
	}
	t.Fatalf("no claim %q", name)
	return model.Config{}
}

// The passing claims exercise what their docs say: an ACK processed by an
// upcall nested on a blocked reply handler; a request queued behind such
// a handler (P=3); a thread blocked in its request and credits piggybacked
// on data packets (W=4).
func TestClaimsExerciseTheMechanism(t *testing.T) {
	node := func(w *model.World, i model.NodeID) *panda.Node { return w.Nodes[i].(*panda.Node) }
	for _, c := range []struct {
		claim                                        string
		nestedAck, queuedBehind, threadBlocks, piggy bool
	}{
		{"P=2 W=2 reply=3", true, false, false, false},
		{"P=3 W=2 reply=3", true, true, false, false},
		{"P=2 W=4 calls=2 request=5 reply=5", true, false, true, true},
	} {
		var nestedAck, queuedBehind, threadBlocks, piggy bool
		search(t, claim(t, c.claim), func(w *model.World, a model.Action, out *model.Outbox, next *model.World) {
			n := node(w, a.Node)
			if w.Sys.Kinds[a.Kind].Name == "upcall" && n.Serving && n.Blocked() && n.Delivered[0].Credits > 0 && !node(next, a.Node).Blocked() {
				nestedAck = true
			}
			if n.Serving && n.Blocked() && len(n.Requests) > 0 {
				queuedBehind = true
			}
			if !n.Serving && n.Blocked() {
				threadBlocks = true
			}
			for _, s := range out.Sends {
				if s.Pkt.Tag.IsData() && s.Pkt.Credits > 0 {
					piggy = true
				}
			}
		})
		got := [4]bool{nestedAck, queuedBehind, threadBlocks, piggy}
		if want := [4]bool{c.nestedAck, c.queuedBehind, c.threadBlocks, c.piggy}; got != want {
			t.Errorf("%s: nested ACK, request queued behind a blocked handler, thread blocked, piggybacked credits: %v, want %v", c.claim, got, want)
		}
	}
}

// Bad input is one clear error, never reinterpreted.
func TestParameters(t *testing.T) {
	for _, c := range []struct{ key, value, want string }{
		{"window", "0", "must be in 1..16, got 0"},
		{"window", "17", "must be in 1..16"},
		{"refresh", "0", "must be in 1..16, got 0"},
		{"calls", "x", ""},
		{"request-packets", "0", "must be in 1..16"},
		{"reply-packets", "-1", ""},
		{"credits", "1", `panda has no parameter "credits"`},
	} {
		err := panda.Defaults().Set(c.key, c.value)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s=%s: %v, want an error containing %q", c.key, c.value, err, c.want)
		}
	}
	p := panda.Defaults()
	if err := p.Set("refresh", "3"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Resolve(0); err == nil || !strings.Contains(err.Error(), "refresh 3 exceeds the window 2") {
		t.Errorf("refresh above the window: %v", err)
	}
	p = panda.Defaults()
	for _, kv := range [][2]string{{"window", "4"}, {"refresh", "2"}, {"calls", "3"}} {
		if err := p.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	q := panda.Defaults()
	for _, s := range p.Settings() {
		if err := q.Set(s.Key, s.Value); err != nil {
			t.Fatal(err)
		}
	}
	if *q != *p {
		t.Errorf("settings %v do not give back %+v: %+v", p.Settings(), *p, *q)
	}
}
