package serve

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"time"

	"lfccheck/model"
)

// job is a check started from the page: one runs at a time.
type job struct {
	model    int
	describe string
	started  time.Time
	cancel   context.CancelFunc

	mu       sync.Mutex
	progress progressView
	partial  []byte // a progress line not yet ended
	done     bool
	ended    time.Time
	result   *CheckResult
	err      string
}

// progressView is the last progress line of a running check and what it
// says.
type progressView struct {
	Line       string  `json:"line,omitempty"`
	States     int64   `json:"states"`
	Depth      int     `json:"depth"`
	StatesPerS float64 `json:"states_per_s"`
}

// checkStatus is the answer to GET /api/check.
type checkStatus struct {
	Running   bool         `json:"running"`
	Model     int          `json:"model,omitempty"`
	Describe  string       `json:"describe,omitempty"`
	ElapsedS  float64      `json:"elapsed_s"`
	Progress  progressView `json:"progress"`
	Result    *CheckResult `json:"result,omitempty"`
	Error     string       `json:"error,omitempty"`
	Available bool         `json:"available"`
}

var (
	progStates = regexp.MustCompile(`progress: (\d+) states`)
	progDepth  = regexp.MustCompile(`depth (\d+)`)
	progRate   = regexp.MustCompile(`([\d.]+) states/s`)
)

// Write takes the check's progress output, line by line.
func (j *job) Write(p []byte) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.partial = append(j.partial, p...)
	for {
		i := bytes.IndexByte(j.partial, '\n')
		if i < 0 {
			break
		}
		line := string(j.partial[:i])
		j.partial = j.partial[i+1:]
		j.progress.Line = line
		if m := progStates.FindStringSubmatch(line); m != nil {
			j.progress.States, _ = strconv.ParseInt(m[1], 10, 64)
		}
		if m := progDepth.FindStringSubmatch(line); m != nil {
			j.progress.Depth, _ = strconv.Atoi(m[1])
		}
		if m := progRate.FindStringSubmatch(line); m != nil {
			j.progress.StatesPerS, _ = strconv.ParseFloat(m[1], 64)
		}
	}
	if len(j.partial) > 4096 {
		j.partial = j.partial[:0] // not a progress line
	}
	return len(p), nil
}

func (s *Server) handleCheckStart(w http.ResponseWriter, r *http.Request) {
	if s.check == nil {
		httpError(w, http.StatusNotImplemented, "this server runs no checks")
		return
	}
	var req struct {
		Model int `json:"model"`
	}
	if err := decode(w, r, maxRequestBytes, &req); err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	e, err := s.lookup(req.Model)
	if err != nil {
		httpError(w, http.StatusNotFound, err.Error())
		return
	}
	s.mu.Lock()
	if s.ctx.Err() != nil {
		s.mu.Unlock()
		httpError(w, http.StatusServiceUnavailable, "the server is stopping")
		return
	}
	if s.job != nil && !s.job.isDone() {
		s.mu.Unlock()
		httpError(w, http.StatusConflict, "a check is already running (one at a time): wait for it or cancel it")
		return
	}
	ctx, cancel := context.WithCancel(s.ctx)
	j := &job{model: e.id, describe: e.ck.Sys.Cfg.Describe(), started: time.Now(), cancel: cancel}
	s.job = j
	s.running.Add(1)
	s.mu.Unlock()
	cfg := e.ck.Sys.Cfg
	go func() {
		defer s.running.Done()
		defer cancel()
		res, err := s.runCheck(ctx, cfg, j)
		j.mu.Lock()
		defer j.mu.Unlock()
		j.done, j.ended = true, time.Now()
		if err != nil {
			j.err = err.Error()
			return
		}
		j.result = &res
	}()
	writeJSON(w, j.status())
}

// runCheck runs the check function, turning a panic into an error.
func (s *Server) runCheck(ctx context.Context, cfg model.Config, j *job) (res CheckResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("internal error: %v", v)
		}
	}()
	return s.check(ctx, cfg, j)
}

func (j *job) isDone() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.done
}

func (j *job) status() checkStatus {
	j.mu.Lock()
	defer j.mu.Unlock()
	st := checkStatus{Running: !j.done, Model: j.model, Describe: j.describe, Progress: j.progress,
		Result: j.result, Error: j.err, Available: true}
	end := time.Now()
	if j.done {
		end = j.ended
	}
	st.ElapsedS = end.Sub(j.started).Seconds()
	return st
}

func (s *Server) handleCheckStatus(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	j := s.job
	s.mu.Unlock()
	if j == nil {
		writeJSON(w, checkStatus{Available: s.check != nil})
		return
	}
	writeJSON(w, j.status())
}

func (s *Server) handleCheckCancel(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	j := s.job
	s.mu.Unlock()
	if j == nil || j.isDone() {
		httpError(w, http.StatusConflict, "no check is running")
		return
	}
	j.cancel()
	writeJSON(w, j.status())
}
