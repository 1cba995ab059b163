package main

import (
	"fmt"
	"strings"

	"lfccheck/explore"
	"lfccheck/internal/dist"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/traces"
)

// resultFormat versions the JSON result of check (and of each suite and
// sweep row); fields are only ever added.
const resultFormat = "lfccheck-result/1"

// checkResult is the JSON form of a check. Field names are interface.
type checkResult struct {
	Format string `json:"format"`
	// Version is the lfccheck that obtained the result.
	Version     *versionInfo `json:"version,omitempty"`
	Protocol    string       `json:"protocol"`
	Variant     string       `json:"variant"`
	Config      model.Config `json:"config"`
	Verdict     string       `json:"verdict"`
	Property    string       `json:"property,omitempty"`
	Message     string       `json:"message,omitempty"`
	Reason      string       `json:"reason,omitempty"`
	States      int64        `json:"states"`
	Transitions int64        `json:"transitions"`
	Depth       int          `json:"depth"`
	// Levels is the number of states stored at each depth of a
	// breadth-first search, from depth 0 (the initial state) on;
	// LevelPartial is set when the search stopped while expanding the
	// level at depth: the last of Levels is then the next level as far
	// as the search got.
	Levels        []int64 `json:"levels,omitempty"`
	LevelPartial  bool    `json:"level_partial,omitempty"`
	ElapsedS      float64 `json:"elapsed_s"`
	StatesPerS    float64 `json:"states_per_s"`
	PeakHeapBytes uint64  `json:"peak_heap_bytes"`
	StoreBytes    int64   `json:"store_bytes"`
	// DiskBytes is what the breadth-first search wrote to temporary files
	// (the key and parent of every state, for traces; removed at the end).
	DiskBytes     int64   `json:"disk_bytes,omitempty"`
	Fingerprint   bool    `json:"fingerprint"`
	CollisionProb float64 `json:"collision_probability,omitempty"`
	Reduction     bool    `json:"reduction"`
	// ReductionNote says which reduction ran and why it is sound, or why
	// none ran.
	ReductionNote string `json:"reduction_note"`
	// Symmetry is set when the search stored one state per orbit of
	// SymmetryGroup renamings (the identity included); SymmetryNote says
	// which, or why it did not.
	Symmetry      bool   `json:"symmetry"`
	SymmetryGroup int    `json:"symmetry_group"`
	SymmetryNote  string `json:"symmetry_note"`
	// LivenessCover is set when the liveness analysis ran on the pairs
	// of stored representatives and renamings (symmetry under fairness).
	LivenessCover bool `json:"liveness_cover"`
	// SleepSets is set when a breadth-first search used sleep sets;
	// SleepSetsSkipped is the number of transitions they left out, and
	// SleepSetsNote says what they do, or why they were off.
	SleepSets        bool   `json:"sleep_sets"`
	SleepSetsSkipped int64  `json:"sleep_sets_skipped"`
	SleepSetsNote    string `json:"sleep_sets_note"`
	// StubbornSets is set when the search explored stubborn sets (--por);
	// StubbornStates counts the states expanded with fewer steps than
	// enabled, StubbornLeft the steps left out there, and StubbornNote
	// says what the reduction keeps, or why it was off.
	StubbornSets   bool     `json:"stubborn_sets"`
	StubbornStates int64    `json:"stubborn_states"`
	StubbornLeft   int64    `json:"stubborn_left_out"`
	StubbornNote   string   `json:"stubborn_sets_note"`
	Properties     []string `json:"properties"`
	// StepCache is set when the search memoized the protocol's handlers
	// (--step-cache); StepCacheHits and StepCacheMisses count its
	// look-ups, StepCacheBytes is what its entries hold (all workers'),
	// StepCacheChecks the checks of one node's state its entries
	// answered (a NodeLocal property's Local, a conserved sum's bounds
	// and terms).
	StepCache       bool  `json:"step_cache"`
	StepCacheHits   int64 `json:"step_cache_hits"`
	StepCacheMisses int64 `json:"step_cache_misses"`
	StepCacheBytes  int64 `json:"step_cache_bytes"`
	StepCacheChecks int64 `json:"step_cache_check_hits"`
	// Liveness lists the liveness properties among Properties; GraphBytes
	// is what recording the state graph for them cost.
	Liveness     []string `json:"liveness,omitempty"`
	LivenessNote string   `json:"liveness_note,omitempty"`
	// LivenessSearch says how the liveness properties on the state graph
	// were checked: graph (recorded, then analysed) or scc (on the fly,
	// --liveness-search scc); OnTheFlyBytes is what the latter's
	// per-state numbers, bits and stacks cost, ComponentBytes its
	// largest component graph.
	LivenessSearch string `json:"liveness_search,omitempty"`
	OnTheFlyBytes  int64  `json:"on_the_fly_bytes,omitempty"`
	ComponentBytes int64  `json:"component_bytes,omitempty"`
	// Statistics are the protocol's statistics of the search (RECOV:
	// recoveries started, packets on recovery channels, ...).
	Statistics []properties.StatValue `json:"statistics,omitempty"`
	GraphBytes int64                  `json:"graph_bytes,omitempty"`
	Trace      []string               `json:"trace,omitempty"`
	// Search is the strategy (bfs, dfs, random); Seed, Shard, Walks,
	// WalksPerS and Coverage describe hunts (see check --search).
	Search string `json:"search"`
	// Engine is the search's implementation: checker, or segments
	// (check --engine segments: the breadth-first search over segment
	// ids).
	Engine string `json:"engine"`
	// With --engine segments: the distinct segments the search made
	// (SegmentIDs), the steps it remembers (SegmentMemoEntries;
	// SegmentMemoBytes counts its memos of steps, sums and links) and how
	// many transitions ran the protocol's
	// handlers (SegmentMemoMisses) or were looked up (SegmentMemoHits).
	SegmentIDs         int64 `json:"segment_ids,omitempty"`
	SegmentMemoEntries int64 `json:"segment_memo_entries,omitempty"`
	SegmentMemoBytes   int64 `json:"segment_memo_bytes,omitempty"`
	SegmentMemoHits    int64 `json:"segment_memo_hits,omitempty"`
	SegmentMemoMisses  int64 `json:"segment_memo_misses,omitempty"`
	// Workers is the number of goroutines of a breadth-first search.
	Workers int   `json:"workers,omitempty"`
	Seed    int64 `json:"seed,omitempty"`
	// MaxDepth is --max-depth, the length of random walks.
	MaxDepth  int     `json:"max_depth,omitempty"`
	Shard     string  `json:"shard,omitempty"`
	Walks     int64   `json:"walks,omitempty"`
	WalksPerS float64 `json:"walks_per_s,omitempty"`
	Coverage  int64   `json:"coverage,omitempty"`
	// LoopStart, for a liveness counterexample, is the step at which the
	// trace's loop begins (the trace repeats from there for ever).
	LoopStart   int      `json:"loop_start,omitempty"`
	Explanation []string `json:"explanation,omitempty"`
	TraceFile   string   `json:"trace_file,omitempty"`
	// Removed lists the output files (--trace-out, --svg, --html) of an
	// earlier run that this run, which found no counterexample, removed
	// so that no stale counterexample stays beside its result.
	Removed []string `json:"removed_files,omitempty"`
	// Checkpoint describes the checkpoints of check --checkpoint or
	// --resume.
	Checkpoint *explore.CheckpointInfo `json:"checkpoint,omitempty"`
	// Frontier describes a frontier search (check --frontier).
	Frontier *explore.FrontierInfo `json:"frontier,omitempty"`
	// Disk describes a disk search (check --disk-visited).
	Disk *explore.DiskInfo `json:"disk,omitempty"`
	// Distributed describes a distributed search (check --distributed,
	// --peers).
	Distributed *dist.Info `json:"distributed,omitempty"`

	// explanation's items also appear under the field the property names
	// (for a deadlock: wait_for_cycle).
	explField string
	explLines []string
}

func (r checkResult) MarshalJSON() ([]byte, error) {
	type plain checkResult
	b, err := marshalPlain(plain(r))
	if err != nil || r.explField == "" || len(r.explLines) == 0 {
		return b, err
	}
	extra, _ := marshalPlain(map[string][]string{r.explField: r.explLines})
	return append(append(b[:len(b)-1], ','), extra[1:]...), nil
}

// checkResultOf runs a search and builds the result of checking ck with it.
func checkResultOf(ck *properties.Checker, opt explore.Options, search func() (explore.Result, *explore.HuntStats, error)) (checked, error) {
	r, hs, err := search()
	if err != nil {
		return checked{}, err
	}
	cfg := ck.Sys.Cfg
	c := checked{json: checkResult{
		Format: resultFormat, Protocol: cfg.Protocol, Variant: cfg.Variant, Config: cfg,
		Verdict: string(r.Verdict), Reason: r.Reason, Engine: "checker",
		States: r.Stats.States, Transitions: r.Stats.Transitions, Depth: r.Stats.Depth, Levels: r.Stats.Levels, LevelPartial: r.Stats.LevelPartial,
		ElapsedS: r.Stats.Elapsed.Seconds(), StatesPerS: r.Stats.StatesPerSec,
		PeakHeapBytes: r.Stats.PeakHeapBytes, StoreBytes: r.Stats.StoreBytes, DiskBytes: r.Stats.DiskBytes,
		Fingerprint: opt.Fingerprint || opt.DiskFingerprint, CollisionProb: r.Stats.CollisionProb, Reduction: ck.Reduce,
		ReductionNote: reductionNote(ck), Symmetry: ck.Symmetry, SymmetryGroup: len(ck.Symmetries()) + 1,
		SymmetryNote: symmetryNote(ck), LivenessCover: ck.LivenessCover(), GraphBytes: r.Stats.GraphBytes, LivenessNote: ck.LivenessNote(),
		Statistics: ck.Statistics(),
		SleepSets:  r.Sleep.On, SleepSetsSkipped: r.Sleep.Skipped, SleepSetsNote: sleepNote(r.Sleep),
		StubbornSets: ck.Stubborn, StubbornNote: stubbornNote(ck),
		Checkpoint: r.Checkpoint, Frontier: r.Frontier, Disk: r.Disk,
	}}
	c.json.StubbornStates, c.json.StubbornLeft = ck.StubbornCounts()
	c.json.StepCache = ck.StepCache
	c.json.StepCacheHits, c.json.StepCacheMisses, c.json.StepCacheBytes = ck.StepCacheCounts()
	c.json.StepCacheChecks = ck.StepCacheCheckHits()
	c.json.LivenessSearch = liveSearchOf(ck)
	if ck.OnTheFly {
		c.json.OnTheFlyBytes, c.json.GraphBytes, c.json.ComponentBytes = r.Stats.GraphBytes, 0, r.Stats.ComponentBytes
	}
	if hs != nil {
		c.json.Walks, c.json.WalksPerS, c.json.Coverage = hs.Walks, hs.WalksPer, hs.Coverage
	}
	for _, p := range ck.Props {
		c.json.Properties = append(c.json.Properties, p.Name)
		if p.Live != model.NotLive {
			c.json.Liveness = append(c.json.Liveness, p.Name)
		}
	}
	if r.Verdict == explore.Pass {
		if un := ck.Unreached(); len(un) > 0 {
			c.json.Verdict = string(explore.Fail)
			c.json.Property, c.json.Message = un[0].Property, un[0].Message
		}
	}
	if r.Verdict != explore.Fail {
		return c, nil
	}
	o, acts, err := traces.RunCodes(ck, r.Trace, r.Loop)
	if err != nil {
		return c, fmt.Errorf("internal error: the counterexample does not replay: %v", err)
	}
	if o.Violation == nil || o.Violation.Property != r.Violation.PropertyName() {
		return c, fmt.Errorf("internal error: the counterexample does not reproduce %s", r.Violation.PropertyName())
	}
	file := traces.NewFile(ck.Sys, acts, o)
	c.outcome, c.file, c.acts = &o, &file, acts
	c.json.Property, c.json.Message = o.Violation.Property, o.Violation.Message
	c.json.Trace = file.Actions
	c.json.LoopStart = file.LoopStart
	if o.Explanation != nil {
		c.json.Explanation = o.Explanation.Text()
		c.json.explField, c.json.explLines = o.Explanation.Field, o.Explanation.Lines
	}
	return c, nil
}

// sleepNote says what sleep sets did in a search, or why it used none.
func sleepNote(s explore.SleepInfo) string {
	if s.On {
		on := fmt.Sprintf("on: %d transitions left out (their successors are reached through another order of independent steps of different nodes; every state is still visited)", s.Skipped)
		if s.Note != "" {
			on += "; " + s.Note
		}
		return on
	}
	if s.Note == "" {
		return "off: breadth-first search only"
	}
	if s.Note == "turned off" {
		return "off (--sleep-sets=off)"
	}
	return "off: " + s.Note
}

// reductionNote says which reduction a check runs and why it is sound, or
// why it runs none.
func reductionNote(ck *properties.Checker) string {
	var ample []string
	for _, p := range ck.AmpleKinds() {
		ample = append(ample, fmt.Sprintf("%q", p))
	}
	const none = ""
	switch {
	case len(ample) == 0:
		return "off: the protocol declares no ample action kind" + none
	case len(ck.Sys.Faults()) > 0:
		return fmt.Sprintf("off: %s (the ample-set reduction of %s needs an acyclic state graph, which the protocol declares for reliable links only)", properties.FaultsOff, strings.Join(ample, ", "))
	case ck.ReducesCycles():
		return fmt.Sprintf("ample sets with cycles: an enabled %s step is explored alone, fused into the step before it, so every stored state is fully expanded and every cycle passes through one (the cycle proviso); sound for safety and for liveness under fairness because each ample kind is fair with a fairness class of its own, commutes with every action, disables none and enables only actions of persistent classes, and no checked property sees it (the protocol declares it; every fused step is checked to disable nothing and change no liveness goal or trigger, and tests check the rest on full state graphs)%s",
			strings.Join(ample, " or "), none)
	case ck.Reduce:
		return fmt.Sprintf("ample sets: an enabled %s step is explored alone (sound for safety and liveness: the protocol declares every run of the variant finite, so the cycle proviso holds; tests check the declaration on the state graph of every built-in claim)%s",
			strings.Join(ample, " or "), none)
	case ck.CanReduce():
		return "off (--no-reduce)" + none
	case ck.SeenAmple() != "":
		return fmt.Sprintf("off: the ample-set reduction of %s is unsound here: %s%s", strings.Join(ample, ", "), ck.SeenAmple(), none)
	}
	return fmt.Sprintf("off: the ample-set reduction of %s needs an acyclic state graph or, with cycles, ample kinds that a fair run must take: %s%s",
		strings.Join(ample, ", "), ck.ReduceOff(), none)
}

// stubbornNote says what the stubborn-set reduction keeps, or why it was
// off.
func stubbornNote(ck *properties.Checker) string {
	if ck.Stubborn {
		return "on: each state explores a stubborn set of its enabled steps (steps of different nodes commute; the protocol declares which deliveries commute with every step of their node and which may make a node send where, and the search checks the declaration at every step): " + ck.StubbornKeeps() + "; counterexamples need not be shortest"
	}
	why := ck.StubbornOff()
	if why == "" {
		return "off (--por=off)"
	}
	return "off: " + why
}

// symmetryNote says whether the search stored one state per orbit, of
// which renamings, or why not.
func symmetryNote(ck *properties.Checker) string {
	sym := ck.Symmetries()
	switch {
	case ck.OnTheFly && len(sym) > 0:
		return fmt.Sprintf("off: the on-the-fly liveness search (--liveness-search scc) stores every state (it does not track renamings around cycles; %d renamings of node ids map the configuration onto itself)", len(sym)+1)
	case ck.Symmetry:
		var ps []string
		for i := range sym {
			ps = append(ps, "("+sym[i].String()+")")
		}
		note := fmt.Sprintf("on: %d renamings of node ids map the configuration onto itself (%s and the identity): one state is stored per orbit, standing for up to %d states; counterexamples are renamed back to real node ids",
			len(sym)+1, strings.Join(ps, ", "), len(sym)+1)
		if ck.LivenessCover() {
			note += "; liveness is analysed on the pairs of a stored state and a renaming, which stand for the real states, so fair cycles that close only up to a renaming are found"
		}
		return note
	case ck.SymmetryOff() != "":
		return "off: " + ck.SymmetryOff()
	}
	return fmt.Sprintf("off (--symmetry=off; %d renamings of node ids map the configuration onto itself)", len(sym)+1)
}
