package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols"
)

// suiteCheck is one line of the built-in suite: a claim of a registered
// protocol, or the claim a broken variant makes.
type suiteCheck struct {
	name   string
	claim  model.Claim
	static *model.StaticClaim // a claim decided without a search
}

// suite lists the built-in checks: every protocol's claims, then every
// broken variant's example, in registration order. The configurations are
// the protocols' own: 'lfccheck list' prints the variants' as commands.
func suite() []suiteCheck {
	var s []suiteCheck
	for _, d := range protocols.All() {
		for _, c := range d.Claims {
			s = append(s, suiteCheck{name: d.Name + " " + c.Name, claim: c})
		}
		for i := range d.Static {
			st := &d.Static[i]
			s = append(s, suiteCheck{name: d.Name + " " + st.Name, static: st,
				claim: model.Claim{Name: st.Name, Expect: st.Expect, Ref: st.Ref, Doc: st.Doc, Config: model.Config{Protocol: d.Name}}})
		}
	}
	for _, d := range protocols.All() {
		for _, v := range d.Variants {
			if v.Catches != "" {
				c := d.VariantClaim(v)
				s = append(s, suiteCheck{name: d.Name + " " + v.Name + " " + shortSettings(c.Config), claim: c})
			}
		}
	}
	return s
}

// shortSettings renders a configuration's size briefly: P and its
// non-default parameters.
func shortSettings(c model.Config) string {
	parts := []string{fmt.Sprintf("P=%d", c.Nodes)}
	if c.Params != nil {
		for _, s := range c.Params.Settings() {
			parts = append(parts, s.String())
		}
	}
	if len(c.Faults) > 0 {
		parts = append(parts, "faults="+c.Faults.String())
	}
	return strings.Join(parts, " ")
}

// prefixWriter starts every line written to w with prefix.
type prefixWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	mid    bool
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out bytes.Buffer
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if !p.mid {
			out.WriteString(p.prefix)
		}
		out.Write(line)
		p.mid = line[len(line)-1] != '\n'
	}
	if _, err := p.w.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return len(b), nil
}

// longestProperty is the length of the longest property name of a
// registered protocol (0 for an unknown one).
func longestProperty(protocol string) int {
	d, err := model.Lookup(protocol)
	if err != nil {
		return 0
	}
	n := 0
	for _, p := range d.Properties {
		n = max(n, len(p.Name))
	}
	return n
}

func runSuite(args []string, e env) (int, error) {
	var sf searchFlags
	fs := newFlags("suite", e)
	sf.register(fs, 10*time.Minute, true)
	verbose := fs.BoolP("verbose", "v", false, "print the claim behind each check")
	if err := parseNoArgs(fs, args, "[flags]"); err != nil {
		return 0, err
	}
	opt, err := sf.options(e)
	if err != nil {
		return 0, err
	}
	checks := suite()
	width, vwidth := len("CHECK"), len("EXPECTED")
	for _, sc := range checks {
		width = max(width, len(sc.name))
		// a verdict is "pass", "incomplete" or the expectation's form
		vwidth = max(vwidth, len(sc.claim.Expect), len("incomplete"), len("fail ")+longestProperty(sc.claim.Config.Protocol))
	}
	explores := "each check explores the complete state space"
	if opt.Fingerprint {
		// A pass over fingerprints is not a proof (see printCheck).
		explores = "each check explores the state space with 64-bit fingerprints (--fingerprint: a state may be missed, with a tiny probability)"
	}
	fmt.Fprintf(e.stdout, "lfccheck built-in suite: %s (dependency graph rows are static: STATES counts partitions)\n\n", explores)
	fmt.Fprintf(e.stdout, "%-*s %-*s %-*s %10s %8s\n", width, "CHECK", vwidth, "EXPECTED", vwidth, "VERDICT", "STATES", "TIME")
	bad, incomplete, done := 0, 0, 0
	for _, sc := range checks {
		if sc.static != nil {
			start := time.Now()
			got, size, err := sc.static.Check()
			if err != nil {
				return 0, fmt.Errorf("internal error: suite check %q: %v", sc.name, err)
			}
			done++
			mark := "ok"
			if got != sc.claim.Expect {
				mark = "UNEXPECTED"
				bad++
			}
			fmt.Fprintf(e.stdout, "%-*s %-*s %-*s %10d %7.2fs  %s\n", width, sc.name, vwidth, sc.claim.Expect, vwidth, got, size, time.Since(start).Seconds(), mark)
			if *verbose {
				fmt.Fprintf(e.stdout, "    claim: %s (%s; static: the STATES column counts partitions)\n", sc.claim.Doc, sc.claim.Ref)
			}
			continue
		}
		ck, err := properties.Build(sc.claim.Config)
		if err != nil {
			return 0, fmt.Errorf("internal error: suite check %q: %v", sc.name, err)
		}
		sf.setUp(ck)
		o := opt
		if o.Progress != nil {
			o.Progress = &prefixWriter{w: e.stderr, prefix: "[" + sc.name + "] "}
		}
		res, err := checkOne(ck, o)
		if err != nil {
			return 0, err
		}
		done++
		got := res.json.Verdict
		if got == string(explore.Fail) {
			got += " " + res.json.Property
		}
		mark := "ok"
		switch {
		case res.json.Verdict == string(explore.Incomplete):
			mark = "INCOMPLETE"
			incomplete++
			got += " (" + firstWord(res.json.Reason) + ")"
		case got != sc.claim.Expect:
			mark = "UNEXPECTED"
			bad++
		}
		fmt.Fprintf(e.stdout, "%-*s %-*s %-*s %10d %7.2fs  %s\n", width, sc.name, vwidth, sc.claim.Expect, vwidth, got, res.json.States, res.json.ElapsedS, mark)
		if *verbose {
			ref := ""
			if sc.claim.Ref != "" {
				ref = " (" + sc.claim.Ref + ")"
			}
			fmt.Fprintf(e.stdout, "    claim: %s%s\n", sc.claim.Doc, ref)
		}
		if interrupted(e) {
			break
		}
	}
	fmt.Fprintf(e.stdout, "\n%d checks: %d as expected, %d unexpected, %d incomplete", len(checks), done-bad-incomplete, bad, incomplete)
	if done < len(checks) {
		fmt.Fprintf(e.stdout, ", %d not run (interrupted)", len(checks)-done)
		incomplete++
	}
	fmt.Fprintln(e.stdout)
	return exitFor(bad, incomplete), nil
}

func firstWord(s string) string {
	if i := strings.IndexByte(s, ' '); i > 0 {
		return s[:i]
	}
	return s
}

func interrupted(e env) bool {
	if e.stop == nil {
		return false
	}
	select {
	case <-e.stop:
		return true
	default:
		return false
	}
}

// exitFor is the exit code of a run of several checks: a failure (or
// unexpected outcome) wins over an incomplete search.
func exitFor(failed, incomplete int) int {
	switch {
	case failed > 0:
		return exitFail
	case incomplete > 0:
		return exitIncomplete
	}
	return exitPass
}
