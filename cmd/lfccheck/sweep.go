package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/protocols"
)

// sweepResult is one check of a sweep. A series is one (protocol, variant,
// tree, credits, packets) combination checked at increasing node counts.
type sweepResult struct {
	Key      string  `json:"-"`
	Series   string  `json:"series"`
	Tree     string  `json:"tree,omitempty"`
	Nodes    int     `json:"nodes"`
	Credits  int     `json:"credits"`
	Packets  int     `json:"packets"`
	Verdict  string  `json:"verdict"`
	Property string  `json:"property,omitempty"`
	Reason   string  `json:"reason,omitempty"`
	States   int64   `json:"states"`
	ElapsedS float64 `json:"elapsed_s"`
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

// parseInts reads "1,2,4" or ranges "2-5" (mixable: "2-4,8").
func parseInts(flag, s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(strings.TrimSpace(lo))
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(strings.TrimSpace(hi))
		}
		if err1 != nil || err2 != nil || b < a || b-a > 1000 {
			return nil, usagef("--%s %q: want numbers or ranges such as 1,2 or 2-5", flag, s)
		}
		for v := a; v <= b; v++ {
			out = append(out, v)
		}
	}
	sort.Ints(out)
	return out, nil
}

func runSweep(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("sweep", stderr)
	proto := fs.String("protocol", "mcast", "protocol to sweep")
	variant := fs.String("variant", "correct", "protocol variant")
	trees := fs.String("tree", "binary,binomial", "mcast: comma-separated tree families")
	nodes := fs.String("nodes", "2-4", "node counts, e.g. 2-5 or 2,3,8")
	credits := fs.String("credits", "1,2", "credit counts")
	packets := fs.String("packets", "1,2", "packets per sender")
	timeout := fs.Duration("timeout", 4*time.Minute, "time limit per check; a series stops at its first incomplete size")
	fp := fs.Bool("fingerprint", false, "fingerprint store")
	jsonOut := fs.Bool("json", false, "print the results as JSON")
	quiet := fs.BoolP("quiet", "q", false, "no progress lines on stderr")
	if err := parseNoArgs(fs, args); err != nil {
		return 0, err
	}
	info, err := protocols.Lookup(*proto)
	if err != nil {
		return 0, usageError{err}
	}
	ns, err := parseInts("nodes", *nodes)
	if err != nil {
		return 0, err
	}
	cs, err := parseInts("credits", *credits)
	if err != nil {
		return 0, err
	}
	ks, err := parseInts("packets", *packets)
	if err != nil {
		return 0, err
	}
	families := []string{""}
	if info.Multicast {
		families = strings.Split(*trees, ",")
	}
	// Validate every configuration before running any.
	type job struct {
		series string
		cfg    model.Config
	}
	var jobs []job
	for _, tree := range families {
		for _, c := range cs {
			for _, k := range ks {
				series := fmt.Sprintf("%s C=%d K=%d", strings.TrimSpace(*proto+" "+tree), c, k)
				for _, n := range ns {
					cfg := model.Config{Protocol: *proto, Variant: *variant, Tree: tree, Nodes: n, Credits: c, Packets: k}
					if _, err := protocols.Build(cfg); err != nil {
						return 0, usagef("sweep: %s P=%d: %v", series, n, err)
					}
					jobs = append(jobs, job{series, cfg})
				}
			}
		}
	}
	store := newSweepStore()
	stopped := map[string]bool{}
	if !*jsonOut {
		fmt.Fprintf(stdout, "%-28s %5s %-12s %12s %9s\n", "SERIES", "P", "VERDICT", "STATES", "TIME")
	}
	for _, j := range jobs {
		r := &sweepResult{Series: j.series, Tree: j.cfg.Tree, Nodes: j.cfg.Nodes, Credits: j.cfg.Credits, Packets: j.cfg.Packets}
		r.Key = fmt.Sprintf("%s P=%03d", j.series, j.cfg.Nodes)
		if stopped[j.series] {
			r.Verdict, r.Reason = "skipped", "a smaller size was incomplete"
		} else {
			ck, _ := protocols.Build(j.cfg)
			ck.Reduce = true
			opt := explore.Options{Timeout: *timeout, Fingerprint: *fp, MaxMemory: defaultMemoryLimit()}
			if !*quiet {
				opt.Progress = stderr
			}
			res, err := checkOne(ck, opt)
			if err != nil {
				return 0, err
			}
			r.Verdict, r.Property, r.Reason = res.json.Verdict, res.json.Property, res.json.Reason
			r.States, r.ElapsedS = res.json.States, res.json.ElapsedS
			stopped[j.series] = r.Verdict == string(explore.Incomplete)
		}
		store.add(r)
		if !*jsonOut {
			v := r.Verdict
			if r.Property != "" {
				v += " " + r.Property
			}
			fmt.Fprintf(stdout, "%-28s %5d %-12s %12d %8.1fs\n", r.Series, r.Nodes, v, r.States, r.ElapsedS)
		}
	}
	// Summary: per series, the largest size whose check passed completely,
	// provided every smaller size passed too.
	type summary struct {
		Series        string `json:"series"`
		LargestPassed int    `json:"largest_nodes_passed"`
		States        int64  `json:"states"`
		FirstFailure  string `json:"first_failure,omitempty"`
	}
	var sums []summary
	seen := map[string]bool{}
	for _, j := range jobs {
		if seen[j.series] {
			continue
		}
		seen[j.series] = true
		sm := summary{Series: j.series}
		for _, r := range store.query("series", j.series) { // ordered by key, so by P
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
	if *jsonOut {
		all := store.query("id")
		b, _ := json.MarshalIndent(struct {
			Results []*sweepResult `json:"results"`
			Summary []summary      `json:"summary"`
		}{all, sums}, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		fmt.Fprintf(stdout, "\nlargest size verified (every smaller size passed too):\n")
		for _, sm := range sums {
			line := fmt.Sprintf("  %-28s P=%d (%d states)", sm.Series, sm.LargestPassed, sm.States)
			if sm.LargestPassed == 0 {
				line = fmt.Sprintf("  %-28s none", sm.Series)
			}
			if sm.FirstFailure != "" {
				line += "; fails at " + sm.FirstFailure
			}
			fmt.Fprintln(stdout, line)
		}
	}
	return exitFor(failed, incomplete), nil
}
