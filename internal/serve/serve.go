// Package serve is lfccheck's state-space explorer in the browser: an HTTP
// server (standard library only) with an embedded page that shows a
// configuration's initial state and every enabled action with the changes
// it makes, lets a person take actions, go back and forward, export the
// path as a trace file that 'lfccheck replay' accepts, load a saved trace
// or counterexample and continue from any of its steps, see the
// properties evaluated at the current state, and run the exhaustive check
// of the configuration with its progress.
//
// The server keeps no path: every request carries the list of actions,
// and the state is computed by replaying it from the initial state (the
// model is pure). What it keeps is the configurations it serves (the one
// it started with and those of loaded traces, a bounded number) and at
// most one running check.
package serve

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/traces"
)

//go:embed assets
var assets embed.FS

// Limits on what a request may carry.
const (
	// MaxTraceBytes bounds an uploaded trace file (as 'lfccheck replay'
	// bounds the files it reads).
	MaxTraceBytes = 16 << 20
	// maxRequestBytes bounds the other requests' bodies (a path of
	// actions).
	maxRequestBytes = 4 << 20
	// MaxSteps bounds the length of a path.
	MaxSteps = 100_000
	// maxModels bounds the configurations a server keeps (the initial
	// one and those of loaded traces; the oldest loaded one goes first).
	maxModels = 16
)

// CheckResult is the outcome of a check run from the page.
type CheckResult struct {
	Verdict    string  `json:"verdict"`
	Property   string  `json:"property,omitempty"`
	Message    string  `json:"message,omitempty"`
	Reason     string  `json:"reason,omitempty"`
	States     int64   `json:"states"`
	Depth      int     `json:"depth"`
	ElapsedS   float64 `json:"elapsed_s"`
	StatesPerS float64 `json:"states_per_s"`
	// Text is the report as 'lfccheck check' prints it.
	Text string `json:"text"`
	// Actions is the counterexample, if any (LoopStart: where its loop
	// begins, for a lasso).
	Actions   []string `json:"actions,omitempty"`
	LoopStart int      `json:"loop_start,omitempty"`
}

// CheckFunc runs the exhaustive check of cfg, writing progress lines
// ("progress: N states, M transitions, depth D, ... R states/s, ...") to
// progress; it must return promptly once ctx is cancelled (an incomplete
// result or an error).
type CheckFunc func(ctx context.Context, cfg model.Config, progress io.Writer) (CheckResult, error)

// Options configure a server.
type Options struct {
	// Config is the configuration explored first.
	Config model.Config
	// Trace, when set, is a trace loaded at start (its configuration
	// replaces Config); TraceName names it on the page.
	Trace     *traces.File
	TraceName string
	// Check runs a check from the page; nil: the page offers none.
	Check CheckFunc
	// Hosts are the host names requests may give in their Host header
	// besides loopback addresses and localhost (the address of a server
	// listening beyond loopback).
	Hosts []string
}

// Server is the explorer's HTTP handler and its state.
type Server struct {
	check CheckFunc
	hosts map[string]bool
	// ctx ends the checks (Close cancels it); running counts them.
	ctx     context.Context
	stop    context.CancelFunc
	running sync.WaitGroup

	mu     sync.Mutex
	models []*entry // by id, oldest first
	nextID int
	first  *entry
	trace  *loaded // the trace given at start
	job    *job    // the check running or last run
}

// entry is one configuration the server explores, with its checker
// (which holds scratch space: one request at a time uses it).
type entry struct {
	id  int
	key string // the configuration's JSON
	mu  sync.Mutex
	ck  *properties.Checker
}

// loaded is a trace as the page receives it.
type loaded struct {
	Model     int      `json:"model"`
	Describe  string   `json:"describe"`
	Name      string   `json:"name,omitempty"`
	Actions   []string `json:"actions"`
	LoopStart int      `json:"loop_start,omitempty"`
	Property  string   `json:"property,omitempty"`
	Message   string   `json:"message,omitempty"`
}

// New builds a server for opt: the configuration (or the trace's) must
// build, and the trace must run.
func New(opt Options) (*Server, error) {
	s := &Server{check: opt.Check, hosts: map[string]bool{}}
	s.ctx, s.stop = context.WithCancel(context.Background())
	for _, h := range opt.Hosts {
		s.hosts[h] = true
	}
	if opt.Trace != nil {
		l, err := s.load(*opt.Trace, opt.TraceName)
		if err != nil {
			s.stop()
			return nil, err
		}
		s.trace = l
		s.first = s.models[0]
		return s, nil
	}
	e, err := s.add(opt.Config)
	if err != nil {
		s.stop()
		return nil, err
	}
	s.first = e
	return s, nil
}

// Describe names the configuration the server explores first.
func (s *Server) Describe() string { return s.first.ck.Sys.Cfg.Describe() }

// Close cancels a running check and waits for it to end.
func (s *Server) Close() {
	s.mu.Lock()
	s.stop() // (under mu: no check starts after this)
	s.mu.Unlock()
	s.running.Wait()
}

// add returns the entry for cfg, building it if it is new.
func (s *Server) add(cfg model.Config) (*entry, error) {
	key, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("config: %v", err)
	}
	s.mu.Lock()
	for _, e := range s.models {
		if e.key == string(key) {
			s.mu.Unlock()
			return e, nil
		}
	}
	s.mu.Unlock()
	ck, err := properties.Build(cfg)
	if err != nil {
		return nil, fmt.Errorf("config: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	e := &entry{id: s.nextID, key: string(key), ck: ck}
	if len(s.models) >= maxModels {
		// Forget the oldest loaded configuration, never the first.
		for i, old := range s.models {
			if old != s.first {
				s.models = append(s.models[:i], s.models[i+1:]...)
				break
			}
		}
	}
	s.models = append(s.models, e)
	return e, nil
}

// lookup finds a configuration by id.
func (s *Server) lookup(id int) (*entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.models {
		if e.id == id {
			return e, nil
		}
	}
	return nil, fmt.Errorf("unknown model %d (reload the page)", id)
}

// load checks a parsed trace (its configuration builds, its actions run
// as recorded up to where they stop) and registers its configuration.
func (s *Server) load(f traces.File, name string) (*loaded, error) {
	if len(f.Actions) > MaxSteps {
		return nil, fmt.Errorf("the trace has %d steps, more than the explorer takes (%d)", len(f.Actions), MaxSteps)
	}
	e, err := s.add(f.Config)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	acts, err := traces.ParseActions(e.ck.Sys, f.Actions)
	if err != nil {
		return nil, err
	}
	if _, err := traces.RunLasso(e.ck, acts, f.Loop()); err != nil {
		return nil, err
	}
	return &loaded{Model: e.id, Describe: e.ck.Sys.Cfg.Describe(), Name: name, Actions: f.Actions,
		LoopStart: f.LoopStart, Property: f.Property, Message: f.Message}, nil
}

// Handler serves the page, its assets and the API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	files := http.FileServerFS(static)
	mux.Handle("GET /", files)
	mux.HandleFunc("GET /api/session", s.handleSession)
	mux.HandleFunc("POST /api/state", s.handleState)
	mux.HandleFunc("POST /api/export", s.handleExport)
	mux.HandleFunc("POST /api/chart", s.handleChart)
	mux.HandleFunc("POST /api/load", s.handleLoad)
	mux.HandleFunc("POST /api/check", s.handleCheckStart)
	mux.HandleFunc("GET /api/check", s.handleCheckStatus)
	mux.HandleFunc("POST /api/check/cancel", s.handleCheckCancel)
	return s.guard(mux)
}

// guard refuses requests from other sites: a Host header that does not
// name this machine (DNS rebinding) and POST requests that are not JSON
// (a form on another site cannot send application/json without the
// browser asking first). It also stops a panic from ending the server.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				httpError(w, http.StatusInternalServerError, fmt.Sprintf("internal error: %v", v))
			}
		}()
		if !s.localHost(r.Host) {
			httpError(w, http.StatusForbidden, fmt.Sprintf("host %q is not this machine's loopback name: open the URL lfccheck serve printed", r.Host))
			return
		}
		if r.Method == http.MethodPost {
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				httpError(w, http.StatusUnsupportedMediaType, "POST bodies must be application/json")
				return
			}
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; connect-src 'self'")
		next.ServeHTTP(w, r)
	})
}

// localHost reports whether a Host header names a loopback address,
// localhost or one of Options.Hosts (any port).
func (s *Server) localHost(h string) bool {
	host, _, err := net.SplitHostPort(h)
	if err != nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "localhost" || s.hosts[host] {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// httpError writes a JSON error: {"error": msg}.
func httpError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	b, _ := marshal(map[string]string{"error": msg})
	w.Write(b)
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := marshal(v)
	if err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// marshal is json.Marshal without HTML escaping ("deliver 0->1" stays
// readable).
func marshal(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// decode reads a JSON request body of at most max bytes into v, with no
// unknown fields.
func decode(w http.ResponseWriter, r *http.Request, max int64, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, max))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return fmt.Errorf("request body larger than %d bytes", mb.Limit)
		}
		return fmt.Errorf("malformed request: %v", err)
	}
	if dec.More() {
		return errors.New("malformed request: trailing data after the JSON object")
	}
	return nil
}

// Serve answers HTTP requests on ln with h until ctx is cancelled, then
// shuts the server down (waiting at most a few seconds for requests in
// progress) and returns nil; any other end is an error.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
