package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"lfccheck/explore"
	"lfccheck/internal/serve"
	"lfccheck/model"
	"lfccheck/properties"
	_ "lfccheck/protocols" // registers the protocols
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/ucast"
	"lfccheck/traces"
)

// chainConfig is Fig. 4.8's chain deadlock: P=4, one credit, one packet.
func chainConfig() model.Config { return mcast.Config("chain", 4, 1, 1) }

// bfsCheck is a check for tests: the breadth-first search, as
// 'lfccheck check' runs it (cmd/lfccheck gives serve the real one).
func bfsCheck(ctx context.Context, cfg model.Config, progress io.Writer) (serve.CheckResult, error) {
	ck, err := properties.Build(cfg)
	if err != nil {
		return serve.CheckResult{}, err
	}
	stop := make(chan struct{})
	defer context.AfterFunc(ctx, func() { close(stop) })()
	r, err := explore.BFS(ck, explore.Options{Stop: stop, Progress: progress, ProgressEvery: 100 * time.Millisecond})
	if err != nil {
		return serve.CheckResult{}, err
	}
	res := serve.CheckResult{Verdict: string(r.Verdict), Reason: r.Reason, States: r.Stats.States, Depth: r.Stats.Depth,
		Text: "verdict: " + string(r.Verdict)}
	if r.Violation != nil {
		res.Property, res.Message = r.Violation.PropertyName(), r.Violation.Error()
		o, acts, err := traces.RunCodes(ck, r.Trace, r.Loop)
		if err != nil {
			return res, err
		}
		f := traces.NewFile(ck.Sys, acts, o)
		res.Actions, res.LoopStart = f.Actions, f.LoopStart
	}
	return res, nil
}

// chainDeadlock is the shortest counterexample of chainConfig, as action
// names.
func chainDeadlock(t *testing.T) []string {
	t.Helper()
	res, err := bfsCheck(context.Background(), chainConfig(), nil)
	if err != nil || res.Property != "deadlock" {
		t.Fatalf("chain: %+v %v", res, err)
	}
	return res.Actions
}

func newServer(t *testing.T, opt serve.Options) (*serve.Server, *httptest.Server) {
	t.Helper()
	if opt.Config.Protocol == "" && opt.Trace == nil {
		opt.Config = chainConfig()
	}
	if opt.Check == nil {
		opt.Check = bfsCheck
	}
	s, err := serve.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() { ts.Close(); s.Close() })
	return s, ts
}

// post sends a JSON body and returns the status and the decoded answer.
func post(t *testing.T, ts *httptest.Server, path string, body any) (int, map[string]any, []byte) {
	t.Helper()
	var data []byte
	switch b := body.(type) {
	case string:
		data = []byte(b)
	case []byte:
		data = b
	default:
		data, _ = json.Marshal(b)
	}
	resp, err := http.Post(ts.URL+path, "application/json", bytes.NewReader(data))
	return readAnswer(t, resp, err)
}

func get(t *testing.T, ts *httptest.Server, path string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(ts.URL + path)
	code, m, _ := readAnswer(t, resp, err)
	return code, m
}

// readAnswer reads the response of a request: its status, its body as
// JSON (nil where it is not) and as bytes; a request that failed (err)
// ends the test.
func readAnswer(t *testing.T, resp *http.Response, err error) (int, map[string]any, []byte) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	json.Unmarshal(raw, &m)
	return resp.StatusCode, m, raw
}

type view struct {
	Enabled []struct {
		Action    string   `json:"action"`
		Changes   []string `json:"changes"`
		Violation string   `json:"violation"`
		End       bool     `json:"end"`
	} `json:"enabled"`
	Terminal  bool         `json:"terminal"`
	Status    string       `json:"status"`
	State     []string     `json:"state"`
	Changed   []bool       `json:"changed"`
	Length    int          `json:"length"`
	Last      *traces.Step `json:"last"`
	Violation *struct {
		Property    string   `json:"property"`
		Step        int      `json:"step"`
		Text        string   `json:"text"`
		Explanation []string `json:"explanation"`
	} `json:"violation"`
	Properties []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"properties"`
}

func state(t *testing.T, ts *httptest.Server, model int, acts []string) view {
	t.Helper()
	code, m, raw := post(t, ts, "/api/state", map[string]any{"model": model, "actions": acts})
	if code != http.StatusOK {
		t.Fatalf("state %q: %d %v", acts, code, m["error"])
	}
	var v view
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestAPIWalksIntoTheChainDeadlock takes the chain deadlock's actions one
// by one, each from the enabled actions the server lists, and checks the
// previews, the deadlock at the end, the properties there and the
// exported trace, which replay reproduces.
func TestAPIWalksIntoTheChainDeadlock(t *testing.T) {
	acts := chainDeadlock(t)
	_, ts := newServer(t, serve.Options{})
	code, sess := get(t, ts, "/api/session")
	if code != 200 || !strings.Contains(fmt.Sprint(sess["describe"]), "tree=chain") || sess["check"] != true {
		t.Fatalf("session: %d %v", code, sess)
	}
	model := int(sess["model"].(float64))
	for i, a := range acts {
		v := state(t, ts, model, acts[:i])
		if v.Violation != nil || v.Terminal {
			t.Fatalf("step %d: %s", i, v.Status)
		}
		found := false
		for _, c := range v.Enabled {
			if c.Action == a {
				found = true
				if len(c.Changes) == 0 {
					t.Errorf("step %d: %s shows no changes", i+1, a)
				}
				if last := i == len(acts)-1; last != (c.End && strings.HasPrefix(c.Violation, "deadlock")) {
					t.Errorf("step %d: %s previews end=%v violation=%q", i+1, a, c.End, c.Violation)
				}
			}
		}
		if !found {
			t.Fatalf("step %d: %s is not among the enabled actions %+v", i+1, a, v.Enabled)
		}
	}
	v := state(t, ts, model, acts)
	if v.Violation == nil || v.Violation.Property != "deadlock" || !v.Terminal || len(v.Enabled) != 0 {
		t.Fatalf("at the end: %+v", v)
	}
	if !strings.Contains(strings.Join(v.Violation.Explanation, "\n"), "wait-for cycle") {
		t.Errorf("explanation: %q", v.Violation.Explanation)
	}
	if v.Length != len(acts) || v.Last == nil || v.Last.Action != acts[len(acts)-1] || len(v.Last.Changes) == 0 || len(v.Changed) != len(v.State) {
		t.Errorf("%d steps, last %+v, %d lines, %d marks", v.Length, v.Last, len(v.State), len(v.Changed))
	}
	for _, p := range v.Properties {
		if want := map[bool]string{true: "violated", false: ""}[p.Name == "deadlock"]; want != "" && p.Status != want {
			t.Errorf("property %s: %s", p.Name, p.Status)
		}
		if p.Name == "credit-conservation" && p.Status != "holds" {
			t.Errorf("credit-conservation: %s", p.Status)
		}
	}
	code, m, raw := post(t, ts, "/api/export", map[string]any{"model": model, "actions": acts})
	if code != 200 {
		t.Fatalf("export: %d %v", code, m)
	}
	replays(t, raw, "deadlock")
	if code, m, raw := post(t, ts, "/api/chart", map[string]any{"model": model, "actions": acts}); code != 200 || !bytes.Contains(raw, []byte("<svg")) {
		t.Fatalf("chart: %d %v", code, m)
	}
	// Back at step 3 the path can go elsewhere.
	v = state(t, ts, model, acts[:3])
	if v.Violation != nil || len(v.Enabled) == 0 || !contains(v.Changed, true) {
		t.Fatalf("step 3: %+v", v)
	}
}

func contains[T comparable](s []T, x T) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// replays checks that an exported trace replays as 'lfccheck replay' does
// it, with the violation recorded.
func replays(t *testing.T, data []byte, property string) {
	t.Helper()
	f, err := traces.Parse(data)
	if err != nil {
		t.Fatalf("exported trace: %v\n%s", err, data)
	}
	ck, err := properties.Build(f.Config)
	if err != nil {
		t.Fatal(err)
	}
	acts, err := traces.ParseActions(ck.Sys, f.Actions)
	if err != nil {
		t.Fatal(err)
	}
	o, err := traces.RunLasso(ck, acts, f.Loop())
	if err != nil {
		t.Fatal(err)
	}
	if ok, why := traces.Reproduces(f, o); !ok || f.Property != property {
		t.Fatalf("exported trace does not reproduce %q: %s (records %q)", property, why, f.Property)
	}
}

// TestAPIBadInput: every malformed request gets a 4xx with a message that
// says what is wrong, and the server goes on serving.
func TestAPIBadInput(t *testing.T) {
	_, ts := newServer(t, serve.Options{})
	big := `{"model":1,"actions":["` + strings.Repeat("x", 5<<20) + `"]}`
	long := make([]string, serve.MaxSteps+1)
	for i := range long {
		long[i] = "host 0 launch"
	}
	for _, c := range []struct {
		path string
		body any
		code int
		want string
	}{
		{"/api/state", map[string]any{"model": 1, "actions": []string{"frobnicate 0"}}, 400, `unknown action "frobnicate 0"`},
		{"/api/state", map[string]any{"model": 1, "actions": []string{"host 9 launch"}}, 400, "step 1"},
		{"/api/state", map[string]any{"model": 1, "actions": []string{"deliver 0->1"}}, 400, "not enabled (enabled: host 0 launch"},
		{"/api/state", map[string]any{"model": 1, "actions": []string{}, "loop_start": -1}, 400, "loop_start -1"},
		{"/api/state", map[string]any{"model": 1, "actions": long}, 400, "longer than the explorer takes"},
		{"/api/state", map[string]any{"model": 7, "actions": []string{}}, 404, "unknown model 7"},
		{"/api/state", `{"model": 1, "actions": [`, 400, "malformed request"},
		{"/api/state", `{"model": 1, "acts": []}`, 400, `unknown field "acts"`},
		{"/api/state", `{"model": 1} {}`, 400, "trailing data"},
		{"/api/state", big, 400, "larger than"},
		{"/api/export", map[string]any{"model": 1, "actions": []string{"ni 0 copy"}}, 400, "not enabled"},
		{"/api/load", `{"format": "lfccheck-trace/2", "config": `, 400, "trace: "},
		{"/api/load", `[1, 2]`, 400, "trace: "},
		{"/api/load", ``, 400, "empty file"},
		{"/api/load", `{"format": "lfccheck-trace/9", "config": {"protocol": "ucast", "nodes": 2}, "actions": []}`, 400, "format"},
		{"/api/load", `{"format": "lfccheck-trace/2", "config": {"protocol": "nope", "nodes": 2}, "actions": []}`, 400, "nope"},
		{"/api/load", `{"format": "lfccheck-trace/2", "config": {"protocol": "ucast", "variant": "correct", "nodes": 2}, "actions": ["deliver 0->1"]}`, 400, "not enabled"},
		{"/api/check/cancel", map[string]any{}, 409, "no check is running"},
		{"/api/check", map[string]any{"model": 3}, 404, "unknown model"},
	} {
		code, m, raw := post(t, ts, c.path, c.body)
		msg, _ := m["error"].(string)
		if code != c.code || !strings.Contains(msg, c.want) {
			t.Errorf("%s %.80v: %d %q, want %d and %q (%.200s)", c.path, c.body, code, msg, c.code, c.want, raw)
		}
	}
	// Not JSON, not this machine, not a route.
	resp, err := http.Post(ts.URL+"/api/state", "text/plain", strings.NewReader(`{"model":1,"actions":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain POST: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", ts.URL+"/api/session", nil)
	req.Host = "attacker.example:80"
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Host header: %d", resp.StatusCode)
	}
	for _, p := range []string{"/api/nothing", "/serve.go", "/assets/app.js", "/..%2fserve.go", "/%2e%2e/serve.go"} {
		code, _ := get(t, ts, p)
		if code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, code)
		}
	}
	// A raw request for a path outside the assets, as a client that does
	// not clean paths sends it.
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET /../serve.go HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
	raw, _ := io.ReadAll(conn)
	conn.Close()
	if bytes.Contains(raw, []byte("package serve")) {
		t.Errorf("GET /../serve.go served the source")
	}
	if code, _ := get(t, ts, "/"); code != 200 {
		t.Errorf("GET /: %d", code)
	}
	if code, _ := get(t, ts, "/app.js"); code != 200 {
		t.Errorf("GET /app.js: %d", code)
	}
	// Still serving.
	if v := state(t, ts, 1, nil); len(v.Enabled) != 4 {
		t.Fatalf("initial state: %d enabled", len(v.Enabled))
	}
}

// TestAPILoadsATraceAndContinues: an uploaded counterexample of another
// configuration gets its own model; its path can be cut at any step and
// continued.
func TestAPILoadsATraceAndContinues(t *testing.T) {
	_, ts := newServer(t, serve.Options{Config: mcast.Config("binary", 3, 1, 1)})
	acts := chainDeadlock(t)
	ck, _ := properties.Build(chainConfig())
	pacts, _ := traces.ParseActions(ck.Sys, acts)
	o, _ := traces.RunLasso(ck, pacts, 0)
	data := traces.Marshal(traces.NewFile(ck.Sys, pacts, o))
	code, m, _ := post(t, ts, "/api/load?name=chain.json", data)
	if code != 200 {
		t.Fatalf("load: %d %v", code, m)
	}
	model := int(m["model"].(float64))
	if model == 1 || len(m["actions"].([]any)) != len(acts) || m["property"] != "deadlock" || m["name"] != "chain.json" {
		t.Fatalf("load: %v", m)
	}
	// Loading it again reuses the model.
	if _, m2, _ := post(t, ts, "/api/load", data); int(m2["model"].(float64)) != model {
		t.Errorf("second load: model %v, want %d", m2["model"], model)
	}
	v := state(t, ts, model, acts)
	if v.Violation == nil || v.Violation.Property != "deadlock" {
		t.Fatalf("loaded trace: %+v", v)
	}
	// From step 5 on, another action than the trace's.
	v = state(t, ts, model, acts[:5])
	var other string
	for _, c := range v.Enabled {
		if c.Action != acts[5] {
			other = c.Action
		}
	}
	if other == "" {
		t.Fatal("no other action at step 5")
	}
	if v := state(t, ts, model, append(append([]string{}, acts[:5]...), other)); v.Length != 6 {
		t.Fatalf("continued: %d steps", v.Length)
	}
	// The trace given at start is offered by the session.
	f, _ := traces.Parse(data)
	_, ts2 := newServer(t, serve.Options{Trace: &f, TraceName: "chain.json"})
	_, sess := get(t, ts2, "/api/session")
	tr, _ := sess["trace"].(map[string]any)
	if tr == nil || len(tr["actions"].([]any)) != len(acts) || !strings.Contains(fmt.Sprint(sess["describe"]), "tree=chain") {
		t.Fatalf("session with a trace: %v", sess)
	}
	// A trace that does not run is refused at start.
	f.Actions = append([]string{"ni 0 copy"}, f.Actions...)
	if _, err := serve.New(serve.Options{Trace: &f}); err == nil || !strings.Contains(err.Error(), "not enabled") {
		t.Fatalf("a trace that does not run: %v", err)
	}
}

// TestAPICheck runs the check from the API: its counterexample is the
// chain deadlock; a second check waits for the first; a long one is
// cancelled promptly and says so.
func TestAPICheck(t *testing.T) {
	s, ts := newServer(t, serve.Options{})
	code, m, _ := post(t, ts, "/api/check", map[string]any{"model": 1})
	if code != 200 || m["running"] != true {
		t.Fatalf("start: %d %v", code, m)
	}
	st := waitCheck(t, ts)
	res, _ := st["result"].(map[string]any)
	if res == nil || res["verdict"] != "fail" || res["property"] != "deadlock" || len(res["actions"].([]any)) != 16 {
		t.Fatalf("check: %v", st)
	}
	s.Close() // ends nothing: the check is over
	// A longer check (binary P=4 C=2: about a minute): one at a time,
	// and cancellable.
	_, ts = newServer(t, serve.Options{Config: mcast.Config("binary", 4, 2, 1)})
	if code, m, _ := post(t, ts, "/api/check", map[string]any{"model": 1}); code != 200 {
		t.Fatalf("start: %d %v", code, m)
	}
	if code, m, _ := post(t, ts, "/api/check", map[string]any{"model": 1}); code != http.StatusConflict || !strings.Contains(fmt.Sprint(m["error"]), "already running") {
		t.Fatalf("second check: %d %v", code, m)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, st := get(t, ts, "/api/check")
		if p, _ := st["progress"].(map[string]any); p != nil && p["states"].(float64) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no progress: %v", st)
		}
		time.Sleep(100 * time.Millisecond)
	}
	start := time.Now()
	if code, m, _ := post(t, ts, "/api/check/cancel", map[string]any{}); code != 200 {
		t.Fatalf("cancel: %d %v", code, m)
	}
	st = waitCheck(t, ts)
	res, _ = st["result"].(map[string]any)
	if res == nil || res["verdict"] != "incomplete" || !strings.Contains(fmt.Sprint(res["reason"]), "interrupted") {
		t.Fatalf("cancelled: %v", st)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("cancel took %v", d)
	}
}

func waitCheck(t *testing.T, ts *httptest.Server) map[string]any {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, st := get(t, ts, "/api/check")
		if st["running"] == false {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("check still running: %v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServeStopsOnCancel: Serve returns once its context ends, and a
// running check ends with Close.
func TestServeStopsOnCancel(t *testing.T) {
	s, err := serve.New(serve.Options{Config: mcast.Config("binary", 4, 2, 1), Check: bfsCheck})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve.Serve(ctx, ln, s.Handler()) }()
	resp, err := http.Post("http://"+ln.Addr().String()+"/api/check", "application/json", strings.NewReader(`{"model":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not end the check")
	}
}

// TestAPILongPath: a path of thousands of steps is answered quickly and
// without every step's changes (the page asks for the end of the path
// only).
func TestAPILongPath(t *testing.T) {
	cfg := ucast.Config(6, 1, 64)
	_, ts := newServer(t, serve.Options{Config: cfg})
	ck, err := properties.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Always the first enabled action, to the end.
	w := ck.Sys.Initial()
	var out model.Outbox
	var acts []string
	for {
		en := w.Enabled(nil)
		if len(en) == 0 {
			break
		}
		acts = append(acts, ck.Sys.ActionName(en[0]))
		if err := w.Apply(en[0], &out); err != nil {
			t.Fatal(err)
		}
	}
	if len(acts) < 5000 {
		t.Fatalf("only %d steps", len(acts))
	}
	start := time.Now()
	code, m, raw := post(t, ts, "/api/state", map[string]any{"model": 1, "actions": acts})
	if code != 200 {
		t.Fatalf("state: %d %v", code, m["error"])
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a %d-step path took %v", len(acts), d)
	}
	if len(raw) > 64<<10 {
		t.Errorf("the answer for a %d-step path is %d bytes", len(acts), len(raw))
	}
	if m["terminal"] != true || m["length"].(float64) != float64(len(acts)) {
		t.Errorf("end of the path: terminal %v, length %v", m["terminal"], m["length"])
	}
}
