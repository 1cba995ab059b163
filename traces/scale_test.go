package traces_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols/lfc"
	"lfccheck/protocols/mcast"
	"lfccheck/traces"
)

// liveRecording runs a recording LFC cluster of nodes nodes in which
// every node multicasts rounds packets to all others, and returns the run
// as a trace file's contents (at P=16, 46 rounds make about 36,000
// steps).
func liveRecording(tb testing.TB, nodes, rounds int) []byte {
	tb.Helper()
	c, err := lfc.Start(lfc.Options{Nodes: nodes, Record: lfc.RecordOn, Handler: func(int, lfc.Packet) {}})
	if err != nil {
		tb.Fatal(err)
	}
	for r := 0; r < rounds; r++ {
		for i := 0; i < nodes; i++ {
			if err := c.Node(i).Multicast("", []byte("x")); err != nil {
				tb.Fatal(err)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := c.Drain(ctx); err != nil {
		tb.Fatal(err)
	}
	if _, err := c.Close(); err != nil {
		tb.Fatal(err)
	}
	rec, err := c.Recording()
	if err != nil {
		tb.Fatal(err)
	}
	data, err := rec.TraceFile()
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// longRun takes up to steps steps of cfg, each an enabled action chosen
// by a fixed-seed generator, and returns the checker, the actions and
// their outcome (with the changes of the last DefaultWindowSteps steps).
func longRun(tb testing.TB, cfg model.Config, steps int) (*properties.Checker, []model.Action, traces.Outcome) {
	tb.Helper()
	ck, err := properties.Build(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	w := ck.Sys.Initial()
	var out model.Outbox
	var acts []model.Action
	var en []model.Action
	for len(acts) < steps {
		en = w.Enabled(en[:0])
		if len(en) == 0 {
			break
		}
		a := en[r.IntN(len(en))]
		if err := w.Apply(a, &out); err != nil {
			tb.Fatal(err)
		}
		acts = append(acts, a)
	}
	// The outcome holds the changes of the default window's steps, as
	// show works them out for pictures.
	win, _ := traces.Options{}.Resolve(len(acts))
	o, err := traces.RunLassoWindow(ck, acts, 0, win)
	if err != nil {
		tb.Fatal(err)
	}
	return ck, acts, o
}

// showTrace is what `lfccheck show --svg F --html F TRACE` does with a
// trace file: parse, replay (the changes of the window's steps only),
// draw.
func showTrace(tb testing.TB, data []byte, opt traces.Options) (svg, page []byte, n int) {
	tb.Helper()
	f, err := traces.Parse(data)
	if err != nil {
		tb.Fatal(err)
	}
	ck, err := properties.Build(f.Config)
	if err != nil {
		tb.Fatal(err)
	}
	acts, err := traces.ParseActions(ck.Sys, f.Actions)
	if err != nil {
		tb.Fatal(err)
	}
	win, err := opt.Resolve(len(acts))
	if err != nil {
		tb.Fatal(err)
	}
	o, err := traces.RunLassoWindow(ck, acts, f.Loop(), win)
	if err != nil {
		tb.Fatal(err)
	}
	if svg, err = traces.SVGWith(ck.Sys, acts, o, opt); err != nil {
		tb.Fatal(err)
	}
	if page, err = traces.HTMLWith(ck.Sys, acts, o, opt); err != nil {
		tb.Fatal(err)
	}
	return svg, page, len(acts)
}

// TestLongTracePage draws a run of 10,000 steps at P=8: the page and the
// chart cover the last DefaultWindowSteps steps, stay within a few MB,
// and say what they leave out and how to draw it; an explicit window
// covers its steps only.
func TestLongTracePage(t *testing.T) {
	ck, acts, o := longRun(t, mcast.Config("binary", 8, 2, 64), 10_000)
	if len(acts) < 10_000 {
		t.Fatalf("the run ended after %d steps", len(acts))
	}
	page, err := traces.HTML(ck.Sys, acts, o)
	if err != nil {
		t.Fatal(err)
	}
	svg, err := traces.SVG(ck.Sys, acts, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) > 4<<20 || len(svg) > 4<<20 {
		t.Fatalf("a 10,000-step page is %d bytes and its chart %d", len(page), len(svg))
	}
	note := fmt.Sprintf("steps %d-%d of %d shown; steps 1-%d left out", len(acts)-traces.DefaultWindowSteps+1, len(acts), len(acts), len(acts)-traces.DefaultWindowSteps)
	for name, data := range map[string][]byte{"page": page, "chart": svg} {
		if !bytes.Contains(data, []byte(note)) || !bytes.Contains(data, []byte("lfccheck show --steps FROM:TO")) {
			t.Errorf("the %s does not say what it leaves out (%q) and how to draw it", name, note)
		}
		if bytes.Contains(data, []byte(fmt.Sprintf(`id="row-%d"`, len(acts)-traces.DefaultWindowSteps-1))) {
			t.Errorf("the %s draws a step before its window", name)
		}
		if err := wellFormed(data, name == "page"); err != nil {
			t.Errorf("the %s: %v", name, err)
		}
	}
	win := traces.Window{From: 101, To: 300}
	part, err := traces.SVGWith(ck.Sys, acts, o, traces.Options{Steps: &win, RangeCommand: "CMD FROM:TO"})
	if err != nil {
		t.Fatal(err)
	}
	for k := 100; k <= 301; k++ {
		if has := bytes.Contains(part, []byte(fmt.Sprintf(`id="row-%d"`, k))); has != (k <= 300) {
			t.Fatalf("the chart of steps 101-300 has row %d: %v", k, has)
		}
	}
	if !bytes.Contains(part, []byte("CMD FROM:TO")) {
		t.Fatal("the chart does not give the range command")
	}
	// A range that starts after the trace ends is an error; one that
	// ends after it is cut to the trace.
	if _, err := (traces.Options{Steps: &traces.Window{From: len(acts) + 1, To: len(acts) + 5}}).Resolve(len(acts)); err == nil {
		t.Fatal("a range after the trace's end is accepted")
	}
	if w, err := (traces.Options{Steps: &traces.Window{From: 5, To: 1 << 30}}).Resolve(len(acts)); err != nil || w.To != len(acts) {
		t.Fatalf("an open range resolves to %v, %v", w, err)
	}
}

// TestParseSteps checks the --steps syntax.
func TestParseSteps(t *testing.T) {
	for in, want := range map[string]traces.Window{"3:7": {From: 3, To: 7}, "5:": {From: 5, To: 1<<31 - 1}, ":9": {From: 1, To: 9}, "0:0": {From: 0, To: 0}} {
		if got, err := traces.ParseSteps(in); err != nil || got != want {
			t.Errorf("ParseSteps(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "7", "3-7", "a:b", "-1:3", "9:3", "1:2:3", " 1:2"} {
		if _, err := traces.ParseSteps(in); err == nil {
			t.Errorf("ParseSteps(%q) accepted", in)
		}
	}
}

// BenchmarkPicturesLiveRecording draws a live recording of about 36,000
// steps at P=16 (every node multicasts 46 packets on binary trees) as
// `lfccheck show --svg --html` does, with the default window; it reports
// the sizes of the page and the chart. Building the recording (about 20
// s) is not timed.
func BenchmarkPicturesLiveRecording(b *testing.B) {
	data := liveRecording(b, 16, 46)
	b.ResetTimer()
	benchPictures(b, data)
}

// BenchmarkPicturesChainP64 draws the 256-step chain deadlock at P=64
// that `lfccheck check --protocol mcast --tree chain --nodes 64
// --credits 1 --packets 1 --search dfs` finds (testdata/chain-p64-dfs.json).
func BenchmarkPicturesChainP64(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "chain-p64-dfs.json"))
	if err != nil {
		b.Fatal(err)
	}
	benchPictures(b, data)
}

func benchPictures(b *testing.B, data []byte) {
	var svg, page []byte
	var n int
	for i := 0; i < b.N; i++ {
		svg, page, n = showTrace(b, data, traces.Options{})
	}
	b.ReportMetric(float64(n), "steps")
	b.ReportMetric(float64(len(page))/1e6, "page-MB")
	b.ReportMetric(float64(len(svg))/1e6, "svg-MB")
}
