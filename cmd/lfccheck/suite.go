package main

import (
	"fmt"
	"io"
	"time"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/protocols"
)

// suiteCheck is one line of the built-in suite: a configuration and the
// outcome the thesis (or the broken variant's purpose) leads us to expect.
type suiteCheck struct {
	name   string
	cfg    model.Config
	expect string // "pass" or "fail <property>"
	claim  string
}

// suite lists the built-in checks: every configuration the project can
// check quickly, correct protocols and broken variants alike.
func suite() []suiteCheck {
	var s []suiteCheck
	for _, c := range []model.Config{
		{Protocol: "ucast", Nodes: 2, Credits: 1, Packets: 3},
		{Protocol: "ucast", Nodes: 2, Credits: 2, Packets: 4},
		{Protocol: "ucast", Nodes: 3, Credits: 1, Packets: 1},
		{Protocol: "ucast", Nodes: 3, Credits: 2, Packets: 1},
		{Protocol: "ucast", Nodes: 3, Credits: 1, Flows: []model.Flow{{Src: 0, Dst: 1, Count: 3}, {Src: 1, Dst: 0, Count: 3}, {Src: 2, Dst: 1, Count: 2}}},
	} {
		s = append(s, suiteCheck{name: "ucast " + shortConfig(c), cfg: c, expect: "pass",
			claim: "UCAST is reliable, FIFO and deadlock-free (§4.1)"})
	}
	s = append(s, suiteCheck{name: "ucast refresh>C " + shortConfig(model.Config{Nodes: 2, Credits: 1, Packets: 2}),
		cfg:    model.Config{Protocol: "ucast", Nodes: 2, Credits: 1, Packets: 2, Refresh: 2},
		expect: "fail deadlock", claim: "credits owed below CREDIT_REFRESH > C are never returned"})
	mc := func(name, claim, expect string, cfg model.Config) {
		cfg.Protocol = "mcast"
		s = append(s, suiteCheck{name: "mcast " + name, cfg: cfg, expect: expect, claim: claim})
	}
	mc("chain P=4 C=1 K=1", "chains deadlock (Fig. 4.8)", "fail deadlock",
		model.Config{Nodes: 4, Credits: 1, Packets: 1, Tree: "chain"})
	for _, tree := range []string{"binary", "binomial"} {
		for _, c := range [][3]int{{3, 1, 1}, {3, 2, 1}, {3, 1, 2}} {
			mc(fmt.Sprintf("%s P=%d C=%d K=%d", tree, c[0], c[1], c[2]), tree+" trees are deadlock-free (App. A.1)", "pass",
				model.Config{Nodes: c[0], Credits: c[1], Packets: c[2], Tree: tree})
		}
	}
	mc("3 overlapping groups P=6", "overlapping groups can deadlock (App. A.2)", "fail deadlock",
		model.Config{Nodes: 6, Credits: 1, Topology: OverlapSmall(), Casts: overlapCasts})
	two := OverlapSmall()
	two.Groups, two.Trees = two.Groups[:2], two.Trees[:2]
	mc("2 of those groups P=6", "the cycle needs all three groups", "pass",
		model.Config{Nodes: 6, Credits: 1, Topology: two, Casts: overlapCasts[:2]})
	for _, p := range protocols.All() {
		for _, v := range p.Variants {
			if v.Catches == "" {
				continue
			}
			cfg := v.Example
			cfg.Protocol, cfg.Variant = p.Name, v.Name
			cfg.Properties = []string{v.Catches}
			s = append(s, suiteCheck{name: p.Name + " " + v.Name + " " + shortConfig(cfg), cfg: cfg,
				expect: "fail " + v.Catches, claim: "broken variant: " + v.Doc})
		}
	}
	return s
}

func shortConfig(c model.Config) string {
	if len(c.Casts) > 0 {
		return fmt.Sprintf("%s P=%d C=%d casts=%s", c.Tree, c.Nodes, c.Credits, model.JoinStrings(c.Casts))
	}
	if len(c.Flows) > 0 {
		return fmt.Sprintf("P=%d C=%d flows=%s", c.Nodes, c.Credits, model.JoinStrings(c.Flows))
	}
	return fmt.Sprintf("P=%d C=%d K=%d", c.Nodes, c.Credits, c.Packets)
}

func runSuite(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("suite", stderr)
	quiet := fs.BoolP("quiet", "q", false, "no progress lines on stderr")
	timeout := fs.Duration("timeout", 10*time.Minute, "time limit per check")
	verbose := fs.BoolP("verbose", "v", false, "print the claim behind each check")
	if err := parseNoArgs(fs, args); err != nil {
		return 0, err
	}
	fmt.Fprintf(stdout, "lfccheck built-in suite: each check explores the complete state space\n\n")
	fmt.Fprintf(stdout, "%-40s %-26s %-26s %10s %8s\n", "CHECK", "EXPECTED", "VERDICT", "STATES", "TIME")
	bad, incomplete := 0, 0
	checks := suite()
	for _, sc := range checks {
		ck, err := protocols.Build(sc.cfg)
		if err != nil {
			return 0, fmt.Errorf("suite check %q: %v", sc.name, err)
		}
		ck.Reduce = true
		opt := explore.Options{Timeout: *timeout, MaxMemory: defaultMemoryLimit()}
		if !*quiet {
			opt.Progress = stderr
		}
		res, err := checkOne(ck, opt)
		if err != nil {
			return 0, err
		}
		got := res.json.Verdict
		if got == string(explore.Fail) {
			got += " " + res.json.Property
		}
		mark := "ok"
		switch {
		case res.json.Verdict == string(explore.Incomplete):
			mark = "INCOMPLETE"
			incomplete++
		case got != sc.expect:
			mark = "UNEXPECTED"
			bad++
		}
		fmt.Fprintf(stdout, "%-40s %-26s %-26s %10d %7.2fs  %s\n", sc.name, sc.expect, got, res.json.States, res.json.ElapsedS, mark)
		if verbose != nil && *verbose {
			fmt.Fprintf(stdout, "    claim: %s\n", sc.claim)
		}
	}
	fmt.Fprintf(stdout, "\n%d checks: %d as expected, %d unexpected, %d incomplete\n", len(checks), len(checks)-bad-incomplete, bad, incomplete)
	return exitFor(bad, incomplete), nil
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

// OverlapSmall is the topology of examples/overlap-small.topo: three
// overlapping 4-member groups on 6 nodes with binary trees, a small
// analogue of App. A.2.
func OverlapSmall() *model.TopologySpec {
	return &model.TopologySpec{
		Groups: []model.GroupSpec{
			{Name: "g1", Members: []int{0, 2, 3, 4}},
			{Name: "g2", Members: []int{0, 2, 4, 5}},
			{Name: "g3", Members: []int{0, 1, 2, 4}},
		},
		Trees: []model.TreeSpec{
			{Group: "g1", Root: -1, Family: "binary"},
			{Group: "g2", Root: -1, Family: "binary"},
			{Group: "g3", Root: -1, Family: "binary"},
		},
	}
}

var overlapCasts = []model.Cast{{Group: "g1", Root: 0, Count: 1}, {Group: "g2", Root: 2, Count: 1}, {Group: "g3", Root: 4, Count: 1}}
