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
