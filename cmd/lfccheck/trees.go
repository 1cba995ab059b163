package main

import (
	"bytes"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"lfccheck/explore"
	"lfccheck/internal/fileio"
	"lfccheck/model"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/topology"
	"lfccheck/protocols/ucast"
	"lfccheck/traces"
)

// workloadKeys are the MCAST parameters trees takes, with the meaning
// check gives them: the workload its proof is about.
var workloadKeys = []string{"credits", "packets", "cast", "flow", "refresh"}

// registerWorkload registers MCAST's workload parameters on fs, parsed by
// the machinery of check's parameters (paramFlags).
func registerWorkload(fs *pflag.FlagSet) *paramFlags {
	pf := &paramFlags{fs: fs, flags: map[string]*paramFlag{}}
	for _, k := range workloadKeys {
		s := mcast.Def.Param(k)
		if s == nil {
			panic("lfccheck: mcast has no parameter " + k)
		}
		f := &paramFlag{spec: *s}
		pf.flags[k] = f
		pf.order = append(pf.order, k)
		doc := s.Doc
		if s.Default != "" {
			doc += " (default " + s.Default + ")"
		}
		fs.Var(f, k, "workload: "+doc)
	}
	return pf
}

// treesResult is the JSON of trees with a workload: the static report's
// fields, the answer and the proof.
type treesResult struct {
	topology.Report
	Answer string          `json:"answer"`
	Proof  *topology.Proof `json:"workload_proof"`
	// AnswerBy is "proof" or "search" (the deadlock search, run when the
	// proof is undecided); AnswerReason says why the answer is what it is.
	AnswerBy     string       `json:"answer_by"`
	AnswerReason string       `json:"answer_reason"`
	Search       *treesSearch `json:"deadlock_search,omitempty"`
	// Removed lists the --trace-out file of an earlier run that this run,
	// which found no deadlock, removed.
	Removed []string `json:"removed_files,omitempty"`
}

// familyResult is treesResult for a tree family beyond the explorer's
// node bound.
type familyResult struct {
	topology.FamilyReport
	Answer       string          `json:"answer"`
	Proof        *topology.Proof `json:"workload_proof"`
	AnswerBy     string          `json:"answer_by"`
	AnswerReason string          `json:"answer_reason"`
}

func runTrees(args []string, e env) (int, error) {
	fs := newFlags("trees", e)
	nodes := new(int)
	intVar(fs, nodes, "nodes", 16, "number of NIs, P")
	tree := fs.String("tree", "binary", "tree family for the broadcast group: binary, binomial, chain, star, kary:K")
	topoFile := fs.String("topology", "", "topology file with groups and trees (see 'lfccheck help topology')")
	dot := fs.Bool("dot", false, "print the trees as a Graphviz digraph")
	jsonOut := fs.Bool("json", false, "print the analysis as JSON")
	edges := fs.Bool("edges", false, "list every tree's edges in the text output")
	svg := fs.String("svg", "", "also draw the trees as SVG into this file ('-': standard output, instead of the text)")
	work := registerWorkload(fs)
	timeout := fs.Duration("timeout", defaultTreesTimeout, "when the proof is undecided, search for a deadlock for at most this long, e.g. 30s, 5m (0: no search)")
	maxMemory := fs.String("max-memory", "", "stop the deadlock search when the heap exceeds this, e.g. 8GiB (default 60% of the memory available)")
	quiet := fs.BoolP("quiet", "q", false, "no progress lines on stderr during the deadlock search")
	traceOut := fs.String("trace-out", "", "write the deadlock the search finds as a JSON trace to this file (a run without one removes the file if it exists)")
	// --faults is refused with a reason rather than as an unknown flag.
	fs.String("faults", "", "not supported by trees")
	fs.MarkHidden("faults")
	if err := parseNoArgs(fs, args, "[flags]\n\nWith a workload flag (--credits, --packets, --cast, --flow, --refresh: check's\nmeanings) trees proves the topology deadlock-free for that workload (exit 0)\nor, when the proof cannot, searches the configuration for a deadlock, guided\nby the cycle that may fill: deadlock (exit 1, with the trace), deadlock-free\nby exhaustive search (exit 0) or undecided (exit 3); see docs/trees.md."); err != nil {
		return 0, err
	}
	if fs.Changed("faults") {
		return 0, usagef("trees: --faults is not supported: the tree analysis, its workload proof and its guided deadlock search are about buffer cycles on LFC's reliable links (§3.2), not lost packets; check one configuration under faults with 'lfccheck check --protocol mcast ... --faults ...'")
	}
	withWork := len(work.given()) > 0
	searchFlagsGiven := fs.Changed("timeout") || fs.Changed("max-memory") || fs.Changed("trace-out") || fs.Changed("quiet")
	if searchFlagsGiven && !withWork {
		return 0, usagef("trees: --timeout, --max-memory, --trace-out and -q are for the deadlock search, which needs a workload (--credits, --packets, --cast, --flow or --refresh)")
	}
	if *timeout < 0 {
		return 0, usagef("--timeout must not be negative, got %v (0: no search)", *timeout)
	}
	searchOpt := explore.Options{Timeout: *timeout, Stop: e.stop, MaxMemory: explore.DefaultMemoryLimit()}
	if !*quiet {
		searchOpt.Progress = e.stderr
	}
	if *maxMemory != "" {
		m, err := parseBytes(*maxMemory)
		if err != nil {
			return 0, err
		}
		searchOpt.MaxMemory = m
	}
	if *traceOut != "" {
		if *traceOut == "-" {
			return 0, usagef("trees: --trace-out needs a file: standard output has the report")
		}
		if err := fileio.CheckOutput(*traceOut); err != nil {
			return 0, usagef("--trace-out: %v", err)
		}
	}
	if *dot && *jsonOut {
		return 0, usagef("trees: give --dot or --json, not both")
	}
	if withWork && (*dot || *svg == "-") {
		return 0, usagef("trees: --dot and --svg - print drawings only; give the workload flags without them")
	}
	if *svg != "" {
		if err := fileio.CheckOutput(*svg); err != nil {
			return 0, usagef("--svg: %v", err)
		}
		if *svg == "-" && (*dot || *jsonOut) {
			return 0, usagef("trees: --svg - writes to standard output, so --dot and --json cannot")
		}
	}
	outs := []fileio.Named{{Flag: "--trace-out", Path: *traceOut}, {Flag: "--svg", Path: *svg}}
	if err := fileio.Distinct([]fileio.Named{{Flag: "--topology", Path: *topoFile}}, outs); err != nil {
		return 0, usageError{err}
	}
	var spec *topology.TopologySpec
	var topoData []byte
	fam := *tree
	if *topoFile != "" {
		if fs.Changed("tree") {
			return 0, usagef("trees: give --tree or --topology, not both")
		}
		data, err := e.readInput(*topoFile, maxTopologySize)
		if err != nil {
			return 0, usagef("--topology: %v", err)
		}
		s, n, err := topology.ParseFile(*topoFile, data)
		if err != nil {
			return 0, usageError{err}
		}
		if fs.Changed("nodes") && *nodes != n {
			return 0, usagef("--nodes %d disagrees with %s, which has nodes %d", *nodes, *topoFile, n)
		}
		spec, *nodes, fam, topoData = s, n, "", data
	}
	if fam == "" && spec == nil {
		return 0, usagef("trees: --tree is empty")
	}
	var cfg model.Config
	if withWork {
		if *nodes < 2 || *nodes > topology.MaxStaticNodes || spec != nil && *nodes > model.MaxNodes {
			return 0, usagef("nodes must be in 2..%d (and up to %d for a tree family's analysis alone), got %d", model.MaxNodes, topology.MaxStaticNodes, *nodes)
		}
		p, err := work.apply(mcast.Def, nil)
		if err != nil {
			return 0, err
		}
		prm := p.(*mcast.Params)
		if spec != nil {
			if err := prm.SetTopologyFile(*topoFile, topoData); err != nil {
				return 0, usageError{err}
			}
		} else {
			if err := prm.Set("tree", fam); err != nil {
				return 0, usagef("--tree %s: %v", fam, err)
			}
		}
		n, err := prm.Resolve(*nodes)
		if err != nil {
			return 0, usageError{err}
		}
		cfg = model.Config{Protocol: "mcast", Variant: mcast.Correct, Nodes: n, Params: prm}
	}
	if spec == nil && *nodes > model.MaxNodes && *nodes <= topology.MaxStaticNodes {
		// Beyond the explorer's bound: the dependency graph only.
		if *dot || *svg != "" || *edges {
			return 0, usagef("trees: --dot, --svg and --edges draw or list at most %d nodes; for %d nodes only the analysis is printed", model.MaxNodes, *nodes)
		}
		trees, err := topology.FamilyTrees(fam, *nodes)
		if err != nil {
			return 0, usageError{err}
		}
		r := topology.AnalyzeFamilyTrees(fam, *nodes, trees)
		if !withWork {
			if *jsonOut {
				e.stdout.Write(marshalIndent(r))
			} else {
				topology.WriteFamilyText(e.stdout, r)
			}
			return exitPass, nil
		}
		pr, err := proveConfig(cfg, trees)
		if err != nil {
			return 0, usageError{err}
		}
		why, noSearch := pr.Reason, ""
		if pr.Verdict == topology.Undecided && *timeout > 0 {
			noSearch = fmt.Sprintf("the explorer handles at most %d nodes", model.MaxNodes)
			why += "; no deadlock search: " + noSearch
		}
		if *jsonOut {
			e.stdout.Write(marshalIndent(familyResult{FamilyReport: r, Answer: pr.Verdict, Proof: &pr, AnswerBy: "proof", AnswerReason: why}))
		} else {
			topology.WriteFamilyText(e.stdout, r)
			writeProof(e.stdout, pr)
			if noSearch != "" {
				fmt.Fprintf(e.stdout, "search: none: %s\n", noSearch)
			}
		}
		return proofExit(pr), nil
	}
	if *nodes < 2 || *nodes > model.MaxNodes {
		return 0, usagef("nodes must be in 2..%d (and up to %d for a tree family's analysis alone), got %d", model.MaxNodes, topology.MaxStaticNodes, *nodes)
	}
	topo, err := topology.Resolve(fam, spec, *nodes)
	if err != nil {
		return 0, usageError{err}
	}
	var pr topology.Proof
	var srch *cycleSearch
	answer, answerBy, why, code := "", "proof", "", exitPass
	var removed []string
	if withWork {
		if pr, err = proveConfig(cfg, nil); err != nil {
			return 0, usageError{err}
		}
		answer, why, code = pr.Verdict, pr.Reason, proofExit(pr)
		if pr.Verdict == topology.Undecided && *timeout > 0 {
			if srch, err = searchCycle(cfg, pr, searchOpt); err != nil {
				return 0, err
			}
			answerBy = "search"
			answer, why, code = srch.answer()
			if srch.c.file != nil && *traceOut != "" {
				srch.json.TraceFile = *traceOut
			}
		}
		if srch == nil || srch.c.file == nil {
			if removed, err = removeStale([]fileio.Named{{Flag: "--trace-out", Path: *traceOut}}); err != nil {
				return 0, err
			}
		}
	}
	if *svg != "" {
		var b bytes.Buffer
		if err := topology.WriteSVG(&b, topo); err != nil {
			return 0, err
		}
		if err := fileio.WriteOutput(*svg, b.Bytes(), e.stdout); err != nil {
			return 0, usagef("--svg: %v", err)
		}
		if *svg == "-" {
			return exitPass, nil
		}
	}
	switch {
	case *dot:
		topology.WriteDOT(e.stdout, topo)
	case *jsonOut && withWork:
		var sj *treesSearch
		if srch != nil {
			sj = &srch.json
		}
		e.stdout.Write(marshalIndent(treesResult{Report: topology.Analyze(topo, *nodes), Answer: answer, Proof: &pr,
			AnswerBy: answerBy, AnswerReason: why, Search: sj, Removed: removed}))
	case *jsonOut:
		e.stdout.Write(marshalIndent(topology.Analyze(topo, *nodes)))
	default:
		topology.WriteText(e.stdout, topology.Analyze(topo, *nodes), *edges)
		if withWork {
			fmt.Fprintln(e.stdout)
			io.WriteString(e.stdout, proofText(pr, srch != nil))
		}
		if srch != nil {
			writeSearch(e.stdout, srch, answer, why)
		}
		for _, r := range removed {
			fmt.Fprintf(e.stdout, "removed %s, left by an earlier run: this run found no deadlock to write there\n", r)
		}
	}
	if srch != nil && srch.c.file != nil && *traceOut != "" {
		if err := fileio.WriteOutput(*traceOut, traces.Marshal(*srch.c.file), e.stdout); err != nil {
			return 0, usagef("--trace-out: %v", err)
		}
	}
	if withWork {
		return code, nil
	}
	return exitPass, nil
}

// proofExit is trees' exit code with a workload: 0 deadlock-free (proved),
// 3 undecided (nothing proved, as for an incomplete search).
func proofExit(pr topology.Proof) int {
	if pr.Verdict == topology.DeadlockFree {
		return exitPass
	}
	return exitIncomplete
}

// writeProof prints the proof after the static analysis.
func writeProof(w io.Writer, pr topology.Proof) {
	fmt.Fprintln(w)
	topology.WriteProofText(w, pr)
}

// proveConfig runs the workload-aware proof on an MCAST configuration
// whose parameters are resolved: the multicasts of its casts (or of
// packets on every tree), its credits and refresh; what the argument does
// not cover (a broken variant, the host library, kept packets, work lists)
// makes it undecided. familyTrees, when not nil, are the trees of the
// configuration's family (computed once by the caller).
func proveConfig(cfg model.Config, familyTrees []topology.TreeEdges) (topology.Proof, error) {
	prm, ok := cfg.Params.(*mcast.Params)
	if cfg.Protocol != "mcast" || !ok {
		return topology.Proof{}, fmt.Errorf("the workload proof is for mcast configurations, not %s", cfg.Protocol)
	}
	w := topology.Workload{Credits: prm.Credits, Refresh: prm.Refresh, Packets: prm.Packets, Casts: prm.Casts}
	if w.Refresh == 0 {
		w.Refresh = ucast.DefaultRefresh(w.Credits)
	}
	for _, f := range prm.Flows {
		w.Unicast += f.Count
	}
	if cfg.Variant != "" && cfg.Variant != mcast.Correct {
		w.Uncovered = append(w.Uncovered, "the broken variant "+cfg.Variant)
	}
	if len(cfg.Faults) > 0 {
		w.Uncovered = append(w.Uncovered, "links that lose, duplicate or corrupt packets ("+cfg.Faults.String()+")")
	}
	seen := map[string]bool{}
	for _, s := range prm.Settings() {
		if ok, why := topology.ProofCovers(s.Key); !ok && !seen[s.Key] {
			seen[s.Key] = true
			w.Uncovered = append(w.Uncovered, why)
		}
	}
	if prm.Topology != nil {
		topo, err := topology.Build(prm.Topology, cfg.Nodes)
		if err != nil {
			return topology.Proof{}, err
		}
		return topology.Prove(topo, cfg.Nodes, w)
	}
	fam := prm.Tree
	if fam == "" {
		fam = "binary"
	}
	if familyTrees != nil {
		return topology.ProveFamilyTrees(cfg.Nodes, familyTrees, w)
	}
	return topology.ProveFamily(fam, cfg.Nodes, w)
}
