package model_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"lfccheck/model"
)

func TestParseFaults(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"none", ""},
		{"loss:2", "loss:2"},
		{"dup:1,loss:2", "loss:2,dup:1"},
		{"loss@1->0:1,loss:1,corrupt@0->1:3", "loss:1,loss@1->0:1,corrupt@0->1:3"},
	} {
		f, err := model.ParseFaults(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if f.String() != c.want {
			t.Errorf("%q: got %q, want %q", c.in, f, c.want)
		}
	}
	for _, c := range []struct{ in, err string }{
		{"loss", "want KIND:N"},
		{"lost:1", `unknown fault kind "lost"`},
		{"loss:0", "1..16"},
		{"loss:17", "1..16"},
		{"loss:-1", "1..16"},
		{"loss:1x", "1..16"},
		{"loss:1,loss:2", "given twice"},
		{"loss@0->0:1", "to itself"},
		{"loss@0-1:1", "want a link"},
		{"loss@0->x:1", "want a link"},
		{"loss:1,", "want KIND:N"},
	} {
		_, err := model.ParseFaults(c.in)
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: got error %v, want one saying %q", c.in, err, c.err)
		}
	}
	f, _ := model.ParseFaults("loss@0->3:1")
	if err := f.Check(3); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("link 0->3 at P=3: %v", err)
	}
}

func faultySystem(t *testing.T, p int, faults string) *model.System {
	t.Helper()
	f, err := model.ParseFaults(faults)
	if err != nil {
		t.Fatal(err)
	}
	cfg := model.Config{Protocol: tokenDef.Name, Nodes: p, Params: tokenDef.NewParams(), Faults: f}
	m, err := tokenDef.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sys, err := model.NewSystem(cfg, m)
	if err != nil {
		t.Fatal(err)
	}
	return sys
}

func step(t *testing.T, w *model.World, name string) {
	t.Helper()
	a, err := w.Sys.ParseAction(name)
	if err != nil {
		t.Fatal(err)
	}
	var out model.Outbox
	if err := w.Apply(a, &out); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// TestFaultActions: each fault does what it says to the head of a link,
// uses its budget, is disabled when the budget is spent, and the budgets
// are part of the encoding, so the search tells states apart by them.
func TestFaultActions(t *testing.T) {
	sys := faultySystem(t, 2, "loss:1,dup@0->1:1,corrupt:1")
	w := sys.Initial()
	step(t, w, "host 0 pass")
	before := w.Encode(nil)
	names := func() string {
		var s []string
		for _, a := range w.Enabled(nil) {
			s = append(s, sys.ActionName(a))
		}
		return strings.Join(s, ", ")
	}
	if got, want := names(), "deliver 0->1, lose 0->1, duplicate 0->1, corrupt 0->1"; got != want {
		t.Fatalf("enabled: %s, want %s", got, want)
	}
	step(t, w, "duplicate 0->1")
	if n := len(w.Link(0, 1)); n != 2 || w.Link(0, 1)[0] != w.Link(0, 1)[1] {
		t.Fatalf("after duplicate: %s", w.Format())
	}
	if got, want := names(), "deliver 0->1, lose 0->1, corrupt 0->1"; got != want {
		t.Fatalf("enabled after the duplicate: %s, want %s", got, want)
	}
	step(t, w, "corrupt 0->1")
	if n := len(w.Link(0, 1)); n != 1 || w.Nodes[1].(*tokenNode).Has {
		t.Fatalf("a corrupted packet is dropped by the NI: %s", w.Format())
	}
	if !bytes.Equal(w.Encode(nil)[:len(before)-3], before[:len(before)-3]) || bytes.Equal(w.Encode(nil), before) {
		t.Fatalf("state with spent budgets encodes as %x, before %x", w.Encode(nil), before)
	}
	// Round trip, budgets included.
	var d model.World
	if err := sys.Decode(w.Encode(nil), &d); err != nil || !bytes.Equal(d.Encode(nil), w.Encode(nil)) || d.Format() != w.Format() {
		t.Fatalf("decode: %v\n%s\nwant\n%s", err, d.Format(), w.Format())
	}
	c := w.Clone()
	step(t, w, "lose 0->1")
	if len(w.Link(0, 1)) != 0 || !strings.Contains(w.Format(), "faults left: loss:0,dup@0->1:0,corrupt:0") {
		t.Fatalf("after loss: %s", w.Format())
	}
	if diff := strings.Join(model.Diff(c, w), "; "); diff != "link 0->1: [t0#1] -> []; faults left: loss:1,dup@0->1:0,corrupt:0 -> loss:0,dup@0->1:0,corrupt:0" {
		t.Errorf("diff: %s", diff)
	}
	w.Restore(c)
	if !bytes.Equal(w.Encode(nil), c.Encode(nil)) {
		t.Errorf("restore does not bring the budget back")
	}
	if _, err := sys.ParseAction("lose 1->1"); err == nil {
		t.Errorf("lose 1->1 parsed")
	}
	// Without faults, no fault kind and the same encoding as before.
	plain := faultySystem(t, 2, "")
	if len(plain.Kinds) != 2 || len(plain.Initial().Encode(nil)) != len(sys.Initial().Encode(nil))-3 {
		t.Errorf("a system without faults has kinds %d", len(plain.Kinds))
	}
}

type reportingToken struct{ *tokenMachine }

// Corrupted hands the token on anyway, as a protocol that reports a CRC
// error might send a NACK.
func (m reportingToken) Corrupted(n model.Node, from model.NodeID, pkt model.Packet, out *model.Outbox) {
	out.Transmit(from, pkt)
}

func TestCorruptionReported(t *testing.T) {
	f, _ := model.ParseFaults("corrupt:1")
	cfg := model.Config{Protocol: tokenDef.Name, Nodes: 2, Params: tokenDef.NewParams(), Faults: f}
	m, _ := tokenDef.New(cfg)
	sys, err := model.NewSystem(cfg, reportingToken{m.(*tokenMachine)})
	if err != nil {
		t.Fatal(err)
	}
	w := sys.Initial()
	step(t, w, "host 0 pass")
	step(t, w, "corrupt 0->1")
	if len(w.Link(0, 1)) != 0 || len(w.Link(1, 0)) != 1 {
		t.Fatalf("the machine was not told: %s", w.Format())
	}
}

var registerToken sync.Once

func TestFaultsInConfig(t *testing.T) {
	registerToken.Do(func() { model.Register(tokenDef) })
	cfg, err := model.ParseSettings([]model.Setting{{Key: "protocol", Value: "token"}, {Key: "faults", Value: "dup:1,loss@0->1:2"}})
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Settings()
	if got := s[len(s)-1].String(); got != "faults=loss@0->1:2,dup:1" {
		t.Errorf("settings end with %s", got)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // as trace files are written
	err = enc.Encode(cfg)
	b := bytes.TrimSpace(buf.Bytes())
	if err != nil || !strings.Contains(string(b), `"faults":"loss@0->1:2,dup:1"`) {
		t.Fatalf("JSON %s (%v)", b, err)
	}
	var back model.Config
	if err := json.Unmarshal(b, &back); err != nil || back.Faults.String() != cfg.Faults.String() {
		t.Errorf("JSON round trip: %v %v", back.Faults, err)
	}
	if err := json.Unmarshal([]byte(`{"protocol":"token","faults":"lost:1"}`), &back); err == nil {
		t.Errorf("a bad fault in JSON is accepted")
	}
	if _, err := model.ParseSettings([]model.Setting{{Key: "protocol", Value: "token"}, {Key: "faults", Value: "loss:99"}}); err == nil {
		t.Errorf("faults=loss:99 accepted")
	}
	def, _ := model.Lookup("token")
	cfg.Nodes = 2
	cfg.Faults, _ = model.ParseFaults("loss@0->2:1")
	if _, err := def.Resolve(cfg); err == nil {
		t.Errorf("a link out of range resolves")
	}
}
