package main

import (
	"fmt"
	"io"
	"strings"

	"lfccheck/explore"
	"lfccheck/traces"
)

// plural is n and noun, in the plural unless n is 1.
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// levelsLine summarises the states per level of a breadth-first search:
// the widest level and, for a search cut short, the last level and how
// the last complete one compares with the one before it (whether the
// levels were still growing).
func levelsLine(levels []int64, partial bool, verdict string) string {
	if len(levels) == 0 {
		return ""
	}
	wide := 0
	for d, n := range levels {
		if n > levels[wide] {
			wide = d
		}
	}
	s := fmt.Sprintf("levels: %d (depth 0 to %d), the widest %s at depth %d", len(levels), len(levels)-1, plural(levels[wide], "state"), wide)
	if verdict != string(explore.Incomplete) {
		return s
	}
	last := len(levels) - 1
	if partial {
		last--
		s += fmt.Sprintf("; the search stopped while expanding the level at depth %d (%s of depth %d stored so far)", last, plural(levels[last+1], "state"), last+1)
	} else {
		s += fmt.Sprintf("; the search stopped before expanding the level at depth %d", last)
	}
	if last >= 1 {
		s += fmt.Sprintf("; depth %d had %s, %.2f times depth %d", last, plural(levels[last], "state"), float64(levels[last])/float64(levels[last-1]), last-1)
	}
	return s + " (the JSON output lists every level)"
}

func printCheck(w io.Writer, c checked) {
	j := c.json
	fmt.Fprintf(w, "%s\n", j.Config.Describe())
	fmt.Fprintf(w, "properties: %s\n", strings.Join(j.Properties, ", "))
	switch {
	case j.Verdict == string(explore.Pass) && j.Disk != nil && j.Disk.Keys == "fingerprint":
		fmt.Fprintf(w, "verdict: %s\n", diskPass(j.Disk))
	case j.Verdict == string(explore.Pass) && j.Fingerprint:
		// The in-memory store of fingerprints is not an exact proof
		// either: a state whose fingerprint another had is never expanded.
		fmt.Fprintf(w, "verdict: pass (fingerprints: every property holds over the states explored; the probability that a state was missed, two states sharing a fingerprint, is about %.1g: search again without --fingerprint for a proof)\n", j.CollisionProb)
	case j.Verdict == string(explore.Pass):
		fmt.Fprintf(w, "verdict: pass (every property holds over the complete state space)\n")
	case j.Verdict == string(explore.Fail) && c.outcome == nil:
		fmt.Fprintf(w, "verdict: FAIL: %s violated over the complete state space: %s\n", j.Property, j.Message)
	case j.Verdict == string(explore.Fail):
		fmt.Fprintf(w, "verdict: FAIL: %s violated: %s\n", j.Property, j.Message)
	default:
		fmt.Fprintf(w, "verdict: INCOMPLETE: %s; nothing was proved\n", j.Reason)
	}
	store := "exact"
	if j.Search == "random" {
		store = "no visited"
	} else if j.Fingerprint {
		store = fmt.Sprintf("fingerprint (collision probability about %.2g)", j.CollisionProb)
	}
	graph := ""
	if j.GraphBytes > 0 {
		graph = fmt.Sprintf(", state graph %s", explore.FormatBytes(uint64(j.GraphBytes)))
	}
	fmt.Fprintf(w, "states: %d  transitions: %d  depth: %d  elapsed: %.2fs  (%.0f states/s, peak heap %s, %s store%s)\n",
		j.States, j.Transitions, j.Depth, j.ElapsedS, j.StatesPerS, explore.FormatBytes(j.PeakHeapBytes), store, graph)
	switch j.Search {
	case "bfs":
		per := 0.0
		if j.States > 0 {
			per = float64(j.StoreBytes) / float64(j.States)
		}
		workers := "1 worker"
		if j.Engine == "segments" {
			workers = "1 worker, over segment ids (--engine segments)"
		}
		if j.Workers > 1 {
			workers = fmt.Sprintf("%d workers", j.Workers)
		}
		if j.Distributed != nil {
			workers = fmt.Sprintf("%d processes of 1 worker", j.Distributed.Workers)
		}
		disk := ""
		if j.DiskBytes > 0 && j.Disk == nil {
			where := "a temporary file"
			if j.Checkpoint != nil {
				where = j.Checkpoint.Dir
			}
			disk = fmt.Sprintf("; keys and parents for traces in %s, %s", where, explore.FormatBytes(uint64(j.DiskBytes)))
		}
		if j.Disk != nil {
			keys := ""
			if j.Disk.Keys == "fingerprint" {
				keys = " (64-bit fingerprints)"
			}
			fmt.Fprintf(w, "search: breadth-first, %s; visited set%s, levels and parents on disk in %s (peak %s), run buffers in memory %s (%.1f bytes/state)\n", workers, keys, j.Disk.Dir, explore.FormatBytes(uint64(j.Disk.PeakBytes)), explore.FormatBytes(uint64(j.StoreBytes)), per)
		} else {
			fmt.Fprintf(w, "search: breadth-first, %s; visited set %s (%.1f bytes/state)%s\n", workers, explore.FormatBytes(uint64(j.StoreBytes)), per, disk)
		}
		if l := levelsLine(j.Levels, j.LevelPartial, j.Verdict); l != "" {
			fmt.Fprintln(w, l)
		}
		if d := j.Distributed; d != nil {
			fmt.Fprintln(w, distLine(d))
		}
	case "scc":
		fmt.Fprintln(w, onTheFlyLine(j))
	case "dfs":
		shard := ""
		if j.Shard != "" {
			shard = fmt.Sprintf(", shard %s, seed %d", j.Shard, j.Seed)
		}
		fmt.Fprintf(w, "search: depth-first%s (a counterexample is not necessarily shortest)\n", shard)
	case "random":
		shard := ""
		if j.Shard != "" {
			shard = ", shard " + j.Shard
		}
		fmt.Fprintf(w, "search: %d random walks (seed %d%s, %.0f walks/s), %d distinct states seen\n", j.Walks, j.Seed, shard, j.WalksPerS, j.Coverage)
	}
	if j.Checkpoint != nil {
		fmt.Fprintln(w, checkpointLine(j.Checkpoint, j.Verdict))
	}
	if d := j.Disk; d != nil {
		fmt.Fprintln(w, diskLine(d, j.States))
	}
	if f := j.Frontier; f != nil {
		switch {
		case !f.Checked:
			fmt.Fprintln(w, "frontier: only the level being built was kept in the visited set; states counts the pairs (state, depth) stored (states stored twice are looked for only after a pass)")
		case f.Duplicates == 0:
			fmt.Fprintln(w, "frontier: only the level being built was kept in the visited set; no state was stored twice, so the state graph is layered and the states are distinct")
		default:
			fmt.Fprintf(w, "frontier: only the level being built was kept in the visited set; %d states were stored again at a greater depth (the state graph is not layered): %d distinct states; the verdict is that of the full search\n", f.Duplicates, j.States-f.Duplicates)
		}
	}
	fmt.Fprintf(w, "reduction: %s\n", j.ReductionNote)
	fmt.Fprintf(w, "symmetry: %s\n", j.SymmetryNote)
	fmt.Fprintf(w, "sleep sets: %s\n", j.SleepSetsNote)
	if j.StubbornSets {
		fmt.Fprintf(w, "stubborn sets: %s (%d states explored with fewer steps than enabled, %d steps left out)\n", j.StubbornNote, j.StubbornStates, j.StubbornLeft)
	} else {
		fmt.Fprintf(w, "stubborn sets: %s\n", j.StubbornNote)
	}
	if j.LivenessNote != "" {
		fmt.Fprintf(w, "liveness: %s\n", j.LivenessNote)
	}
	for _, s := range j.Statistics {
		fmt.Fprintf(w, "statistics: %s %d (%s)\n", s.Name, s.Value, s.Doc)
	}
	if c.outcome != nil && c.outcome.Loop > 0 {
		fmt.Fprintf(w, "counterexample (a lasso: %d steps, then steps %d-%d for ever):\n", len(c.outcome.Steps)-c.outcome.Loop, j.LoopStart, len(c.outcome.Steps))
		traces.WriteText(w, *c.outcome)
	} else if c.outcome != nil {
		fmt.Fprintf(w, "counterexample (%d steps):\n", len(c.outcome.Steps))
		traces.WriteText(w, *c.outcome)
	}
	for _, r := range j.Removed {
		fmt.Fprintf(w, "removed %s, left by an earlier run: this run found no counterexample to write there\n", r)
	}
	if j.TraceFile != "" && j.TraceFile != "-" {
		fmt.Fprintf(w, "trace written to %s (replay with 'lfccheck replay %s')\n", j.TraceFile, shellQuote(j.TraceFile))
	}
}
