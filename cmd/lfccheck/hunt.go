package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"lfccheck/explore"
	"lfccheck/properties"
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
	fs.Int64Var(&h.seed, "seed", 0, "seed of random walks and of sharded DFS orderings (every run is reproducible from it)")
	fs.IntVar(&h.walks, "walks", 0, "random walks to run (this shard's share with --shard); needs --max-depth")
	fs.StringVar(&h.shard, "shard", "", "run shard I of N (I/N, I in 0..N-1) of a swarm; I may be 'env': JOB_COMPLETION_INDEX (Kubernetes Indexed Job) or SLURM_ARRAY_TASK_ID (Slurm job array)")
}

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
		if h.walks <= 0 {
			return nil, usagef("--search random needs --walks N with N > 0")
		}
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
	n, err := strconv.Atoi(b)
	if err != nil || n < 1 || n > 1<<20 {
		return 0, 0, fmt.Errorf("%q: N must be a number in 1..%d", s, 1<<20)
	}
	if a == "env" {
		for _, v := range []string{"JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"} {
			if x := os.Getenv(v); x != "" {
				a = x
				break
			}
		}
		if a == "env" {
			return 0, 0, fmt.Errorf("%q: neither JOB_COMPLETION_INDEX nor SLURM_ARRAY_TASK_ID is set", s)
		}
	}
	i, err := strconv.Atoi(a)
	if err != nil || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("%q: I must be a number in 0..%d", s, n-1)
	}
	return i, n, nil
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
	passed := false
	for _, path := range fs.Args() {
		data, err := readInput(path, maxInputBytes)
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
		if first == nil {
			first = &r
		} else {
			a, _ := json.Marshal(first.Config)
			b, _ := json.Marshal(r.Config)
			if !bytes.Equal(a, b) || first.Search != r.Search {
				return 0, usagef("merge: %s checked another configuration or search than %s", path, fs.Arg(0))
			}
		}
		shard := r.Shard
		if shard == "" {
			shard = "-"
		}
		m.Shards = append(m.Shards, shard)
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
