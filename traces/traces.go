// Package traces holds counterexample paths: running a list of actions step
// by step through a checked system, rendering the result as text a person
// can follow or as JSON a program can replay, parsing saved traces, and
// replaying them to see whether they reproduce the violation they record.
// It never searches.
package traces

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"lfccheck/model"
	"lfccheck/properties"
)

// FormatVersion identifies the trace file format that lfccheck writes.
// Version 2 added loop_start for the lassos of liveness counterexamples;
// version 1 files (without it) are still read.
const FormatVersion = "lfccheck-trace/2"

// formatV1 is the first trace format, read for compatibility.
const formatV1 = "lfccheck-trace/1"

// File is a saved trace. Actions is what replay re-executes; Steps and
// Message are for readers. LoopStart, when not 0, makes the trace a lasso:
// the actions from step LoopStart to the end form a loop that returns to
// the state after step LoopStart-1 and repeats for ever.
type File struct {
	Format    string       `json:"format"`
	Config    model.Config `json:"config"`
	Property  string       `json:"property,omitempty"` // violated property; empty when the trace records none
	Message   string       `json:"message,omitempty"`
	Actions   []string     `json:"actions"`
	LoopStart int          `json:"loop_start,omitempty"`
	Steps     []Step       `json:"steps,omitempty"`
}

// Loop is the number of actions that form the trace's loop (0: none).
func (f File) Loop() int {
	if f.LoopStart == 0 {
		return 0
	}
	return len(f.Actions) - f.LoopStart + 1
}

// Step is one executed action and what it changed.
type Step struct {
	N       int      `json:"step"`
	Action  string   `json:"action"`
	Changes []string `json:"changes"`
}

// Outcome is the result of running actions step by step.
type Outcome struct {
	Steps []Step
	Final *model.World
	// Violation is the first property violated, at step ViolationStep
	// (0: in the initial state; len(Steps) and Terminal: a condition on
	// the final state, such as deadlock).
	Violation     *properties.Violation
	ViolationStep int
	// Terminal is set when no action is enabled after the last step.
	Terminal bool
	// Explanation is what the violated property says about the final
	// state (for a deadlock, for example, a wait-for cycle; for a
	// liveness violation with a loop, how the loop is fair).
	Explanation *model.Explanation
	// Loop is the number of final steps that form a loop repeated for
	// ever (a lasso), 0 for none. Live is set when the violation is of a
	// liveness property: the goal never holds from step ViolationStep on.
	Loop int
	Live bool
}

// StepError reports an action that could not be applied.
type StepError struct {
	Step   int
	Action string
	Err    error
}

func (e *StepError) Error() string { return fmt.Sprintf("step %d (%q): %v", e.Step, e.Action, e.Err) }

// Run executes actions from ck's initial state, checking ck's properties
// after every step, and stops at the first violation. A run that ends in a
// state with no enabled action is also checked against ck's liveness
// properties.
func Run(ck *properties.Checker, actions []model.Action) (Outcome, error) {
	return RunLasso(ck, actions, 0)
}

// Verify executes actions from ck's initial state like Run, checking ck's
// properties after every step and, if the run ends in a state with no
// enabled action, the properties of end states; it keeps no per-step
// changes, so long recordings (a live run's) are cheap to check. It
// returns the first violation, or a *StepError when a step is not enabled.
func Verify(ck *properties.Checker, actions []model.Action) (*properties.Violation, error) {
	v, _, err := VerifyObserved(ck, actions, nil)
	return v, err
}

// VerifyObserved is Verify that also hands every step to observe (when
// not nil) after the model applied it, before its properties are checked:
// i is the step's index in actions, out what the step did (out.Arrived: a
// delivery's packet). An error from observe stops the replay as a
// StepError at that step. It returns the state the replay ended in too
// (nil when it stopped early).
func VerifyObserved(ck *properties.Checker, actions []model.Action, observe func(i int, a model.Action, w *model.World, out *model.Outbox) error) (*properties.Violation, *model.World, error) {
	w := ck.Sys.Initial()
	if err := ck.CheckState(w); err != nil {
		return properties.AsViolation(err), nil, nil
	}
	var out model.Outbox
	for i, a := range actions {
		w.ClearChanges()
		if err := w.Apply(a, &out); err != nil {
			return nil, nil, &StepError{Step: i + 1, Action: ck.Sys.ActionName(a), Err: errors.New("not enabled")}
		}
		if observe != nil {
			if err := observe(i, a, w, &out); err != nil {
				return nil, nil, &StepError{Step: i + 1, Action: ck.Sys.ActionName(a), Err: err}
			}
		}
		if err := ck.CheckNextStep(w, a, &out); err != nil {
			v := properties.AsViolation(err)
			v.Message = fmt.Sprintf("step %d (%s): %s", i+1, ck.Sys.ActionName(a), v.Message)
			return v, nil, nil
		}
	}
	if len(w.Enabled(nil)) == 0 {
		if err := ck.CheckFinal(w); err != nil {
			return properties.AsViolation(err), w, nil
		}
	}
	return nil, w, nil
}

// RunLasso is Run for a lasso whose last loop actions form a loop: after
// the safety checks it checks that the loop returns to its first state and
// is fair, and checks the liveness properties on the infinite run.
func RunLasso(ck *properties.Checker, actions []model.Action, loop int) (Outcome, error) {
	if loop < 0 || loop > len(actions) {
		return Outcome{}, fmt.Errorf("loop of %d steps in a trace of %d", loop, len(actions))
	}
	o, err := runLasso(ck, actions, loop, nil)
	if err == nil && loop > 0 && o.Loop != loop && o.Violation != nil {
		// A safety violation (or a deadlock) ends the run before any loop.
		return o, fmt.Errorf("the trace records a loop from step %d, but its run ends with %s violated at step %d: only a liveness counterexample has a loop", len(actions)-loop+1, o.Violation.Property, o.ViolationStep)
	}
	return o, err
}

// RunLassoWindow is RunLasso that works out the changes of the steps in
// win only (the others have no Changes), for pictures of long traces:
// the changes of every step cost more than the rest of a replay.
func RunLassoWindow(ck *properties.Checker, actions []model.Action, loop int, win Window) (Outcome, error) {
	if loop < 0 || loop > len(actions) {
		return Outcome{}, fmt.Errorf("loop of %d steps in a trace of %d", loop, len(actions))
	}
	o, err := runLasso(ck, actions, loop, func(k int) bool { return k >= win.From && k <= win.To })
	if err == nil && loop > 0 && o.Loop != loop && o.Violation != nil {
		return o, fmt.Errorf("the trace records a loop from step %d, but its run ends with %s violated at step %d: only a liveness counterexample has a loop", len(actions)-loop+1, o.Violation.Property, o.ViolationStep)
	}
	return o, err
}

// runLasso is RunLasso; changes, when not nil, says which steps'
// changes to work out.
func runLasso(ck *properties.Checker, actions []model.Action, loop int, changes func(step int) bool) (Outcome, error) {
	w := ck.Sys.Initial()
	var o Outcome
	var states []*model.World
	if ck.HasLiveness() {
		states = append(states, w.Clone())
	}
	if err := ck.CheckState(w); err != nil {
		o.Violation = properties.AsViolation(err)
		o.Final = w
		o.Explanation = ck.Explain(o.Violation.Property, w)
		return o, nil
	}
	var out model.Outbox
	var pre *model.World
	for i, a := range actions {
		diff := changes == nil || changes(i+1)
		if diff {
			if pre == nil {
				pre = w.Clone()
			} else {
				pre.CopyFrom(w)
			}
		}
		if err := w.Apply(a, &out); err != nil {
			var names []string
			for _, e := range w.Enabled(nil) {
				names = append(names, ck.Sys.ActionName(e))
			}
			return o, &StepError{Step: i + 1, Action: ck.Sys.ActionName(a),
				Err: fmt.Errorf("not enabled (enabled: %s)", orNone(strings.Join(names, ", ")))}
		}
		st := Step{N: i + 1, Action: ck.Sys.ActionName(a)}
		if diff {
			st.Changes = model.Diff(pre, w)
		}
		o.Steps = append(o.Steps, st)
		if states != nil {
			states = append(states, w.Clone())
		}
		if err := ck.CheckStep(w, a, &out); err != nil {
			o.Violation, o.ViolationStep = properties.AsViolation(err), i+1
			if i+1 < len(actions) {
				return o, &StepError{Step: i + 2, Action: ck.Sys.ActionName(actions[i+1]),
					Err: fmt.Errorf("trace goes on after %s was violated at step %d", o.Violation.Property, i+1)}
			}
			o.Final = w
			o.Explanation = ck.Explain(o.Violation.Property, w)
			return o, nil
		}
	}
	o.Final = w
	if len(w.Enabled(nil)) == 0 {
		o.Terminal = true
		if err := ck.CheckFinal(w); err != nil {
			o.Violation, o.ViolationStep = properties.AsViolation(err), len(actions)
			o.Explanation = ck.Explain(o.Violation.Property, w)
			return o, nil
		}
	}
	if o.Terminal && loop > 0 {
		return o, fmt.Errorf("the trace ends in a state with no enabled action, but records a loop")
	}
	if states == nil {
		if loop > 0 {
			return o, fmt.Errorf("the trace records a loop, but no liveness property is checked")
		}
		return o, nil
	}
	v, expl, from, err := ck.CheckLasso(states, actions, loop)
	if err != nil {
		return o, err
	}
	o.Loop = loop
	if v != nil {
		o.Violation, o.ViolationStep, o.Explanation, o.Live = v, from, expl, true
	}
	return o, nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// RunCodes runs a counterexample the explorer found with ck, given as
// action codes of which the last loop form a lasso's loop: it rebuilds the
// actions (Checker.Actions restores the steps a reduced search fused) and
// runs them with RunLasso.
func RunCodes(ck *properties.Checker, codes []uint32, loop int) (Outcome, []model.Action, error) {
	acts, l := ck.Actions(codes, loop)
	o, err := RunLasso(ck, acts, l)
	return o, acts, err
}

// NewFile builds the saved form of an outcome of the actions acts, run on
// sys.
func NewFile(sys *model.System, acts []model.Action, o Outcome) File {
	f := File{Format: FormatVersion, Config: sys.Cfg, Steps: o.Steps, Actions: []string{}}
	if o.Loop > 0 {
		f.LoopStart = len(acts) - o.Loop + 1
	}
	for _, a := range acts {
		f.Actions = append(f.Actions, sys.ActionName(a))
	}
	if o.Violation != nil {
		f.Property, f.Message = o.Violation.Property, o.Violation.Message
	}
	return f
}

// ViolationText is the line that says which property the outcome
// violates, where and how: "violated: PROPERTY WHERE: MESSAGE", WHERE being
// "after step N", "on a fair run" (a liveness violation), "in the initial
// state" or "in the final state after step N (no action enabled)"; "" when
// no property is violated.
func (o Outcome) ViolationText() string {
	if o.Violation == nil {
		return ""
	}
	where := fmt.Sprintf("after step %d", o.ViolationStep)
	switch {
	case o.Live:
		where = "on a fair run"
	case o.ViolationStep == 0:
		where = "in the initial state"
	case o.Terminal && o.ViolationStep == len(o.Steps):
		where = fmt.Sprintf("in the final state after step %d (no action enabled)", o.ViolationStep)
	}
	return fmt.Sprintf("violated: %s %s: %s", o.Violation.Property, where, o.Violation.Message)
}

// WriteText renders an outcome as numbered steps with their changes,
// followed by the violation and the final state.
func WriteText(w io.Writer, o Outcome) {
	for i, s := range o.Steps {
		if o.Loop > 0 && i == len(o.Steps)-o.Loop {
			fmt.Fprintf(w, "     -- loop: steps %d-%d repeat for ever --\n", s.N, len(o.Steps))
		}
		fmt.Fprintf(w, "%3d. %s\n", s.N, s.Action)
		for _, c := range s.Changes {
			fmt.Fprintf(w, "       %s\n", c)
		}
	}
	if o.Violation != nil {
		fmt.Fprintln(w, o.ViolationText())
		if o.Explanation != nil {
			for _, l := range o.Explanation.Text() {
				fmt.Fprintln(w, l)
			}
		}
	}
	if o.Final != nil {
		if o.Loop > 0 {
			fmt.Fprintf(w, "state at the start and end of the loop (after steps %d and %d):\n", len(o.Steps)-o.Loop, len(o.Steps))
		} else {
			fmt.Fprintln(w, "final state:")
		}
		for _, line := range strings.Split(strings.TrimRight(o.Final.Format(), "\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
}

// Marshal renders a trace file as indented JSON, without HTML escaping so
// that the readable steps stay readable ("->", not "\u003e").
func Marshal(f File) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		panic("traces: marshal: " + err.Error()) // only plain data: cannot fail
	}
	return b.Bytes()
}

// Parse reads a trace file and checks its form: the format tag, a config
// of a registered protocol, and an actions list. Errors name the problem
// and, for syntax errors, the line and column. Actions are parsed against
// the built system with ParseActions.
func Parse(data []byte) (File, error) {
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			l, c := lineCol(data, se.Offset)
			return f, fmt.Errorf("line %d, column %d: malformed JSON: %v", l, c, se)
		case errors.As(err, &te):
			l, c := lineCol(data, te.Offset)
			return f, fmt.Errorf("line %d, column %d: field %q: wrong type %s", l, c, te.Field, te.Value)
		case errors.Is(err, io.EOF):
			return f, errors.New("empty file: not a trace")
		}
		return f, fmt.Errorf("not a trace: %v", err)
	}
	if dec.More() {
		return f, errors.New("trailing data after the trace object")
	}
	if f.Format != FormatVersion && f.Format != formatV1 {
		return f, fmt.Errorf("format is %q, want %q (or %q)", f.Format, FormatVersion, formatV1)
	}
	if f.LoopStart != 0 && f.Format == formatV1 {
		return f, fmt.Errorf("loop_start needs format %q", FormatVersion)
	}
	if f.LoopStart < 0 || f.LoopStart > len(f.Actions) {
		return f, fmt.Errorf("loop_start %d is not a step of the %d actions", f.LoopStart, len(f.Actions))
	}
	if f.Config.Protocol == "" {
		return f, errors.New("config.protocol is missing")
	}
	if f.Config.Nodes < 2 || f.Config.Nodes > model.MaxNodes {
		return f, fmt.Errorf("config.nodes must be in 2..%d, got %d", model.MaxNodes, f.Config.Nodes)
	}
	if f.Actions == nil {
		return f, errors.New("actions list is missing")
	}
	return f, nil
}

// ParseActions parses printed action names against sys.
func ParseActions(sys *model.System, names []string) ([]model.Action, error) {
	acts := make([]model.Action, len(names))
	for i, s := range names {
		a, err := sys.ParseAction(s)
		if err != nil {
			return nil, fmt.Errorf("step %d: %v", i+1, err)
		}
		acts[i] = a
	}
	return acts, nil
}

func lineCol(data []byte, off int64) (int, int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	// The decoder's offset is just past the offending byte.
	if off > 0 {
		off--
	}
	pre := data[:off]
	line := bytes.Count(pre, []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(pre, '\n')
	return line, col
}

// Reproduces reports whether an outcome is the one a file records: the
// same violated property with the same message at the same step (or, for
// a file that records none, no violation), and the same steps with the
// same changes. It returns a description of the first difference.
func Reproduces(f File, o Outcome) (bool, string) {
	if def, err := model.Lookup(f.Config.Protocol); err == nil {
		f.Property = def.PropertyName(f.Property) // a file from before a rename
	}
	switch {
	case o.Violation == nil && f.Property != "":
		return false, fmt.Sprintf("the trace records %s, but no property was violated", f.Property)
	case o.Violation != nil && o.Violation.Property != f.Property:
		return false, fmt.Sprintf("the trace records %q, but replay violates %s", f.Property, o.Violation.Property)
	case o.Violation != nil && o.Violation.Message != f.Message:
		return false, fmt.Sprintf("the trace records the message %q, but replay gives %q", f.Message, o.Violation.Message)
	case o.Violation == nil && f.Message != "":
		return false, fmt.Sprintf("the trace records the message %q without a property", f.Message)
	}
	if f.Steps != nil {
		if len(f.Steps) != len(o.Steps) {
			return false, fmt.Sprintf("the trace records %d steps, replay made %d", len(f.Steps), len(o.Steps))
		}
		for i := range o.Steps {
			a, b := f.Steps[i], o.Steps[i]
			if a.N != b.N || a.Action != b.Action || strings.Join(a.Changes, "\n") != strings.Join(b.Changes, "\n") {
				return false, fmt.Sprintf("step %d differs from the recorded one", i+1)
			}
		}
	}
	return true, ""
}
