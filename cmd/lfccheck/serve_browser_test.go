package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols/ucast"
	"lfccheck/traces"
)

// The explorer is tested in headless Chromium, driven over the DevTools
// protocol through the small WebSocket client below (the standard library
// has none; the protocol needs text frames and a few commands).

// wsClient is a client WebSocket connection: masked text frames out, text
// frames in. Every read and write has a deadline.
type wsClient struct {
	conn net.Conn
	r    *bufio.Reader
}

func dialWS(raw string) (*wsClient, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	conn, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		return nil, err
	}
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	var key [16]byte
	rand.Read(key[:])
	req := "GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + base64.StdEncoding.EncodeToString(key[:]) + "\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		conn.Close()
		return nil, err
	}
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		conn.Close()
		return nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		conn.Close()
		return nil, fmt.Errorf("websocket upgrade refused: %s", resp.Status)
	}
	return &wsClient{conn: conn, r: r}, nil
}

func (c *wsClient) write(msg []byte) error {
	frame := []byte{0x81} // final frame, text
	n := len(msg)
	switch {
	case n < 126:
		frame = append(frame, 0x80|byte(n))
	case n <= 0xffff:
		frame = append(frame, 0x80|126)
		frame = binary.BigEndian.AppendUint16(frame, uint16(n))
	default:
		frame = append(frame, 0x80|127)
		frame = binary.BigEndian.AppendUint64(frame, uint64(n))
	}
	var mask [4]byte
	rand.Read(mask[:])
	frame = append(frame, mask[:]...)
	for i, b := range msg {
		frame = append(frame, b^mask[i&3])
	}
	c.conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
	_, err := c.conn.Write(frame)
	return err
}

func (c *wsClient) read() ([]byte, error) {
	c.conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	var msg []byte
	for {
		var hdr [2]byte
		if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
			return nil, err
		}
		size := uint64(hdr[1] & 0x7f)
		if size >= 126 {
			ext := make([]byte, map[bool]int{true: 2, false: 8}[size == 126])
			if _, err := io.ReadFull(c.r, ext); err != nil {
				return nil, err
			}
			if len(ext) == 2 {
				size = uint64(binary.BigEndian.Uint16(ext))
			} else {
				size = binary.BigEndian.Uint64(ext)
			}
		}
		if size > 64<<20 {
			return nil, fmt.Errorf("websocket frame of %d bytes", size)
		}
		data := make([]byte, size)
		if _, err := io.ReadFull(c.r, data); err != nil {
			return nil, err
		}
		switch hdr[0] & 0x0f {
		case 0x8:
			return nil, io.EOF
		case 0x9, 0xa:
			continue
		}
		msg = append(msg, data...)
		if hdr[0]&0x80 != 0 {
			return msg, nil
		}
	}
}

// devtools is a DevTools session with one page.
type devtools struct {
	t  *testing.T
	ws *wsClient
	id int
}

// call runs a DevTools command and returns its result (events are
// skipped).
func (d *devtools) call(method string, params any) json.RawMessage {
	d.t.Helper()
	d.id++
	req, _ := json.Marshal(map[string]any{"id": d.id, "method": method, "params": params})
	if err := d.ws.write(req); err != nil {
		d.t.Fatalf("%s: %v", method, err)
	}
	for {
		raw, err := d.ws.read()
		if err != nil {
			d.t.Fatalf("%s: %v", method, err)
		}
		var resp struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(raw, &resp) != nil || resp.ID != d.id {
			continue
		}
		if resp.Error != nil {
			d.t.Fatalf("%s: %s", method, resp.Error.Message)
		}
		return resp.Result
	}
}

// js evaluates an expression in the page (awaiting promises) and returns
// its value: strings as they are, anything else as JSON.
func (d *devtools) js(expr string) string {
	d.t.Helper()
	raw := d.call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true})
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	json.Unmarshal(raw, &r)
	if r.Exception != nil {
		d.t.Fatalf("%s: %s %s", expr, r.Exception.Text, r.Exception.Exception.Description)
	}
	if s, ok := r.Result.Value.(string); ok {
		return s
	}
	b, _ := json.Marshal(r.Result.Value)
	return string(b)
}

// waitFor polls a JavaScript condition until it is true.
func (d *devtools) waitFor(what, cond string) {
	d.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for d.js("(() => { try { return !!("+cond+"); } catch (e) { return false; } })()") != "true" {
		if time.Now().After(deadline) {
			d.t.Fatalf("waiting for %s: %s is still false; error shown: %q", what, cond, d.js(`document.getElementById("error").textContent`))
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// click clicks the middle of the element a CSS selector finds, with the
// mouse, after scrolling it into view.
func (d *devtools) click(selector string) {
	d.t.Helper()
	var at struct{ X, Y float64 }
	box := d.js(fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return null; e.scrollIntoView({block: "center"}); const r = e.getBoundingClientRect(); return {X: r.x + r.width/2, Y: r.y + r.height/2}; })()`, selector))
	if box == "null" {
		d.t.Fatalf("no element %s to click", selector)
	}
	json.Unmarshal([]byte(box), &at)
	for _, typ := range []string{"mousePressed", "mouseReleased"} {
		d.call("Input.dispatchMouseEvent", map[string]any{"type": typ, "x": at.X, "y": at.Y, "button": "left", "clickCount": 1})
	}
}

func (d *devtools) key(name string, code int) {
	for _, typ := range []string{"keyDown", "keyUp"} {
		d.call("Input.dispatchKeyEvent", map[string]any{"type": typ, "key": name, "code": name, "windowsVirtualKeyCode": code})
	}
}

// screenshot captures the page as PNG and checks that it is not blank.
func (d *devtools) screenshot() []byte {
	d.t.Helper()
	var shot struct {
		Data string `json:"data"`
	}
	json.Unmarshal(d.call("Page.captureScreenshot", map[string]any{"format": "png"}), &shot)
	raw, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		d.t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		d.t.Fatal(err)
	}
	b, dark, n := img.Bounds(), 0, 0
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			if r, g, bl, _ := img.At(x, y).RGBA(); r+g+bl < 3*0x8000 {
				dark++
			}
			n++
		}
	}
	if dark < n/200 {
		d.t.Fatalf("the screenshot is (nearly) blank: %d dark pixels of %d sampled", dark, n)
	}
	return raw
}

// chromium starts headless Chromium and returns a DevTools session with
// its page; the test fails (LFCCHECK_REQUIRE_BROWSER set) or skips when
// there is none.
func chromium(t *testing.T, width, height int) *devtools {
	t.Helper()
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		if os.Getenv("LFCCHECK_REQUIRE_BROWSER") != "" {
			t.Fatal("no Chromium, and LFCCHECK_REQUIRE_BROWSER is set: install the Debian package chromium")
		}
		t.Skip("no Chromium: install the Debian package chromium to run the browser test")
	}
	// The profile is outside t.TempDir: Chromium's helpers may write to
	// it for a moment after the browser is killed.
	profile, err := os.MkdirTemp("", "lfccheck-serve-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--remote-debugging-port=0", "--user-data-dir="+profile, fmt.Sprintf("--window-size=%d,%d", width, height), "about:blank")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		for i := 0; i < 50 && os.RemoveAll(profile) != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	})
	endpoint := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`DevTools listening on ws://([^/\s]+)/`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case endpoint <- m[1]:
				default:
				}
			}
		}
	}()
	var host string
	select {
	case host = <-endpoint:
	case <-time.After(60 * time.Second):
		t.Fatal("Chromium did not start its DevTools endpoint")
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get("http://" + host + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	var targets []struct {
		Type string `json:"type"`
		WS   string `json:"webSocketDebuggerUrl"`
	}
	json.NewDecoder(resp.Body).Decode(&targets)
	resp.Body.Close()
	for _, tg := range targets {
		if tg.Type == "page" {
			ws, err := dialWS(tg.WS)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ws.conn.Close() })
			return &devtools{t: t, ws: ws}
		}
	}
	t.Fatalf("no page among Chromium's targets %+v", targets)
	return nil
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
	d := chromium(t, 1400, 1000)
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
	d.call("Page.enable", map[string]any{})
	d.call("Browser.setDownloadBehavior", map[string]any{"behavior": "allow", "downloadPath": downloads})
	d.call("Page.navigate", map[string]any{"url": url})
	atStep := func(n int) {
		t.Helper()
		d.waitFor(fmt.Sprintf("step %d", n), fmt.Sprintf(`document.body.dataset.step === "%d" && document.body.dataset.busy === ""`, n))
	}
	atStep(0)
	if got := d.js(`document.querySelectorAll("#actions button.action").length`); got != "4" {
		t.Fatalf("initial state: %s enabled actions shown", got)
	}
	if got := d.js(`document.getElementById("describe").textContent`); !strings.Contains(got, "tree=chain") {
		t.Fatalf("configuration shown: %q", got)
	}
	for i, a := range f.Actions {
		// Each action shows what it changes before it is taken.
		if got := d.js(fmt.Sprintf(`(() => { const b = [...document.querySelectorAll("#actions button.action")].find(b => b.dataset.action === %q); return b ? b.parentElement.querySelectorAll(".changes li").length : -1; })()`, a)); got == "-1" || got == "0" {
			t.Fatalf("step %d: %q is not shown with its changes (%s)", i+1, a, got)
		}
		if i == len(f.Actions)-1 {
			if got := d.js(fmt.Sprintf(`[...document.querySelectorAll("#actions button.action")].find(b => b.dataset.action === %q).parentElement.querySelector(".badge").textContent`, a)); !strings.Contains(got, "deadlock") {
				t.Errorf("the last step's preview: %q", got)
			}
		}
		d.click(fmt.Sprintf(`#actions button.action[data-action=%q]`, a))
		atStep(i + 1)
	}
	if got := d.js(`document.getElementById("status").textContent`); got != "step 16: deadlock violated" {
		t.Fatalf("status at the end: %q", got)
	}
	if got := d.js(`document.getElementById("violation-text").textContent`); !strings.HasPrefix(got, "violated: deadlock in the final state after step 16 (no action enabled): no action enabled, but 4 blocked sends") {
		t.Fatalf("violation at the end: %q", got)
	}
	if got := d.js(`document.getElementById("violation").hidden ? "" : document.getElementById("explanation").textContent`); !strings.Contains(got, "wait-for cycle") {
		t.Fatalf("explanation: %q", got)
	}
	if got := d.js(`document.querySelector('#properties tr[data-property="deadlock"] td:nth-child(3)').textContent`); got != "violated" {
		t.Fatalf("deadlock property: %q", got)
	}
	if got := d.js(`document.querySelectorAll("#actions button.action").length`); got != "0" {
		t.Fatalf("%s actions offered after the deadlock", got)
	}
	if got := d.js(`document.querySelectorAll("#state .changed").length`); got == "0" {
		t.Error("no state line is highlighted after the last step")
	}
	// The chart of the path.
	d.click("#chart-toggle")
	d.waitFor("the chart", `document.getElementById("chart").dataset.step === "16" && document.getElementById("chart-img").complete && document.getElementById("chart-img").naturalWidth > 0`)
	d.click("#chart-toggle")
	// Back, forward, the keys and the path bar.
	d.click("#back")
	atStep(15)
	if d.js(`document.getElementById("violation").hidden`) != "true" {
		t.Fatal("the violation still shows at step 15")
	}
	d.click("#forward")
	atStep(16)
	d.key("ArrowLeft", 37)
	atStep(15)
	d.key("ArrowRight", 39)
	atStep(16)
	d.click("#chip-3")
	atStep(3)
	if got := d.js(`document.querySelectorAll("#pathbar .chip.ahead").length`); got != "13" {
		t.Fatalf("path bar at step 3: %s steps ahead", got)
	}
	d.click("#chip-16")
	atStep(16)
	// Export: the download is a trace that replay reproduces.
	d.click("#export")
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
	d.click("#chip-0")
	atStep(0)
	doc := d.call("DOM.getDocument", map[string]any{})
	var root struct {
		Root struct {
			NodeID int `json:"nodeId"`
		} `json:"root"`
	}
	json.Unmarshal(doc, &root)
	var input struct {
		NodeID int `json:"nodeId"`
	}
	json.Unmarshal(d.call("DOM.querySelector", map[string]any{"nodeId": root.Root.NodeID, "selector": "#load-file"}), &input)
	d.call("DOM.setFileInputFiles", map[string]any{"nodeId": input.NodeID, "files": []string{cex}})
	atStep(16)
	if got := d.js(`document.getElementById("status").textContent`); !strings.Contains(got, "deadlock violated") {
		t.Fatalf("after loading the trace: %q", got)
	}
	// A check from the page, and its counterexample loaded into the path.
	d.click("#chip-2")
	atStep(2)
	d.click("#check-start")
	d.waitFor("the check's result", `document.getElementById("check").dataset.state === "done"`)
	if got := d.js(`document.getElementById("check-status").textContent`); !strings.Contains(got, "verdict: fail: deadlock violated") {
		t.Fatalf("check status: %q", got)
	}
	if got := d.js(`document.getElementById("check-text").textContent`); !strings.Contains(got, "verdict: FAIL: deadlock violated") {
		t.Fatalf("check report: %q", got)
	}
	d.click("#check-load")
	atStep(16)
	if got := d.js(`document.getElementById("status").textContent`); !strings.Contains(got, "deadlock violated") {
		t.Fatalf("after loading the check's counterexample: %q", got)
	}
	// The picture in the docs: one step before the deadlock, the step
	// that leads to it previewed, the check's result beside.
	d.click("#back")
	atStep(15)
	d.js(`window.scrollTo(0, 0)`)
	shot := d.screenshot()
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
	d := chromium(t, 1400, 1000)
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
	d.call("Page.navigate", map[string]any{"url": url})
	atStep := func(k int) {
		t.Helper()
		d.waitFor(fmt.Sprintf("step %d", k), fmt.Sprintf(`document.body.dataset.step === "%d" && document.body.dataset.busy === ""`, k))
	}
	atStep(n)
	if dt := time.Since(start); dt > 20*time.Second {
		t.Errorf("opening a %d-step trace took %v", n, dt)
	}
	if got, _ := strconv.Atoi(d.js(`document.querySelectorAll("#pathbar .chip").length`)); got < 100 || got > 305 {
		t.Errorf("%d chips in the path bar for %d steps", got, n)
	}
	t.Logf("%d steps opened in %v", n, time.Since(start))
	if got := d.js(`document.getElementById("status").textContent`); !strings.Contains(got, "end state") {
		t.Errorf("status at the end: %q", got)
	}
	start = time.Now()
	for k := 1; k <= 5; k++ {
		d.key("ArrowLeft", 37)
		atStep(n - k)
	}
	d.click("#forward")
	atStep(n - 4)
	if dt := time.Since(start); dt > 15*time.Second {
		t.Errorf("six steps on a %d-step path took %v", n, dt)
	}
	if got := d.js(`document.querySelectorAll("#pathbar .chip.ahead").length`); got != "4" {
		t.Errorf("%s steps ahead shown, want 4", got)
	}
}
