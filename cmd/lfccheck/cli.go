package main

import (
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
	"lfccheck/model"
	"lfccheck/model/topology"
	"lfccheck/properties"
	"lfccheck/protocols"
	"lfccheck/traces"
)

// Exit codes.
const (
	exitPass       = 0
	exitFail       = 1
	exitUsage      = 2
	exitIncomplete = 3
)

const usage = `lfccheck: model checker for the LFC network-interface protocols

usage:
  lfccheck                    run the built-in suite of checks (same as 'lfccheck suite')
  lfccheck check [flags]      check one configuration exhaustively
  lfccheck list [--json]      list protocols, their variants and properties
  lfccheck replay [--json] FILE
                              re-execute a saved trace step by step
  lfccheck trees [flags]      print multicast trees and their static analysis (App. A.1)
  lfccheck sweep [flags]      check a grid of sizes; report the largest verified per series
  lfccheck help               show this text; 'lfccheck check --help' lists check's flags;
                              'lfccheck help topology' describes topology files

exit codes: 0 pass (or as expected), 1 property violated (or not as expected),
            2 usage or input error, 3 search incomplete (a limit was hit)
`

// usageError is an error in the command line or input: exit code 2.
type usageError struct{ error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

func run(args []string, stdout, stderr io.Writer) int {
	cmd := "suite"
	if len(args) > 0 && (!strings.HasPrefix(args[0], "-") || args[0] == "-h" || args[0] == "--help") {
		cmd, args = args[0], args[1:]
	}
	var code int
	var err error
	switch cmd {
	case "suite":
		code, err = runSuite(args, stdout, stderr)
	case "check":
		code, err = runCheck(args, stdout, stderr)
	case "list":
		code, err = runList(args, stdout)
	case "replay":
		code, err = runReplay(args, stdout)
	case "trees":
		code, err = runTrees(args, stdout, stderr)
	case "sweep":
		code, err = runSweep(args, stdout, stderr)
	case "help", "-h", "--help":
		if len(args) > 0 && args[0] == "topology" {
			fmt.Fprint(stdout, topology.FileFormat)
			return exitPass
		}
		fmt.Fprint(stdout, usage)
		return exitPass
	default:
		err = usagef("unknown command %q (want check, list, replay or suite; see 'lfccheck help')", cmd)
	}
	if err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitPass
		}
		fmt.Fprintf(stderr, "lfccheck: %v\n", err)
		return exitUsage
	}
	return code
}

func newFlags(name string, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	return fs
}

func parseFlags(fs *pflag.FlagSet, args []string) error {
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage of lfccheck %s:\n%s", fs.Name(), fs.FlagUsages())
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
func parseNoArgs(fs *pflag.FlagSet, args []string) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

// checkFlags are the flags of 'check'.
type checkFlags struct {
	cfg         model.Config
	flows       []string
	casts       []string
	topoFile    string
	jsonOut     bool
	traceOut    string
	maxStates   int64
	maxDepth    int
	timeout     time.Duration
	maxMemory   string
	fingerprint bool
	noReduce    bool
	quiet       bool
}

func (c *checkFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.cfg.Protocol, "protocol", "ucast", "protocol to check (see 'lfccheck list')")
	fs.StringVar(&c.cfg.Variant, "variant", "correct", "protocol variant (see 'lfccheck list')")
	fs.IntVar(&c.cfg.Nodes, "nodes", 3, "number of NIs (hosts), P")
	fs.IntVar(&c.cfg.Credits, "credits", 1, "send credits per ordered pair, C (receive buffers per sender)")
	fs.IntVar(&c.cfg.Packets, "packets", 1, "packets every node sends to every other node, K")
	fs.IntVar(&c.cfg.Refresh, "refresh", 0, "CREDIT_REFRESH threshold (default max(1, C/2))")
	fs.IntVar(&c.cfg.HostBuffers, "host-buffers", 1, "host receive buffers per host")
	fs.IntVar(&c.cfg.SendBuffers, "send-buffers", 2, "NI send pool size per NI")
	fs.StringArrayVar(&c.flows, "flow", nil, "explicit unicast workload entry SRC:DST:COUNT, repeatable (replaces --packets)")
	fs.StringVar(&c.cfg.Tree, "tree", "", "mcast: tree family for the broadcast group: binary, binomial, chain, star, kary:K (default binary)")
	fs.StringVar(&c.topoFile, "topology", "", "mcast: topology file with groups and trees (see 'lfccheck help topology')")
	fs.StringArrayVar(&c.casts, "cast", nil, "mcast: explicit multicast workload entry [GROUP/]ROOT:COUNT, repeatable (replaces --packets)")
	fs.StringArrayVar(&c.cfg.Properties, "property", nil, "check only this property, repeatable (default: all)")
	fs.BoolVar(&c.jsonOut, "json", false, "print one JSON object instead of text")
	fs.StringVar(&c.traceOut, "trace-out", "", "write the counterexample as a JSON trace to this file")
	fs.Int64Var(&c.maxStates, "max-states", 0, "stop (incomplete) after this many states (0: no limit)")
	fs.IntVar(&c.maxDepth, "max-depth", 0, "do not explore beyond this depth; incomplete if reached (0: no limit)")
	fs.DurationVar(&c.timeout, "timeout", 0, "stop (incomplete) after this long, e.g. 30s, 5m (0: no limit)")
	fs.StringVar(&c.maxMemory, "max-memory", "", "stop (incomplete) when the heap exceeds this, e.g. 8GiB (default 60% of physical memory)")
	fs.BoolVar(&c.fingerprint, "fingerprint", false, "store 64-bit fingerprints instead of full states (less memory, tiny collision risk)")
	fs.BoolVar(&c.noReduce, "no-reduce", false, "disable the partial-order reduction on host processing steps")
	fs.BoolVarP(&c.quiet, "quiet", "q", false, "no progress lines on stderr")
}

// finish turns the string-valued flags into configuration.
func (c *checkFlags) finish(fs *pflag.FlagSet) error {
	for _, s := range c.flows {
		fl, err := parseFlow(s)
		if err != nil {
			return err
		}
		c.cfg.Flows = append(c.cfg.Flows, fl)
	}
	for _, s := range c.casts {
		ca, err := parseCast(s)
		if err != nil {
			return err
		}
		c.cfg.Casts = append(c.cfg.Casts, ca)
	}
	if c.topoFile != "" {
		spec, nodes, err := loadTopology(c.topoFile)
		if err != nil {
			return err
		}
		if fs.Changed("nodes") && c.cfg.Nodes != nodes {
			return usagef("--nodes %d disagrees with %s, which has nodes %d", c.cfg.Nodes, c.topoFile, nodes)
		}
		if c.cfg.Tree != "" {
			return usagef("give --tree or --topology, not both")
		}
		c.cfg.Nodes, c.cfg.Topology = nodes, spec
	}
	return nil
}

func loadTopology(path string) (*model.TopologySpec, int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, usagef("--topology: %v", err)
	}
	spec, nodes, err := topology.ParseFile(path, data)
	if err != nil {
		return nil, 0, usageError{err}
	}
	return spec, nodes, nil
}

func parseCast(s string) (model.Cast, error) {
	var c model.Cast
	rest := s
	if g, r, ok := strings.Cut(s, "/"); ok {
		c.Group, rest = g, r
	}
	root, count, ok := strings.Cut(rest, ":")
	r, err1 := strconv.Atoi(root)
	n, err2 := strconv.Atoi(count)
	if !ok || err1 != nil || err2 != nil || c.Group == "" && strings.Contains(s, "/") {
		return c, usagef("--cast %q: want [GROUP/]ROOT:COUNT", s)
	}
	c.Root, c.Count = r, n
	return c, nil
}

// defaultMemoryLimit is 60% of physical memory (0, no limit, if unknown),
// so a search too big for the machine ends as incomplete instead of being
// killed.
func defaultMemoryLimit() uint64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(f[1], 10, 64)
			if err == nil {
				return kb * 1024 / 10 * 6
			}
		}
	}
	return 0
}

func parseFlow(s string) (model.Flow, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return model.Flow{}, usagef("--flow %q: want SRC:DST:COUNT", s)
	}
	var v [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return model.Flow{}, usagef("--flow %q: %q is not a number", s, p)
		}
		v[i] = n
	}
	return model.Flow{Src: v[0], Dst: v[1], Count: v[2]}, nil
}

// parseBytes reads sizes such as 512MiB, 8GiB, 2GB or a plain byte count.
func parseBytes(s string) (uint64, error) {
	units := []struct {
		suffix string
		mult   uint64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	num, mult := s, uint64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			num, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || f <= 0 || f*float64(mult) > 1<<62 {
		return 0, usagef("--max-memory %q: want a positive size such as 512MiB or 8GiB", s)
	}
	return uint64(f * float64(mult)), nil
}

// checkResult is the JSON form of a check. Field names are interface.
type checkResult struct {
	Protocol      string       `json:"protocol"`
	Variant       string       `json:"variant"`
	Config        model.Config `json:"config"`
	Verdict       string       `json:"verdict"`
	Property      string       `json:"property,omitempty"`
	Message       string       `json:"message,omitempty"`
	Reason        string       `json:"reason,omitempty"`
	States        int64        `json:"states"`
	Transitions   int64        `json:"transitions"`
	Depth         int          `json:"depth"`
	ElapsedS      float64      `json:"elapsed_s"`
	StatesPerS    float64      `json:"states_per_s"`
	PeakHeapBytes uint64       `json:"peak_heap_bytes"`
	StoreBytes    int64        `json:"store_bytes"`
	Fingerprint   bool         `json:"fingerprint"`
	CollisionProb float64      `json:"collision_probability,omitempty"`
	Reduction     bool         `json:"reduction"`
	Properties    []string     `json:"properties"`
	Trace         []string     `json:"trace,omitempty"`
	WaitForCycle  []string     `json:"wait_for_cycle,omitempty"`
	TraceFile     string       `json:"trace_file,omitempty"`
}

func runCheck(args []string, stdout, stderr io.Writer) (int, error) {
	var f checkFlags
	fs := newFlags("check", stderr)
	f.register(fs)
	if err := parseNoArgs(fs, args); err != nil {
		return 0, err
	}
	if err := f.finish(fs); err != nil {
		return 0, err
	}
	opt := explore.Options{MaxStates: f.maxStates, MaxDepth: f.maxDepth, Timeout: f.timeout, Fingerprint: f.fingerprint}
	if f.maxStates < 0 || f.maxDepth < 0 || f.timeout < 0 {
		return 0, usagef("check: --max-states, --max-depth and --timeout must not be negative")
	}
	opt.MaxMemory = defaultMemoryLimit()
	if f.maxMemory != "" {
		m, err := parseBytes(f.maxMemory)
		if err != nil {
			return 0, err
		}
		opt.MaxMemory = m
	}
	if opt.MaxMemory > 0 {
		// Make the collector work harder near the limit rather than let
		// the process grow past it.
		debug.SetMemoryLimit(int64(opt.MaxMemory + opt.MaxMemory/4))
	}
	if !f.quiet {
		opt.Progress = stderr
	}
	if f.traceOut != "" {
		if err := checkWritableDir(f.traceOut); err != nil {
			return 0, err
		}
	}
	ck, err := protocols.Build(f.cfg)
	if err != nil {
		return 0, usageError{err}
	}
	ck.Reduce = !f.noReduce
	res, err := checkOne(ck, opt)
	if err != nil {
		return 0, err
	}
	if res.file != nil && f.traceOut != "" {
		if err := writeFileAtomic(f.traceOut, traces.Marshal(*res.file)); err != nil {
			return 0, err
		}
		res.json.TraceFile = f.traceOut
	}
	if f.jsonOut {
		b, _ := json.MarshalIndent(res.json, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		printCheck(stdout, res)
	}
	switch res.json.Verdict {
	case string(explore.Pass):
		return exitPass, nil
	case string(explore.Fail):
		return exitFail, nil
	}
	return exitIncomplete, nil
}

// checked is the outcome of one check with everything needed to print it.
type checked struct {
	json    checkResult
	outcome *traces.Outcome
	file    *traces.File
}

// checkOne searches ck's state space and, on a violation, re-runs the
// counterexample step by step to render it and to confirm it reproduces.
func checkOne(ck *properties.Checker, opt explore.Options) (checked, error) {
	r, err := explore.BFS(ck, opt)
	if err != nil {
		return checked{}, err
	}
	cfg := ck.Sys.Cfg
	c := checked{json: checkResult{
		Protocol: cfg.Protocol, Variant: cfg.Variant, Config: cfg,
		Verdict: string(r.Verdict), Reason: r.Reason,
		States: r.Stats.States, Transitions: r.Stats.Transitions, Depth: r.Stats.Depth,
		ElapsedS: r.Stats.Elapsed.Seconds(), StatesPerS: r.Stats.StatesPerSec,
		PeakHeapBytes: r.Stats.PeakHeapBytes, StoreBytes: r.Stats.StoreBytes,
		Fingerprint: opt.Fingerprint, CollisionProb: r.Stats.CollisionProb, Reduction: ck.Reduce,
	}}
	for _, p := range ck.Props {
		c.json.Properties = append(c.json.Properties, p.Name)
	}
	if r.Verdict != explore.Fail {
		return c, nil
	}
	acts := traces.FromCodes(r.Trace)
	o, err := traces.Run(ck, acts)
	if err != nil {
		return c, fmt.Errorf("internal error: the counterexample does not replay: %v", err)
	}
	if o.Violation == nil || o.Violation.Property != r.Violation.PropertyName() {
		return c, fmt.Errorf("internal error: the counterexample does not reproduce %s", r.Violation.PropertyName())
	}
	file := traces.NewFile(cfg, acts, o)
	c.outcome, c.file = &o, &file
	c.json.Property, c.json.Message = o.Violation.Property, o.Violation.Message
	c.json.Trace = file.Actions
	if o.Violation.Property == properties.Deadlock.Name {
		c.json.WaitForCycle = properties.FormatCycle(o.Final, properties.WaitForCycle(o.Final))
	}
	return c, nil
}

func describeConfig(cfg model.Config) string {
	s := fmt.Sprintf("%s (%s) nodes=%d credits=%d", cfg.Protocol, cfg.Variant, cfg.Nodes, cfg.Credits)
	if len(cfg.Flows) == 0 && len(cfg.Casts) == 0 {
		s += fmt.Sprintf(" packets=%d", cfg.Packets)
	} else if len(cfg.Flows) > 0 {
		s += " flows=" + model.JoinStrings(cfg.Flows)
	}
	switch {
	case cfg.Topology != nil:
		s += fmt.Sprintf(" topology=%d groups", len(cfg.Topology.Groups))
	case cfg.Tree != "":
		s += " tree=" + cfg.Tree
	}
	if len(cfg.Casts) > 0 {
		s += " casts=" + model.JoinStrings(cfg.Casts)
	}
	return s + fmt.Sprintf(" refresh=%d host-buffers=%d send-buffers=%d", cfg.Refresh, cfg.HostBuffers, cfg.SendBuffers)
}

func printCheck(w io.Writer, c checked) {
	j := c.json
	fmt.Fprintf(w, "%s\n", describeConfig(j.Config))
	fmt.Fprintf(w, "properties: %s\n", strings.Join(j.Properties, ", "))
	switch j.Verdict {
	case string(explore.Pass):
		fmt.Fprintf(w, "verdict: pass (every property holds over the complete state space)\n")
	case string(explore.Fail):
		fmt.Fprintf(w, "verdict: FAIL: %s violated: %s\n", j.Property, j.Message)
	default:
		fmt.Fprintf(w, "verdict: INCOMPLETE: %s; nothing was proved\n", j.Reason)
	}
	store := "exact"
	if j.Fingerprint {
		store = fmt.Sprintf("fingerprint (collision probability about %.2g)", j.CollisionProb)
	}
	red := "partial-order reduction on"
	if !j.Reduction {
		red = "no reduction"
	}
	fmt.Fprintf(w, "states: %d  transitions: %d  depth: %d  elapsed: %.2fs  (%.0f states/s, peak heap %s, %s store, %s)\n",
		j.States, j.Transitions, j.Depth, j.ElapsedS, j.StatesPerS, explore.FormatBytes(j.PeakHeapBytes), store, red)
	if c.outcome != nil {
		fmt.Fprintf(w, "counterexample (%d steps):\n", len(c.outcome.Steps))
		traces.WriteText(w, *c.outcome)
	}
	if j.TraceFile != "" {
		fmt.Fprintf(w, "trace written to %s (replay with 'lfccheck replay %s')\n", j.TraceFile, j.TraceFile)
	}
}

func checkWritableDir(path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		return usagef("--trace-out %s: directory %s does not exist", path, dir)
	}
	if !st.IsDir() {
		return usagef("--trace-out %s: %s is not a directory", path, dir)
	}
	return nil
}

// writeFileAtomic writes data to a temporary file beside path and renames
// it into place, so no partial file is ever left behind.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".lfccheck-*")
	if err != nil {
		return usagef("writing %s: %v", path, err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return usagef("writing %s: %v", path, werr)
	}
	return nil
}

func runList(args []string, stdout io.Writer) (int, error) {
	fs := newFlags("list", io.Discard)
	jsonOut := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return 0, err
	}
	type prop struct {
		Name string `json:"name"`
		Doc  string `json:"doc"`
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
		Variants   []variant `json:"variants"`
		Properties []prop    `json:"properties"`
	}
	var all []proto
	for _, p := range protocols.All() {
		x := proto{Name: p.Name, Doc: p.Doc}
		for _, v := range p.Variants {
			vv := variant{Name: v.Name, Doc: v.Doc, Catches: v.Catches}
			if v.Catches != "" {
				vv.Example = fmt.Sprintf("lfccheck check --protocol %s --variant %s %s", p.Name, v.Name, exampleFlags(v.Example))
			}
			x.Variants = append(x.Variants, vv)
		}
		for _, pr := range p.Properties {
			x.Properties = append(x.Properties, prop{pr.Name, pr.Doc})
		}
		all = append(all, x)
	}
	if *jsonOut {
		b, _ := json.MarshalIndent(all, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
		return exitPass, nil
	}
	for _, p := range all {
		fmt.Fprintf(stdout, "%s: %s\n  variants:\n", p.Name, p.Doc)
		for _, v := range p.Variants {
			fmt.Fprintf(stdout, "    %-18s %s\n", v.Name, v.Doc)
			if v.Catches != "" {
				fmt.Fprintf(stdout, "    %-18s caught by %s: %s\n", "", v.Catches, v.Example)
			}
		}
		fmt.Fprintf(stdout, "  properties:\n")
		for _, pr := range p.Properties {
			fmt.Fprintf(stdout, "    %-20s %s\n", pr.Name, pr.Doc)
		}
	}
	return exitPass, nil
}

func exampleFlags(c model.Config) string {
	s := fmt.Sprintf("--nodes %d --credits %d --packets %d", c.Nodes, c.Credits, c.Packets)
	if c.Refresh != 0 {
		s += fmt.Sprintf(" --refresh %d", c.Refresh)
	}
	return s
}

func runReplay(args []string, stdout io.Writer) (int, error) {
	fs := newFlags("replay", io.Discard)
	jsonOut := fs.Bool("json", false, "print the replay report as JSON")
	if err := parseFlags(fs, args); err != nil {
		return 0, err
	}
	if fs.NArg() != 1 {
		return 0, usagef("replay: want exactly one trace file, got %d arguments", fs.NArg())
	}
	path := fs.Arg(0)
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, usagef("replay: %v", err)
	}
	file, acts, err := traces.Parse(data)
	if err != nil {
		return 0, usagef("replay: %s: %v", path, err)
	}
	ck, err := protocols.Build(file.Config)
	if err != nil {
		return 0, usagef("replay: %s: config: %v", path, err)
	}
	o, err := traces.Run(ck, acts)
	if err != nil {
		return 0, usagef("replay: %s: %v", path, err)
	}
	ok := traces.Reproduces(file, o)
	if *jsonOut {
		rep := struct {
			File       string   `json:"file"`
			Steps      int      `json:"steps"`
			Expected   string   `json:"expected_property"`
			Property   string   `json:"property"`
			Message    string   `json:"message,omitempty"`
			Step       int      `json:"violation_step,omitempty"`
			Reproduced bool     `json:"reproduced"`
			Actions    []string `json:"actions"`
		}{File: path, Steps: len(o.Steps), Expected: file.Property, Reproduced: ok, Actions: file.Actions}
		if o.Violation != nil {
			rep.Property, rep.Message, rep.Step = o.Violation.Property, o.Violation.Message, o.ViolationStep
		}
		b, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		fmt.Fprintf(stdout, "replaying %s: %s, %d steps\n", path, describeConfig(ck.Sys.Cfg), len(acts))
		traces.WriteText(stdout, o)
		switch {
		case ok && file.Property != "":
			fmt.Fprintf(stdout, "reproduced: %s violated at step %d, as recorded\n", o.Violation.Property, o.ViolationStep)
		case ok:
			fmt.Fprintf(stdout, "reproduced: all %d steps applied and no property was violated, as recorded\n", len(acts))
		case o.Violation == nil:
			fmt.Fprintf(stdout, "NOT reproduced: the trace records %s, but no property was violated\n", file.Property)
		default:
			fmt.Fprintf(stdout, "NOT reproduced: the trace records %q, but replay violates %s\n", file.Property, o.Violation.Property)
		}
	}
	if ok {
		return exitPass, nil
	}
	return exitFail, nil
}

func runTrees(args []string, stdout, stderr io.Writer) (int, error) {
	var f checkFlags
	fs := newFlags("trees", stderr)
	fs.IntVar(&f.cfg.Nodes, "nodes", 16, "number of NIs, P")
	fs.StringVar(&f.cfg.Tree, "tree", "", "tree family for the broadcast group: binary, binomial, chain, star, kary:K (default binary)")
	fs.StringVar(&f.topoFile, "topology", "", "topology file with groups and trees (see 'lfccheck help topology')")
	dot := fs.Bool("dot", false, "print the trees as a Graphviz digraph")
	jsonOut := fs.Bool("json", false, "print the analysis as JSON")
	edges := fs.Bool("edges", false, "list every tree's edges in the text output")
	if err := parseNoArgs(fs, args); err != nil {
		return 0, err
	}
	if err := f.finish(fs); err != nil {
		return 0, err
	}
	if f.cfg.Nodes < 2 || f.cfg.Nodes > model.MaxNodes {
		return 0, usagef("nodes must be in 2..%d, got %d", model.MaxNodes, f.cfg.Nodes)
	}
	topo, err := topology.Resolve(f.cfg)
	if err != nil {
		return 0, usageError{err}
	}
	switch {
	case *dot:
		topology.WriteDOT(stdout, topo)
	case *jsonOut:
		b, _ := json.MarshalIndent(topology.Analyze(topo, f.cfg.Nodes), "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
	default:
		topology.WriteText(stdout, topology.Analyze(topo, f.cfg.Nodes), *edges)
	}
	return exitPass, nil
}
