package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/traces"
)

// huntFlags choose check's search strategy (see explore.DFS, explore.Random).
type huntFlags struct {
	search string
	seed   int64
	walks  int
	shard  string
}

func (h *huntFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&h.search, "search", "bfs", "search strategy: bfs (shortest counterexamples, exhaustive), dfs (deep violations fast; exhaustive unless sharded), random (random walks; never proves anything)")
	int64Var(fs, &h.seed, "seed", 0, "seed of random walks and of sharded DFS orderings (every run is reproducible from it)")
	intVar(fs, &h.walks, "walks", 0, "random walks to run (this shard's share with --shard), each at most --max-depth steps long; 0: walk until --timeout, --max-states (distinct states seen), --max-memory or an interrupt ends the search, as simulation modes do")
	fs.StringVar(&h.shard, "shard", "", "run shard I of N (I/N, I in 0..N-1) of a swarm; I may be 'env': JOB_COMPLETION_INDEX (Kubernetes Indexed Job) or SLURM_ARRAY_TASK_ID (Slurm job array)")
}

// walksNoStubborn is why random walks run without stubborn sets: a walk
// takes one step in each state, so a smaller set saves it nothing, and
// walks on the reduced graph take a commuting delivery (a CREDIT) as soon
// as it arrives, which makes congestion, and deadlocks, rarer on them.
const walksNoStubborn = "random walks take one step in each state, so stubborn sets would save nothing, and on the reduced graph they deliver credits at once, which makes deadlocks rarer on them"

// hunt validates the flags and returns the explorer's configuration; nil
// means the default breadth-first search.
func (h *huntFlags) hunt(fs *pflag.FlagSet, opt explore.Options) (*explore.Hunt, error) {
	switch h.search {
	case "bfs":
		for _, f := range []string{"seed", "walks", "shard"} {
			if fs.Changed(f) {
				return nil, usagef("--%s needs --search dfs or random", f)
			}
		}
		return nil, nil
	case "dfs", "random":
	default:
		return nil, usagef("--search %q: want bfs, dfs or random", h.search)
	}
	x := &explore.Hunt{Seed: h.seed}
	if h.search == "random" {
		if opt.MaxDepth <= 0 {
			return nil, usagef("--search random needs --max-depth D: the length of every walk")
		}
		x.Walks = h.walks
	} else if fs.Changed("walks") {
		return nil, usagef("--walks needs --search random")
	}
	if h.shard != "" {
		i, n, err := parseShard(h.shard)
		if err != nil {
			return nil, usagef("--shard: %v", err)
		}
		x.Shard, x.Shards = i, n
	}
	return x, nil
}

// parseShard reads "I/N" (I may be "env").
func parseShard(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, fmt.Errorf("%q: want I/N", s)
	}
	n, err := model.ParseDecimal(b)
	if err == nil && (n < 1 || n > 1<<20) {
		err = fmt.Errorf("out of range")
	}
	if err != nil {
		return 0, 0, shardNumberError(s, "N", b, fmt.Sprintf("1..%d", 1<<20), a+"/"+noLeadingZeros(b))
	}
	from := "I"
	if a == "env" {
		for _, v := range []string{"JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"} {
			if x := os.Getenv(v); x != "" {
				a, from = x, fmt.Sprintf("I ($%s %q)", v, x)
				break
			}
		}
		if a == "env" {
			return 0, 0, fmt.Errorf("%q: neither JOB_COMPLETION_INDEX nor SLURM_ARRAY_TASK_ID is set", s)
		}
	}
	i, err := model.ParseDecimal(a)
	if err == nil && i >= n {
		err = fmt.Errorf("out of range")
	}
	if err != nil {
		return 0, 0, shardNumberError(s, from, a, fmt.Sprintf("0..%d", n-1), noLeadingZeros(a)+"/"+b)
	}
	return i, n, nil
}

// shardNumberError says what is wrong with part (I or N, written v) of
// the --shard value s: a leading zero, with the value as it is written
// without (fix), or not a number in the range in.
func shardNumberError(s, part, v, in, fix string) error {
	if noLeadingZeros(v) != v {
		return fmt.Errorf("%q: %s has a leading zero; write %s", s, part, fix)
	}
	return fmt.Errorf("%q: %s must be a number in %s, got %q", s, part, in, v)
}

// noLeadingZeros is the digits v without leading zeros ("0" for zeros
// only); any other v as it is.
func noLeadingZeros(v string) string {
	if v == "" || strings.Trim(v, "0123456789") != "" {
		return v
	}
	if t := strings.TrimLeft(v, "0"); t != "" {
		return t
	}
	return "0"
}

// runHunt searches with a hunt strategy. Liveness properties that need
// the state graph cannot be checked this way.
func runHunt(ck *properties.Checker, opt explore.Options, h *explore.Hunt, search string) (explore.Result, *explore.HuntStats, error) {
	if lv := ck.Live(); lv != nil {
		names := make([]string, len(lv.Props))
		for i, p := range lv.Props {
			names[i] = p.Name
		}
		return explore.Result{}, nil, usagef("--search %s checks safety properties only, and %s needs the state graph of a breadth-first search: select properties with --property, or use --search bfs",
			search, strings.Join(names, ", "))
	}
	if search == "dfs" {
		r, err := explore.DFS(ck, opt, *h)
		return r, &explore.HuntStats{Coverage: r.Stats.States}, err
	}
	r, hs, err := explore.Random(ck, opt, *h)
	return r, &hs, err
}

// mergeResult is the JSON form of merge. Field names are interface.
type mergeResult struct {
	Format   string   `json:"format"`
	Verdict  string   `json:"verdict"`
	Reason   string   `json:"reason,omitempty"`
	Property string   `json:"property,omitempty"`
	Message  string   `json:"message,omitempty"`
	Trace    []string `json:"trace,omitempty"`
	From     string   `json:"from,omitempty"` // the file whose violation is reported
	Files    int      `json:"files"`
	Shards   []string `json:"shards"`
	States   int64    `json:"states"`
	Walks    int64    `json:"walks,omitempty"`
	Coverage int64    `json:"coverage"`
}

// mergeable says why r cannot be a result that check wrote, if it cannot:
// a search kind lfccheck does not have, a verdict that kind of search
// cannot give (random walks and shards never pass), a failure without the
// property it violates, a malformed shard.
func mergeable(r *checkResult) error {
	switch r.Search {
	case "bfs", "dfs", "random":
	default:
		return fmt.Errorf("search %q: want bfs, dfs or random", r.Search)
	}
	if r.Shard != "" {
		if r.Search == "bfs" {
			return fmt.Errorf("a bfs search with shard %s: only dfs and random searches are sharded", r.Shard)
		}
		if strings.HasPrefix(r.Shard, "env") {
			return fmt.Errorf("shard %q: want I/N", r.Shard)
		}
		if _, _, err := parseShard(r.Shard); err != nil {
			return fmt.Errorf("shard %q: want I/N", r.Shard)
		}
	}
	switch explore.Verdict(r.Verdict) {
	case explore.Pass:
		if r.Search == "random" {
			return fmt.Errorf("verdict pass from random walks, which never prove anything: not a result lfccheck wrote")
		}
		if r.Shard != "" {
			return fmt.Errorf("verdict pass from shard %s, which never proves anything: not a result lfccheck wrote", r.Shard)
		}
		if r.Reason != "" || r.Property != "" {
			return fmt.Errorf("verdict pass with a reason or a violated property: not a result lfccheck wrote")
		}
	case explore.Fail:
		if r.Property == "" {
			return fmt.Errorf("verdict fail without the property violated")
		}
	case explore.Incomplete:
	default:
		return fmt.Errorf("verdict %q: want pass, fail or incomplete", r.Verdict)
	}
	if err := countsFit(r); err != nil {
		return err
	}
	if explore.Verdict(r.Verdict) == explore.Fail {
		return failureReplays(r)
	}
	return nil
}

// countsFit says which count of r is one no search gives, if one is: a
// negative count, or walks from a search that takes none.
func countsFit(r *checkResult) error {
	for _, c := range []struct {
		name string
		v    float64
	}{
		{"states", float64(r.States)}, {"transitions", float64(r.Transitions)}, {"depth", float64(r.Depth)},
		{"walks", float64(r.Walks)}, {"coverage", float64(r.Coverage)}, {"max_depth", float64(r.MaxDepth)},
		{"elapsed_s", r.ElapsedS}, {"states_per_s", r.StatesPerS}, {"walks_per_s", r.WalksPerS},
		{"store_bytes", float64(r.StoreBytes)}, {"disk_bytes", float64(r.DiskBytes)},
		{"collision_probability", r.CollisionProb}, {"symmetry_group", float64(r.SymmetryGroup)},
		{"sleep_sets_skipped", float64(r.SleepSetsSkipped)}, {"stubborn_states", float64(r.StubbornStates)},
		{"stubborn_left_out", float64(r.StubbornLeft)}, {"step_cache_hits", float64(r.StepCacheHits)},
		{"step_cache_misses", float64(r.StepCacheMisses)}, {"step_cache_bytes", float64(r.StepCacheBytes)},
		{"step_cache_check_hits", float64(r.StepCacheChecks)}, {"graph_bytes", float64(r.GraphBytes)},
		{"on_the_fly_bytes", float64(r.OnTheFlyBytes)}, {"component_bytes", float64(r.ComponentBytes)},
		{"segment_ids", float64(r.SegmentIDs)}, {"segment_memo_entries", float64(r.SegmentMemoEntries)},
		{"segment_memo_bytes", float64(r.SegmentMemoBytes)}, {"segment_memo_hits", float64(r.SegmentMemoHits)},
		{"segment_memo_misses", float64(r.SegmentMemoMisses)}, {"workers", float64(r.Workers)}, {"loop_start", float64(r.LoopStart)},
	} {
		if c.v < 0 {
			return fmt.Errorf("%s %v: a count is never negative", c.name, c.v)
		}
	}
	for i, n := range r.Levels {
		if n < 0 {
			return fmt.Errorf("levels: %d states at depth %d: a count is never negative", n, i)
		}
	}
	if r.CollisionProb > 1 {
		return fmt.Errorf("collision_probability %v: a probability is at most 1", r.CollisionProb)
	}
	if r.Search != "random" && (r.Walks != 0 || r.WalksPerS != 0) {
		return fmt.Errorf("%d walks from a %s search, which takes none", r.Walks, r.Search)
	}
	return nil
}

// failureReplays checks a failing result: it names a property of the
// configuration it checked (as check builds them), and its counterexample
// replays to that violation with that message; or, for a goal no state
// reached, it comes from a complete search and has no counterexample.
func failureReplays(r *checkResult) error {
	ck, err := properties.Build(r.Config)
	if err != nil {
		return fmt.Errorf("its configuration cannot be checked: %v", err)
	}
	name := ck.Def.PropertyName(r.Property)
	var prop *properties.Property
	var names []string
	for i := range ck.Props {
		names = append(names, ck.Props[i].Name)
		if ck.Props[i].Name == name {
			prop = &ck.Props[i]
		}
	}
	if prop == nil {
		return fmt.Errorf("verdict fail of %s, which is not a property checked on %s (%s)", r.Property, ck.Sys.Cfg.Describe(), strings.Join(names, ", "))
	}
	if prop.Sometimes != nil {
		if len(r.Trace) != 0 || r.Shard != "" || r.Search == "random" {
			return fmt.Errorf("verdict fail of %s, a goal: only a complete search finds it unreached, and with no counterexample", r.Property)
		}
		return nil
	}
	file := traces.File{Config: r.Config, Property: r.Property, Message: r.Message, Actions: r.Trace, LoopStart: r.LoopStart}
	acts, err := traces.ParseActions(ck.Sys, file.Actions)
	if err != nil {
		return fmt.Errorf("its counterexample does not replay: %v", err)
	}
	o, err := traces.RunLasso(ck, acts, file.Loop())
	if err != nil {
		return fmt.Errorf("its counterexample does not replay: %v", err)
	}
	if ok, why := traces.Reproduces(file, o); !ok || len(o.Steps) != len(acts) {
		if len(acts) == 0 {
			return fmt.Errorf("verdict fail of %s without a counterexample, and the initial state does not violate it", r.Property)
		}
		if ok {
			why = fmt.Sprintf("the violation comes at step %d of %d", len(o.Steps), len(acts))
		}
		return fmt.Errorf("its counterexample (%d steps) is not one of %s: %s", len(acts), r.Property, why)
	}
	return nil
}

// shardCount is N of a shard I/N, 0 for an unsharded result.
func shardCount(shard string) int {
	if shard == "" {
		return 0
	}
	_, n, _ := parseShard(shard)
	return n
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// runMerge combines the check --json results of a swarm's shards: a
// violation in any shard is the verdict; otherwise the swarm found none,
// which proves nothing (incomplete), unless one input is an exhaustive
// pass.
func runMerge(args []string, e env) (int, error) {
	fs := newFlags("merge", e)
	jsonOut := fs.Bool("json", false, "print the merged result as JSON")
	if err := parseFlags(fs, args, "[--json] FILE..."); err != nil {
		return 0, err
	}
	if fs.NArg() == 0 {
		return 0, usagef("merge: want the JSON results of one or more checks")
	}
	m := mergeResult{Format: "lfccheck-merge/1", Files: fs.NArg()}
	var first *checkResult
	var firstPath string
	shardFile := map[string]string{} // shard ("-": unsharded) -> file
	passed := false
	for _, path := range fs.Args() {
		data, err := e.readInput(path, maxInputBytes)
		if err != nil {
			return 0, usagef("merge: %v", err)
		}
		var r checkResult
		if err := json.Unmarshal(data, &r); err != nil {
			return 0, usagef("merge: %s: not a check result: %v", path, err)
		}
		if r.Format != resultFormat {
			return 0, usagef("merge: %s: format %q, want %q", path, r.Format, resultFormat)
		}
		if err := mergeable(&r); err != nil {
			return 0, usagef("merge: %s: %v", path, err)
		}
		if first == nil {
			first, firstPath = &r, path
		} else {
			a, _ := json.Marshal(first.Config)
			b, _ := json.Marshal(r.Config)
			switch {
			case !bytes.Equal(a, b):
				return 0, usagef("merge: %s checked another configuration than %s (%s, not %s)", path, firstPath, r.Config.Describe(), first.Config.Describe())
			case first.Search != r.Search:
				return 0, usagef("merge: %s is a %s search, %s a %s search", path, r.Search, firstPath, first.Search)
			case first.Seed != r.Seed:
				return 0, usagef("merge: %s has seed %d, %s seed %d: the shards of one swarm share a seed", path, r.Seed, firstPath, first.Seed)
			case first.MaxDepth != r.MaxDepth:
				return 0, usagef("merge: %s has --max-depth %d, %s %d: the shards of one swarm share a depth", path, r.MaxDepth, firstPath, first.MaxDepth)
			case shardCount(first.Shard) != shardCount(r.Shard):
				return 0, usagef("merge: %s is shard %s, %s shard %s: the shards of one swarm have one N", path, orDash(r.Shard), firstPath, orDash(first.Shard))
			}
		}
		shard := orDash(r.Shard)
		if prev, dup := shardFile[shard]; dup {
			if shard == "-" {
				return 0, usagef("merge: %s and %s are both unsharded results: each would count the same search twice", prev, path)
			}
			return 0, usagef("merge: %s and %s are both shard %s: each shard counts once", prev, path, shard)
		}
		shardFile[shard] = path
		m.Shards = append(m.Shards, shard)
		if m.States > math.MaxInt64-r.States || m.Walks > math.MaxInt64-r.Walks || m.Coverage > math.MaxInt64-r.Coverage {
			return 0, usagef("merge: %s: its counts overflow the sums of the results before it: not a result lfccheck wrote", path)
		}
		m.States += r.States
		m.Walks += r.Walks
		m.Coverage += r.Coverage
		switch r.Verdict {
		case string(explore.Fail):
			if m.Verdict != string(explore.Fail) {
				m.Verdict, m.Property, m.Message, m.Trace, m.From = r.Verdict, r.Property, r.Message, r.Trace, path
			}
		case string(explore.Pass):
			passed = true
		}
	}
	switch {
	case m.Verdict == string(explore.Fail):
	case passed:
		m.Verdict = string(explore.Pass)
	default:
		m.Verdict = string(explore.Incomplete)
		m.Reason = fmt.Sprintf("no violation found by %d shards (%d states, %d walks, up to %d distinct states, shards may overlap); a swarm never proves anything", m.Files, m.States, m.Walks, m.Coverage)
	}
	if *jsonOut {
		e.stdout.Write(marshalIndent(m))
	} else {
		fmt.Fprintf(e.stdout, "%s, %s search, %d results (shards %s)\n", first.Config.Describe(), first.Search, m.Files, strings.Join(m.Shards, " "))
		switch m.Verdict {
		case string(explore.Fail):
			fmt.Fprintf(e.stdout, "verdict: FAIL: %s violated (found by %s): %s\n", m.Property, m.From, m.Message)
			fmt.Fprintf(e.stdout, "counterexample: %d steps, in %s (rerun that shard with --trace-out FILE to replay it)\n", len(m.Trace), m.From)
		case string(explore.Pass):
			fmt.Fprintf(e.stdout, "verdict: pass (one result explored the complete state space)\n")
		default:
			fmt.Fprintf(e.stdout, "verdict: INCOMPLETE: %s\n", m.Reason)
		}
	}
	return verdictCode(m.Verdict), nil
}
