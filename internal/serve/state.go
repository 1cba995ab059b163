package serve

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/traces"
)

// pathRequest names a path: a configuration and the actions taken from
// its initial state (LoopStart: a lasso's loop, as in trace files).
type pathRequest struct {
	Model     int      `json:"model"`
	Actions   []string `json:"actions"`
	LoopStart int      `json:"loop_start,omitempty"`
}

// choice is an enabled action with what taking it does.
type choice struct {
	Action  string   `json:"action"`
	Changes []string `json:"changes"`
	// Violation is the property the step violates ("name: message"),
	// checked as the search checks a transition; with End set, the
	// state it leads to enables no action, and Violation is then what
	// that end state violates, if anything.
	Violation string `json:"violation,omitempty"`
	End       bool   `json:"end,omitempty"`
}

// propView is a property evaluated at the current state.
type propView struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	Doc  string `json:"doc,omitempty"`
	// Status is "holds", "violated", "reached" (a Sometimes goal holds
	// here), or "-" (the property says nothing about this state alone);
	// Note says more.
	Status string `json:"status,omitempty"`
	Note   string `json:"note,omitempty"`
}

type violationView struct {
	Property    string   `json:"property"`
	Message     string   `json:"message"`
	Step        int      `json:"step"`
	Text        string   `json:"text"` // the line 'lfccheck replay' prints
	Explanation []string `json:"explanation,omitempty"`
	Live        bool     `json:"live,omitempty"`
}

// stateView is the page's view of the end of a path.
type stateView struct {
	Model    int    `json:"model"`
	Describe string `json:"describe"`
	// Length is the number of steps of the path, Last its last step with
	// its changes.
	Length    int          `json:"length"`
	Last      *traces.Step `json:"last,omitempty"`
	LoopStart int          `json:"loop_start,omitempty"`
	// State is the state after the last step, a line each; Changed marks
	// the lines the last step changed.
	State   []string `json:"state"`
	Changed []bool   `json:"changed"`
	Enabled []choice `json:"enabled"`
	// Terminal: no action is enabled. Status sums the state up: a
	// violation, an end state, or the number of enabled actions.
	Terminal   bool           `json:"terminal"`
	Status     string         `json:"status"`
	Violation  *violationView `json:"violation,omitempty"`
	Properties []propView     `json:"properties"`
}

// run replays a path on e's checker (e.mu held), with every step's
// changes when full is set, else with the last step's only (the others
// cost more than the rest of the replay on long paths).
func (e *entry) run(req pathRequest, full bool) ([]model.Action, traces.Outcome, error) {
	if len(req.Actions) > MaxSteps {
		return nil, traces.Outcome{}, fmt.Errorf("a path of %d steps is longer than the explorer takes (%d)", len(req.Actions), MaxSteps)
	}
	if req.Actions == nil {
		req.Actions = []string{}
	}
	acts, err := traces.ParseActions(e.ck.Sys, req.Actions)
	if err != nil {
		return nil, traces.Outcome{}, err
	}
	loop := 0
	if req.LoopStart != 0 {
		if req.LoopStart < 0 || req.LoopStart > len(acts) {
			return nil, traces.Outcome{}, fmt.Errorf("loop_start %d is not a step of the %d actions", req.LoopStart, len(acts))
		}
		loop = len(acts) - req.LoopStart + 1
	}
	var o traces.Outcome
	if full {
		o, err = traces.RunLasso(e.ck, acts, loop)
	} else {
		o, err = traces.RunLassoWindow(e.ck, acts, loop, traces.Window{From: len(acts), To: len(acts)})
	}
	if err != nil {
		return nil, o, err
	}
	return acts, o, nil
}

func (s *Server) pathEntry(w http.ResponseWriter, r *http.Request) (*entry, pathRequest, bool) {
	var req pathRequest
	if err := decode(w, r, maxRequestBytes, &req); err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return nil, req, false
	}
	e, err := s.lookup(req.Model)
	if err != nil {
		httpError(w, http.StatusNotFound, err.Error())
		return nil, req, false
	}
	return e, req, true
}

func (s *Server) handleState(w http.ResponseWriter, r *http.Request) {
	e, req, ok := s.pathEntry(w, r)
	if !ok {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	acts, o, err := e.run(req, false)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, e.view(acts, o, req.LoopStart))
}

// view builds the page's view of the outcome o of acts (e.mu held).
func (e *entry) view(acts []model.Action, o traces.Outcome, loopStart int) stateView {
	ck, sys := e.ck, e.ck.Sys
	v := stateView{Model: e.id, Describe: sys.Cfg.Describe(), Length: len(o.Steps), LoopStart: loopStart, Enabled: []choice{}}
	if n := len(o.Steps); n > 0 {
		v.Last = &o.Steps[n-1]
	}
	final := o.Final
	v.State = lines(final)
	// The state before the last step, for the lines it changed.
	prev := map[string]int{}
	if len(acts) > 0 {
		w := sys.Initial()
		var out model.Outbox
		for _, a := range acts[:len(acts)-1] {
			w.Apply(a, &out) // enabled: the run above took it
		}
		for _, l := range lines(w) {
			prev[l]++
		}
	}
	for _, l := range v.State {
		ch := len(acts) > 0 && prev[l] == 0
		if !ch {
			prev[l]--
		}
		v.Changed = append(v.Changed, ch)
	}
	enabled := final.Enabled(nil)
	v.Terminal = len(enabled) == 0
	if o.Violation != nil {
		v.Violation = &violationView{Property: o.Violation.Property, Message: o.Violation.Message,
			Step: o.ViolationStep, Text: o.ViolationText(), Live: o.Live}
		if o.Explanation != nil {
			v.Violation.Explanation = o.Explanation.Text()
		}
	}
	switch {
	case v.Violation != nil:
		v.Status = v.Violation.Text
	case v.Terminal:
		v.Status = "end state: no action is enabled, and every property holds"
	case len(enabled) == 1:
		v.Status = "1 action enabled"
	default:
		v.Status = fmt.Sprintf("%d actions enabled", len(enabled))
	}
	// A safety violation ends the path (the search expands no state that
	// violates a property, and replay refuses steps after it).
	if o.Violation == nil || o.Live {
		var out model.Outbox
		for _, a := range enabled {
			nw := final.Clone()
			if err := nw.Apply(a, &out); err != nil {
				continue
			}
			c := choice{Action: sys.ActionName(a), Changes: model.Diff(final, nw)}
			if c.Changes == nil {
				c.Changes = []string{}
			}
			if err := ck.CheckStep(nw, a, &out); err != nil {
				c.Violation = err.Error()
			} else if len(nw.Enabled(nil)) == 0 {
				c.End = true
				if err := ck.CheckFinal(nw); err != nil {
					c.Violation = err.Error()
				}
			}
			v.Enabled = append(v.Enabled, c)
		}
	}
	v.Properties = evaluate(ck, final, v.Terminal, o)
	return v
}

// lines is a state's printed form, a line each.
func lines(w *model.World) []string {
	return strings.Split(strings.TrimRight(w.Format(), "\n"), "\n")
}

// evaluate evaluates every checked property at w, the end of the path
// whose outcome is o.
func evaluate(ck *properties.Checker, w *model.World, terminal bool, o traces.Outcome) []propView {
	var out []propView
	for i := range ck.Props {
		p := &ck.Props[i]
		pv := propView{Name: p.Name, Kind: p.Kind(), Doc: p.Doc, Status: "-"}
		var notes []string
		violated := o.Violation != nil && o.Violation.Property == p.Name
		if violated {
			pv.Status, notes = "violated", append(notes, o.Violation.Message)
		}
		if p.State != nil && !violated {
			if err := safe(func() error { return p.State(w) }); err != nil {
				pv.Status, violated = "violated", true
				notes = append(notes, err.Error())
			} else {
				pv.Status = "holds"
			}
		}
		if p.Step != nil && !violated {
			pv.Status = "holds"
			notes = append(notes, "every step of the path satisfies its rule")
		}
		if p.Final != nil && !violated {
			if terminal {
				if err := safe(func() error { return p.Final(w) }); err != nil {
					pv.Status, violated = "violated", true
					notes = append(notes, err.Error())
				} else {
					pv.Status = "holds"
					notes = append(notes, "holds in this end state")
				}
			} else {
				notes = append(notes, "checked on end states: actions are still enabled here")
			}
		}
		if p.Sometimes != nil && !violated {
			if p.Sometimes(w) {
				pv.Status = "reached"
				notes = append(notes, "the goal holds here")
			} else {
				notes = append(notes, "the goal does not hold here (a check asks whether any reachable state reaches it)")
			}
		}
		if p.Live != model.NotLive && !violated {
			notes = append(notes, "a property of whole runs: a check decides it, or a lasso's loop shows a violation")
		}
		if violated && len(notes) > 1 {
			notes = notes[len(notes)-1:] // the violation's message
		}
		pv.Note = strings.Join(notes, "; ")
		out = append(out, pv)
	}
	return out
}

// safe runs f, turning a panic into an error: a property's code is the
// protocol's, and a page must not take the server down.
func safe(f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("internal error evaluating the property: %v", v)
		}
	}()
	return f()
}

func (s *Server) handleExport(w http.ResponseWriter, r *http.Request) {
	e, req, ok := s.pathEntry(w, r)
	if !ok {
		return
	}
	e.mu.Lock()
	acts, o, err := e.run(req, true)
	var data []byte
	if err == nil {
		data = traces.Marshal(traces.NewFile(e.ck.Sys, acts, o))
	}
	e.mu.Unlock()
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="lfccheck-path.json"`)
	w.Write(data)
}

// handleChart draws the path as the sequence chart 'lfccheck show --svg'
// draws.
func (s *Server) handleChart(w http.ResponseWriter, r *http.Request) {
	e, req, ok := s.pathEntry(w, r)
	if !ok {
		return
	}
	e.mu.Lock()
	acts, o, err := e.run(req, true)
	var svg []byte
	if err == nil {
		svg, err = traces.SVG(e.ck.Sys, acts, o)
	}
	e.mu.Unlock()
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Write(svg)
}

func (s *Server) handleLoad(w http.ResponseWriter, r *http.Request) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxTraceBytes))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			httpError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("trace file larger than %d bytes", mb.Limit))
			return
		}
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	f, err := traces.Parse(data)
	if err != nil {
		httpError(w, http.StatusBadRequest, "trace: "+err.Error())
		return
	}
	name := r.URL.Query().Get("name")
	if len(name) > 200 {
		name = name[:200]
	}
	l, err := s.load(f, name)
	if err != nil {
		httpError(w, http.StatusBadRequest, "trace: "+err.Error())
		return
	}
	writeJSON(w, l)
}

// session is what the page asks for first.
type session struct {
	Model      int        `json:"model"`
	Describe   string     `json:"describe"`
	Properties []propView `json:"properties"`
	Trace      *loaded    `json:"trace,omitempty"`
	Check      bool       `json:"check"`
}

func (s *Server) handleSession(w http.ResponseWriter, r *http.Request) {
	e := s.first
	ss := session{Model: e.id, Describe: e.ck.Sys.Cfg.Describe(), Trace: s.trace, Check: s.check != nil}
	for i := range e.ck.Props {
		p := &e.ck.Props[i]
		ss.Properties = append(ss.Properties, propView{Name: p.Name, Kind: p.Kind(), Doc: p.Doc})
	}
	writeJSON(w, ss)
}
