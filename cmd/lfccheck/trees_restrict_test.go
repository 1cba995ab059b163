package main

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lfccheck/explore"
	"lfccheck/internal/racebuild"
	"lfccheck/properties"
	"lfccheck/protocols/topology"
)

// A chain of 4 NIs with C=1 and three packets per root: the restricted
// workload of one packet per root deadlocks, and the deadlock extends to
// the full workload (the other launches only queue behind the full
// partitions). The answer's trace, saved, replays on the full
// configuration.
func TestTreesRestrictedDeadlockExtends(t *testing.T) {
	skipQuickLook = true // (the full search would find it at once)
	defer func() { skipQuickLook = false }()
	trace := filepath.Join(t.TempDir(), "chain.json")
	code, v := treesJSON(t, "--tree", "chain", "--nodes", "4", "--credits", "1", "--packets", "3", "--trace-out", trace)
	s := v.Search
	if code != exitFail || s == nil || s.FoundBy != "restricted" || len(s.Phases) != 1 {
		t.Fatalf("exit %d: %+v", code, s)
	}
	p := s.Phases[0]
	if p.Phase != "restricted" || p.Verdict != "fail" || p.Workload != "0:*all 1:*all 2:*all 3:*all" || p.Trees != 4 || p.AtMost != 1 ||
		p.Extension == nil || p.Extension.Verdict != "fail" || p.Extension.Steps != len(s.Trace) || p.Steps >= len(s.Trace) {
		t.Fatalf("%+v %+v", p, p.Extension)
	}
	if !strings.HasPrefix(v.AnswerReason, "the search found a reachable deadlock (24 steps: a deadlock of the restricted workload 0:*all 1:*all 2:*all 3:*all after ") {
		t.Fatal(v.AnswerReason)
	}
	code, rep, _ := runCLI("replay", trace)
	if code != 0 || !strings.Contains(rep, "mcast (correct) nodes=4 credits=1 packets=3 tree=chain") ||
		!strings.Contains(rep, "reproduced: deadlock violated at step 24, as recorded") {
		t.Fatalf("replay: exit %d:\n%s", code, rep)
	}
	// The text says what each phase did.
	code, out, _ := runCLI("trees", "--tree", "chain", "--nodes", "4", "--credits", "1", "--packets", "3")
	for _, want := range []string{
		"\nsearch: restricted to 0:*all 1:*all 2:*all 3:*all (at most 1 multicast of each of the 4 trees that can block on the cycle, with what their roots launch before them): ",
		": deadlock found (16 steps)\nsearch: on the full configuration from that deadlock's state: ",
		": deadlock found (24 steps)\ncounterexample (24 steps):\n",
	} {
		if code != exitFail || !strings.Contains(out, want) {
			t.Fatalf("exit %d: output lacks %q:\n%s", code, want, out)
		}
	}
}

// Restrictions the proof refutes are not searched: a chain of 4 NIs with
// C=2 and R=1 needs two blocked packets in each of its 4 partitions; one
// packet per root cannot fill them, and two per root is the full
// workload, where the random walks that come next find the deadlock.
func TestTreesRestrictionsRefuted(t *testing.T) {
	skipQuickLook = true
	defer func() { skipQuickLook = false }()
	code, v := treesJSON(t, "--tree", "chain", "--nodes", "4", "--credits", "2", "--refresh", "1", "--packets", "2")
	s := v.Search
	if code != exitFail || s == nil || s.FoundBy != "walks" || len(s.Phases) != 2 ||
		s.Phases[0].Phase != "restricted" || s.Phases[0].Verdict != "refuted" || s.Phases[0].AtMost != 1 || s.Phases[0].States != 0 ||
		!strings.HasPrefix(s.Phases[0].Reason, "the proof: ") || s.Phases[1].Phase != "walks" || s.Phases[1].Steps != len(s.Trace) {
		t.Fatalf("exit %d: %+v", code, s)
	}
	// The random walks (next) find the deadlock; the text says so.
	_, out, _ := runCLI("trees", "--tree", "chain", "--nodes", "4", "--credits", "2", "--refresh", "1", "--packets", "2")
	for _, want := range []string{
		"\nsearch: restricted to at most 1 multicast of each of the 4 trees that can block on the cycle: proved deadlock-free, not searched\n",
		fmt.Sprintf("\nsearch: random walks on the full configuration (seed 1): %d walks, ", s.Phases[1].Walks),
		fmt.Sprintf(": deadlock found (walk %d)\ncounterexample (%d steps):\n", s.Phases[1].Walks, len(s.Trace)),
		fmt.Sprintf("\nanswer: deadlock: the search found a reachable deadlock (%d steps, by random walk %d on the full configuration): ", len(s.Trace), s.Phases[1].Walks),
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
}

// The restricted-then-extended search never claims a deadlock where the
// exhaustive search of the full configuration finds none: on random
// configurations at P <= 5 whose proof is undecided, every deadlock it
// returns replays on the full configuration (checkResultOf) and the
// exhaustive search finds a deadlock too. Under the race detector, the
// first 27 of the short run's 90 configurations, compared with an
// exhaustive search of at most 20,000 states.
func TestTreesRestrictedSound(t *testing.T) {
	cases, maxStates := 200, int64(300_000)
	if testing.Short() {
		cases, maxStates = 90, 50_000
	}
	exhaustive := maxStates // the comparison's state limit
	if racebuild.Enabled {
		cases, exhaustive = 27, 20_000
		t.Logf("race detector: the first %d configurations, compared up to %d states; the test without -race checks more", cases, exhaustive)
	}
	rng := rand.New(rand.NewSource(3737))
	found, searched, compared := 0, 0, 0
	for i := 0; i < cases; i++ {
		cfg, err := ringConfig(rng, 4)
		if i%3 == 0 {
			cfg, err = randomWorkloadConfig(rng, 3+rng.Intn(2), 6)
		}
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		pr, err := proveConfig(cfg, nil)
		if err != nil || pr.Verdict != topology.Undecided || len(pr.Cycle) == 0 {
			continue
		}
		cfg.Properties = []string{"deadlock"}
		ck, err := properties.Build(cfg)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		var parts []topology.Partition
		for _, st := range pr.Cycle {
			parts = append(parts, topology.Partition{From: st.From, At: st.At})
		}
		opt := explore.Options{Timeout: 10 * time.Second, MaxStates: maxStates}
		phases, res, err := restrictedSearch(ck, cfg, parts, opt, time.Now().Add(opt.Timeout))
		if err != nil {
			t.Fatalf("case %d: %s: %v", i, cfg.Describe(), err)
		}
		for _, ph := range phases {
			if ph.Verdict != "refuted" {
				searched++
			}
		}
		if res == nil {
			continue
		}
		found++
		c, err := checkResultOf(ck, opt, func() (explore.Result, *explore.HuntStats, error) { return *res, nil, nil })
		if err != nil || c.json.Property != "deadlock" {
			t.Fatalf("case %d: %s: the extended trace does not replay as a deadlock: %v %+v", i, cfg.Describe(), err, c.json)
		}
		r := searchDeadlock(t, cfg, exhaustive)
		if r.Verdict == explore.Pass {
			t.Errorf("case %d: the restricted search found a deadlock, the exhaustive search none\n  %s\n  %s", i, cfg.Describe(), settingsOf(cfg))
		}
		if r.Verdict != explore.Incomplete {
			compared++
		}
	}
	t.Logf("%d configurations: %d restricted workloads searched, %d deadlocks found that way (%d compared with an exhaustive search)", cases, searched, found, compared)
	if found < 3 || compared < 3 {
		t.Fatalf("too few restricted deadlocks (%d, %d compared) for the comparison to mean much", found, compared)
	}
}
