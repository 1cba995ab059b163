package traces_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lfccheck/explore"
	"lfccheck/internal/racebuild"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/ucast"
	"lfccheck/traces"
)

var rewritePictures = flag.Bool("rewrite-pictures", false, "rewrite docs/chain-deadlock.svg and docs/chart-p8.png")

// counterexample searches cfg and returns the checker, the actions of the
// counterexample and its replayed outcome.
func counterexample(t *testing.T, cfg model.Config) (*properties.Checker, []model.Action, traces.Outcome) {
	t.Helper()
	ck, err := properties.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := explore.BFS(ck, explore.Options{MaxStates: 2_000_000})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != explore.Fail || len(r.Trace) == 0 && r.Loop == 0 && r.Violation == nil {
		t.Fatalf("%s: want a counterexample, got %s", cfg.Describe(), r.Verdict)
	}
	o, acts, err := traces.RunCodes(ck, r.Trace, r.Loop)
	if err != nil {
		t.Fatal(err)
	}
	return ck, acts, o
}

// wellFormed checks that data is well-formed markup: XML for SVG; for HTML
// the lenient HTML mode of encoding/xml (void elements, entities), with
// every element closed in order.
func wellFormed(data []byte, isHTML bool) error {
	d := xml.NewDecoder(bytes.NewReader(data))
	if isHTML {
		d.Strict = false
		d.AutoClose = xml.HTMLAutoClose
		d.Entity = xml.HTMLEntity
	}
	var stack []string
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		switch e := tok.(type) {
		case xml.StartElement:
			stack = append(stack, e.Name.Local)
		case xml.EndElement:
			if len(stack) == 0 || stack[len(stack)-1] != e.Name.Local {
				line, _ := d.InputPos()
				return fmt.Errorf("line %d: </%s> does not close %v", line, e.Name.Local, stack)
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		return fmt.Errorf("unclosed elements %v", stack)
	}
	return nil
}

// TestPicturesOfEveryCounterexample draws the counterexample of every
// failing claim and broken variant of the built-in suite, as a chart and as
// a viewer, and checks both are well-formed, deterministic, and show every
// step and the violation. Under the race detector, counterexamples
// whose search stores over 10,000 states are left out.
func TestPicturesOfEveryCounterexample(t *testing.T) {
	n, limit := 0, int64(2_000_000)
	if racebuild.Enabled {
		// Nothing here runs concurrently (one search goroutine, drawing
		// in the test's): the race detector only slows it down.
		limit = 10_000
	}
	for _, d := range protocols.All() {
		for _, cl := range d.AllClaims() {
			if cl.Expect == "pass" {
				continue
			}
			cfg := cl.Config.Clone()
			cfg.Protocol = d.Name
			ck, err := properties.Build(cfg)
			if err != nil {
				t.Fatal(err)
			}
			r, err := explore.BFS(ck, explore.Options{MaxStates: limit})
			if err != nil {
				t.Fatal(err)
			}
			if racebuild.Enabled && r.Verdict == explore.Incomplete {
				t.Logf("race detector: %s %s left out (over %d states); the test without -race draws it", d.Name, cl.Name, limit)
				continue
			}
			if r.Verdict != explore.Fail || r.Violation == nil {
				continue // a failed reachability goal has no counterexample
			}
			o, acts, err := traces.RunCodes(ck, r.Trace, r.Loop)
			if err != nil {
				t.Fatal(err)
			}
			name := d.Name + " " + cl.Name
			svg, err := traces.SVG(ck.Sys, acts, o)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if err := wellFormed(svg, false); err != nil {
				t.Fatalf("%s: SVG: %v", name, err)
			}
			again, _ := traces.SVG(ck.Sys, acts, o)
			if !bytes.Equal(svg, again) {
				t.Fatalf("%s: the SVG differs between two runs", name)
			}
			page, err := traces.HTML(ck.Sys, acts, o)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if err := wellFormed(page, true); err != nil {
				t.Fatalf("%s: HTML: %v", name, err)
			}
			for i := range acts {
				if !bytes.Contains(svg, []byte(fmt.Sprintf(`id="row-%d"`, i+1))) {
					t.Fatalf("%s: the chart lacks step %d", name, i+1)
				}
			}
			if !bytes.Contains(svg, []byte("violated: "+o.Violation.Property)) {
				t.Fatalf("%s: the chart does not name the violation", name)
			}
			if o.Loop > 0 && !bytes.Contains(svg, []byte("loop for ever")) {
				t.Fatalf("%s: the lasso's loop is not bracketed", name)
			}
			n++
		}
	}
	if n < 10 {
		t.Fatalf("drew only %d counterexamples", n)
	}
}

// TestChainDeadlockChart pins the chart of Fig. 4.8's chain deadlock (the
// README shows it): regenerate with go test ./traces -rewrite-pictures.
func TestChainDeadlockChart(t *testing.T) {
	ck, acts, o := counterexample(t, mcast.Config("chain", 4, 1, 1))
	svg, err := traces.SVG(ck.Sys, acts, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"wait-for cycle", `stroke="#c00"`, "blocked to 2: [m0#1]", "pool for 0 full", "host buffers full", `fill="#fde2e2"`} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("the chart lacks %q", want)
		}
	}
	golden := filepath.Join("..", "docs", "chain-deadlock.svg")
	if *rewritePictures {
		if err := os.WriteFile(golden, svg, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(svg, want) {
		t.Fatalf("the chart differs from %s (regenerate with -rewrite-pictures)", golden)
	}
}

// TestViolationSteps checks the steps the viewer and the chart mark as
// those a violation is about: GSB's deliveries out of total order (host
// 0's delivery before the violating one), INTR's lost interrupt (the
// timeout that stopped NI 1's watchdog).
func TestViolationSteps(t *testing.T) {
	for _, tc := range []struct {
		protocol, variant, property string
		want                        []string
	}{
		{"gsb", "no-holdback", "total-order", []string{`"why":"the last change of host 0 before the violation"`, `"why":"the violating step"`}},
		{"intr", "cancel-when-disabled", "no-lost-interrupt", []string{`"why":"the last change of ni 1 before the violation"`}},
	} {
		var cfg *model.Config
		for _, d := range protocols.All() {
			for _, cl := range d.AllClaims() {
				if d.Name == tc.protocol && cl.Config.Variant == tc.variant && cl.Expect == "fail "+tc.property {
					c := cl.Config.Clone()
					c.Protocol = d.Name
					cfg = &c
				}
			}
		}
		if cfg == nil {
			t.Fatalf("no claim of %s %s catching %s", tc.protocol, tc.variant, tc.property)
		}
		ck, acts, o := counterexample(t, *cfg)
		if o.Violation.Property != tc.property {
			t.Fatalf("%s %s: the counterexample violates %s", tc.protocol, tc.variant, o.Violation.Property)
		}
		page, err := traces.HTML(ck.Sys, acts, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !bytes.Contains(page, []byte(w)) {
				t.Errorf("%s %s: the page does not mark %s", tc.protocol, tc.variant, w)
			}
		}
		svg, err := traces.SVG(ck.Sys, acts, o)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(svg, []byte(`fill="#ffe8c8"`)) {
			t.Errorf("%s %s: the chart marks no step in orange", tc.protocol, tc.variant)
		}
	}
}

// A fault step acts on the head of its link in the pictures too: after a
// lost packet the next delivery on the link is the next packet sent, and
// a duplicated packet arrives twice.
func TestPicturesAfterFaults(t *testing.T) {
	cfg := ucast.Config(2, 2, 2)
	f, err := model.ParseFaults("loss:1,dup:1")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Faults = f
	cfg.Properties = []string{"pool-bound"} // a loss breaks credit conservation at once
	ck, err := properties.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var acts []model.Action
	for _, name := range []string{"host 0 launch", "host 0 launch", "lose 0->1", "duplicate 0->1", "deliver 0->1", "deliver 0->1"} {
		a, err := ck.Sys.ParseAction(name)
		if err != nil {
			t.Fatal(err)
		}
		acts = append(acts, a)
	}
	o, err := traces.RunLasso(ck, acts, 0)
	if err != nil {
		t.Fatal(err)
	}
	page, err := traces.HTML(ck.Sys, acts, o)
	if err != nil {
		t.Fatal(err)
	}
	// The second packet, sent at step 2, arrives at steps 5 and 6; the
	// first, lost at step 3, never does.
	for _, want := range []string{`"sent":2,"recv":5`, `"sent":2,"recv":6`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page has no arrow %s", want)
		}
	}
	if strings.Contains(string(page), `"sent":1,"recv":`) && !strings.Contains(string(page), `"sent":1,"recv":0`) {
		t.Errorf("the lost packet arrives in the page")
	}
}
