package traces_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lfccheck/internal/chromium"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols/mcast"
	"lfccheck/traces"
)

// The viewer is tested in a real browser: headless Chromium driven over the
// Chrome DevTools Protocol by lfccheck/internal/chromium.

// cdp is a DevTools session with a browser's page; its methods fail the
// test on an error.
type cdp struct {
	*chromium.Tester
	t *testing.T
}

// click clicks the middle of the element with the given id, as the mouse
// does (without scrolling it into view).
func (c cdp) click(id string) {
	c.t.Helper()
	var box struct{ X, Y float64 }
	json.Unmarshal([]byte(c.Eval(fmt.Sprintf(`(() => { const r = document.getElementById(%q).getBoundingClientRect(); return {X: r.x + r.width/2, Y: r.y + r.height/2}; })()`, id))), &box)
	c.MouseClick(box.X, box.Y)
}

// browser starts headless Chromium with a window of width x height and
// returns a DevTools session with its page. It skips the test where no
// Chromium is installed, unless LFCCHECK_REQUIRE_BROWSER is set: then it
// fails.
func browser(t *testing.T, width, height int) cdp {
	t.Helper()
	c := cdp{chromium.StartTest(t, chromium.Options{Width: width, Height: height, HideScrollbars: true}), t}
	c.Call("Page.enable", nil)
	return c
}

// open writes page to a file and loads it from file://, waiting at most
// limit until the viewer shows its first step; it returns how long that
// took.
func (c cdp) open(page []byte, limit time.Duration) time.Duration {
	c.t.Helper()
	file := filepath.Join(c.t.TempDir(), "viewer.html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		c.t.Fatal(err)
	}
	start := time.Now()
	ctx, cancel := context.WithDeadline(c.t.Context(), start.Add(limit))
	defer cancel()
	if err := c.Page.Navigate(ctx, "file://"+file); err != nil {
		c.t.Fatal(err)
	}
	if err := c.Page.WaitFor(ctx, `document.readyState === "complete" && document.getElementById("stepno").textContent !== ""`); err != nil {
		c.t.Fatalf("the viewer did not load within %v: %v", limit, err)
	}
	return time.Since(start)
}

// TestViewerInBrowser opens the viewer of the chain deadlock (Fig. 4.8) in
// headless Chromium from file://, steps with the arrow keys and the buttons,
// and checks the step shown, the highlighted row and change, the violation
// at the end, and a screenshot that is not blank; then clicks on rows,
// hides and merges lifelines, follows a packet and searches.
func TestViewerInBrowser(t *testing.T) {
	c := browser(t, 1400, 900)
	ck, acts, o := counterexample(t, mcast.Config("chain", 4, 1, 1))
	page, err := traces.HTML(ck.Sys, acts, o)
	if err != nil {
		t.Fatal(err)
	}
	c.open(page, 30*time.Second)
	n := len(acts)
	stepno := func() string { return c.Eval(`document.getElementById("stepno").textContent`) }
	current := func() string { return c.Eval(`document.querySelector("svg .row.current").id`) }
	if got := stepno(); got != fmt.Sprintf("step 0 of %d", n) {
		t.Fatalf("initially %q", got)
	}
	for i := 0; i < 3; i++ {
		c.Key("ArrowRight", 39)
	}
	if got := stepno(); got != fmt.Sprintf("step 3 of %d", n) || current() != "row-3" {
		t.Fatalf("after three right arrows: %q, highlighted %s", got, current())
	}
	// Step 3 delivers m0#1 to NI 1: the change is listed and the state line
	// that changed is highlighted.
	if got := c.Eval(`document.querySelector("#changes li").textContent`); got != o.Steps[2].Changes[0] {
		t.Fatalf("first change of step 3: %q, want %q", got, o.Steps[2].Changes[0])
	}
	if got := c.Eval(`document.querySelectorAll("#state .changed").length`); got == "0" {
		t.Fatal("no state line is highlighted after step 3")
	}
	c.click("next")
	if got := stepno(); got != fmt.Sprintf("step 4 of %d", n) {
		t.Fatalf("after the next button: %q", got)
	}
	c.click("prev")
	c.Key("ArrowLeft", 37)
	if got := stepno(); got != fmt.Sprintf("step 2 of %d", n) || current() != "row-2" {
		t.Fatalf("after the previous button and a left arrow: %q, highlighted %s", got, current())
	}
	if got := c.Eval(`document.getElementById("violation").hidden`); got != "true" {
		t.Fatalf("the violation shows before the last step: %s", got)
	}
	c.Key("End", 35)
	if got := stepno(); got != fmt.Sprintf("step %d of %d", n, n) {
		t.Fatalf("after End: %q", got)
	}
	v := c.Eval(`document.getElementById("violation").hidden ? "" : document.getElementById("violation").textContent`)
	if !strings.Contains(v, "violated: deadlock") || !strings.Contains(v, "wait-for cycle") {
		t.Fatalf("the last step shows %q", v)
	}
	c.click("first")
	if got := stepno(); got != fmt.Sprintf("step 0 of %d", n) {
		t.Fatalf("after the first button: %q", got)
	}
	c.Screenshot()
	viewerClicks(t, c, ck.Sys, acts, o)
}

// typeInto focuses the input with the given id and types text into it.
func (c cdp) typeInto(id, text string) {
	c.t.Helper()
	c.Eval(fmt.Sprintf(`document.getElementById(%q).focus()`, id))
	c.InsertText(text)
}

// stateAfter is the state after the first k actions of acts, as the
// viewer shows it (its lines).
func stateAfter(t *testing.T, sys *model.System, acts []model.Action, k int) string {
	t.Helper()
	w := sys.Initial()
	var out model.Outbox
	for _, a := range acts[:k] {
		if err := w.Apply(a, &out); err != nil {
			t.Fatal(err)
		}
	}
	return strings.TrimRight(w.Format(), "\n")
}

const (
	jsStepno  = `document.getElementById("stepno").textContent`
	jsState   = `Array.from(document.querySelectorAll("#state div")).map(d => d.textContent).join("\n")`
	jsVisible = `Array.from(document.querySelectorAll("svg .lname")).filter(e => e.style.display !== "none").map(e => e.textContent).join(",")`
)

// viewerClicks drives the chain deadlock's viewer with the mouse and the
// search box: a click on a step's row, lifelines hidden, merged and shown
// again, a packet followed from its send to its delivery, a search, and
// the steps the violation is about.
func viewerClicks(t *testing.T, c cdp, sys *model.System, acts []model.Action, o traces.Outcome) {
	n := len(acts)
	// A click on a row (on its step label) shows that step.
	c.ClickAt("#row-5", 20)
	if got := c.Eval(jsStepno); got != fmt.Sprintf("step 5 of %d", n) {
		t.Fatalf("after a click on row 5: %q", got)
	}
	if got, want := c.Eval(jsState), stateAfter(t, sys, acts, 5); got != want {
		t.Fatalf("the state after step 5 shows\n%s\nwant\n%s", got, want)
	}
	// Lifelines: hide the hosts, merge each node's pair, hide one by its
	// name, show them all again.
	all := "host 0,ni 0,host 1,ni 1,host 2,ni 2,host 3,ni 3"
	if got := c.Eval(jsVisible); got != all {
		t.Fatalf("lifelines shown at first: %s", got)
	}
	c.ClickAt("#show-hosts", -1)
	if got := c.Eval(jsVisible); got != "ni 0,ni 1,ni 2,ni 3" {
		t.Fatalf("lifelines shown without the hosts: %s", got)
	}
	if got := c.Eval(`document.querySelector('svg line.launch').style.display`); got != "none" {
		t.Fatalf("a launch arrow from a hidden host shows (display %q)", got)
	}
	c.ClickAt("#show-hosts", -1)
	c.ClickAt("#merge", -1)
	if got := c.Eval(`(() => { const e = (l) => document.querySelector('svg .lname[data-l="' + l + '"]').getAttribute("x"); return e(0) === e(1) && e(2) === e(3) && e(1) !== e(2); })()`); got != "true" {
		t.Fatal("merged lifelines: a node's host and NI do not share an x, or two nodes do")
	}
	if got := c.Eval(jsVisible); got != "node 0,node 1,node 2,node 3" {
		t.Fatalf("merged lifelines are named %s", got)
	}
	c.ClickAt(`svg .lname[data-l="3"]`, -1)
	if got := c.Eval(jsVisible); got != "node 0,node 2,node 3" {
		t.Fatalf("a click on node 1's name leaves %s", got)
	}
	c.ClickAt("#merge", -1)
	c.ClickAt(`svg .lname[data-l="4"]`, -1)
	if got := c.Eval(jsVisible); got != "host 0,ni 0,ni 2,host 3,ni 3" {
		t.Fatalf("after a click on host 2's name: %s", got)
	}
	c.ClickAt("#show-all", -1)
	if got := c.Eval(jsVisible); got != all {
		t.Fatalf("after show all: %s", got)
	}
	// Follow m0#1, sent at step 1 by ni 0 and delivered at step 3 to ni 1.
	c.ClickAt(`svg text.pkt[data-p="0"]`, -1)
	if got := c.Eval(`document.getElementById("packet").textContent`); !strings.Contains(got, "packet m0#1 from ni 0 to ni 1: sent at step 1, delivered at step 3") {
		t.Fatalf("following m0#1: %q", got)
	}
	if got := c.Eval(`document.querySelector('svg line.pkt[data-p="0"]').classList.contains("followed")`); got != "true" {
		t.Fatal("the followed packet's arrow is not highlighted")
	}
	c.ClickAt("#go-delivery", -1)
	if got := c.Eval(jsStepno); got != fmt.Sprintf("step 3 of %d", n) {
		t.Fatalf("after going to m0#1's delivery: %q", got)
	}
	if got := c.Eval(`document.querySelector('svg line.pkt[data-p="0"]').classList.contains("active")`); got != "true" {
		t.Fatal("at step 3 the arrow of the packet it delivers is not marked")
	}
	// Search: NI 2's state line first reads "blocked [m1#1]" after step
	// 5 (deliver 1->2, in the order the stubborn-set search found); Enter
	// goes to the next step with a match.
	c.click("first")
	c.typeInto("search", "blocked [m1#1]")
	if got := c.Eval(`document.getElementById("results").children.length`); got == "0" {
		t.Fatal("the search for 'blocked [m1#1]' finds nothing")
	}
	c.Key("Enter", 13)
	if got := c.Eval(jsStepno); got != fmt.Sprintf("step 5 of %d", n) {
		t.Fatalf("Enter in the search box goes to %q, want step 5 (ni 2 blocks m1#1)", got)
	}
	if got := c.Eval(`document.querySelectorAll("#state .match").length`); got == "0" {
		t.Fatal("no state line matching the search is marked")
	}
	c.Eval(`document.getElementById("search").blur()`)
	// The steps the violation is about.
	if got := c.Eval(`document.getElementById("related").textContent`); !strings.Contains(got, fmt.Sprintf("step %d: the violating step", o.ViolationStep)) {
		t.Fatalf("the violation's steps: %q", got)
	}
}

// TestLongTraceInBrowser opens the viewer of a 10,000-step run at P=8 and,
// unless -short, of a 36,000-step run at P=16: the page stays within 5 MB
// and opens within 20 s (it covers the last DefaultWindowSteps steps and
// says so), then steps through it: each step shows the state the model
// reaches, and the chart follows the step.
func TestLongTraceInBrowser(t *testing.T) {
	for _, tc := range []struct {
		nodes, packets, steps int
	}{{8, 64, 10_000}, {16, 46, 36_000}} {
		t.Run(fmt.Sprintf("P=%d", tc.nodes), func(t *testing.T) {
			if testing.Short() && tc.nodes > 8 {
				t.Skip("-short: the P=8 run only")
			}
			longTraceInBrowser(t, mcast.Config("binary", tc.nodes, 2, tc.packets), tc.steps)
		})
	}
}

func longTraceInBrowser(t *testing.T, cfg model.Config, steps int) {
	c := browser(t, 1400, 900)
	ck, acts, o := longRun(t, cfg, steps)
	n := len(acts)
	if n < steps {
		t.Fatalf("the run ended after %d steps", n)
	}
	page, err := traces.HTML(ck.Sys, acts, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) > 5<<20 {
		t.Fatalf("the page of %d steps is %d bytes", n, len(page))
	}
	took := c.open(page, 20*time.Second)
	t.Logf("%d steps: a page of %d bytes, opened in %v", n, len(page), took)
	if got := c.Eval(`document.getElementById("leftout").hidden ? "" : document.getElementById("leftout").textContent`); !strings.Contains(got, "left out") || !strings.Contains(got, "lfccheck show --steps FROM:TO") {
		t.Fatalf("the page does not say what it leaves out: %q", got)
	}
	first := n - traces.DefaultWindowSteps + 1
	suffix := fmt.Sprintf(" of %d (this page: steps %d-%d)", n, first, n)
	inView := `(() => { const r = document.querySelector("svg .row.current").getBoundingClientRect(), v = document.getElementById("chart").getBoundingClientRect(); return r.top >= v.top && r.bottom <= v.bottom; })()`
	start := time.Now()
	c.Key("End", 35)
	for i := 0; i < 30; i++ {
		c.Key("ArrowLeft", 37)
	}
	if got := c.Eval(jsStepno); got != fmt.Sprintf("step %d", n-30)+suffix {
		t.Fatalf("after End and 30 left arrows: %q", got)
	}
	if got, want := c.Eval(jsState), stateAfter(t, ck.Sys, acts, n-30); got != want {
		t.Fatalf("the state after step %d shows\n%s\nwant\n%s", n-30, got, want)
	}
	if c.Eval(inView) != "true" {
		t.Fatal("the chart does not show the current step near the end")
	}
	c.Key("Home", 36)
	if got := c.Eval(jsStepno); got != fmt.Sprintf("step %d", first-1)+suffix {
		t.Fatalf("after Home: %q", got)
	}
	for i := 0; i < 300; i++ {
		c.Key("ArrowRight", 39)
	}
	if got := c.Eval(jsStepno); got != fmt.Sprintf("step %d", first+299)+suffix {
		t.Fatalf("after 300 right arrows: %q", got)
	}
	if got, want := c.Eval(jsState), stateAfter(t, ck.Sys, acts, first+299); got != want {
		t.Fatalf("the state after step %d shows\n%s\nwant\n%s", first+299, got, want)
	}
	if c.Eval(inView) != "true" {
		t.Fatal("the chart does not follow the current step")
	}
	if d := time.Since(start); d > 60*time.Second {
		t.Fatalf("331 steps took %v", d)
	} else {
		t.Logf("331 steps (with two states compared) in %v", d)
	}
	c.Screenshot()
}

// TestChartScreenshot draws the viewer of the chain deadlock at P=8 (every
// host launches first, then the NIs forward) in a 1600x1000 window, the
// chart fitted to its pane, at its last step, and checks the screenshot; with -rewrite-pictures it writes it
// to docs/chart-p8.png.
func TestChartScreenshot(t *testing.T) {
	c := browser(t, 1600, 1000)
	ck, err := properties.Build(mcast.Config("chain", 8, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	w := ck.Sys.Initial()
	var out model.Outbox
	var acts []model.Action
	for {
		en := w.Enabled(nil)
		if len(en) == 0 {
			break
		}
		a := en[0]
		for _, e := range en {
			if strings.HasSuffix(ck.Sys.ActionName(e), "launch") {
				a = e
				break
			}
		}
		if err := w.Apply(a, &out); err != nil {
			t.Fatal(err)
		}
		acts = append(acts, a)
	}
	o, err := traces.Run(ck, acts)
	if err != nil {
		t.Fatal(err)
	}
	if o.Violation == nil || o.Violation.Property != "deadlock" {
		t.Fatalf("the P=8 chain run ends without a deadlock: %+v", o.Violation)
	}
	page, err := traces.HTML(ck.Sys, acts, o)
	if err != nil {
		t.Fatal(err)
	}
	c.open(page, 30*time.Second)
	c.Eval(`(() => { const z = document.getElementById("zoom"); z.value = "fit"; z.dispatchEvent(new Event("change")); })()`)
	c.Key("End", 35)
	if got := c.Eval(`document.getElementById("chart").scrollWidth <= document.getElementById("chart").clientWidth`); got != "true" {
		t.Fatal("at zoom 'fit width' the chart is wider than its pane")
	}
	shot := c.Screenshot()
	if *rewritePictures {
		if err := os.WriteFile(filepath.Join("..", "docs", "chart-p8.png"), shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
