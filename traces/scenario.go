package traces

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"lfccheck/model"
	"lfccheck/properties"
)

// A Scenario drives one configuration through a fixed list of actions and
// checks what it sees on the way, in the manner of etcd raft's testdata
// scenarios. A scenario file is read line by line; blank lines and lines
// starting with '#' are ignored. Its shape (testdata/*.scenario has
// complete ones):
//
//	# what the scenario shows
//	config protocol=NAME nodes=3 KEY=VALUE ...
//	host 0 launch
//	deliver 0->1
//	expect state ni 1: ...
//	expect enabled: host 0 launch, deliver 1->2
//	...
//	expect final-ok
//
// The header comes first:
//
//	config KEY=VALUE ...   the configuration, in the key=value form of
//	                       model.ParseSettings (protocol=NAME first; values
//	                       contain no spaces, so a topology, whose
//	                       statements do, comes from a file)
//	KEY-file PATH          after the config line, for a parameter the
//	                       protocol reads from a file (a topology:
//	                       "topology-file overlap.topo"); PATH is relative
//	                       to the scenario file's directory
//
// Then, in any order, actions, exactly as traces print them ("host 0
// launch", "deliver 0->1", "ni 1 copy"), and checks, which hold in the
// state reached by the actions above them:
//
//	expect enabled: A, B, C   exactly these actions are enabled, in this
//	                          order ("expect enabled:" alone: none)
//	expect enabled A          A is enabled
//	expect disabled A         A is not enabled
//	expect state TEXT         TEXT is one line of the state's rendering
//	                          (World.Format, as under "final state:")
//	expect ok                 no property is violated so far
//	expect violated PROPERTY  PROPERTY is the property the run has violated
//	                          (by a step, or, with no action enabled, by
//	                          the final state)
//	expect terminal           no action is enabled
//	expect final-ok           no action is enabled and no property is
//	                          violated: the run has ended properly
//	expect deadlock           no action is enabled and the final state
//	                          violates deadlock
//
// A run stops at its first violation, so actions after one are an error.
// Everything is checked when the scenario is parsed except what needs the
// run: unknown lines, keys, parameters, actions and properties are errors
// naming the file and line.
type Scenario struct {
	Name    string
	Config  model.Config // as given: the checker resolves it
	Actions []string
	Checks  []Check

	lines []int // the line of each action
	ck    *properties.Checker
	acts  []model.Action
}

// Check is one expect line: it applies after the first After actions.
type Check struct {
	Line  int
	After int
	// Kind is the expect word: "enabled:" (the exact set), "enabled",
	// "disabled", "state", "ok", "violated", "terminal", "final-ok" or
	// "deadlock".
	Kind string
	Arg  string
}

// checkKinds lists the expect words and whether each takes an argument.
var checkKinds = []struct {
	word string
	arg  bool
}{
	{"enabled:", false}, {"enabled", true}, {"disabled", true}, {"state", true},
	{"ok", false}, {"violated", true}, {"terminal", false}, {"final-ok", false}, {"deadlock", false},
}

func checkWords() string {
	var ws []string
	for _, k := range checkKinds {
		ws = append(ws, k.word)
	}
	return strings.Join(ws, ", ")
}

// fileSetter is implemented by parameters that take a file's contents and
// name the file in their errors.
type fileSetter interface {
	SetFile(key, name string, data []byte) error
}

// ParseScenario reads a scenario named name (its path: files the scenario
// names are read relative to its directory) and builds its checker. Errors
// name the file and line.
func ParseScenario(name, data string) (*Scenario, error) {
	s := &Scenario{Name: name}
	var (
		def        *model.Def
		configLine int
		given      = map[string]bool{} // parameters set by the header
	)
	for i, raw := range strings.Split(data, "\n") {
		ln := i + 1
		line := strings.TrimSpace(raw)
		errf := func(format string, a ...any) error {
			return fmt.Errorf("%s:%d: %s", name, ln, fmt.Sprintf(format, a...))
		}
		word, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		case word == "config":
			if configLine != 0 {
				return nil, errf("a second config line (the first is line %d)", configLine)
			}
			configLine = ln
			set, err := model.SplitSettings(rest)
			if err == nil {
				s.Config, err = model.ParseSettings(set)
			}
			if err != nil {
				return nil, errf("%v", err)
			}
			def, _ = model.Lookup(s.Config.Protocol)
			for _, st := range set {
				given[st.Key] = true
			}
			continue
		case configLine == 0:
			return nil, errf("the config line must come first")
		case strings.HasSuffix(word, "-file"):
			key := strings.TrimSuffix(word, "-file")
			if s.ck != nil {
				return nil, errf("%s must come before the first action or check", word)
			}
			if spec := def.Param(key); spec == nil || !spec.File {
				return nil, errf("protocol %s reads no parameter from a file as %q", def.Name, word)
			}
			if given[key] {
				return nil, errf("%s given twice", key)
			}
			if rest == "" || strings.ContainsAny(rest, " \t") {
				return nil, errf("%s takes one path", word)
			}
			given[key] = true
			data, err := os.ReadFile(filepath.Join(filepath.Dir(name), rest))
			if err != nil {
				return nil, errf("%v", err)
			}
			if fs, ok := s.Config.Params.(fileSetter); ok {
				err = fs.SetFile(key, rest, data)
			} else {
				err = s.Config.Params.Set(key, string(data))
			}
			if err != nil {
				return nil, errf("%s %s: %v", word, rest, err)
			}
			continue
		}
		// The header is complete: build the checker, against which the
		// rest is parsed.
		if s.ck == nil {
			if err := s.build(configLine); err != nil {
				return nil, err
			}
		}
		if word == "expect" {
			c, err := s.parseCheck(rest)
			if err != nil {
				return nil, errf("%v", err)
			}
			c.Line, c.After = ln, len(s.Actions)
			s.Checks = append(s.Checks, c)
			continue
		}
		a, err := s.ck.Sys.ParseAction(line)
		if err != nil {
			if strings.HasPrefix(err.Error(), "unknown action") {
				return nil, errf("neither a directive (config, KEY-file, expect) nor an action: %v", err)
			}
			return nil, errf("%v", err)
		}
		s.Actions = append(s.Actions, line)
		s.acts = append(s.acts, a)
		s.lines = append(s.lines, ln)
	}
	if configLine == 0 {
		return nil, fmt.Errorf("%s: no config line", name)
	}
	if s.ck == nil {
		if err := s.build(configLine); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *Scenario) build(configLine int) error {
	ck, err := properties.Build(s.Config)
	if err != nil {
		return fmt.Errorf("%s:%d: config: %v", s.Name, configLine, err)
	}
	s.ck = ck
	return nil
}

// parseCheck parses what follows "expect ".
func (s *Scenario) parseCheck(rest string) (Check, error) {
	word, arg, _ := strings.Cut(rest, " ")
	arg = strings.TrimSpace(arg)
	var c Check
	for _, k := range checkKinds {
		if k.word != word {
			continue
		}
		switch {
		case k.arg && arg == "":
			return c, fmt.Errorf("expect %s needs an argument", word)
		case !k.arg && arg != "" && word != "enabled:":
			return c, fmt.Errorf("expect %s takes no argument", word)
		}
		c.Kind, c.Arg = word, arg
		switch word {
		case "enabled:":
			if arg != "" {
				names := strings.Split(arg, ",")
				for i := range names {
					names[i] = strings.TrimSpace(names[i])
					if _, err := s.ck.Sys.ParseAction(names[i]); err != nil {
						return c, err
					}
				}
				c.Arg = strings.Join(names, ", ")
			}
		case "enabled", "disabled":
			if _, err := s.ck.Sys.ParseAction(arg); err != nil {
				return c, err
			}
		case "violated":
			var names []string
			for _, p := range s.ck.Props {
				if p.Name == arg {
					return c, nil
				}
				names = append(names, p.Name)
			}
			return c, fmt.Errorf("no property %q is checked (checked: %s)", arg, strings.Join(names, ", "))
		}
		return c, nil
	}
	return c, fmt.Errorf("unknown check %q (want expect followed by one of %s)", word, checkWords())
}

// Run runs the scenario's actions from the initial state and evaluates
// every check at its point. It returns the checker, the outcome of the
// whole run (what WriteText renders for the golden file: the same as Run
// on all the actions), and one error per failed check or inapplicable
// action, each naming the file and line.
func (s *Scenario) Run() (*properties.Checker, Outcome, []error) {
	full, err := Run(s.ck, s.acts)
	var errs []error
	stop := len(s.acts) // checks after a failed action are not evaluated
	if err != nil {
		if se, ok := err.(*StepError); ok && se.Step-1 < len(s.lines) {
			stop = se.Step - 1
			errs = append(errs, fmt.Errorf("%s:%d: %s: %v", s.Name, s.lines[stop], se.Action, se.Err))
		} else {
			errs = append(errs, fmt.Errorf("%s: %v", s.Name, err))
		}
	}
	at := map[int]Outcome{}
	for _, c := range s.Checks {
		if c.After > stop {
			break
		}
		o, ok := at[c.After]
		if !ok {
			o, err = Run(s.ck.Fork(), s.acts[:c.After])
			if err != nil { // a prefix of a run that went further
				errs = append(errs, fmt.Errorf("%s:%d: %v", s.Name, c.Line, err))
				continue
			}
			at[c.After] = o
		}
		if err := c.eval(s.ck.Sys, o); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: after %d actions: %v", s.Name, c.Line, c.After, err))
		}
	}
	return s.ck, full, errs
}

func (c Check) eval(sys *model.System, o Outcome) error {
	var names []string
	for _, a := range o.Final.Enabled(nil) {
		names = append(names, sys.ActionName(a))
	}
	got := strings.Join(names, ", ")
	has := false
	for _, n := range names {
		has = has || n == c.Arg
	}
	violated := "no property is violated"
	if v := o.Violation; v != nil {
		violated = fmt.Sprintf("%s is violated: %s", v.Property, v.Message)
	}
	switch c.Kind {
	case "enabled:":
		if got != c.Arg {
			return fmt.Errorf("enabled: %s", orNone(got))
		}
	case "enabled":
		if !has {
			return fmt.Errorf("%q is not enabled (enabled: %s)", c.Arg, orNone(got))
		}
	case "disabled":
		if has {
			return fmt.Errorf("%q is enabled", c.Arg)
		}
	case "state":
		for _, l := range strings.Split(o.Final.Format(), "\n") {
			if l == c.Arg {
				return nil
			}
		}
		return fmt.Errorf("no state line %q in\n%s", c.Arg, o.Final.Format())
	case "ok":
		if o.Violation != nil {
			return fmt.Errorf("%s", violated)
		}
	case "violated":
		if o.Violation == nil || o.Violation.Property != c.Arg {
			return fmt.Errorf("%s, want %s violated", violated, c.Arg)
		}
	case "terminal", "final-ok", "deadlock":
		if !o.Terminal {
			return fmt.Errorf("not terminal: enabled: %s", got)
		}
		if c.Kind == "final-ok" && o.Violation != nil {
			return fmt.Errorf("%s", violated)
		}
		if c.Kind == "deadlock" && (o.Violation == nil || o.Violation.Property != "deadlock") {
			return fmt.Errorf("%s, want deadlock", violated)
		}
	default:
		return fmt.Errorf("unknown check %q", c.Kind)
	}
	return nil
}
