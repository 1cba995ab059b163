package model_test

import (
	"testing"

	"lfccheck/model"
	"lfccheck/protocols"
)

func build(t testing.TB, cfg model.Config) *model.System {
	t.Helper()
	ck, err := protocols.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ck.Sys
}

// walk visits up to limit states reachable by always taking the k-th
// enabled action (k cycling), returning them.
func walk(sys *model.System, limit int) []*model.World {
	w := sys.Initial()
	var out model.Outbox
	var info model.StepInfo
	seen := []*model.World{w.Clone()}
	for i := 0; i < limit; i++ {
		acts := w.Enabled(nil)
		if len(acts) == 0 {
			break
		}
		if err := w.Apply(acts[i%len(acts)], &out, &info); err != nil {
			panic(err)
		}
		seen = append(seen, w.Clone())
	}
	return seen
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	sys := build(t, model.Config{Protocol: "ucast", Nodes: 3, Credits: 2, Packets: 3, HostBuffers: 2})
	var w model.World
	for i, s := range walk(sys, 200) {
		enc := s.Encode(nil)
		if err := sys.Decode(enc, &w); err != nil {
			t.Fatalf("state %d: %v", i, err)
		}
		if got := w.Encode(nil); string(got) != string(enc) {
			t.Fatalf("state %d: re-encoding differs", i)
		}
		var c model.World
		c.CopyFrom(s)
		if got := c.Encode(nil); string(got) != string(enc) {
			t.Fatalf("state %d: CopyFrom differs", i)
		}
	}
}

func TestDecodeRejectsCorrupt(t *testing.T) {
	sys := build(t, model.Config{Protocol: "ucast", Nodes: 2, Credits: 1, Packets: 1})
	enc := sys.Initial().Encode(nil)
	var w model.World
	if err := sys.Decode(enc[:len(enc)-1], &w); err == nil {
		t.Fatal("truncated encoding decoded without error")
	}
	if err := sys.Decode(append(enc, 0), &w); err == nil {
		t.Fatal("encoding with trailing byte decoded without error")
	}
}

func TestDistinctStatesEncodeDistinctly(t *testing.T) {
	// Two different successor states of the initial state must differ.
	sys := build(t, model.Config{Protocol: "ucast", Nodes: 2, Credits: 1, Packets: 1})
	w := sys.Initial()
	var out model.Outbox
	var info model.StepInfo
	a, b := w.Clone(), w.Clone()
	acts := w.Enabled(nil)
	if len(acts) != 2 {
		t.Fatalf("want 2 launches enabled initially, got %v", acts)
	}
	if err := a.Apply(acts[0], &out, &info); err != nil {
		t.Fatal(err)
	}
	if err := b.Apply(acts[1], &out, &info); err != nil {
		t.Fatal(err)
	}
	if string(a.Encode(nil)) == string(b.Encode(nil)) {
		t.Fatal("different states share an encoding")
	}
}

func TestActionNamesRoundTrip(t *testing.T) {
	for _, a := range []model.Action{
		{Kind: model.ActLaunch, Node: 2},
		{Kind: model.ActDeliver, Node: 1, From: 3},
		{Kind: model.ActCopy, Node: 0},
		{Kind: model.ActProcess, Node: 3},
	} {
		got, err := model.ParseAction(a.String(), 4)
		if err != nil || got != a {
			t.Fatalf("%q parsed as %v, %v", a.String(), got, err)
		}
		if model.ActionFromCode(a.Code()) != a {
			t.Fatalf("code round trip of %v", a)
		}
	}
	for _, bad := range []string{"", "host", "host 4 launch", "host -1 launch", "deliver 1-2", "deliver 1->1",
		"deliver x->1", "ni 0 kopy", "host 1 launch now"} {
		if _, err := model.ParseAction(bad, 4); err == nil {
			t.Fatalf("%q parsed without error", bad)
		}
	}
}

func TestApplyRejectsDisabled(t *testing.T) {
	sys := build(t, model.Config{Protocol: "ucast", Nodes: 2, Credits: 1, Packets: 1})
	w := sys.Initial()
	before := w.Encode(nil)
	var out model.Outbox
	var info model.StepInfo
	for _, a := range []model.Action{{Kind: model.ActDeliver, Node: 1, From: 0}, {Kind: model.ActCopy, Node: 0}, {Kind: model.ActProcess, Node: 1}} {
		if err := w.Apply(a, &out, &info); err == nil {
			t.Fatalf("%v applied in the initial state", a)
		}
	}
	if string(w.Encode(nil)) != string(before) {
		t.Fatal("a rejected action changed the state")
	}
}

func TestConfigValidation(t *testing.T) {
	for _, c := range []model.Config{
		{Protocol: "ucast", Nodes: 1, Credits: 1},
		{Protocol: "ucast", Nodes: 65, Credits: 1},
		{Protocol: "ucast", Nodes: 2, Credits: 0},
		{Protocol: "ucast", Nodes: 2, Credits: 1, Packets: 65},
		{Protocol: "ucast", Nodes: 2, Credits: 1, Flows: []model.Flow{{Src: 0, Dst: 2, Count: 1}}},
		{Protocol: "ucast", Nodes: 2, Credits: 1, Flows: []model.Flow{{Src: 0, Dst: 0, Count: 1}}},
		{Protocol: "ucast", Nodes: 2, Credits: 1, Flows: []model.Flow{{Src: 0, Dst: 1, Count: 0}}},
		{Protocol: "ucast", Nodes: 2, Credits: 1, HostBuffers: 300},
	} {
		if _, err := protocols.Build(c); err == nil {
			t.Fatalf("%+v accepted", c)
		}
	}
}

func FuzzParseAction(f *testing.F) {
	for _, s := range []string{"host 0 launch", "deliver 1->2", "ni 3 copy", "host 2 process", "deliver ->", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := model.ParseAction(s, 4)
		if err != nil {
			return
		}
		b, err := model.ParseAction(a.String(), 4)
		if err != nil || a != b {
			t.Fatalf("%q -> %v -> %q -> %v, %v", s, a, a.String(), b, err)
		}
	})
}
