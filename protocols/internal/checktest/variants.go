package checktest

import (
	"strings"
	"testing"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/traces"
)

// Caught searches cfg completely, wants it to fail property prop, replays
// the counterexample and returns the replayed outcome; anything else ends
// the test.
func Caught(t testing.TB, cfg model.Config, prop string) traces.Outcome {
	t.Helper()
	r, ck := Search(t, cfg)
	if r.Verdict != explore.Fail || r.Violation.PropertyName() != prop {
		t.Fatalf("want fail %s, got %s %v", prop, r.Verdict, r.Violation)
	}
	o, _, err := traces.RunCodes(ck, r.Trace, r.Loop)
	if err != nil || o.Violation == nil || o.Violation.Property != prop {
		t.Fatalf("replay: %+v, %v", o.Violation, err)
	}
	return o
}

// CatchVariants runs, for every broken variant of def, its example: it
// must fail the property that catches it (Caught), and shows[name] must
// find the bug in the counterexample (a variant without one fails).
func CatchVariants(t *testing.T, def *model.Def, shows map[string]func(o traces.Outcome) bool) {
	for _, v := range def.Variants {
		if v.Catches == "" {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			o := Caught(t, def.VariantClaim(v).Config, v.Catches)
			if show := shows[v.Name]; show == nil || !show(o) {
				t.Fatalf("the counterexample does not show the bug: %s\n%s", o.Violation, StepsText(o.Steps))
			}
		})
	}
}

// Passes searches each of cfgs completely: each must pass (one that does
// not is an error that names it; the others are still searched).
func Passes(t testing.TB, cfgs ...model.Config) {
	t.Helper()
	for _, cfg := range cfgs {
		if r, _ := Search(t, cfg); r.Verdict != explore.Pass {
			t.Errorf("%s: %s %v", cfg.Describe(), r.Verdict, r.Violation)
		}
	}
}

// Loop is Caught for a liveness failure: the counterexample must end in
// a fair loop, whose steps it returns.
func Loop(t testing.TB, cfg model.Config, prop string) []traces.Step {
	t.Helper()
	o := Caught(t, cfg, prop)
	if o.Loop == 0 {
		t.Fatalf("no loop: %s", o.Violation)
	}
	return o.Steps[len(o.Steps)-o.Loop:]
}

// CatchLoops runs, for each of claims expected to fail, a subtest: the
// claim must expect "fail prop", fail so with a fair loop (Loop), and the
// check of shows whose key its name contains (one key exactly) must find
// in the loop the mechanism the claim names. skip, where not nil, gives a
// reason to skip a claim ("" runs it). It returns the number of claims
// expected to fail.
func CatchLoops(t *testing.T, claims []model.Claim, prop string, shows map[string]func(loop []traces.Step) bool, skip func(model.Claim) string) int {
	n := 0
	for _, c := range claims {
		if c.Expect == "pass" {
			continue
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			if skip != nil {
				if why := skip(c); why != "" {
					t.Skip(why)
				}
			}
			if c.Expect != "fail "+prop {
				t.Fatalf("expect %q", c.Expect)
			}
			var show func([]traces.Step) bool
			for key, f := range shows {
				if strings.Contains(c.Name, key) {
					if show != nil {
						t.Fatalf("two mechanisms to look for in the loop")
					}
					show = f
				}
			}
			if show == nil {
				t.Fatalf("no mechanism to look for in the loop")
			}
			if loop := Loop(t, c.Config, prop); !show(loop) {
				t.Fatalf("the loop does not show the mechanism:\n%s", StepsText(loop))
			}
		})
	}
	return n
}

// Apply sets settings (key, value) on p in order, then resolves p for
// nodes nodes; it returns the first error.
func Apply(p model.Params, settings [][2]string, nodes int) error {
	for _, s := range settings {
		if err := p.Set(s[0], s[1]); err != nil {
			return err
		}
	}
	_, err := p.Resolve(nodes)
	return err
}

// Resettle sets the Settings of p on fresh, the protocol's defaults (as
// traces and scenarios carry parameters): the two must then describe the
// same parameters, whose description it returns.
func Resettle(t testing.TB, p, fresh model.Params) string {
	t.Helper()
	for _, st := range p.Settings() {
		if err := fresh.Set(st.Key, st.Value); err != nil {
			t.Fatalf("%s=%s: %v", st.Key, st.Value, err)
		}
	}
	a, b := p.Describe(), fresh.Describe()
	if a != b {
		t.Fatalf("%s\n%s", a, b)
	}
	return a
}

// StepsText renders steps one a line: the action and its changes.
func StepsText(ss []traces.Step) string {
	var b strings.Builder
	for _, s := range ss {
		b.WriteString(s.Action + " " + strings.Join(s.Changes, "; ") + "\n")
	}
	return b.String()
}

// Dropped reports whether some step delivers a packet whose brief starts
// with brief (the head of the link it leaves) and no change of the step
// mentions buffers: the receiver dropped it.
func Dropped(ss []traces.Step, brief string) bool {
	for _, s := range ss {
		ch := strings.Join(s.Changes, "\n")
		if strings.HasPrefix(s.Action, "deliver ") && strings.Contains(ch, ": ["+brief) && !strings.Contains(ch, "buffers") {
			return true
		}
	}
	return false
}

// StepWith reports whether some step of ss is action with a change
// mentioning what.
func StepWith(ss []traces.Step, action, what string) bool {
	for _, s := range ss {
		if s.Action == action && strings.Contains(strings.Join(s.Changes, "\n"), what) {
			return true
		}
	}
	return false
}
