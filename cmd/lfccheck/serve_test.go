package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer written by a command running in another
// goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var serveURLLine = regexp.MustCompile(`open (http://\S+/) in a browser`)

// startServe runs 'lfccheck serve args' until the returned stop function
// is called, which returns its exit code and output; url is the address it
// printed.
func startServe(t *testing.T, args ...string) (url string, stop func() (int, string, string)) {
	t.Helper()
	var out, errs lockedBuffer
	quit := make(chan struct{})
	done := make(chan int, 1)
	go func() { done <- runEnv(append([]string{"serve"}, args...), &out, &errs, quit) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := serveURLLine.FindStringSubmatch(out.String()); m != nil {
			url = m[1]
			break
		}
		select {
		case code := <-done:
			t.Fatalf("serve ended at once: exit %d, %s%s", code, out.String(), errs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve printed no URL: %q %q", out.String(), errs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	stopped := false
	stop = func() (int, string, string) {
		if !stopped {
			close(quit)
			stopped = true
		}
		select {
		case code := <-done:
			return code, out.String(), errs.String()
		case <-time.After(15 * time.Second):
			t.Fatal("serve did not stop on interrupt")
		}
		return 0, "", ""
	}
	t.Cleanup(func() {
		if !stopped {
			stop()
		}
	})
	return url, stop
}

// getJSON decodes the JSON that a GET of url answers into v.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(v)
	resp.Body.Close()
}

func postJSON(t *testing.T, url string, body any) (int, []byte) {
	t.Helper()
	data, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// TestServeCommand: serve on the chain deadlock's configuration prints its
// URL, runs check's search from the API (the same report as check
// prints), exports the counterexample as a trace that replay reproduces,
// and stops on an interrupt with exit 0.
func TestServeCommand(t *testing.T) {
	url, stop := startServe(t, "--protocol", "mcast", "--nodes", "4", "--credits", "1", "--tree", "chain", "--packets", "1", "--addr", "127.0.0.1:0")
	if code, raw := postJSON(t, url+"api/check", map[string]int{"model": 1}); code != 200 {
		t.Fatalf("check: %d %s", code, raw)
	}
	var st struct {
		Running bool `json:"running"`
		Result  *struct {
			Verdict string   `json:"verdict"`
			Text    string   `json:"text"`
			Actions []string `json:"actions"`
		} `json:"result"`
		Error string `json:"error"`
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		getJSON(t, url+"api/check", &st)
		if !st.Running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the check did not end")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st.Result == nil || st.Result.Verdict != "fail" || len(st.Result.Actions) != 16 ||
		!strings.Contains(st.Result.Text, "verdict: FAIL: deadlock violated: no action enabled, but 4 blocked sends") {
		t.Fatalf("check from the page: %+v %s", st.Result, st.Error)
	}
	code, raw := postJSON(t, url+"api/export", map[string]any{"model": 1, "actions": st.Result.Actions})
	if code != 200 {
		t.Fatalf("export: %d %s", code, raw)
	}
	file := filepath.Join(t.TempDir(), "path.json")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := runCLI("replay", file); code != 0 || !strings.Contains(out, "reproduced: deadlock violated at step 16, as recorded") {
		t.Fatalf("replay of the export: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs := stop()
	if code != 0 || !strings.HasSuffix(out, "stopped\n") || !strings.HasPrefix(out, "lfccheck serve: mcast (correct) nodes=4") || errs != "" {
		t.Fatalf("serve: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// With --trace, the trace's configuration and path.
	url, _ = startServe(t, "--trace", file, "--addr", "localhost:0")
	var sess struct {
		Describe string `json:"describe"`
		Trace    struct {
			Actions []string `json:"actions"`
		} `json:"trace"`
	}
	getJSON(t, url+"api/session", &sess)
	if !strings.Contains(sess.Describe, "tree=chain") || len(sess.Trace.Actions) != 16 {
		t.Fatalf("serve --trace: %+v", sess)
	}
}

// TestServeErrors: bad flags, an address beyond loopback, a port taken
// and bad traces are one line on stderr and exit 2, before anything is
// served.
func TestServeErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"format": "lfccheck-trace/2", "config": {`), 0o644)
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(`{"format": "lfccheck-trace/2", "config": {"protocol": "ucast", "variant": "correct", "nodes": 2}, "actions": []}`), 0o644)
	stuck := filepath.Join(dir, "stuck.json")
	os.WriteFile(stuck, []byte(`{"format": "lfccheck-trace/2", "config": {"protocol": "ucast", "variant": "correct", "nodes": 2}, "actions": ["deliver 0->1"]}`), 0o644)
	usageFails(t, "unknown flag: --bogus", "serve", "--bogus")
	usageFails(t, "unexpected argument", "serve", "extra")
	usageFails(t, `--addr "0.0.0.0:8080" is not a loopback address`, "serve", "--addr", "0.0.0.0:8080")
	usageFails(t, `--addr ":8080" is not a loopback address`, "serve", "--addr", ":8080")
	usageFails(t, "want HOST:PORT", "serve", "--addr", "8080")
	usageFails(t, "cannot listen on "+ln.Addr().String(), "serve", "--addr", ln.Addr().String())
	usageFails(t, "cannot listen on 127.0.0.1:99999", "serve", "--addr", "127.0.0.1:99999")
	usageFails(t, `unknown protocol "nope"`, "serve", "--protocol", "nope")
	usageFails(t, "nodes must be in 2..", "serve", "--nodes", "1")
	usageFails(t, "bad.json: not a trace", "serve", "--trace", bad)
	usageFails(t, "missing.json", "serve", "--trace", filepath.Join(dir, "missing.json"))
	usageFails(t, "--protocol with --trace", "serve", "--trace", good, "--protocol", "mcast")
	usageFails(t, "not enabled", "serve", "--trace", stuck)
	usageFails(t, "--symmetry must be on or off", "serve", "--symmetry", "maybe")
}
