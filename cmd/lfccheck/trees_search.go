package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/model/topology"
	"lfccheck/properties"
	"lfccheck/protocols/mcast"
	"lfccheck/traces"
)

// Answers of trees beyond the proof's: a deadlock the search found.
const answerDeadlock = "deadlock"

// treesSearch is the JSON of the deadlock search trees runs when the
// proof is undecided (deadlock_search).
type treesSearch struct {
	// Strategy is "best-first"; Heuristic says what it counts, on the
	// partitions of Cycle (the proof's cycle that may fill).
	Strategy  string               `json:"strategy"`
	Heuristic string               `json:"heuristic"`
	Cycle     []topology.Partition `json:"cycle_partitions"`
	// Config is the configuration searched: the full one check would
	// build from the same flags, with the property deadlock.
	Config model.Config `json:"config"`
	// Verdict is the search's: pass (exhaustive, no deadlock), fail (a
	// deadlock, Trace) or incomplete (Reason: the limit that ended it).
	Verdict       string  `json:"verdict"`
	Reason        string  `json:"reason,omitempty"`
	States        int64   `json:"states"`
	Transitions   int64   `json:"transitions"`
	Depth         int     `json:"depth"`
	ElapsedS      float64 `json:"elapsed_s"`
	PeakHeapBytes uint64  `json:"peak_heap_bytes"`
	TimeoutS      float64 `json:"timeout_s"`
	MaxMemory     uint64  `json:"max_memory_bytes"`
	Symmetry      bool    `json:"symmetry"`
	Reduction     bool    `json:"reduction"`
	// Property, Message, Trace and Explanation describe the deadlock
	// found; TraceFile is where --trace-out saved it.
	Property    string   `json:"property,omitempty"`
	Message     string   `json:"message,omitempty"`
	Trace       []string `json:"trace,omitempty"`
	Explanation []string `json:"explanation,omitempty"`
	TraceFile   string   `json:"trace_file,omitempty"`
}

// cycleSearch is the outcome of trees' deadlock search.
type cycleSearch struct {
	json treesSearch
	c    checked
	ck   *properties.Checker
}

// searchCycle searches the configuration cfg (check's, for the same
// flags) for a deadlock, best first, guided by the partitions of the
// proof's cycle (mcast.PartitionLoad): a deadlock needs every partition
// of some cycle full of blocked packets, and the proof names the shortest
// cycle that may fill. The search runs on the whole configuration, every
// node and tree: restricted to the cycle's nodes and trees it could miss
// or invent deadlocks (packets of other trees hold credits and buffers on
// the cycle's links), and its answer would need an argument of its own.
func searchCycle(cfg model.Config, pr topology.Proof, opt explore.Options) (*cycleSearch, error) {
	cfg.Properties = []string{"deadlock"}

	ck, err := properties.Build(cfg)
	if err != nil {
		return nil, err
	}
	var parts []topology.Partition
	for _, st := range pr.Cycle {
		parts = append(parts, topology.Partition{From: st.From, At: st.At})
	}
	var perms []model.Perm
	if ck.Symmetry {
		perms = ck.Symmetries()
	}
	hck := ck.Fork() // decodes with scratch space of its own
	w := hck.Sys.Initial()
	var herr error
	h := func(b []byte) int {
		if len(parts) == 0 {
			return 0
		}
		if err := hck.Decode(b, w); err != nil {
			herr = err
			return 0
		}
		return mcast.PartitionLoad(w, parts, perms)
	}
	s := &cycleSearch{ck: ck, json: treesSearch{Strategy: "best-first", Cycle: parts, Config: ck.Sys.Cfg,
		TimeoutS: opt.Timeout.Seconds(), MaxMemory: opt.MaxMemory, Symmetry: ck.Symmetry, Reduction: ck.Reduce}}
	if len(parts) > 0 {
		s.json.Heuristic = "per partition A at B of the cycle: packets in its buffers with forwards pending, plus A's blocked sends to B, minus A's credits for B (highest first; among equals, the deepest)"
	} else {
		s.json.Heuristic = "none: the proof names no cycle (the deepest first: depth-first order)"
	}
	c, err := checkResultOf(ck, opt, func() (explore.Result, *explore.HuntStats, error) {
		r, err := explore.BestFirstDeep(ck, opt, h)
		if err == nil && herr != nil {
			err = fmt.Errorf("internal error: decoding a state for the heuristic: %v", herr)
		}
		return r, nil, err
	})
	if err != nil {
		return nil, err
	}
	s.c = c
	j := &s.json
	j.Verdict, j.Reason = c.json.Verdict, c.json.Reason
	j.States, j.Transitions, j.Depth = c.json.States, c.json.Transitions, c.json.Depth
	j.ElapsedS, j.PeakHeapBytes = c.json.ElapsedS, c.json.PeakHeapBytes
	j.Property, j.Message, j.Trace, j.Explanation = c.json.Property, c.json.Message, c.json.Trace, c.json.Explanation
	return s, nil
}

// answer is trees' answer after the search, why, and the exit code.
func (s *cycleSearch) answer() (string, string, int) {
	j := &s.json
	switch explore.Verdict(j.Verdict) {
	case explore.Fail:
		return answerDeadlock, fmt.Sprintf("the search found a reachable deadlock (%d steps, after %d states): %s", len(j.Trace), j.States, j.Message), exitFail
	case explore.Pass:
		return topology.DeadlockFree, fmt.Sprintf("by exhaustive search of the full configuration (%d states, every reachable state explored; not by the proof, which was undecided): no reachable state deadlocks", j.States), exitPass
	}
	return topology.Undecided, fmt.Sprintf("the proof could not refute the cycle and the search found no deadlock in %d states (depth %d, %.1fs) before it stopped: %s; a search that runs to its end (a longer --timeout, more --max-memory; 'lfccheck check --search dfs' with the configuration shown) or a workload the proof covers (more credits, fewer packets) would decide it",
		j.States, j.Depth, j.ElapsedS, j.Reason), exitIncomplete
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
	fmt.Fprintf(w, "search: %d states, %d transitions, depth %d, %.2fs, peak heap %s", j.States, j.Transitions, j.Depth, j.ElapsedS, explore.FormatBytes(j.PeakHeapBytes))
	switch explore.Verdict(j.Verdict) {
	case explore.Pass:
		fmt.Fprintln(w, ": complete, no deadlock")
	case explore.Fail:
		fmt.Fprintln(w, ": deadlock found")
	default:
		fmt.Fprintf(w, ": stopped: %s\n", j.Reason)
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
