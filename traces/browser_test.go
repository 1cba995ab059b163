package traces_test

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
	"strings"
	"testing"
	"time"

	"lfccheck/protocols/mcast"
	"lfccheck/traces"
)

// The viewer is tested in a real browser: headless Chromium driven over the
// Chrome DevTools Protocol, spoken through a minimal WebSocket client below
// (the standard library has none, and the protocol needs only a few calls).

// wsConn is a client WebSocket connection: text frames out (masked, as
// RFC 6455 requires of clients), text frames in.
type wsConn struct {
	c  net.Conn
	br *bufio.Reader
}

func wsDial(raw string) (*wsConn, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	c, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		return nil, err
	}
	key := make([]byte, 16)
	rand.Read(key)
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n",
		u.RequestURI(), u.Host, base64.StdEncoding.EncodeToString(key))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		c.Close()
		return nil, fmt.Errorf("websocket handshake: %s", resp.Status)
	}
	return &wsConn{c: c, br: br}, nil
}

func (w *wsConn) send(msg []byte) error {
	hdr := []byte{0x81} // FIN, text
	switch n := len(msg); {
	case n < 126:
		hdr = append(hdr, 0x80|byte(n))
	case n < 1<<16:
		hdr = append(hdr, 0x80|126, byte(n>>8), byte(n))
	default:
		hdr = append(hdr, 0x80|127)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	mask := make([]byte, 4)
	rand.Read(mask)
	hdr = append(hdr, mask...)
	body := make([]byte, len(msg))
	for i := range msg {
		body[i] = msg[i] ^ mask[i%4]
	}
	_, err := w.c.Write(append(hdr, body...))
	return err
}

func (w *wsConn) recv() ([]byte, error) {
	var msg []byte
	for {
		var h [2]byte
		if _, err := io.ReadFull(w.br, h[:]); err != nil {
			return nil, err
		}
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			var b [2]byte
			if _, err := io.ReadFull(w.br, b[:]); err != nil {
				return nil, err
			}
			n = uint64(binary.BigEndian.Uint16(b[:]))
		case 127:
			var b [8]byte
			if _, err := io.ReadFull(w.br, b[:]); err != nil {
				return nil, err
			}
			n = binary.BigEndian.Uint64(b[:])
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(w.br, payload); err != nil {
			return nil, err
		}
		if op := h[0] & 0x0f; op == 0x8 {
			return nil, io.EOF
		} else if op == 0x9 || op == 0xA {
			continue // ping, pong
		}
		msg = append(msg, payload...)
		if h[0]&0x80 != 0 {
			return msg, nil
		}
	}
}

// cdp is a DevTools session with one page.
type cdp struct {
	t    *testing.T
	ws   *wsConn
	next int
}

// call sends a command and returns its result, skipping events.
func (c *cdp) call(method string, params any) json.RawMessage {
	c.t.Helper()
	c.next++
	id := c.next
	req, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err := c.ws.send(req); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	for {
		raw, err := c.ws.recv()
		if err != nil {
			c.t.Fatalf("%s: %v", method, err)
		}
		var resp struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(raw, &resp); err != nil {
			c.t.Fatalf("%s: %v", method, err)
		}
		if resp.ID != id {
			continue
		}
		if resp.Error != nil {
			c.t.Fatalf("%s: %s", method, resp.Error.Message)
		}
		return resp.Result
	}
}

// eval evaluates a JavaScript expression in the page and returns its value
// as a string (JSON for non-strings).
func (c *cdp) eval(expr string) string {
	c.t.Helper()
	raw := c.call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true})
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	json.Unmarshal(raw, &r)
	if r.Exception != nil {
		c.t.Fatalf("%s: %s", expr, r.Exception.Text)
	}
	if s, ok := r.Result.Value.(string); ok {
		return s
	}
	b, _ := json.Marshal(r.Result.Value)
	return string(b)
}

// key presses and releases a key, as the keyboard does.
func (c *cdp) key(name string, code int) {
	for _, typ := range []string{"keyDown", "keyUp"} {
		c.call("Input.dispatchKeyEvent", map[string]any{"type": typ, "key": name, "code": name,
			"windowsVirtualKeyCode": code, "nativeVirtualKeyCode": code})
	}
}

// click clicks the middle of the element with the given id, as the mouse
// does.
func (c *cdp) click(id string) {
	c.t.Helper()
	var box struct{ X, Y float64 }
	json.Unmarshal([]byte(c.eval(fmt.Sprintf(`(() => { const r = document.getElementById(%q).getBoundingClientRect(); return {X: r.x + r.width/2, Y: r.y + r.height/2}; })()`, id))), &box)
	for _, typ := range []string{"mousePressed", "mouseReleased"} {
		c.call("Input.dispatchMouseEvent", map[string]any{"type": typ, "x": box.X, "y": box.Y, "button": "left", "clickCount": 1})
	}
}

func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestViewerInBrowser opens the viewer of the chain deadlock (Fig. 4.8) in
// headless Chromium from file://, steps with the arrow keys and the buttons,
// and checks the step shown, the highlighted row and change, the violation
// at the end, and a screenshot that is not blank.
func TestViewerInBrowser(t *testing.T) {
	bin := findChromium()
	if bin == "" {
		if os.Getenv("LFCCHECK_REQUIRE_BROWSER") != "" {
			t.Fatal("no Chromium, and LFCCHECK_REQUIRE_BROWSER is set: install the Debian package chromium")
		}
		t.Skip("no Chromium: install the Debian package chromium to run the browser test")
	}
	ck, acts, o := counterexample(t, mcast.Config("chain", 4, 1, 1))
	page, err := traces.HTML(ck.Sys, acts, o)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "viewer.html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	// The profile lives outside t.TempDir: Chromium's helper processes may
	// still write to it for a moment after the browser is killed.
	profile, err := os.MkdirTemp("", "lfccheck-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--remote-debugging-port=0", "--user-data-dir="+profile, "--window-size=1400,900", "about:blank")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
		for i := 0; i < 50 && os.RemoveAll(profile) != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	}()
	listening := regexp.MustCompile(`DevTools listening on (ws://\S+)`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	var browserWS string
	select {
	case browserWS = <-found:
	case <-time.After(60 * time.Second):
		t.Fatal("Chromium did not start its DevTools endpoint")
	}
	host := strings.TrimPrefix(browserWS, "ws://")
	host = host[:strings.IndexByte(host, '/')]
	resp, err := http.Get("http://" + host + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	var targets []struct {
		Type string `json:"type"`
		WS   string `json:"webSocketDebuggerUrl"`
	}
	json.NewDecoder(resp.Body).Decode(&targets)
	resp.Body.Close()
	pageWS := ""
	for _, tg := range targets {
		if tg.Type == "page" {
			pageWS = tg.WS
		}
	}
	if pageWS == "" {
		t.Fatalf("no page target among %+v", targets)
	}
	ws, err := wsDial(pageWS)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.c.Close()
	c := &cdp{t: t, ws: ws}
	c.call("Page.enable", map[string]any{})
	c.call("Page.navigate", map[string]any{"url": "file://" + file})
	deadline := time.Now().Add(30 * time.Second)
	for c.eval(`document.readyState`) != "complete" || c.eval(`document.getElementById("stepno") ? document.getElementById("stepno").textContent : ""`) == "" {
		if time.Now().After(deadline) {
			t.Fatal("the viewer did not load")
		}
		time.Sleep(100 * time.Millisecond)
	}
	n := len(acts)
	stepno := func() string { return c.eval(`document.getElementById("stepno").textContent`) }
	current := func() string { return c.eval(`document.querySelector("svg .row.current").id`) }
	if got := stepno(); got != fmt.Sprintf("step 0 of %d", n) {
		t.Fatalf("initially %q", got)
	}
	for i := 0; i < 3; i++ {
		c.key("ArrowRight", 39)
	}
	if got := stepno(); got != fmt.Sprintf("step 3 of %d", n) || current() != "row-3" {
		t.Fatalf("after three right arrows: %q, highlighted %s", got, current())
	}
	// Step 3 delivers m0#1 to NI 1: the change is listed and the state line
	// that changed is highlighted.
	if got := c.eval(`document.querySelector("#changes li").textContent`); got != o.Steps[2].Changes[0] {
		t.Fatalf("first change of step 3: %q, want %q", got, o.Steps[2].Changes[0])
	}
	if got := c.eval(`document.querySelectorAll("#state .changed").length`); got == "0" {
		t.Fatal("no state line is highlighted after step 3")
	}
	c.click("next")
	if got := stepno(); got != fmt.Sprintf("step 4 of %d", n) {
		t.Fatalf("after the next button: %q", got)
	}
	c.click("prev")
	c.key("ArrowLeft", 37)
	if got := stepno(); got != fmt.Sprintf("step 2 of %d", n) || current() != "row-2" {
		t.Fatalf("after the previous button and a left arrow: %q, highlighted %s", got, current())
	}
	if got := c.eval(`document.getElementById("violation").hidden`); got != "true" {
		t.Fatalf("the violation shows before the last step: %s", got)
	}
	c.key("End", 35)
	if got := stepno(); got != fmt.Sprintf("step %d of %d", n, n) {
		t.Fatalf("after End: %q", got)
	}
	v := c.eval(`document.getElementById("violation").hidden ? "" : document.getElementById("violation").textContent`)
	if !strings.Contains(v, "violated: deadlock") || !strings.Contains(v, "wait-for cycle") {
		t.Fatalf("the last step shows %q", v)
	}
	c.click("first")
	if got := stepno(); got != fmt.Sprintf("step 0 of %d", n) {
		t.Fatalf("after the first button: %q", got)
	}
	var shot struct {
		Data string `json:"data"`
	}
	json.Unmarshal(c.call("Page.captureScreenshot", map[string]any{"format": "png"}), &shot)
	raw, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	dark := 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			if r, g, bl, _ := img.At(x, y).RGBA(); r+g+bl < 3*0x8000 {
				dark++
			}
		}
	}
	if total := b.Dx() * b.Dy() / 4; dark < total/200 {
		t.Fatalf("the screenshot is (nearly) blank: %d dark pixels of %d sampled", dark, total)
	}
}
