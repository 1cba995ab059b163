package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/topology"
	"lfccheck/traces"
)

// Answers of trees beyond the proof's: a deadlock the search found.
const answerDeadlock = "deadlock"

// treesSearch is the JSON of the deadlock search trees runs when the
// proof is undecided (deadlock_search).
type treesSearch struct {
	// Strategy lists the phases the search may run; Heuristic says what
	// the best-first searches count, on the partitions of Cycle (the
	// proof's cycle that may fill).
	Strategy  string               `json:"strategy"`
	Heuristic string               `json:"heuristic"`
	Cycle     []topology.Partition `json:"cycle_partitions"`
	// Config is the configuration searched: the full one check would
	// build from the same flags, with the property deadlock.
	Config model.Config `json:"config"`
	// The search's verdict: pass (the full configuration explored
	// exhaustively, no deadlock), fail (a deadlock of the full
	// configuration, Trace) or incomplete (Reason: what stopped it).
	// States and Transitions add up the phases, Depth and PeakHeapBytes
	// are their most, ElapsedS the whole search's.
	searchStats
	TimeoutS  float64 `json:"timeout_s"`
	MaxMemory uint64  `json:"max_memory_bytes"`
	Symmetry  bool    `json:"symmetry"`
	Reduction bool    `json:"reduction"`
	// StubbornSets is set when the searches explored stubborn sets (every
	// end state reached, not every state; see docs/checking.md).
	StubbornSets bool `json:"stubborn_sets"`
	// Phases are the searches run, in order; FoundBy names the phase
	// (restricted, full or walks) whose deadlock is the answer.
	Phases  []searchPhase `json:"phases"`
	FoundBy string        `json:"found_by,omitempty"`
	// Property, Message, Trace and Explanation describe the deadlock
	// found (replayed on the full configuration); TraceFile is where
	// --trace-out saved it.
	Property    string   `json:"property,omitempty"`
	Message     string   `json:"message,omitempty"`
	Trace       []string `json:"trace,omitempty"`
	Explanation []string `json:"explanation,omitempty"`
	TraceFile   string   `json:"trace_file,omitempty"`
}

// searchPhase is one search of the deadlock search.
type searchPhase struct {
	// Phase is restricted (a restricted workload, best first), extension
	// (the full configuration from a restricted deadlock's state), full
	// (the full configuration, best first) or walks (random walks on it).
	Phase string `json:"phase"`
	// Workload is a restricted workload's launches, as --work entries:
	// at most AtMost multicasts of each of the Trees trees that can block
	// on the cycle, with what their roots launch before them.
	Workload string `json:"workload,omitempty"`
	Trees    int    `json:"trees,omitempty"`
	AtMost   int    `json:"at_most,omitempty"`
	// The phase's verdict: pass (exhaustive, no deadlock), fail (a
	// deadlock: Steps long), incomplete (Reason: the limit) or refuted (a
	// restricted workload the proof covers: not searched).
	searchStats
	// Walks and Seed: the random walks run and their seed. Steps is the
	// length of the deadlock's trace (the whole trace, replayed on the
	// full configuration, for the phase whose deadlock is the answer).
	Walks int64 `json:"walks,omitempty"`
	Seed  int64 `json:"seed,omitempty"`
	Steps int   `json:"steps,omitempty"`
	// Extension is the search on from a restricted deadlock.
	Extension *searchPhase `json:"extension,omitempty"`
}

// searchStats is what a search did (JSON of treesSearch and searchPhase).
type searchStats struct {
	Verdict       string  `json:"verdict"`
	Reason        string  `json:"reason,omitempty"`
	States        int64   `json:"states"`
	Transitions   int64   `json:"transitions"`
	Depth         int     `json:"depth"`
	ElapsedS      float64 `json:"elapsed_s"`
	PeakHeapBytes uint64  `json:"peak_heap_bytes"`
}

// setStats records a search's result.
func (p *searchStats) setStats(r explore.Result) {
	p.Verdict, p.Reason = string(r.Verdict), r.Reason
	p.States, p.Transitions, p.Depth = r.Stats.States, r.Stats.Transitions, r.Stats.Depth
	p.ElapsedS, p.PeakHeapBytes = r.Stats.Elapsed.Seconds(), r.Stats.PeakHeapBytes
}

// cycleSearch is the outcome of trees' deadlock search.
type cycleSearch struct {
	json treesSearch
	c    checked
	ck   *properties.Checker
}

// The random walks' seed and depth bound (MCAST's runs are finite: a walk
// ends in a state without successors long before).
const (
	walkSeed  = 1
	walkDepth = 1 << 20
)

// skipQuickLook leaves out phase 1 of searchCycle (for tests of the
// phases after it on small configurations, which phase 1 decides).
var skipQuickLook bool

// partitionHeuristic is the best-first searches' rating of ck's states:
// mcast.PartitionLoad on parts (0 everywhere without a cycle). A decoding
// error is kept in the error it returns a pointer to.
func partitionHeuristic(ck *properties.Checker, parts []topology.Partition) (func([]byte) int, *error) {
	var perms []model.Perm
	if ck.Symmetry {
		perms = ck.Symmetries()
	}
	hck := ck.Fork() // decodes with scratch space of its own
	w := hck.Sys.Initial()
	herr := new(error)
	return func(b []byte) int {
		if len(parts) == 0 {
			return 0
		}
		if err := hck.Decode(b, w); err != nil {
			*herr = fmt.Errorf("internal error: decoding a state for the heuristic: %v", err)
			return 0
		}
		return mcast.PartitionLoad(w, parts, perms)
	}, herr
}

// searchCycle searches the configuration cfg (check's, for the same
// flags) for a deadlock within opt.Timeout, guided by the partitions of
// the proof's cycle (mcast.PartitionLoad): a deadlock needs every
// partition of some cycle full of blocked packets, and the proof names the
// shortest cycle that may fill. The phases share the time, each ending
// the search when it answers:
//
//  1. The full configuration, best first, for an eighth of it: small
//     configurations end here, exhaustively.
//  2. Restricted workloads (restrictedSearch), until a quarter: a deadlock
//     found there counts only when it extends to one of the full
//     configuration, replayed there.
//  3. Random walks on the full configuration, until half: they store
//     nothing, and find deadlocks that need many packets in the right
//     places where the best-first search is lost among the interleavings
//     of the others (at 16 and 32 nodes, within a second where best first
//     runs out of time).
//  4. The full configuration, best first again, for the rest: exhaustive
//     when it ends, and so, with phase 1, the only phase that can answer
//     deadlock-free.
func searchCycle(cfg model.Config, pr topology.Proof, opt explore.Options) (*cycleSearch, error) {
	if opt.Timeout <= 0 {
		return nil, errors.New("internal error: the deadlock search needs a time limit")
	}
	cfg.Properties = []string{"deadlock"}
	ck, err := properties.Build(cfg)
	if err != nil {
		return nil, err
	}
	var parts []topology.Partition
	for _, st := range pr.Cycle {
		parts = append(parts, topology.Partition{From: st.From, At: st.At})
	}
	s := &cycleSearch{ck: ck, json: treesSearch{Strategy: "the full configuration best first, restricted workloads best first, random walks, the full configuration best first", Cycle: parts, Config: ck.Sys.Cfg,
		TimeoutS: opt.Timeout.Seconds(), MaxMemory: opt.MaxMemory, Symmetry: ck.Symmetry, Reduction: ck.Reduce, StubbornSets: ck.Stubborn}}
	if len(parts) > 0 {
		s.json.Heuristic = "per partition A at B of the cycle: packets in its buffers with forwards pending, plus A's blocked sends to B, minus A's credits for B (highest first; among equals, the deepest)"
	} else {
		s.json.Heuristic = "none: the proof names no cycle (the deepest first: depth-first order)"
	}
	start := time.Now()
	until := func(eighths int) time.Duration {
		return roundTimeout(time.Until(start.Add(opt.Timeout * time.Duration(eighths) / 8)))
	}
	j := &s.json
	var res explore.Result
	rck := ck     // the checker whose search graph res's trace is in
	done := false // a phase answered
	full := func(eighths int) error {
		fopt := opt
		fopt.Timeout = until(eighths)
		h, herr := partitionHeuristic(ck, parts)
		r, err := explore.BestFirstDeep(ck, fopt, h)
		if err == nil && *herr != nil {
			err = *herr
		}
		if err != nil {
			return err
		}
		ph := searchPhase{Phase: "full"}
		ph.setStats(r)
		j.Phases = append(j.Phases, ph)
		res = r
		if r.Verdict != explore.Incomplete {
			done = true
			if r.Verdict == explore.Fail {
				j.FoundBy = "full"
			}
		}
		return nil
	}
	// more reports whether the search goes on to a phase that ends at
	// eighths of the time.
	more := func(eighths int) bool {
		return !done && !stopped(opt.Stop) && time.Until(start.Add(opt.Timeout*time.Duration(eighths)/8)) > 0
	}
	if !skipQuickLook {
		if err := full(1); err != nil {
			return nil, err
		}
	}
	if more(2) {
		phases, found, err := restrictedSearch(ck, cfg, parts, opt, start.Add(opt.Timeout/4))
		if err != nil {
			return nil, err
		}
		j.Phases = append(j.Phases, phases...)
		if found != nil {
			res, j.FoundBy, done = *found, "restricted", true
		}
	}
	if more(4) {
		// Without the symmetry reduction: a walk stores nothing, so
		// representatives would only cost time.
		wck := ck.Fork()
		wck.Symmetry = false
		wck.NoStubborn(walksNoStubborn)
		wopt := opt
		wopt.Timeout, wopt.MaxDepth = until(4), walkDepth
		wr, hs, err := explore.Random(wck, wopt, explore.Hunt{Seed: walkSeed})
		if err != nil {
			return nil, err
		}
		ph := searchPhase{Phase: "walks", Walks: hs.Walks, Seed: walkSeed}
		ph.setStats(wr)
		j.Phases = append(j.Phases, ph)
		if wr.Verdict == explore.Fail {
			res, j.FoundBy, rck, done = wr, "walks", wck, true
		}
	}
	if more(8) {
		if err := full(8); err != nil {
			return nil, err
		}
	}
	c, err := checkResultOf(rck, opt, func() (explore.Result, *explore.HuntStats, error) { return res, nil, nil })
	if err != nil {
		return nil, err
	}
	s.c = c
	j.Verdict = c.json.Verdict
	switch j.FoundBy {
	case "restricted":
		j.Phases[len(j.Phases)-1].Extension.Steps = len(c.json.Trace)
	case "full", "walks":
		j.Phases[len(j.Phases)-1].Steps = len(c.json.Trace)
	}
	var reasons []string
	add := func(p *searchPhase) {
		j.States += p.States
		j.Transitions += p.Transitions
		j.Depth = max(j.Depth, p.Depth)
		j.PeakHeapBytes = max(j.PeakHeapBytes, p.PeakHeapBytes)
	}
	for i := range j.Phases {
		p := &j.Phases[i]
		add(p)
		if p.Extension != nil {
			add(p.Extension)
		}
		if p.Verdict == string(explore.Incomplete) && (p.Phase == "full" || p.Phase == "walks") {
			reasons = append(reasons, p.Phase+": "+p.Reason)
		}
	}
	if j.Verdict == string(explore.Incomplete) {
		j.Reason = strings.Join(reasons, "; ")
		if j.Reason == "" {
			j.Reason = "interrupted"
		}
	}
	j.ElapsedS = time.Since(start).Seconds()
	j.Property, j.Message, j.Trace, j.Explanation = c.json.Property, c.json.Message, c.json.Trace, c.json.Explanation
	return s, nil
}

// phase returns the search's phase named name (the last one), or nil.
func (s *cycleSearch) phase(name string) *searchPhase {
	for i := len(s.json.Phases) - 1; i >= 0; i-- {
		if s.json.Phases[i].Phase == name {
			return &s.json.Phases[i]
		}
	}
	return nil
}

// answer is trees' answer after the search, why, and the exit code.
func (s *cycleSearch) answer() (string, string, int) {
	j := &s.json
	switch explore.Verdict(j.Verdict) {
	case explore.Fail:
		how := ""
		switch j.FoundBy {
		case "restricted":
			r := s.phase("restricted")
			how = fmt.Sprintf("%d steps: a deadlock of the restricted workload %s after %d states, extended on the full configuration after %d more",
				len(j.Trace), r.Workload, r.States, r.Extension.States)
		case "walks":
			how = fmt.Sprintf("%d steps, by random walk %d on the full configuration", len(j.Trace), s.phase("walks").Walks)
		default:
			how = fmt.Sprintf("%d steps, after %d states", len(j.Trace), s.phase("full").States)
		}
		return answerDeadlock, fmt.Sprintf("the search found a reachable deadlock (%s): %s", how, j.Message), exitFail
	case explore.Pass:
		how := "every reachable state explored"
		if s.json.StubbornSets {
			how = "stubborn sets: every reachable end state reached"
		}
		return topology.DeadlockFree, fmt.Sprintf("by exhaustive search of the full configuration (%d states, %s; not by the proof, which was undecided): no reachable state deadlocks", s.phase("full").States, how), exitPass
	}
	var tried []string
	k := 0
	for _, p := range j.Phases {
		if p.Phase == "restricted" {
			k++
		}
	}
	if k > 0 {
		tried = append(tried, fmt.Sprintf("%s, no deadlock of the full configuration", plural(int64(k), "restricted workload")))
	}
	if f := s.phase("full"); f != nil {
		tried = append(tried, fmt.Sprintf("the full configuration best first: no deadlock in %d states (depth %d, %.1fs), stopped: %s", f.States, f.Depth, f.ElapsedS, f.Reason))
	}
	if w := s.phase("walks"); w != nil {
		tried = append(tried, fmt.Sprintf("%s on it: no deadlock in %d distinct states (%.1fs)", plural(w.Walks, "random walk"), w.States, w.ElapsedS))
	}
	if len(tried) == 0 {
		tried = append(tried, "interrupted")
	}
	return topology.Undecided, fmt.Sprintf("the proof could not refute the cycle and the search found no deadlock: %s; a search that runs to its end (a longer --timeout, more --max-memory; 'lfccheck check --search dfs' with the configuration shown) or a workload the proof covers (more credits, fewer packets) would decide it",
		strings.Join(tried, "; ")), exitIncomplete
}

// phaseEnd is how a phase's line ends: its outcome.
func phaseEnd(p *searchPhase) string {
	switch explore.Verdict(p.Verdict) {
	case explore.Pass:
		return "complete, no deadlock"
	case explore.Fail:
		if p.Steps > 0 {
			return fmt.Sprintf("deadlock found (%d steps)", p.Steps)
		}
		return "deadlock found"
	}
	return "stopped: " + p.Reason
}

// writeSearch prints the search, its counterexample, and the answer.
func writeSearch(w io.Writer, s *cycleSearch, answer, why string) {
	j := &s.json
	cyc := "no cycle to aim at (depth-first order)"
	if len(j.Cycle) > 0 {
		var ps []string
		for _, p := range j.Cycle {
			ps = append(ps, p.String())
		}
		cyc = "packets waiting to forward, blocked sends, no credits on the partitions " + strings.Join(ps, ", ")
	}
	fmt.Fprintf(w, "search: best-first for a deadlock, most first (then deepest): %s\n", cyc)
	fmt.Fprintf(w, "search: %s (property deadlock)\n", j.Config.Describe())
	stats := func(p *searchPhase) string {
		return fmt.Sprintf("%d states, %d transitions, depth %d, %.2fs, peak heap %s", p.States, p.Transitions, p.Depth, p.ElapsedS, explore.FormatBytes(p.PeakHeapBytes))
	}
	for i := 0; i < len(j.Phases); i++ {
		p := &j.Phases[i]
		switch p.Phase {
		case "restricted":
			trees := plural(int64(p.Trees), "tree")
			if p.Trees == 1 {
				trees = "the tree"
			} else {
				trees = "each of the " + trees
			}
			if p.Verdict == "refuted" {
				// Consecutive restrictions the proof refutes: one line.
				ks := []string{strconv.Itoa(p.AtMost)}
				for i+1 < len(j.Phases) && j.Phases[i+1].Verdict == "refuted" {
					i++
					ks = append(ks, strconv.Itoa(j.Phases[i].AtMost))
				}
				what := "multicasts"
				if len(ks) == 1 && ks[0] == "1" {
					what = "multicast"
				}
				fmt.Fprintf(w, "search: restricted to at most %s %s of %s that can block on the cycle: proved deadlock-free, not searched\n", strings.Join(ks, ", "), what, trees)
				continue
			}
			fmt.Fprintf(w, "search: restricted to %s (at most %s of %s that can block on the cycle, with what their roots launch before them): %s: %s\n",
				p.Workload, plural(int64(p.AtMost), "multicast"), trees, stats(p), phaseEnd(p))
			if e := p.Extension; e != nil {
				fmt.Fprintf(w, "search: on the full configuration from that deadlock's state: ")
				if e.States > 0 {
					fmt.Fprintf(w, "%s: ", stats(e))
				}
				fmt.Fprintln(w, phaseEnd(e))
			}
		case "full":
			// As it was before the other phases (docs grep '^search: [0-9]').
			fmt.Fprintf(w, "search: %s", stats(p))
			switch explore.Verdict(p.Verdict) {
			case explore.Pass:
				fmt.Fprintln(w, ": complete, no deadlock")
			case explore.Fail:
				fmt.Fprintln(w, ": deadlock found")
			default:
				fmt.Fprintf(w, ": stopped: %s\n", p.Reason)
			}
		case "walks":
			fmt.Fprintf(w, "search: random walks on the full configuration (seed %d): %s, %d distinct states, depth %d, %.2fs: ", p.Seed, plural(p.Walks, "walk"), p.States, p.Depth, p.ElapsedS)
			if p.Verdict == string(explore.Fail) {
				fmt.Fprintf(w, "deadlock found (walk %d)\n", p.Walks)
			} else {
				fmt.Fprintf(w, "stopped: %s\n", p.Reason)
			}
		}
	}
	if o := s.c.outcome; o != nil {
		fmt.Fprintf(w, "counterexample (%d steps):\n", len(o.Steps))
		traces.WriteText(w, *o)
	}
	fmt.Fprintf(w, "answer: %s: %s\n", answer, why)
	if j.TraceFile != "" {
		fmt.Fprintf(w, "trace written to %s (replay with 'lfccheck replay %s')\n", j.TraceFile, shellQuote(j.TraceFile))
	}
}

// proofText is the proof's text; when a search follows, its answer line
// is the proof's, not trees' answer.
func proofText(pr topology.Proof, searched bool) string {
	var b strings.Builder
	topology.WriteProofText(&b, pr)
	if !searched {
		return b.String()
	}
	return strings.Replace(b.String(), "\nanswer: ", "\nproof: ", 1)
}

// defaultTreesTimeout bounds trees' deadlock search.
const defaultTreesTimeout = 30 * time.Second
