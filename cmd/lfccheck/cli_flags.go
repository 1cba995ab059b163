package main

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols"
)

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
	return checkEmpty(fs)
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
	por         string
	stepCache   string
	graph       bool
	quiet       bool
	progress    time.Duration
	workers     int
	fs          *pflag.FlagSet // the flags, for which were given
}

// setUp applies the flags that configure the checker itself.
func (s *searchFlags) setUp(ck *properties.Checker) {
	ck.Reduce = ck.Reduce && !s.noReduce
	ck.LivenessGraph = s.graph
	ck.Symmetry = s.symmetry != "off" && ck.SymmetryOff() == ""
	ck.Stubborn = s.por != "off" && ck.StubbornOff() == ""
	ck.StepCache = s.stepCache == "on" && ck.StepCacheOff() == ""
}

func (s *searchFlags) register(fs *pflag.FlagSet, timeout time.Duration, perCheck bool) {
	s.fs = fs
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
	fs.StringVar(&s.por, "por", "on", "on: where only deadlocks and end-state conditions are checked, explore in each state only a stubborn set of steps (every end state is still reached); off: every enabled step")
	fs.StringVar(&s.stepCache, "step-cache", "off", "on: remember each protocol step's effect by the state of its node (and the packet it delivers) and reuse it instead of running the handler again (bounded per worker; results do not depend on it); off: run every handler")
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
	if s.quiet && s.fs != nil && s.fs.Changed("progress-every") {
		return explore.Options{}, usagef("--progress-every sets how often progress lines are printed, and -q prints none: give one of them")
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
	if s.por != "on" && s.por != "off" {
		return explore.Options{}, usagef("--por must be on or off, got %q", s.por)
	}
	if s.stepCache != "on" && s.stepCache != "off" {
		return explore.Options{}, usagef("--step-cache must be on or off, got %q", s.stepCache)
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
	faults            string
	params            *paramFlags
}

func (c *configFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.protocol, "protocol", protocols.All()[0].Name, "protocol to check (see 'lfccheck list')")
	fs.StringVar(&c.variant, "variant", "correct", "protocol variant (see 'lfccheck list')")
	intVar(fs, &c.nodes, "nodes", 3, "number of NIs (hosts), P (mcast with --topology: the file's)")
	fs.StringArrayVar(&c.props, "property", nil, "check only this property, repeatable (default: all)")
	fs.StringVar(&c.faults, "faults", "", faultsUsage)
	c.params = registerParams(fs)
}

// faultsUsage is the help text of --faults (check and sweep).
const faultsUsage = "links that may lose, duplicate or corrupt packets, with a bound per run: KIND:N for every link, KIND@I->J:N for link I->J, comma-separated; KIND loss, dup or corrupt (e.g. loss:2,dup:1; default: reliable links)"

// parseFaultsFlag reads a --faults value that was given.
func parseFaultsFlag(v string) (model.Faults, error) {
	if v == "" {
		return nil, usagef("--faults is empty: want e.g. loss:1 (or none for reliable links)")
	}
	f, err := model.ParseFaults(v)
	if err != nil {
		return nil, usagef("--faults %s: %v", v, err)
	}
	return f, nil
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
	if fs.Changed("faults") {
		f, err := parseFaultsFlag(c.faults)
		if err != nil {
			return cfg, def, err
		}
		cfg.Faults = f
	}
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
