package main

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"lfccheck/explore"
	"lfccheck/internal/fileio"
	"lfccheck/internal/segsearch"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/traces"
)

func runCheck(args []string, e env) (int, error) { return runCheckArgs(args, e, false) }

// runCheckArgs is check; resolved is set when the flags of a --resume
// alone were completed from the checkpoint.
func runCheckArgs(args []string, e env, resolved bool) (int, error) {
	var cf configFlags
	var sf searchFlags
	fs := newFlags("check", e)
	cf.register(fs)
	jsonOut := fs.Bool("json", false, "print one JSON object instead of text")
	traceOut := fs.String("trace-out", "", "write the counterexample as a JSON trace to this file ('-': standard output, and the report to standard error); a run without a counterexample removes the file if it exists, so that no stale trace stays")
	var pf pictureFlags
	pf.register(fs, "the counterexample")
	for _, name := range []string{"svg", "html"} {
		fs.Lookup(name).Usage += "; as --trace-out, the report then goes to standard error, and a run without a counterexample removes the file"
	}
	var hf huntFlags
	hf.register(fs)
	sf.register(fs, 0, false)
	var lsf liveSearchFlags
	lsf.register(fs)
	var cpf checkpointFlags
	cpf.register(fs)
	var df distFlags
	df.register(fs)
	var dkf diskFlags
	dkf.register(fs)
	engine := fs.String("engine", "checker", "checker: the checker's search (every option here); segments: a breadth-first search over tuples of segment ids with memoized steps (experimental: one worker, no stubborn or sleep sets, so the space of --por off --sleep-sets off; at most 8 nodes; symmetry only where it is the rotations of the nodes; no faults or liveness on the state graph; see docs/checking.md)")
	frontier := fs.Bool("frontier", false, "keep only the level being built in the visited set: memory per level, not per state, for protocol variants whose runs all end (a state met again at a greater depth is stored again; after a pass the search counts the states stored twice: none means the count is of distinct states)")
	if err := parseNoArgs(fs, args, "[flags]"); err != nil {
		return 0, err
	}
	if cpf.resume != "" && !resolved {
		// The search is the checkpoint's: its flags, but for those given
		// here (which must agree, or the identity check names the
		// difference).
		stored, err := cpf.storedArgs()
		if err != nil {
			if len(searchArgs(fs)) == 0 {
				return 0, err
			}
			stored = nil // the flags given must then say it all
		}
		var all []string
		for _, a := range stored {
			name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			if !fs.Changed(name) {
				all = append(all, a)
			}
		}
		return runCheckArgs(append(all, args...), e, true)
	}
	cfg, _, err := cf.config(fs, e)
	if err != nil {
		return 0, err
	}
	opt, err := sf.options(e)
	if err != nil {
		return 0, err
	}
	hunt, err := hf.hunt(fs, opt)
	if err != nil {
		return 0, err
	}
	if err := breadthFirstOnly(fs, &sf, hunt, hf.search); err != nil {
		return 0, err
	}
	if *frontier {
		switch {
		case hunt != nil:
			return 0, usagef("--frontier is a breadth-first search: not with --search %s", hf.search)
		case sf.fingerprint:
			return 0, usagef("--frontier needs the exact store: drop --fingerprint")
		}
		opt.Frontier = true
	}
	scc, err := lsf.scc(fs, &sf, hunt, *frontier, df.on(fs), &cpf)
	if err != nil {
		return 0, err
	}
	if err := dkf.validate(fs, &opt, &sf, hunt, hf.search, *frontier, scc, df.on(fs), &cpf); err != nil {
		return 0, err
	}
	segments := *engine == "segments"
	if !segments && *engine != "checker" {
		return 0, usagef("--engine must be checker or segments, got %q", *engine)
	}
	if segments {
		if err := segmentsFit(fs, &sf, &cpf, hf.search, *frontier, scc, df.on(fs), dkf.on(fs)); err != nil {
			return 0, err
		}
	}
	if *traceOut != "" {
		if err := fileio.CheckOutput(*traceOut); err != nil {
			return 0, usagef("--trace-out: %v", err)
		}
	}
	pf.trace = *traceOut
	if err := pf.check(); err != nil {
		return 0, err
	}
	nStdout := countStdout(*traceOut, pf.svg, pf.html)
	if nStdout > 1 || (nStdout == 1 && *jsonOut) {
		return 0, usagef("at most one of --json, --trace-out, --svg and --html can write to standard output")
	}
	outputs := append([]fileio.Named{{Flag: "--trace-out", Path: *traceOut}}, pf.outputs()...)
	inputs := cf.params.inputs()
	for _, d := range []struct{ flag, dir string }{{"--checkpoint", cpf.dir}, {"--resume", cpf.resume}} {
		if d.dir != "" {
			for _, f := range explore.CheckpointFiles() {
				inputs = append(inputs, fileio.Named{Flag: d.flag, Path: filepath.Join(d.dir, f)})
			}
		}
	}
	if err := fileio.Distinct(inputs, outputs); err != nil {
		return 0, usageError{err}
	}
	// With an output on standard output, the report goes to standard
	// error, so that the output can be piped.
	report := e.stdout
	if nStdout == 1 {
		report = e.stderr
	}
	ck, err := properties.Build(cfg)
	if err != nil {
		return 0, usageError{err}
	}
	sf.setUp(ck)
	if hf.search == "random" {
		ck.NoStubborn(walksNoStubborn)
	}
	if segments {
		ck.NoStubborn("--engine segments explores every enabled step")
		if why := segsearch.Off(ck); why != "" {
			return 0, usagef("--engine segments cannot check this configuration: %s", why)
		}
	}
	if scc {
		if err := setUpOnTheFly(ck); err != nil {
			return 0, err
		}
	}
	if *frontier {
		if err := frontierFits(ck); err != nil {
			return 0, err
		}
	}
	if err := cpf.apply(fs, &opt, ck, &sf, hf.search); err != nil {
		return 0, err
	}
	if err := dkf.fits(fs, ck, &sf, &opt); err != nil {
		return 0, err
	}
	if err := otherCheckpoint(opt, df.on(fs)); err != nil {
		return 0, err
	}
	var res checked
	if df.on(fs) || fs.Changed("connect-timeout") || fs.Changed("peer-timeout") {
		if err := df.validate(fs, ck, opt, huntName(hunt, hf.search)); err != nil {
			return 0, err
		}
		if df.searchID, err = checkpointID(ck, &sf, &opt); err != nil {
			return 0, err
		}
		var done bool
		var code int
		if res, done, code, err = df.run(fs, args, ck, opt, e); err != nil || done {
			return code, err
		}
	} else if hunt == nil {
		switch {
		case scc:
			res, err = checkOnTheFly(ck, opt)
		case segments:
			res, err = checkSegments(ck, opt)
		default:
			res, err = checkOne(ck, opt)
		}
		if err != nil {
			return 0, checkpointError(err, cmp.Or(opt.Checkpoint, opt.DiskDir))
		}
	} else {
		res, err = checkResultOf(ck, opt, func() (explore.Result, *explore.HuntStats, error) {
			return runHunt(ck, opt, hunt, hf.search)
		})
		res.json.Search, res.json.Seed, res.json.MaxDepth = hf.search, hf.seed, opt.MaxDepth
		if hunt.Shards > 0 {
			res.json.Shard = fmt.Sprintf("%d/%d", hunt.Shard, hunt.Shards)
		}
	}
	if err != nil {
		return 0, err
	}
	if res.file != nil && *traceOut != "" {
		res.json.TraceFile = *traceOut
	}
	v := version()
	res.json.Version = &v
	if res.file == nil {
		removed, err := removeStale(outputs)
		res.json.Removed = removed
		if err != nil {
			return 0, err
		}
	}
	err = func() error {
		if *jsonOut {
			e.stdout.Write(marshalIndent(res.json))
		} else {
			printCheck(report, res)
		}
		if res.file != nil && *traceOut != "" {
			if beforeWrite != nil {
				beforeWrite()
			}
			if err := fileio.WriteOutput(*traceOut, traces.Marshal(*res.file), e.stdout); err != nil {
				return usagef("--trace-out: %v", err)
			}
		}
		if res.outcome != nil {
			return pf.write(ck.Sys, res.acts, *res.outcome, e)
		}
		return nil
	}()
	if err := deliverCheckpoint(res.json.Checkpoint, e, err); err != nil {
		return 0, err
	}
	return verdictCode(res.json.Verdict), nil
}

// breadthFirstOnly refuses the flags that only the breadth-first search
// reads, given with --search dfs or random, where they would do nothing.
func breadthFirstOnly(fs *pflag.FlagSet, sf *searchFlags, hunt *explore.Hunt, search string) error {
	switch {
	case hunt == nil:
		return nil
	case fs.Changed("workers") && sf.workers > 1:
		return usagef("--workers is for the breadth-first search: --search %s runs on one goroutine", search)
	case fs.Changed("sleep-sets") && sf.sleepSets == "on":
		return usagef("--sleep-sets on is for the breadth-first search: --search %s has no sleep sets", search)
	case sf.graph:
		return usagef("--liveness-graph checks liveness on the state graph of a breadth-first search: not with --search %s", search)
	}
	return nil
}

// frontierFits says why --frontier cannot check ck, if it cannot: the
// search keeps no state graph, so every run must end and no liveness
// property may need the graph.
func frontierFits(ck *properties.Checker) error {
	cfg := ck.Sys.Cfg
	if !ck.DeclaredAcyclic() {
		return usagef("--frontier needs a protocol variant whose runs all end, and %s %s does not declare that (on a cycle the search would never end)", cfg.Protocol, cfg.Variant)
	}
	return needsNoGraph(ck, "--frontier")
}

// needsNoGraph says why a search that keeps no state graph (flag names
// it) cannot check ck: --liveness-graph, or liveness properties checked
// on the graph (with the --property flags that leave them out).
func needsNoGraph(ck *properties.Checker, flag string) error {
	if ck.LivenessGraph {
		return usagef("%s keeps no state graph: not with --liveness-graph", flag)
	}
	var graph, others []string
	for i := range ck.Props {
		switch p := &ck.Props[i]; {
		case p.Live != model.NotLive && !ck.OnEndStates(p):
			graph = append(graph, p.Name)
		default:
			others = append(others, "--property "+p.Name)
		}
	}
	if len(graph) > 0 {
		return usagef("%s keeps no state graph, which %s checks on: leave it out with --property (%s)", flag, strings.Join(graph, ", "), strings.Join(others, " "))
	}
	return nil
}

// deliverCheckpoint removes the checkpoint of a search that ended with a
// verdict once its result is written (err nil, standard output written);
// otherwise the checkpoint stays, so that --resume can give the result
// again, and the error says so.
func deliverCheckpoint(ci *explore.CheckpointInfo, e env, err error) error {
	if ci == nil || ci.Kept || ci.Lost {
		return err
	}
	if ew, ok := e.stdout.(*errWriter); ok && ew.err != nil && err == nil {
		err, ew.err = fmt.Errorf("writing standard output: %v", ew.err), nil
	}
	if err == nil || (ci.Written == 0 && !ci.Resumed) { // (none was written)
		ci.Remove()
		return err
	}
	return usagef("%v; the checkpoint in %s is kept: 'lfccheck check --resume %s' ends the search again", err, ci.Dir, shellQuote(ci.Dir))
}

// removeStale removes the existing output files of a run that found no
// counterexample to write into them: a trace or picture left by an earlier
// run would otherwise read as this run's. It returns the paths removed.
func removeStale(outputs []fileio.Named) ([]string, error) {
	var removed []string
	for _, o := range outputs {
		if o.Path == "" || o.Path == "-" {
			continue
		}
		st, err := os.Lstat(o.Path)
		if err != nil || !st.Mode().IsRegular() {
			continue // nothing there (CheckOutput refused anything else)
		}
		if err := os.Remove(o.Path); err != nil {
			return removed, usagef("%s: removing the stale %s of an earlier run: %v", o.Flag, o.Path, err)
		}
		removed = append(removed, o.Path)
	}
	return removed, nil
}

// beforeWrite, when set by a test, runs between the search and the
// writing of the trace file.
var beforeWrite func()

func verdictCode(v string) int {
	switch v {
	case string(explore.Pass):
		return exitPass
	case string(explore.Fail):
		return exitFail
	}
	return exitIncomplete
}

// checked is the outcome of one check with everything needed to print it.
type checked struct {
	json    checkResult
	outcome *traces.Outcome
	file    *traces.File
	acts    []model.Action
}

// countStdout counts the outputs that go to standard output ("-").
func countStdout(paths ...string) int {
	n := 0
	for _, p := range paths {
		if p == "-" {
			n++
		}
	}
	return n
}

// checkOne searches ck's state space and, on a violation, re-runs the
// counterexample step by step to render it and to confirm it reproduces.
// After a complete search, a Sometimes goal that was never reached is a
// failure without a counterexample.
func checkOne(ck *properties.Checker, opt explore.Options) (checked, error) {
	c, err := checkResultOf(ck, opt, func() (explore.Result, *explore.HuntStats, error) {
		r, err := explore.BFS(ck, opt)
		return r, nil, err
	})
	c.json.Search = "bfs"
	c.json.Workers = max(opt.Workers, 1)
	return c, err
}

// checkSegments is checkOne with the search over segment ids
// (internal/segsearch).
func checkSegments(ck *properties.Checker, opt explore.Options) (checked, error) {
	var n segsearch.Counts
	c, err := checkResultOf(ck, opt, func() (explore.Result, *explore.HuntStats, error) {
		r, counts, err := segsearch.Run(ck, opt)
		n = counts
		return r, nil, err
	})
	c.json.Search, c.json.Engine, c.json.Workers = "bfs", "segments", 1
	c.json.SegmentIDs, c.json.SegmentMemoEntries, c.json.SegmentMemoBytes = n.Segments, n.MemoEntries, n.MemoBytes
	c.json.SegmentMemoHits, c.json.SegmentMemoMisses = n.Hits, n.Misses
	if n.Absolute && c.json.Symmetry {
		// The checker would have reduced by these renamings; this search
		// stores every state.
		c.json.Symmetry = false
		c.json.SymmetryNote = "off: --engine segments stores every state where the renamings are not the rotations of the nodes (" + n.AbsoluteNote + ")"
	}
	return c, err
}

// segmentsFit says which flag --engine segments cannot take, if any: it
// is a breadth-first search on one worker over whole tuples in memory,
// with neither stubborn nor sleep sets, and no step cache (it memoizes
// every step itself).
func segmentsFit(fs *pflag.FlagSet, sf *searchFlags, cpf *checkpointFlags, search string, frontier, scc, distributed, disk bool) error {
	not := func(what string) error { return usagef("--engine segments: not with %s", what) }
	switch {
	case search != "bfs":
		return not("--search " + search + " (it is a breadth-first search)")
	case scc:
		return not("--liveness-search scc")
	case frontier:
		return not("--frontier (it keeps every state)")
	case distributed:
		return not("--distributed (it runs on one worker)")
	case disk:
		return not("--disk-visited (it keeps every state in memory)")
	case cpf.dir != "" || cpf.resume != "":
		return not("--checkpoint or --resume (it writes no checkpoints)")
	case sf.fingerprint:
		return not("--fingerprint (it stores whole tuples of ids)")
	case fs.Changed("workers") && sf.workers != 1:
		return not(fmt.Sprintf("--workers %d (it runs on one worker)", sf.workers))
	case sf.stepCache == "on":
		return not("--step-cache on (it memoizes every step itself)")
	case fs.Changed("por") && sf.por == "on":
		return not("--por on (it has no stubborn sets)")
	case fs.Changed("sleep-sets") && sf.sleepSets == "on":
		return not("--sleep-sets on (it has no sleep sets)")
	}
	return nil
}
