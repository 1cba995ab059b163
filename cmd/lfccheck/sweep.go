package main

import (
	"fmt"
	"sort"
	"strings"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols"
)

// sweepResult is one check of a sweep. A series is one combination of
// protocol, variant and parameter values, checked at increasing node counts.
type sweepResult struct {
	Key      string            `json:"-"`
	Series   string            `json:"series"`
	Nodes    int               `json:"nodes"`
	Params   map[string]string `json:"params,omitempty"`
	Verdict  string            `json:"verdict"`
	Property string            `json:"property,omitempty"`
	Reason   string            `json:"reason,omitempty"`
	States   int64             `json:"states"`
	ElapsedS float64           `json:"elapsed_s"`
	// Duplicates are the states a frontier search (--frontier) stored
	// twice, counted after a pass; States are then the distinct states
	// (those stored less Duplicates).
	Duplicates *int64 `json:"duplicates,omitempty"`
	// Faults are the links' fault budgets (--faults), as check's.
	Faults string `json:"faults,omitempty"`
}

// sweepStore indexes sweep results by key, series and verdict (go-memdb).
type sweepStore struct{ db *memdb.MemDB }

func newSweepStore() *sweepStore {
	schema := &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{
		"result": {Name: "result", Indexes: map[string]*memdb.IndexSchema{
			"id":      {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Key"}},
			"series":  {Name: "series", Indexer: &memdb.StringFieldIndex{Field: "Series"}},
			"verdict": {Name: "verdict", Indexer: &memdb.StringFieldIndex{Field: "Verdict"}},
		}},
	}}
	db, err := memdb.NewMemDB(schema)
	if err != nil {
		panic("sweep store schema: " + err.Error()) // a fixed, valid schema
	}
	return &sweepStore{db: db}
}

func (s *sweepStore) add(r *sweepResult) {
	txn := s.db.Txn(true)
	if err := txn.Insert("result", r); err != nil {
		txn.Abort()
		panic("sweep store insert: " + err.Error())
	}
	txn.Commit()
}

func (s *sweepStore) query(index string, args ...any) []*sweepResult {
	it, err := s.db.Txn(false).Get("result", index, args...)
	if err != nil {
		panic("sweep store query: " + err.Error())
	}
	var out []*sweepResult
	for obj := it.Next(); obj != nil; obj = it.Next() {
		out = append(out, obj.(*sweepResult))
	}
	return out
}

// defaultSweepProtocol is the first protocol that declares a default
// sweep grid.
func defaultSweepProtocol() string {
	for _, d := range protocols.All() {
		if len(d.Sweep) > 0 {
			return d.Name
		}
	}
	return protocols.All()[0].Name
}

// sweepGridHelp describes each protocol's default grid, from the same
// declarations (model.Def.Sweep) the sweep runs, and marks the flags of
// swept parameters: their single default applies only when another
// protocol's grid, or the parameters given, leave them out.
func sweepGridHelp(pf *paramFlags) string {
	var b strings.Builder
	b.WriteString("with no parameter given, a protocol's default grid is swept (every other parameter at its default):\n")
	swept := map[string]bool{}
	for _, d := range protocols.All() {
		var set []string
		for _, st := range d.Sweep {
			set = append(set, st.Key+"="+st.Value)
			swept[st.Key] = true
		}
		if len(set) == 0 {
			set = []string{"one series, every parameter at its default"}
		}
		fmt.Fprintf(&b, "  %-6s %s\n", d.Name, strings.Join(set, " "))
	}
	for k := range swept {
		if f := pf.fs.Lookup(k); f != nil {
			f.Usage = strings.Replace(f.Usage, " (default ", " (default: the protocol's grid above, if it sweeps "+k+"; else ", 1)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// parseInts reads "1,2,4" or ranges "2-5" (mixable: "2-4,8").
func parseInts(flag, s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := model.ParseDecimal(lo)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = model.ParseDecimal(hi)
		}
		if err1 != nil || err2 != nil || b < a || a < 2 || b > model.MaxNodes {
			return nil, usagef("--%s %q: want node counts in 2..%d (plain decimal) or ranges such as 2-5", flag, s, model.MaxNodes)
		}
		for v := a; v <= b; v++ {
			out = append(out, v)
		}
	}
	sort.Ints(out)
	return out, nil
}

func runSweep(args []string, e env) (int, error) {
	var sf searchFlags
	fs := newFlags("sweep", e)
	proto := fs.String("protocol", defaultSweepProtocol(), "protocol to sweep")
	variant := fs.String("variant", "correct", "protocol variant")
	nodes := fs.String("nodes", "2-4", "node counts, e.g. 2-5 or 2,3,8")
	pf := registerParams(fs)
	faultsFlag := fs.String("faults", "", faultsUsage+"; every size of every series")
	jsonOut := fs.Bool("json", false, "print the results as JSON")
	frontier := fs.Bool("frontier", false, "search each configuration as check --frontier does: only the level being built in the visited set (variants whose runs all end); states are counted once each after a pass")
	sf.register(fs, 4*time.Minute, true)
	fs.Lookup("timeout").Usage += "; a series stops at its first incomplete size"
	grid := sweepGridHelp(pf)
	if err := parseNoArgs(fs, args, "[flags]   (a parameter's value may be a comma-separated list: one series per combination)\n\n"+grid); err != nil {
		return 0, err
	}
	def, err := model.Lookup(*proto)
	if err != nil {
		return 0, usageError{err}
	}
	if *variant == "" {
		return 0, usagef("--variant is empty (see 'lfccheck list')")
	}
	var faults model.Faults
	if fs.Changed("faults") {
		if faults, err = parseFaultsFlag(*faultsFlag); err != nil {
			return 0, err
		}
	}
	opt, err := sf.options(e)
	if err != nil {
		return 0, err
	}
	if *frontier {
		if sf.fingerprint {
			return 0, usagef("--frontier needs the exact store: drop --fingerprint")
		}
		opt.Frontier = true
	}
	ns, err := parseInts("nodes", *nodes)
	if err != nil {
		return 0, err
	}
	// The grid: every combination of the listed values of the parameters
	// given (repeatable parameters apply to every series as given).
	type dim struct {
		spec   model.ParamSpec
		values []string
	}
	var dims []dim
	for _, k := range pf.given() {
		spec := def.Param(k)
		if spec == nil {
			return 0, usagef("protocol %s has no parameter --%s (its parameters: %s)", def.Name, k, def.ParamKeys())
		}
		vals := pf.flags[k].values
		if !spec.Repeat {
			if len(vals) > 1 {
				return 0, usagef("--%s given %d times; give one comma-separated list", k, len(vals))
			}
			vals = strings.Split(vals[0], ",")
		}
		dims = append(dims, dim{*spec, vals})
	}
	if len(dims) == 0 {
		// The protocol's default grid.
		for _, d := range def.Sweep {
			dims = append(dims, dim{*def.Param(d.Key), strings.Split(d.Value, ",")})
		}
	}
	type job struct {
		series string
		params map[string]string
		cfg    model.Config
	}
	var jobs []job
	var combos func(i int, set []model.Setting)
	var comboErr error
	read := func(path string) ([]byte, error) { return e.readInput(path, maxTopologySize) }
	combos = func(i int, set []model.Setting) {
		if comboErr != nil {
			return
		}
		if i < len(dims) {
			if dims[i].spec.Repeat {
				next := set
				for _, v := range dims[i].values {
					next = append(next, model.Setting{Key: dims[i].spec.Key, Value: v})
				}
				combos(i+1, next)
				return
			}
			for _, v := range dims[i].values {
				combos(i+1, append(append([]model.Setting(nil), set...), model.Setting{Key: dims[i].spec.Key, Value: v}))
			}
			return
		}
		var label []string
		params := map[string]string{}
		for _, s := range set {
			label = append(label, s.String())
			params[s.Key] = s.Value
		}
		if len(faults) > 0 {
			label = append(label, "faults="+faults.String())
		}
		series := strings.TrimSpace(def.Name + " " + strings.Join(label, " "))
		for _, n := range ns {
			p := def.NewParams()
			for _, s := range set {
				if err := setParam(p, *def.Param(s.Key), s.Value, read); err != nil {
					comboErr = err
					return
				}
			}
			cfg := model.Config{Protocol: def.Name, Variant: *variant, Nodes: n, Params: p, Faults: faults.Clone()}
			ck, err := properties.Build(cfg)
			if err != nil {
				comboErr = usagef("sweep: %s P=%d: %v", series, n, err)
				return
			}
			if *frontier {
				sf.setUp(ck)
				if err := frontierFits(ck); err != nil {
					comboErr = usagef("sweep: %s P=%d: %v", series, n, err)
					return
				}
			}
			jobs = append(jobs, job{series, params, cfg})
		}
	}
	combos(0, nil)
	if comboErr != nil {
		return 0, comboErr
	}
	width := len("SERIES")
	for _, j := range jobs {
		width = max(width, len(j.series))
	}
	store := newSweepStore()
	stopped := map[string]bool{}
	if !*jsonOut {
		fmt.Fprintf(e.stdout, "%-*s %5s %-12s %12s %9s\n", width, "SERIES", "P", "VERDICT", "STATES", "TIME")
	}
	for _, j := range jobs {
		r := &sweepResult{Series: j.series, Nodes: j.cfg.Nodes, Params: j.params, Faults: j.cfg.Faults.String()}
		r.Key = fmt.Sprintf("%s P=%03d", j.series, j.cfg.Nodes)
		switch {
		case interrupted(e):
			r.Verdict, r.Reason = "skipped", "interrupted"
		case stopped[j.series]:
			r.Verdict, r.Reason = "skipped", "a smaller size was incomplete"
		default:
			ck, err := properties.Build(j.cfg)
			if err != nil {
				return 0, err
			}
			sf.setUp(ck)
			o := opt
			if o.Progress != nil {
				o.Progress = &prefixWriter{w: e.stderr, prefix: fmt.Sprintf("[%s P=%d] ", j.series, j.cfg.Nodes)}
			}
			res, err := checkOne(ck, o)
			if err != nil {
				return 0, err
			}
			r.Verdict, r.Property, r.Reason = res.json.Verdict, res.json.Property, res.json.Reason
			r.States, r.ElapsedS = res.json.States, res.json.ElapsedS
			if f := res.json.Frontier; f != nil && f.Checked {
				r.States -= f.Duplicates // distinct states
				r.Duplicates = &f.Duplicates
			}
			stopped[j.series] = r.Verdict == string(explore.Incomplete)
		}
		store.add(r)
		if !*jsonOut {
			v := r.Verdict
			if r.Property != "" {
				v += " " + r.Property
			}
			fmt.Fprintf(e.stdout, "%-*s %5d %-12s %12d %8.1fs\n", width, r.Series, r.Nodes, v, r.States, r.ElapsedS)
		}
	}
	// Summary: per series, the largest size whose check passed completely,
	// provided every smaller size passed too.
	type summary struct {
		Series        string `json:"series"`
		LargestPassed int    `json:"largest_nodes_passed"`
		States        int64  `json:"states"`
		FirstFailure  string `json:"first_failure,omitempty"`
		// NotRun says why no size of the series was checked (an
		// interrupt before it began).
		NotRun string `json:"not_run,omitempty"`
	}
	var sums []summary
	seen := map[string]bool{}
	for _, j := range jobs {
		if seen[j.series] {
			continue
		}
		seen[j.series] = true
		sm := summary{Series: j.series}
		for i, r := range store.query("series", j.series) { // ordered by key, so by P
			if i == 0 && r.Verdict == "skipped" {
				sm.NotRun = r.Reason
			}
			if r.Verdict != string(explore.Pass) {
				if r.Verdict == string(explore.Fail) {
					sm.FirstFailure = fmt.Sprintf("P=%d: %s", r.Nodes, r.Property)
				}
				break
			}
			sm.LargestPassed, sm.States = r.Nodes, r.States
		}
		sums = append(sums, sm)
	}
	failed := len(store.query("verdict", string(explore.Fail)))
	incomplete := len(store.query("verdict", string(explore.Incomplete)))
	if interrupted(e) {
		incomplete++
	}
	if *jsonOut {
		all := store.query("id")
		e.stdout.Write(marshalIndent(struct {
			Results []*sweepResult `json:"results"`
			Summary []summary      `json:"summary"`
		}{all, sums}))
	} else {
		if sf.fingerprint {
			fmt.Fprintf(e.stdout, "\nlargest size passed with fingerprints (--fingerprint: not a proof, a state may have been missed; every smaller size passed too):\n")
		} else {
			fmt.Fprintf(e.stdout, "\nlargest size verified (every smaller size passed too):\n")
		}
		for _, sm := range sums {
			line := fmt.Sprintf("  %-*s P=%d (%d states)", width, sm.Series, sm.LargestPassed, sm.States)
			switch {
			case sm.NotRun != "":
				line = fmt.Sprintf("  %-*s not run (%s)", width, sm.Series, sm.NotRun)
			case sm.LargestPassed == 0:
				line = fmt.Sprintf("  %-*s none", width, sm.Series)
			}
			if sm.FirstFailure != "" {
				line += "; fails at " + sm.FirstFailure
			}
			fmt.Fprintln(e.stdout, line)
		}
	}
	return exitFor(failed, incomplete), nil
}
