package traces

import (
	"errors"
	"fmt"
	"strings"

	"lfccheck/model"
	"lfccheck/properties"
)

// A scenario drives a configuration step by step and checks what it sees
// on the way, in the manner of etcd raft's testdata scenarios:
//
//	# what the scenario shows
//	config protocol=NAME nodes=3 KEY=VALUE ...
//	host 0 launch
//	deliver 0->1
//	expect state ni 1: ...
//	expect enabled: host 0 launch, deliver 1->2, ni 1 copy
//	...
//	expect ok
//
// (testdata/*.scenario has complete examples.)
// Lines are '#' comments, one config line (the key=value form of
// model.ParseSettings), action names as printed in traces, and checks that
// apply to the state after the actions above them:
//
//	expect enabled: A, B, C   exactly these actions are enabled, in this order
//	expect enabled A          A is enabled
//	expect disabled A         A is not enabled
//	expect state TEXT         TEXT is one line of the state's rendering
//	expect ok                 no property is violated so far
//	expect violated PROPERTY  PROPERTY is violated by the last step (or, at
//	                          the end of a run with no action enabled, by
//	                          the final state)
//	expect terminal           no action is enabled
type Scenario struct {
	Name    string
	Config  model.Config
	Actions []string
	Checks  []Check
}

// Check is one expect line: it applies after the first After actions.
type Check struct {
	Line  int
	After int
	Kind  string // enabled-exactly, enabled, disabled, state, ok, violated, terminal
	Arg   string
}

// ParseScenario reads a scenario; errors name the file and line.
func ParseScenario(name, data string) (*Scenario, error) {
	s := &Scenario{Name: name}
	sawConfig := false
	for i, raw := range strings.Split(data, "\n") {
		ln := i + 1
		line := strings.TrimSpace(raw)
		errf := func(format string, a ...any) error {
			return fmt.Errorf("%s:%d: %s", name, ln, fmt.Sprintf(format, a...))
		}
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "config "):
			if sawConfig {
				return nil, errf("a second config line")
			}
			sawConfig = true
			set, err := model.SplitSettings(strings.TrimPrefix(line, "config "))
			if err == nil {
				s.Config, err = model.ParseSettings(set)
			}
			if err != nil {
				return nil, errf("%v", err)
			}
		case !sawConfig:
			return nil, errf("the config line must come first")
		case strings.HasPrefix(line, "expect "):
			c := Check{Line: ln, After: len(s.Actions)}
			rest := strings.TrimPrefix(line, "expect ")
			word, arg, _ := strings.Cut(rest, " ")
			switch word {
			case "enabled:":
				c.Kind, c.Arg = "enabled-exactly", arg
			case "enabled", "disabled", "state", "violated":
				if arg == "" {
					return nil, errf("expect %s needs an argument", word)
				}
				c.Kind, c.Arg = word, arg
			case "ok", "terminal":
				if arg != "" {
					return nil, errf("expect %s takes no argument", word)
				}
				c.Kind = word
			default:
				return nil, errf("unknown check %q (want enabled:, enabled, disabled, state, ok, violated or terminal)", word)
			}
			s.Checks = append(s.Checks, c)
		default:
			s.Actions = append(s.Actions, line)
		}
	}
	if !sawConfig {
		return nil, fmt.Errorf("%s: no config line", name)
	}
	return s, nil
}

// Run builds the scenario's checker, runs its actions, and evaluates every
// check at its point. It returns the outcome of the whole run (for the
// golden rendering) and one error per failed check.
func (s *Scenario) Run() (*properties.Checker, Outcome, []error) {
	ck, err := properties.Build(s.Config)
	if err != nil {
		return nil, Outcome{}, []error{fmt.Errorf("%s: config: %v", s.Name, err)}
	}
	acts, err := ParseActions(ck.Sys, s.Actions)
	if err != nil {
		return ck, Outcome{}, []error{fmt.Errorf("%s: %v", s.Name, err)}
	}
	full, err := Run(ck, acts)
	if err != nil {
		return ck, full, []error{fmt.Errorf("%s: %v", s.Name, err)}
	}
	var errs []error
	for _, c := range s.Checks {
		o, err := Run(ck.Fork(), acts[:c.After])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %v", s.Name, c.Line, err))
			continue
		}
		if err := c.eval(ck.Sys, o, c.After); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: after %d actions: %v", s.Name, c.Line, c.After, err))
		}
	}
	return ck, full, errs
}

func (c Check) eval(sys *model.System, o Outcome, after int) error {
	var names []string
	for _, a := range o.Final.Enabled(nil) {
		names = append(names, sys.ActionName(a))
	}
	has := func(n string) bool {
		for _, x := range names {
			if x == n {
				return true
			}
		}
		return false
	}
	got := strings.Join(names, ", ")
	switch c.Kind {
	case "enabled-exactly":
		if got != c.Arg {
			return fmt.Errorf("enabled: %s", orNone(got))
		}
	case "enabled":
		if !has(c.Arg) {
			return fmt.Errorf("%q is not enabled (enabled: %s)", c.Arg, orNone(got))
		}
	case "disabled":
		if has(c.Arg) {
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
			return fmt.Errorf("%s is violated: %s", o.Violation.Property, o.Violation.Message)
		}
	case "violated":
		if o.Violation == nil {
			return fmt.Errorf("no property is violated, want %s", c.Arg)
		}
		if o.Violation.Property != c.Arg || (o.ViolationStep != after && !o.Terminal) {
			return fmt.Errorf("%s is violated at step %d, want %s at step %d", o.Violation.Property, o.ViolationStep, c.Arg, after)
		}
	case "terminal":
		if len(names) > 0 {
			return fmt.Errorf("enabled: %s", got)
		}
	default:
		return errors.New("unknown check")
	}
	return nil
}
