package model_test

import (
	"encoding/json"
	"testing"

	"lfccheck/model"
	"lfccheck/protocols"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/ucast"
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
	seen := []*model.World{w.Clone()}
	for i := 0; i < limit; i++ {
		acts := w.Enabled(nil)
		if len(acts) == 0 {
			break
		}
		if err := w.Apply(acts[i%len(acts)], &out); err != nil {
			panic(err)
		}
		seen = append(seen, w.Clone())
	}
	return seen
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	cfg := ucast.Config(3, 2, 3)
	cfg.Params.(*ucast.Params).HostBuffers = 2
	sys := build(t, cfg)
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
	sys := build(t, ucast.Config(2, 1, 1))
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
	sys := build(t, ucast.Config(2, 1, 1))
	w := sys.Initial()
	var out model.Outbox
	a, b := w.Clone(), w.Clone()
	acts := w.Enabled(nil)
	if len(acts) != 2 {
		t.Fatalf("want 2 launches enabled initially, got %v", acts)
	}
	if err := a.Apply(acts[0], &out); err != nil {
		t.Fatal(err)
	}
	if err := b.Apply(acts[1], &out); err != nil {
		t.Fatal(err)
	}
	if string(a.Encode(nil)) == string(b.Encode(nil)) {
		t.Fatal("different states share an encoding")
	}
}

func TestActionNamesRoundTrip(t *testing.T) {
	sys := build(t, ucast.Config(4, 1, 1))
	for _, name := range []string{"host 2 launch", "deliver 3->1", "ni 0 copy", "host 3 process"} {
		a, err := sys.ParseAction(name)
		if err != nil || sys.ActionName(a) != name {
			t.Fatalf("%q parsed as %v (%q), %v", name, a, sys.ActionName(a), err)
		}
		if model.ActionFromCode(a.Code()) != a {
			t.Fatalf("code round trip of %v", a)
		}
	}
	for _, bad := range []string{"", "host", "host 4 launch", "host -1 launch", "deliver 1-2", "deliver 1->1",
		"deliver x->1", "ni 0 kopy", "host 1 launch now", "host 01x launch"} {
		if _, err := sys.ParseAction(bad); err == nil {
			t.Fatalf("%q parsed without error", bad)
		}
	}
}

func TestApplyRejectsDisabled(t *testing.T) {
	sys := build(t, ucast.Config(2, 1, 1))
	w := sys.Initial()
	before := w.Encode(nil)
	var out model.Outbox
	for _, name := range []string{"deliver 0->1", "ni 0 copy", "host 1 process"} {
		a, err := sys.ParseAction(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Apply(a, &out); err == nil {
			t.Fatalf("%v applied in the initial state", a)
		}
	}
	if string(w.Encode(nil)) != string(before) {
		t.Fatal("a rejected action changed the state")
	}
}

func TestConfigValidation(t *testing.T) {
	for _, kv := range []string{
		"nodes=1", "nodes=65", "credits=0", "packets=65", "flow=0:2:1", "flow=0:0:1", "flow=0:1:0", "host-buffers=300",
		"packets=0", "refresh=0", "send-buffers=0", "credits=-1", "nodes=2 flow=0:1:40 flow=0:1:40",
	} {
		s, err := model.SplitSettings("protocol=ucast nodes=2 " + kv)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := model.ParseSettings(s)
		if err == nil {
			_, err = protocols.Build(cfg)
		}
		if err == nil {
			t.Fatalf("%s accepted", kv)
		}
	}
}

// Every claim's and variant's configuration survives the key=value round
// trip: what printed commands and scenarios say is what the suite runs.
func TestSettingsRoundTrip(t *testing.T) {
	for _, d := range protocols.All() {
		cfgs := []model.Config{}
		for _, c := range d.Claims {
			cfgs = append(cfgs, c.Config)
		}
		for _, v := range d.Variants[1:] {
			if v.Catches != "" {
				cfgs = append(cfgs, d.VariantClaim(v).Config)
			}
		}
		for _, cfg := range cfgs {
			a, err := protocols.Build(cfg)
			if err != nil {
				t.Fatal(err)
			}
			back, err := model.ParseSettings(a.Sys.Cfg.Settings())
			if err != nil {
				t.Fatalf("%v: %v", a.Sys.Cfg.Settings(), err)
			}
			b, err := protocols.Build(back)
			if err != nil {
				t.Fatalf("%v: %v", a.Sys.Cfg.Settings(), err)
			}
			if a.Sys.Cfg.Describe() != b.Sys.Cfg.Describe() || string(a.Sys.Initial().Encode(nil)) != string(b.Sys.Initial().Encode(nil)) {
				t.Fatalf("round trip changed %s into %s", a.Sys.Cfg.Describe(), b.Sys.Cfg.Describe())
			}
			ja, _ := json.Marshal(a.Sys.Cfg)
			var c model.Config
			if err := json.Unmarshal(ja, &c); err != nil {
				t.Fatalf("%s: %v", ja, err)
			}
			if jb, _ := json.Marshal(c); string(ja) != string(jb) {
				t.Fatalf("JSON round trip: %s became %s", ja, jb)
			}
		}
	}
}

func FuzzParseAction(f *testing.F) {
	for _, s := range []string{"host 0 launch", "deliver 1->2", "ni 3 copy", "host 2 process", "deliver ->", ""} {
		f.Add(s)
	}
	sys := build(f, ucast.Config(4, 1, 1))
	f.Fuzz(func(t *testing.T, s string) {
		a, err := sys.ParseAction(s)
		if err != nil {
			return
		}
		b, err := sys.ParseAction(sys.ActionName(a))
		if err != nil || a != b {
			t.Fatalf("%q -> %v -> %q -> %v, %v", s, a, sys.ActionName(a), b, err)
		}
	})
}

// Restore copies back exactly what Apply changed: after every enabled
// action (and after runs of up to 100 steps, past the change list's
// bound), the restored world encodes as the original, and Changed names
// every node and link whose encoding the steps changed.
func TestRestoreAfterSteps(t *testing.T) {
	sys := build(t, mcast.Config("binary", 4, 1, 2))
	var next model.World
	var out model.Outbox
	for i, s := range walk(sys, 60) {
		enc := s.Encode(nil)
		next.CopyFrom(s)
		for k, a := range s.Enabled(nil) {
			steps := 1 + (k*37+i)%100
			for n, b := 0, a; n < steps; n++ {
				if err := next.Apply(b, &out); err != nil {
					t.Fatal(err)
				}
				acts := next.Enabled(nil)
				if len(acts) == 0 {
					break
				}
				b = acts[n%len(acts)]
			}
			nodes, links := map[int]bool{}, map[int]bool{}
			if next.Changed(func(j int) { nodes[j] = true }, func(l int) { links[l] = true }) {
				for j := range s.Nodes {
					if !nodes[j] && string(next.Nodes[j].Encode(nil)) != string(s.Nodes[j].Encode(nil)) {
						t.Fatalf("state %d action %d: node %d changed unreported", i, k, j)
					}
				}
				for l := range s.Links {
					if !links[l] && len(next.Links[l]) != len(s.Links[l]) {
						t.Fatalf("state %d action %d: link %d changed unreported", i, k, l)
					}
				}
			} else if steps < 64/(sys.P+1) {
				t.Fatalf("state %d action %d: changes forgotten after %d steps", i, k, steps)
			}
			next.Restore(s)
			if got := next.Encode(nil); string(got) != string(enc) {
				t.Fatalf("state %d action %d (%d steps): restored world differs", i, k, steps)
			}
		}
	}
}
