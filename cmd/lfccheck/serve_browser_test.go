package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"lfccheck/internal/chromium"
	"lfccheck/internal/racebuild"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols/ucast"
	"lfccheck/traces"
)

// The explorer is tested in headless Chromium, driven over the DevTools
// protocol by lfccheck/internal/chromium.

// devtools is a DevTools session with a browser's page; its methods fail
// the test on an error.
type devtools struct {
	*chromium.Tester
	t *testing.T
}

// waitFor polls a JavaScript condition until it is true, for 30 s at
// most.
func (d devtools) waitFor(what, cond string) {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(d.t.Context(), 30*time.Second)
	defer cancel()
	if err := d.Page.WaitFor(ctx, cond); err != nil {
		d.t.Fatalf("waiting for %s: %v; error shown: %q", what, err, d.Eval(`document.getElementById("error").textContent`))
	}
}

// startChromium starts headless Chromium and returns a DevTools session
// with its page; the test fails (LFCCHECK_REQUIRE_BROWSER set) or skips
// when there is none.
func startChromium(t *testing.T, width, height int) devtools {
	t.Helper()
	return devtools{chromium.StartTest(t, chromium.Options{Width: width, Height: height}), t}
}

// TestServeInBrowser: 'lfccheck serve' on the chain deadlock's
// configuration, driven by mouse clicks in headless Chromium: the chain
// deadlock (Fig. 4.8) is reached by clicking enabled actions one by one,
// the page shows the violation, its wait-for cycle and the properties;
// back, forward, the arrow keys and the path bar move along the path;
// the exported trace is downloaded and 'lfccheck replay' reproduces it;
// loading it back and a check run from the page give the same path.
// With LFCCHECK_SCREENSHOT=FILE (relative to the repository's root), the
// page at the deadlock is saved there as PNG: docs/explorer.png is made
// so.
func TestServeInBrowser(t *testing.T) {
	d := startChromium(t, 1400, 1000)
	// The path: the counterexample of check, by name.
	dir := t.TempDir()
	cex := filepath.Join(dir, "chain.json")
	if code, _, errs := runCLI("check", "--protocol", "mcast", "--nodes", "4", "--credits", "1", "--tree", "chain", "--packets", "1", "-q", "--trace-out", cex); code != 1 {
		t.Fatalf("check: exit %d %s", code, errs)
	}
	data, _ := os.ReadFile(cex)
	var f struct{ Actions []string }
	json.Unmarshal(data, &f)
	if len(f.Actions) != 16 {
		t.Fatalf("the chain deadlock has %d steps", len(f.Actions))
	}
	url, stop := startServe(t, "--protocol", "mcast", "--nodes", "4", "--credits", "1", "--tree", "chain", "--packets", "1", "--addr", "127.0.0.1:0")
	downloads := filepath.Join(dir, "downloads")
	os.Mkdir(downloads, 0o755)
	d.Call("Page.enable", map[string]any{})
	d.Call("Browser.setDownloadBehavior", map[string]any{"behavior": "allow", "downloadPath": downloads})
	d.Call("Page.navigate", map[string]any{"url": url})
	atStep := func(n int) {
		t.Helper()
		d.waitFor(fmt.Sprintf("step %d", n), fmt.Sprintf(`document.body.dataset.step === "%d" && document.body.dataset.busy === ""`, n))
	}
	atStep(0)
	if got := d.Eval(`document.querySelectorAll("#actions button.action").length`); got != "4" {
		t.Fatalf("initial state: %s enabled actions shown", got)
	}
	if got := d.Eval(`document.getElementById("describe").textContent`); !strings.Contains(got, "tree=chain") {
		t.Fatalf("configuration shown: %q", got)
	}
	for i, a := range f.Actions {
		// Each action shows what it changes before it is taken.
		if got := d.Eval(fmt.Sprintf(`(() => { const b = [...document.querySelectorAll("#actions button.action")].find(b => b.dataset.action === %q); return b ? b.parentElement.querySelectorAll(".changes li").length : -1; })()`, a)); got == "-1" || got == "0" {
			t.Fatalf("step %d: %q is not shown with its changes (%s)", i+1, a, got)
		}
		if i == len(f.Actions)-1 {
			if got := d.Eval(fmt.Sprintf(`[...document.querySelectorAll("#actions button.action")].find(b => b.dataset.action === %q).parentElement.querySelector(".badge").textContent`, a)); !strings.Contains(got, "deadlock") {
				t.Errorf("the last step's preview: %q", got)
			}
		}
		d.Click(fmt.Sprintf(`#actions button.action[data-action=%q]`, a))
		atStep(i + 1)
	}
	if got := d.Eval(`document.getElementById("status").textContent`); got != "step 16: deadlock violated" {
		t.Fatalf("status at the end: %q", got)
	}
	if got := d.Eval(`document.getElementById("violation-text").textContent`); !strings.HasPrefix(got, "violated: deadlock in the final state after step 16 (no action enabled): no action enabled, but 4 blocked sends") {
		t.Fatalf("violation at the end: %q", got)
	}
	if got := d.Eval(`document.getElementById("violation").hidden ? "" : document.getElementById("explanation").textContent`); !strings.Contains(got, "wait-for cycle") {
		t.Fatalf("explanation: %q", got)
	}
	if got := d.Eval(`document.querySelector('#properties tr[data-property="deadlock"] td:nth-child(3)').textContent`); got != "violated" {
		t.Fatalf("deadlock property: %q", got)
	}
	if got := d.Eval(`document.querySelectorAll("#actions button.action").length`); got != "0" {
		t.Fatalf("%s actions offered after the deadlock", got)
	}
	if got := d.Eval(`document.querySelectorAll("#state .changed").length`); got == "0" {
		t.Error("no state line is highlighted after the last step")
	}
	// The chart of the path.
	d.Click("#chart-toggle")
	d.waitFor("the chart", `document.getElementById("chart").dataset.step === "16" && document.getElementById("chart-img").complete && document.getElementById("chart-img").naturalWidth > 0`)
	d.Click("#chart-toggle")
	// Back, forward, the keys and the path bar.
	d.Click("#back")
	atStep(15)
	if d.Eval(`document.getElementById("violation").hidden`) != "true" {
		t.Fatal("the violation still shows at step 15")
	}
	d.Click("#forward")
	atStep(16)
	d.Key("ArrowLeft", 37)
	atStep(15)
	d.Key("ArrowRight", 39)
	atStep(16)
	d.Click("#chip-3")
	atStep(3)
	if got := d.Eval(`document.querySelectorAll("#pathbar .chip.ahead").length`); got != "13" {
		t.Fatalf("path bar at step 3: %s steps ahead", got)
	}
	d.Click("#chip-16")
	atStep(16)
	// Export: the download is a trace that replay reproduces.
	d.Click("#export")
	file := filepath.Join(downloads, "lfccheck-path.json")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if st, err := os.Stat(file); err == nil && st.Size() > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no download in %s", downloads)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // let the download finish writing
	if code, out, errs := runCLI("replay", file); code != 0 || !strings.Contains(out, "reproduced: deadlock violated at step 16, as recorded") {
		t.Fatalf("replay of the downloaded path: exit %d\n%s%s", code, out, errs)
	}
	// Back to the start, then load the saved trace with the file input.
	d.Click("#chip-0")
	atStep(0)
	doc := d.Call("DOM.getDocument", map[string]any{})
	var root struct {
		Root struct {
			NodeID int `json:"nodeId"`
		} `json:"root"`
	}
	json.Unmarshal(doc, &root)
	var input struct {
		NodeID int `json:"nodeId"`
	}
	json.Unmarshal(d.Call("DOM.querySelector", map[string]any{"nodeId": root.Root.NodeID, "selector": "#load-file"}), &input)
	d.Call("DOM.setFileInputFiles", map[string]any{"nodeId": input.NodeID, "files": []string{cex}})
	atStep(16)
	if got := d.Eval(`document.getElementById("status").textContent`); !strings.Contains(got, "deadlock violated") {
		t.Fatalf("after loading the trace: %q", got)
	}
	// A check from the page, and its counterexample loaded into the path.
	d.Click("#chip-2")
	atStep(2)
	d.Click("#check-start")
	d.waitFor("the check's result", `document.getElementById("check").dataset.state === "done"`)
	if got := d.Eval(`document.getElementById("check-status").textContent`); !strings.Contains(got, "verdict: fail: deadlock violated") {
		t.Fatalf("check status: %q", got)
	}
	if got := d.Eval(`document.getElementById("check-text").textContent`); !strings.Contains(got, "verdict: FAIL: deadlock violated") {
		t.Fatalf("check report: %q", got)
	}
	d.Click("#check-load")
	atStep(16)
	if got := d.Eval(`document.getElementById("status").textContent`); !strings.Contains(got, "deadlock violated") {
		t.Fatalf("after loading the check's counterexample: %q", got)
	}
	// The picture in the docs: one step before the deadlock, the step
	// that leads to it previewed, the check's result beside.
	d.Click("#back")
	atStep(15)
	d.Eval(`window.scrollTo(0, 0)`)
	shot := d.Screenshot()
	if p := os.Getenv("LFCCHECK_SCREENSHOT"); p != "" {
		if !filepath.IsAbs(p) {
			p = filepath.Join("..", "..", p)
		}
		if err := os.WriteFile(p, shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, out, _ := stop(); code != 0 || !strings.HasSuffix(out, "stopped\n") {
		t.Fatalf("serve: exit %d %q", code, out)
	}
}

// TestServeLongTraceInBrowser: a trace of about 10,000 steps opens at its
// end, the path bar shows a bounded window of it, and steps back and
// forth are quick.
func TestServeLongTraceInBrowser(t *testing.T) {
	if racebuild.Enabled {
		// Replaying 10,000 steps with every property checked takes over
		// a minute under the race detector; the run without it opens
		// the page in well under a second.
		t.Skip("race detector: the 10,000-step page is opened by the run without -race")
	}
	d := startChromium(t, 1400, 1000)
	ck, err := properties.Build(ucast.Config(7, 1, 64))
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
		// Round robin over the enabled actions, for a mixed path.
		a := en[len(acts)%len(en)]
		acts = append(acts, a)
		w.Apply(a, &out)
	}
	o, err := traces.RunLasso(ck, acts, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := len(acts)
	if n < 10000 {
		t.Fatalf("only %d steps", n)
	}
	file := filepath.Join(t.TempDir(), "long.json")
	if err := os.WriteFile(file, traces.Marshal(traces.NewFile(ck.Sys, acts, o)), 0o644); err != nil {
		t.Fatal(err)
	}
	url, _ := startServe(t, "--trace", file, "--addr", "127.0.0.1:0")
	start := time.Now()
	d.Call("Page.navigate", map[string]any{"url": url})
	atStep := func(k int) {
		t.Helper()
		d.waitFor(fmt.Sprintf("step %d", k), fmt.Sprintf(`document.body.dataset.step === "%d" && document.body.dataset.busy === ""`, k))
	}
	atStep(n)
	if dt := time.Since(start); dt > 20*time.Second {
		t.Errorf("opening a %d-step trace took %v", n, dt)
	}
	if got, _ := strconv.Atoi(d.Eval(`document.querySelectorAll("#pathbar .chip").length`)); got < 100 || got > 305 {
		t.Errorf("%d chips in the path bar for %d steps", got, n)
	}
	t.Logf("%d steps opened in %v", n, time.Since(start))
	if got := d.Eval(`document.getElementById("status").textContent`); !strings.Contains(got, "end state") {
		t.Errorf("status at the end: %q", got)
	}
	start = time.Now()
	for k := 1; k <= 5; k++ {
		d.Key("ArrowLeft", 37)
		atStep(n - k)
	}
	d.Click("#forward")
	atStep(n - 4)
	if dt := time.Since(start); dt > 15*time.Second {
		t.Errorf("six steps on a %d-step path took %v", n, dt)
	}
	if got := d.Eval(`document.querySelectorAll("#pathbar .chip.ahead").length`); got != "4" {
		t.Errorf("%s steps ahead shown, want 4", got)
	}
}
