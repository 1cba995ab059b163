package fa_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/model/live"
	"lfccheck/protocols"
	"lfccheck/protocols/fa"
	"lfccheck/protocols/internal/checktest"
	"lfccheck/protocols/ucast"
	"lfccheck/traces"
)

// Pinned unique-state counts; every property holds and the race is reached.
func TestPinnedStateCounts(t *testing.T) {
	for _, c := range []struct {
		nodes, credits, packets int
		states, transitions     int64
	}{
		{3, 1, 2, 102, 158},
		{4, 1, 2, 3146, 6690},
		{4, 2, 2, 3146, 6690},
		{5, 1, 1, 1040, 2592},
	} {
		r, ck := checktest.Search(t, fa.Config(c.nodes, c.credits, c.packets))
		if r.Verdict != explore.Pass || len(ck.Unreached()) > 0 || r.Stats.States != c.states || r.Stats.Transitions != c.transitions {
			t.Errorf("P=%d C=%d K=%d: %v %v unreached %v, %d states %d transitions; pinned %d, %d", c.nodes, c.credits, c.packets,
				r.Verdict, r.Violation, ck.Unreached(), r.Stats.States, r.Stats.Transitions, c.states, c.transitions)
		}
	}
}

// The split increment is caught by fa-values (fetch-and-add's one
// property set, ucast.FAValues) with a counterexample that replays; the
// correct protocol passes the same configuration.
func TestSplitIncrementCaught(t *testing.T) {
	v, err := fa.Def.Variant(fa.SplitIncrement)
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []model.Config{fa.Def.VariantClaim(v).Config, func() model.Config {
		c := v.Example.Clone()
		c.Variant = fa.SplitIncrement
		return c
	}()} {
		r, ck := checktest.Search(t, cfg)
		if r.Verdict != explore.Fail || r.Violation.PropertyName() != "fa-values" {
			t.Fatalf("%v: got %v %v", cfg.Properties, r.Verdict, r.Violation)
		}
		o, _, err := traces.RunCodes(ck, r.Trace, r.Loop)
		if err != nil || o.Violation == nil || o.Violation.Property != "fa-values" {
			t.Fatalf("replay: %v %v", o.Violation, err)
		}
	}
	if r, ck := checktest.Search(t, v.Example); r.Verdict != explore.Pass || len(ck.Unreached()) > 0 {
		t.Fatalf("correct protocol on the variant's example: %v %v", r.Verdict, r.Violation)
	}
}

// With a single client the race goal is unreachable, which the checker
// reports after the complete search.
func TestRaceGoalNeedsTwoClients(t *testing.T) {
	r, ck := checktest.Search(t, fa.Config(2, 1, 2))
	un := ck.Unreached()
	if r.Verdict != explore.Pass || len(un) != 1 || un[0].Property != "concurrent-requests" {
		t.Fatalf("%v, unreached %v", r.Verdict, un)
	}
}

// Every state property catches a state tampered to break it.
func TestPropertiesCatchTampering(t *testing.T) {
	ck, err := protocols.Build(fa.Config(3, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		p      model.Property
		tamper func(w *model.World)
		want   string
	}{
		{ucast.FAValues, func(w *model.World) {
			w.Nodes[1].(*fa.Node).FA.Got = []uint32{0}
			w.Nodes[2].(*fa.Node).FA.Got = []uint32{0}
		}, "value 0 was handed to host 1 and to host 2"},
		{ucast.FAValues, func(w *model.World) { w.Nodes[1].(*fa.Node).FA.Got = []uint32{3, 2} }, "host 1 got 2 after 3"},
		{ucast.FAOneOutstanding, func(w *model.World) { w.Nodes[2].(*fa.Node).FA.Outstanding = true }, "host 2 has 0 requests"},
	} {
		w := ck.Sys.Initial()
		if err := c.p.State(w); err != nil {
			t.Fatalf("%s fails initially: %v", c.p.Name, err)
		}
		c.tamper(w)
		if err := c.p.State(w); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.p.Name, err, c.want)
		}
	}
	// A lost increment: the variable lags behind the answers.
	w := ck.Sys.Initial()
	w.Nodes[1].(*fa.Node).FA.Got = []uint32{0}
	if err := ucast.FAValues.Final(w); err == nil || !strings.Contains(err.Error(), "holds 0 after 1") {
		t.Errorf("lost increment: %v", err)
	}
}

func TestBadParams(t *testing.T) {
	for _, c := range [][2]string{
		{"server=3", "server 3 out of range"},
		{"flow=1:0:1", `has no parameter "flow"`},
		{"packets=0", "no process issues a fetch-and-add request"},
		{"server=-1", `"-1" is not a decimal number`},
		{"server=64", "must be in 0..63"},
	} {
		s, _ := model.SplitSettings("protocol=fa nodes=3 " + c[0])
		cfg, err := model.ParseSettings(s)
		if err == nil {
			_, err = protocols.Build(cfg)
		}
		if err == nil || !strings.Contains(err.Error(), c[1]) {
			t.Errorf("%s: %v, want %q", c[0], err, c[1])
		}
	}
}

// The live runtime runs fetch-and-add unchanged, and the model accepts the
// recording.
func TestLive(t *testing.T) {
	ck, err := protocols.Build(fa.Config(5, 1, 20))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := live.Run(ctx, ck.Sys)
	if err != nil {
		t.Fatal(err)
	}
	o, err := traces.Run(ck, res.Actions)
	if err != nil || o.Violation != nil || !o.Terminal {
		t.Fatalf("replay: %v %v terminal %v", err, o.Violation, o.Terminal)
	}
	if v := o.Final.Nodes[0].(*fa.Node).FA.Var; v != 80 {
		t.Fatalf("variable %d after 80 requests", v)
	}
}

// The names fetch-and-add's properties had here before they became one set
// still work: --property distinct-values (or increasing) checks fa-values,
// and a trace file that names distinct-values still reproduces.
func TestRenamedProperties(t *testing.T) {
	cfg := fa.Config(3, 1, 1)
	cfg.Variant = fa.SplitIncrement
	cfg.Properties = []string{"distinct-values", "increasing"}
	r, ck := checktest.Search(t, cfg)
	if len(ck.Props) != 1 || ck.Props[0].Name != "fa-values" || r.Verdict != explore.Fail {
		t.Fatalf("distinct-values,increasing selected %d properties, verdict %v", len(ck.Props), r.Verdict)
	}
	o, acts, err := traces.RunCodes(ck, r.Trace, r.Loop)
	if err != nil {
		t.Fatal(err)
	}
	f := traces.NewFile(ck.Sys, acts, o)
	f.Property = "distinct-values" // as a file written before the rename says
	if ok, why := traces.Reproduces(f, o); !ok {
		t.Fatalf("an old trace file does not reproduce: %s", why)
	}
	f.Property = "one-outstanding"
	if ok, _ := traces.Reproduces(f, o); ok {
		t.Fatal("a trace file naming another property reproduces")
	}
}

// Trace files written before fetch-and-add was written once (by lfccheck
// at the commit before it): fa's split-increment naming distinct-values,
// with every step's changes; MCAST's fa-no-increment; fa's drop-reply.
// They replay and reproduce as recorded.
func TestOldTraceFilesReproduce(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) < 3 {
		t.Fatalf("%d trace files: %v", len(files), err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		file, err := traces.Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		ck, err := protocols.Build(file.Config)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		acts, err := traces.ParseActions(ck.Sys, file.Actions)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		o, err := traces.RunLasso(ck, acts, file.Loop())
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if file.Steps == nil || o.Violation == nil {
			t.Fatalf("%s records no steps or replays to no violation", f)
		}
		if ok, why := traces.Reproduces(file, o); !ok {
			t.Errorf("%s: not reproduced: %s", f, why)
		}
	}
}
