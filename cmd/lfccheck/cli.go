package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"lfccheck/explore"
	"lfccheck/internal/fileio"
	"lfccheck/model"
	"lfccheck/model/topology"
	"lfccheck/properties"
	"lfccheck/protocols"
	"lfccheck/traces"
)

// Exit codes.
const (
	exitPass        = 0
	exitFail        = 1
	exitUsage       = 2
	exitIncomplete  = 3
	maxInputBytes   = 16 << 20 // trace files
	maxTopologySize = 1 << 20
)

const usage = `lfccheck: model checker for the LFC network-interface protocols

usage:
  lfccheck                    run the built-in suite of checks (same as 'lfccheck suite')
  lfccheck suite [flags]      the built-in suite: thesis claims and broken variants
  lfccheck check [flags]      check one configuration exhaustively
  lfccheck list [--json]      list protocols, their parameters, variants and properties
  lfccheck replay [--json] FILE
                              re-execute a saved trace step by step
  lfccheck show [--svg F] [--html F] FILE
                              draw a saved trace as a sequence chart or a browser viewer
  lfccheck merge [--json] FILE...
                              combine the JSON results of a swarm's shards into one verdict
  lfccheck trees [flags]      print multicast trees and their static analysis (App. A.1)
  lfccheck sweep [flags]      check a grid of sizes; report the largest verified per series
  lfccheck version [--json]   the version and build (also: lfccheck --version)
  lfccheck help [TOPIC]       this text; topics: check, suite, sweep, list, replay, show, merge, trees, version,
                              topology (the topology file format), exit-codes, liveness

exit codes: 0 pass (or as expected), 1 property violated (or not as expected),
            2 usage or input error, 3 search incomplete (a limit was hit, or interrupted);
            'lfccheck help exit-codes' has the details
`

const exitCodesHelp = `lfccheck exit codes

  0  pass: every property holds over the complete state space (suite, sweep:
     every check came out as expected; replay: the recorded outcome was
     reproduced; trees with a workload flag: deadlock-free for that workload,
     by the proof or by an exhaustive search; list, trees without one,
     version, help: success)
  1  fail: a property is violated (a counterexample is printed) or a
     Sometimes goal is unreachable; suite, sweep: some check came out
     differently than expected; replay: the outcome differs from the recorded
     one; trees with a workload flag: the deadlock search found a deadlock
  2  usage or input error: one line on stderr naming the problem; nothing is
     checked. Also when a result could not be written (a full disk, an
     unwritable --trace-out): the result is printed first, then the error
  3  incomplete: the search was cut short, nothing was proved (trees with a
     workload flag: undecided, neither the proof nor the search decided). The verdict
     line (or the JSON "reason") says why:
       state limit N reached          --max-states: never more than N states stored
       depth limit N reached          --max-depth
       time limit D reached           --timeout
       memory limit M reached         --max-memory (default: 60% of the memory
                                      available, physical or cgroup limit)
       interrupted                    SIGINT (Ctrl-C) or SIGTERM: the statistics
                                      so far are printed, with the JSON object
                                      under --json; suite and sweep print the rows
                                      they finished and the interrupted one
  130  a second SIGINT or SIGTERM before the result is printed: the process
       ends at once and prints nothing more
  With check --checkpoint DIR (or --resume DIR), an incomplete search keeps
  its newest checkpoint there, and 'lfccheck check --resume DIR' continues
  it; a search that ends with a verdict removes it once its result is
  written (if writing fails, it stays and --resume gives the result again).
  When a suite or sweep has both failures and incomplete checks, 1 wins.
`

const livenessHelp = `lfccheck liveness properties

  Kinds ('lfccheck list' prints each property's kind in brackets):
    eventually             the goal holds at some point of every fair run
    leads-to               after every state where the trigger holds, the
                           goal holds at some point (that state included)
    always eventually      the goal holds again and again on every fair run

  Runs: a run is infinite or ends in a state with no enabled action, which
  then repeats for ever; nothing is enabled there, so every fairness
  condition holds, and a goal that does not hold in such an end state is
  violated. Proper end states satisfy the goals; an improper end (a
  deadlock) is reported by the deadlock property first.

  Fairness is declared per action kind by each protocol ('lfccheck list'
  shows it). Weak: a class that stays enabled is eventually taken. Strong:
  a class enabled again and again is eventually taken. Links are weakly
  fair; client launches get no fairness.

  Counterexamples are lassos: a path, then a loop that repeats for ever
  (marked "-- loop: steps A-B repeat for ever --", with the fairness
  obligations it meets), or a path to an end state. Trace files
  (lfccheck-trace/2) record the loop's first step as loop_start; replay
  re-executes the loop and checks that it returns to its first state and is
  fair.

  Checking: on the recorded state graph (strongly connected components of
  the states without the goal, fair ones kept, Emerson-Lei refinement for
  strong fairness), or, for "always eventually" properties of variants whose
  runs are all finite, on end states alone (--liveness-graph forces the
  graph). The "reduction:" and "liveness:" lines of every check say which
  reduction ran, why it is sound, and how liveness was checked. The graph
  counts against --max-memory; running out is incomplete, never pass.
`

// usageError is an error in the command line or input: exit code 2.
type usageError struct{ error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// env is what a command needs from the process: its output streams and
// the interrupt channel (closed on SIGINT or SIGTERM).
type env struct {
	stdout, stderr io.Writer
	stop           <-chan struct{}
}

// errWriter remembers the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
	}
	return n, err
}

func run(args []string, stdout, stderr io.Writer) int {
	return runEnv(args, stdout, stderr, nil)
}

func runEnv(args []string, stdout, stderr io.Writer, stop <-chan struct{}) int {
	out := &errWriter{w: stdout}
	e := env{stdout: out, stderr: stderr, stop: stop}
	code, err := dispatch(args, e)
	if err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitPass
		}
		fmt.Fprintf(stderr, "lfccheck: %s\n", oneLine(err.Error()))
		return exitUsage
	}
	if out.err != nil {
		fmt.Fprintf(stderr, "lfccheck: writing standard output: %v\n", out.err)
		return exitUsage
	}
	return code
}

func oneLine(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", "; ") }

var commands = []string{"suite", "check", "list", "replay", "show", "merge", "trees", "sweep", "version", "help"}

func dispatch(args []string, e env) (int, error) {
	cmd := "suite"
	if len(args) > 0 && args[0] == "--version" {
		args[0] = "version"
	}
	if len(args) > 0 && (!strings.HasPrefix(args[0], "-") || args[0] == "-h" || args[0] == "--help") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "suite":
		return runSuite(args, e)
	case "check":
		return runCheck(args, e)
	case "list":
		return runList(args, e)
	case "replay":
		return runReplay(args, e)
	case "show":
		return runShow(args, e)
	case "merge":
		return runMerge(args, e)
	case "trees":
		return runTrees(args, e)
	case "sweep":
		return runSweep(args, e)
	case "version":
		return runVersion(args, e)
	case "help", "-h", "--help":
		return runHelp(args, e)
	}
	return 0, usagef("unknown command %q (want %s; see 'lfccheck help')", cmd, strings.Join(commands, ", "))
}

func runHelp(args []string, e env) (int, error) {
	if len(args) == 0 {
		fmt.Fprint(e.stdout, usage)
		return exitPass, nil
	}
	if len(args) > 1 {
		return 0, usagef("help: want at most one topic, got %d", len(args))
	}
	switch args[0] {
	case "-h", "--help":
		fmt.Fprint(e.stdout, usage)
		return exitPass, nil
	case "topology":
		fmt.Fprint(e.stdout, topology.FileFormat)
		return exitPass, nil
	case "exit-codes":
		fmt.Fprint(e.stdout, exitCodesHelp)
		return exitPass, nil
	case "liveness":
		fmt.Fprint(e.stdout, livenessHelp)
		return exitPass, nil
	case "help":
		fmt.Fprint(e.stdout, usage)
		return exitPass, nil
	}
	for _, c := range commands {
		if c == args[0] {
			return dispatch([]string{c, "--help"}, e)
		}
	}
	return 0, usagef("help: unknown topic %q (want a command, topology, exit-codes or liveness)", args[0])
}

func newFlags(name string, e env) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(e.stdout)
	fs.SortFlags = false
	return fs
}

func parseFlags(fs *pflag.FlagSet, args []string, synopsis string) error {
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: lfccheck %s %s\n\nflags:\n%s", fs.Name(), synopsis, fs.FlagUsages())
	}
	// pflag prints its own message on errors; silence it and report one line.
	out := fs.Output()
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(out)
	if errors.Is(err, pflag.ErrHelp) {
		fs.Usage()
		return err
	}
	if err != nil {
		return usagef("%s: %v", fs.Name(), err)
	}
	return nil
}

// parseNoArgs parses flags for a command that takes no positional
// arguments.
func parseNoArgs(fs *pflag.FlagSet, args []string, synopsis string) error {
	if err := parseFlags(fs, args, synopsis); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

// searchFlags are the limit and store flags shared by check, suite and
// sweep.
type searchFlags struct {
	maxStates   int64
	maxDepth    int
	timeout     time.Duration
	maxMemory   string
	fingerprint bool
	noReduce    bool
	symmetry    string
	sleepSets   string
	graph       bool
	quiet       bool
	progress    time.Duration
	workers     int
}

// setUp applies the flags that configure the checker itself.
func (s *searchFlags) setUp(ck *properties.Checker) {
	ck.Reduce = ck.Reduce && !s.noReduce
	ck.LivenessGraph = s.graph
	ck.Symmetry = s.symmetry != "off" && ck.SymmetryOff() == ""
}

func (s *searchFlags) register(fs *pflag.FlagSet, timeout time.Duration, perCheck bool) {
	each := ""
	if perCheck {
		each = " per check"
	}
	int64Var(fs, &s.maxStates, "max-states", 0, "stop (incomplete) rather than store more than this many states"+each+" (0: no limit)")
	intVar(fs, &s.maxDepth, "max-depth", 0, "do not explore beyond this depth; incomplete if anything lies beyond"+each+" (0: no limit)")
	fs.DurationVar(&s.timeout, "timeout", timeout, "stop (incomplete) after this long"+each+", e.g. 30s, 5m (0: no limit)")
	fs.StringVar(&s.maxMemory, "max-memory", "", "stop (incomplete) when the heap exceeds this, e.g. 8GiB (default 60% of the memory available)")
	fs.BoolVar(&s.fingerprint, "fingerprint", false, "store 64-bit fingerprints instead of full states (less memory, tiny collision risk)")
	fs.BoolVar(&s.noReduce, "no-reduce", false, "disable the partial-order reduction the protocol declares")
	fs.StringVar(&s.symmetry, "symmetry", "on", "on: store one state per orbit of the node renamings that map the configuration onto itself (where it has any); off: every state")
	fs.StringVar(&s.sleepSets, "sleep-sets", "on", "on: a breadth-first search leaves out transitions whose successors it reaches through another order of independent steps (every state is still visited); off: it explores every transition")
	fs.BoolVar(&s.graph, "liveness-graph", false, "check liveness properties on the recorded state graph even where end states suffice (also verifies the protocol's acyclicity declaration; costs memory)")
	fs.BoolVarP(&s.quiet, "quiet", "q", false, "no progress lines on stderr")
	fs.DurationVar(&s.progress, "progress-every", 3*time.Second, "how often a long search prints a progress line on stderr, e.g. 500ms, 1m")
	intVar(fs, &s.workers, "workers", explore.DefaultWorkers(), "goroutines that expand states in a breadth-first search, by default one per CPU; results do not depend on it")
}

// options validates the flags and turns them into explorer options.
func (s *searchFlags) options(e env) (explore.Options, error) {
	if s.maxStates < 0 || s.maxDepth < 0 || s.timeout < 0 {
		return explore.Options{}, usagef("--max-states, --max-depth and --timeout must not be negative")
	}
	if s.progress <= 0 {
		return explore.Options{}, usagef("--progress-every must be positive, got %v (use -q for no progress lines)", s.progress)
	}
	if s.symmetry != "on" && s.symmetry != "off" {
		return explore.Options{}, usagef("--symmetry must be on or off, got %q", s.symmetry)
	}
	if s.sleepSets != "on" && s.sleepSets != "off" {
		return explore.Options{}, usagef("--sleep-sets must be on or off, got %q", s.sleepSets)
	}
	if s.workers < 1 || s.workers > 1024 {
		return explore.Options{}, usagef("--workers must be between 1 and 1024, got %d", s.workers)
	}
	opt := explore.Options{MaxStates: s.maxStates, MaxDepth: s.maxDepth, Timeout: s.timeout,
		Fingerprint: s.fingerprint, Stop: e.stop, Workers: s.workers, NoSleep: s.sleepSets == "off"}
	opt.MaxMemory = explore.DefaultMemoryLimit()
	if s.maxMemory != "" {
		m, err := parseBytes(s.maxMemory)
		if err != nil {
			return opt, err
		}
		opt.MaxMemory = m
	}
	if opt.MaxMemory > 0 {
		// Make the collector work harder near the limit rather than let
		// the process grow past it.
		debug.SetMemoryLimit(int64(opt.MaxMemory))
	}
	if !s.quiet {
		opt.Progress = e.stderr
		opt.ProgressEvery = s.progress
	}
	return opt, nil
}

// parseBytes reads sizes such as 512MiB, 8GiB, 2GB, 1.5TiB or a plain
// byte count: a decimal number (digits, optionally a fraction) and one of
// the units below, the same ones the progress lines print. NaN, Inf,
// exponents, signs and other units are refused.
func parseBytes(s string) (uint64, error) {
	units := []struct {
		suffix string
		mult   uint64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"PiB", 1 << 50},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"PB", 1e15}, {"B", 1}}
	bad := usagef("--max-memory %q: want a size of at least 1MiB and at most 4EiB, a decimal number and a unit (B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB) such as 512MiB or 8GiB", s)
	num, mult := s, uint64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			num, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	whole, frac, _ := strings.Cut(num, ".")
	if _, err := model.ParseDecimal(whole); err != nil {
		return 0, bad
	}
	for _, c := range frac {
		if c < '0' || c > '9' {
			return 0, bad
		}
	}
	if strings.HasSuffix(num, ".") {
		return 0, bad
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f*float64(mult) > 1<<62 || f*float64(mult) < 1<<20 {
		return 0, bad
	}
	return uint64(f * float64(mult)), nil
}

// configFlags are the flags that make a configuration: protocol, variant,
// nodes, properties and every protocol's parameters.
type configFlags struct {
	protocol, variant string
	nodes             int
	props             []string
	params            *paramFlags
}

func (c *configFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.protocol, "protocol", protocols.All()[0].Name, "protocol to check (see 'lfccheck list')")
	fs.StringVar(&c.variant, "variant", "correct", "protocol variant (see 'lfccheck list')")
	intVar(fs, &c.nodes, "nodes", 3, "number of NIs (hosts), P (mcast with --topology: the file's)")
	fs.StringArrayVar(&c.props, "property", nil, "check only this property, repeatable (default: all)")
	c.params = registerParams(fs)
}

// readInput reads an input file of at most max bytes; an interrupt ends
// the wait for a FIFO or device.
func (e env) readInput(path string, max int64) ([]byte, error) {
	return fileio.ReadCappedStop(path, max, e.stop)
}

// config builds the configuration the flags describe.
func (c *configFlags) config(fs *pflag.FlagSet, e env) (model.Config, *model.Def, error) {
	def, err := model.Lookup(c.protocol)
	if err != nil {
		return model.Config{}, nil, usageError{err}
	}
	if c.variant == "" {
		return model.Config{}, nil, usagef("--variant is empty (see 'lfccheck list')")
	}
	cfg := model.Config{Protocol: def.Name, Variant: c.variant, Properties: c.props}
	if fs.Changed("nodes") {
		if c.nodes < 2 || c.nodes > model.MaxNodes {
			return cfg, def, usagef("nodes must be in 2..%d, got %d", model.MaxNodes, c.nodes)
		}
		cfg.Nodes = c.nodes
	}
	p, err := c.params.apply(def, func(path string) ([]byte, error) { return e.readInput(path, maxTopologySize) })
	if err != nil {
		return cfg, def, err
	}
	cfg.Params = p
	return cfg, def, nil
}

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
	// SleepSets is set when a breadth-first search used sleep sets;
	// SleepSetsSkipped is the number of transitions they left out, and
	// SleepSetsNote says what they do, or why they were off.
	SleepSets        bool     `json:"sleep_sets"`
	SleepSetsSkipped int64    `json:"sleep_sets_skipped"`
	SleepSetsNote    string   `json:"sleep_sets_note"`
	Properties       []string `json:"properties"`
	// Liveness lists the liveness properties among Properties; GraphBytes
	// is what recording the state graph for them cost.
	Liveness     []string `json:"liveness,omitempty"`
	LivenessNote string   `json:"liveness_note,omitempty"`
	// Statistics are the protocol's statistics of the search (RECOV:
	// recoveries started, packets on recovery channels, ...).
	Statistics []properties.StatValue `json:"statistics,omitempty"`
	GraphBytes int64                  `json:"graph_bytes,omitempty"`
	Trace      []string               `json:"trace,omitempty"`
	// Search is the strategy (bfs, dfs, random); Seed, Shard, Walks,
	// WalksPerS and Coverage describe hunts (see check --search).
	Search string `json:"search"`
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

// marshalPlain is json.Marshal without HTML escaping, so that action names
// stay readable ("deliver 0->1", not "deliver 0-\u003e1").
func marshalPlain(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func marshalIndent(v any) []byte {
	b, err := marshalPlain(v)
	if err != nil {
		panic("lfccheck: marshal: " + err.Error()) // plain data only
	}
	var buf bytes.Buffer
	json.Indent(&buf, b, "", "  ")
	buf.WriteByte('\n')
	return buf.Bytes()
}

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
	var cpf checkpointFlags
	cpf.register(fs)
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
	if *frontier {
		switch {
		case hunt != nil:
			return 0, usagef("--frontier is a breadth-first search: not with --search %s", hf.search)
		case sf.fingerprint:
			return 0, usagef("--frontier needs the exact store: drop --fingerprint")
		}
		opt.Frontier = true
	}
	if *traceOut != "" {
		if err := fileio.CheckOutput(*traceOut); err != nil {
			return 0, usagef("--trace-out: %v", err)
		}
	}
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
	if *frontier {
		if err := frontierFits(ck); err != nil {
			return 0, err
		}
	}
	if err := cpf.apply(fs, &opt, ck, &sf, hf.search); err != nil {
		return 0, err
	}
	var res checked
	if hunt == nil {
		res, err = checkOne(ck, opt)
		if err != nil {
			return 0, checkpointError(err, opt.Checkpoint)
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

// frontierFits says why --frontier cannot check ck, if it cannot: the
// search keeps no state graph, so every run must end and no liveness
// property may need the graph.
func frontierFits(ck *properties.Checker) error {
	cfg := ck.Sys.Cfg
	if !ck.DeclaredAcyclic() {
		return usagef("--frontier needs a protocol variant whose runs all end, and %s %s does not declare that (on a cycle the search would never end)", cfg.Protocol, cfg.Variant)
	}
	if ck.LivenessGraph {
		return usagef("--frontier keeps no state graph: not with --liveness-graph")
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
		return usagef("--frontier keeps no state graph, which %s checks on: leave it out with --property (%s)", strings.Join(graph, ", "), strings.Join(others, " "))
	}
	return nil
}

// deliverCheckpoint removes the checkpoint of a search that ended with a
// verdict once its result is written (err nil, standard output written);
// otherwise the checkpoint stays, so that --resume can give the result
// again, and the error says so.
func deliverCheckpoint(ci *explore.CheckpointInfo, e env, err error) error {
	if ci == nil || ci.Kept {
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

// checkResultOf runs a search and builds the result of checking ck with it.
func checkResultOf(ck *properties.Checker, opt explore.Options, search func() (explore.Result, *explore.HuntStats, error)) (checked, error) {
	r, hs, err := search()
	if err != nil {
		return checked{}, err
	}
	cfg := ck.Sys.Cfg
	c := checked{json: checkResult{
		Format: resultFormat, Protocol: cfg.Protocol, Variant: cfg.Variant, Config: cfg,
		Verdict: string(r.Verdict), Reason: r.Reason,
		States: r.Stats.States, Transitions: r.Stats.Transitions, Depth: r.Stats.Depth, Levels: r.Stats.Levels, LevelPartial: r.Stats.LevelPartial,
		ElapsedS: r.Stats.Elapsed.Seconds(), StatesPerS: r.Stats.StatesPerSec,
		PeakHeapBytes: r.Stats.PeakHeapBytes, StoreBytes: r.Stats.StoreBytes, DiskBytes: r.Stats.DiskBytes,
		Fingerprint: opt.Fingerprint, CollisionProb: r.Stats.CollisionProb, Reduction: ck.Reduce,
		ReductionNote: reductionNote(ck), Symmetry: ck.Symmetry, SymmetryGroup: len(ck.Symmetries()) + 1,
		SymmetryNote: symmetryNote(ck), GraphBytes: r.Stats.GraphBytes, LivenessNote: ck.LivenessNote(),
		Statistics: ck.Statistics(),
		SleepSets:  r.Sleep.On, SleepSetsSkipped: r.Sleep.Skipped, SleepSetsNote: sleepNote(r.Sleep),
		Checkpoint: r.Checkpoint, Frontier: r.Frontier,
	}}
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
	for _, k := range ck.Sys.Kinds {
		if k.Ample {
			ample = append(ample, fmt.Sprintf("%q", k.Pattern))
		}
	}
	const none = ""
	switch {
	case len(ample) == 0:
		return "off: the protocol declares no ample action kind" + none
	case ck.Reduce:
		return fmt.Sprintf("ample sets: an enabled %s step is explored alone (sound for safety and liveness: the protocol declares every run of the variant finite, so the cycle proviso holds; tests check the declaration on the state graph of every built-in claim)%s",
			strings.Join(ample, " or "), none)
	case ck.CanReduce():
		return "off (--no-reduce)" + none
	case ck.SeenAmple() != "":
		return fmt.Sprintf("off: the ample-set reduction of %s is unsound here: %s%s", strings.Join(ample, ", "), ck.SeenAmple(), none)
	}
	return fmt.Sprintf("off: the ample-set reduction of %s needs an acyclic state graph, and variant %s is not declared acyclic%s",
		strings.Join(ample, ", "), ck.Sys.Cfg.Variant, none)
}

// symmetryNote says whether the search stored one state per orbit, of
// which renamings, or why not.
func symmetryNote(ck *properties.Checker) string {
	sym := ck.Symmetries()
	switch {
	case ck.Symmetry:
		var ps []string
		for i := range sym {
			ps = append(ps, "("+sym[i].String()+")")
		}
		return fmt.Sprintf("on: %d renamings of node ids map the configuration onto itself (%s and the identity): one state is stored per orbit, standing for up to %d states; counterexamples are renamed back to real node ids",
			len(sym)+1, strings.Join(ps, ", "), len(sym)+1)
	case ck.SymmetryOff() != "":
		return "off: " + ck.SymmetryOff()
	}
	return fmt.Sprintf("off (--symmetry=off; %d renamings of node ids map the configuration onto itself)", len(sym)+1)
}

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
		if j.Workers > 1 {
			workers = fmt.Sprintf("%d workers", j.Workers)
		}
		disk := ""
		if j.DiskBytes > 0 {
			where := "a temporary file"
			if j.Checkpoint != nil {
				where = j.Checkpoint.Dir
			}
			disk = fmt.Sprintf("; keys and parents for traces in %s, %s", where, explore.FormatBytes(uint64(j.DiskBytes)))
		}
		fmt.Fprintf(w, "search: breadth-first, %s; visited set %s (%.1f bytes/state)%s\n", workers, explore.FormatBytes(uint64(j.StoreBytes)), per, disk)
		if l := levelsLine(j.Levels, j.LevelPartial, j.Verdict); l != "" {
			fmt.Fprintln(w, l)
		}
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

func runList(args []string, e env) (int, error) {
	fs := newFlags("list", e)
	jsonOut := fs.Bool("json", false, "print JSON")
	if err := parseNoArgs(fs, args, "[--json]"); err != nil {
		return 0, err
	}
	type prop struct {
		Name string `json:"name"`
		Kind string `json:"kind"`
		Doc  string `json:"doc"`
	}
	type param struct {
		Key     string `json:"key"`
		Doc     string `json:"doc"`
		Default string `json:"default,omitempty"`
	}
	type variant struct {
		Name    string `json:"name"`
		Doc     string `json:"doc"`
		Catches string `json:"caught_by,omitempty"`
		Example string `json:"example,omitempty"`
	}
	type proto struct {
		Name       string    `json:"name"`
		Doc        string    `json:"doc"`
		Params     []param   `json:"parameters"`
		Variants   []variant `json:"variants"`
		Properties []prop    `json:"properties"`
		Fairness   []string  `json:"fairness"`
	}
	var all []proto
	for _, d := range protocols.All() {
		x := proto{Name: d.Name, Doc: d.Doc}
		for _, s := range d.Params {
			x.Params = append(x.Params, param{s.Key, s.Doc, s.Default})
		}
		for _, v := range d.Variants {
			vv := variant{Name: v.Name, Doc: v.Doc, Catches: v.Catches}
			if v.Catches != "" {
				cmd, err := commandFor(d.VariantClaim(v).Config)
				if err != nil {
					return 0, fmt.Errorf("internal error: variant %s: %v", v.Name, err)
				}
				vv.Example = cmd
			}
			x.Variants = append(x.Variants, vv)
		}
		for _, pr := range d.Properties {
			x.Properties = append(x.Properties, prop{pr.Name, pr.Kind(), pr.Doc})
		}
		fair, err := fairnessOf(d)
		if err != nil {
			return 0, fmt.Errorf("internal error: %v", err)
		}
		x.Fairness = fair
		all = append(all, x)
	}
	if *jsonOut {
		e.stdout.Write(marshalIndent(all))
		return exitPass, nil
	}
	for _, p := range all {
		fmt.Fprintf(e.stdout, "%s: %s\n  parameters:\n", p.Name, p.Doc)
		for _, s := range p.Params {
			fmt.Fprintf(e.stdout, "    --%-16s %s\n", s.Key, s.Doc)
		}
		fmt.Fprintf(e.stdout, "  variants:\n")
		for _, v := range p.Variants {
			fmt.Fprintf(e.stdout, "    %-18s %s\n", v.Name, v.Doc)
			if v.Catches != "" {
				fmt.Fprintf(e.stdout, "    %-18s caught by %s: %s\n", "", v.Catches, v.Example)
			}
		}
		fmt.Fprintf(e.stdout, "  properties:\n")
		for _, pr := range p.Properties {
			fmt.Fprintf(e.stdout, "    %-20s %s [%s]\n", pr.Name, pr.Doc, pr.Kind)
		}
		fmt.Fprintf(e.stdout, "  fairness (liveness checks):\n")
		for _, f := range p.Fairness {
			fmt.Fprintf(e.stdout, "    %s\n", f)
		}
	}
	return exitPass, nil
}

// fairnessOf describes the fairness a protocol's action kinds get, built
// from its default configuration.
func fairnessOf(d *model.Def) ([]string, error) {
	cfg, err := d.Resolve(model.Config{Protocol: d.Name})
	if err != nil {
		return nil, err
	}
	m, err := d.New(cfg)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range m.Kinds() {
		class := k.FairClass
		if class == "" {
			class = k.Pattern
		}
		if k.Fair == model.Unfair {
			out = append(out, fmt.Sprintf("%q: none", k.Pattern))
			continue
		}
		out = append(out, fmt.Sprintf("%q: %s, one class per %q", k.Pattern, k.Fair, class))
	}
	return out, nil
}

func runReplay(args []string, e env) (int, error) {
	fs := newFlags("replay", e)
	jsonOut := fs.Bool("json", false, "print the replay report as JSON")
	if err := parseFlags(fs, args, "[--json] FILE"); err != nil {
		return 0, err
	}
	if fs.NArg() != 1 {
		return 0, usagef("replay: want exactly one trace file, got %d arguments", fs.NArg())
	}
	path := fs.Arg(0)
	data, err := e.readInput(path, maxInputBytes)
	if err != nil {
		return 0, usagef("replay: %v", err)
	}
	file, err := traces.Parse(data)
	if err != nil {
		return 0, usagef("replay: %s: %v", path, err)
	}
	ck, err := properties.Build(file.Config)
	if err != nil {
		return 0, usagef("replay: %s: config: %v", path, err)
	}
	acts, err := traces.ParseActions(ck.Sys, file.Actions)
	if err != nil {
		return 0, usagef("replay: %s: %v", path, err)
	}
	o, err := traces.RunLasso(ck, acts, file.Loop())
	if err != nil {
		return 0, usagef("replay: %s: %v", path, err)
	}
	ok, why := traces.Reproduces(file, o)
	if *jsonOut {
		rep := struct {
			File       string   `json:"file"`
			Steps      int      `json:"steps"`
			Expected   string   `json:"expected_property"`
			Property   string   `json:"property"`
			Message    string   `json:"message,omitempty"`
			Step       int      `json:"violation_step,omitempty"`
			Reproduced bool     `json:"reproduced"`
			Difference string   `json:"difference,omitempty"`
			Actions    []string `json:"actions"`
			LoopStart  int      `json:"loop_start,omitempty"`
		}{File: path, Steps: len(o.Steps), Expected: file.Property, Reproduced: ok, Difference: why, Actions: file.Actions, LoopStart: file.LoopStart}
		if o.Violation != nil {
			rep.Property, rep.Message, rep.Step = o.Violation.Property, o.Violation.Message, o.ViolationStep
		}
		e.stdout.Write(marshalIndent(rep))
	} else {
		fmt.Fprintf(e.stdout, "replaying %s: %s, %d steps\n", path, ck.Sys.Cfg.Describe(), len(acts))
		traces.WriteText(e.stdout, o)
		switch {
		case ok && o.Live && o.Loop > 0:
			fmt.Fprintf(e.stdout, "reproduced: %s violated on a fair run that repeats steps %d-%d for ever, as recorded\n",
				o.Violation.Property, file.LoopStart, len(acts))
		case ok && o.Live:
			fmt.Fprintf(e.stdout, "reproduced: %s violated on a run that ends after step %d, as recorded\n", o.Violation.Property, len(acts))
		case ok && file.Property != "":
			fmt.Fprintf(e.stdout, "reproduced: %s violated at step %d, as recorded\n", o.Violation.Property, o.ViolationStep)
		case ok:
			fmt.Fprintf(e.stdout, "reproduced: all %d steps applied and no property was violated, as recorded\n", len(acts))
		default:
			fmt.Fprintf(e.stdout, "NOT reproduced: %s\n", why)
		}
	}
	if ok {
		return exitPass, nil
	}
	return exitFail, nil
}
