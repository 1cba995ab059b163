package protocols_test

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"lfccheck/explore"
	"lfccheck/internal/racebuild"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/topology"
	"lfccheck/protocols/ucast"
	"lfccheck/traces"
)

// Tests of the stubborn-set reduction with every property (issue 39 item
// 3): invariants of one node, step rules, conserved sums and stable
// invariants keep their verdicts (see properties' stubborn.go).

// borrowed is a broken variant's machine with the dependency declaration
// of the correct protocol in the same configuration (a test-only switch:
// broken variants declare nothing, so the reduction is off for them).
// The search checks every step it explores against the declaration, so
// where the variant breaks it the search ends with an error.
type borrowed struct {
	model.Machine
	deps model.Dependencies
}

func (b borrowed) Triggers(from, at model.NodeID) uint64 { return b.deps.Triggers(from, at) }
func (b borrowed) Pending(n model.Node) uint64           { return b.deps.Pending(n) }
func (b borrowed) Waiting(n model.Node) bool             { return b.deps.Waiting(n) }
func (b borrowed) Commutes(from, at model.NodeID) bool   { return b.deps.Commutes(from, at) }

// machineFor builds cfg's machine; for a broken variant with borrow set,
// with the correct variant's declaration (nil when the correct variant
// declares none).
func machineFor(t *testing.T, cfg model.Config, borrow bool) (model.Config, model.Machine) {
	t.Helper()
	def, err := model.Lookup(cfg.Protocol)
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err = def.Resolve(cfg); err != nil {
		t.Fatal(err)
	}
	m, err := def.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !borrow || cfg.Variant == "" || cfg.Variant == "correct" {
		return cfg, m
	}
	good := cfg.Clone()
	good.Variant = "correct"
	gm, err := def.New(good)
	if err != nil {
		t.Fatal(err)
	}
	deps, ok := gm.(model.Dependencies)
	if !ok {
		return cfg, nil
	}
	return cfg, borrowed{Machine: m, deps: deps}
}

// verdictOf searches cfg (properties props) on machine m with the
// stubborn-set reduction on or off and returns the verdict with the
// violated property ("pass", "fail <property>", or "" when the search was
// cut by limit), checking that a counterexample replays to the property
// it names. With por set and the reduction not applicable, it returns
// the reason as off.
func verdictOf(t *testing.T, cfg model.Config, m model.Machine, props []string, por bool, limit int64) (verdict, off string) {
	t.Helper()
	cfg.Properties = props
	ck, err := properties.BuildFor(cfg, m)
	if err != nil {
		t.Fatal(err)
	}
	if por && !ck.Stubborn {
		return "", ck.StubbornOff()
	}
	ck.Stubborn = por
	r, err := explore.BFS(ck, explore.Options{MaxStates: limit})
	if err != nil {
		t.Fatalf("por=%v %v: %v", por, props, err)
	}
	switch r.Verdict {
	case explore.Pass:
		return "pass", ""
	case explore.Fail:
		o, _, err := traces.RunCodes(ck, r.Trace, r.Loop)
		if err != nil || o.Violation == nil || o.Violation.Property != r.Violation.PropertyName() {
			t.Fatalf("por=%v %v: the counterexample does not replay to %s: %v %v", por, props, r.Violation.PropertyName(), o.Violation, err)
		}
		return "fail " + r.Violation.PropertyName(), ""
	}
	return "", ""
}

// compareProps checks cfg on machine mk() with the reduction on and off,
// every property alone and all together: the verdicts and violated
// properties must agree. It returns the properties the reduction applied
// to alone, and those whose search it caught failing with the reduction
// on.
func compareProps(t *testing.T, cfg model.Config, mk func() model.Machine, limit int64) (on, caught []string) {
	t.Helper()
	def, err := model.Lookup(cfg.Protocol)
	if err != nil {
		t.Fatal(err)
	}
	sets := [][]string{nil}
	for _, p := range def.Properties {
		sets = append(sets, []string{p.Name})
	}
	for _, props := range sets {
		v, off := verdictOf(t, cfg, mk(), props, true, limit)
		if off != "" {
			continue
		}
		w, _ := verdictOf(t, cfg, mk(), props, false, limit)
		if v == "" || w == "" {
			continue // cut by the limit
		}
		if v != w {
			t.Fatalf("%v: %q with stubborn sets, %q without", props, v, w)
		}
		if len(props) == 1 {
			on = append(on, props[0])
			if strings.HasPrefix(v, "fail ") {
				caught = append(caught, props[0])
			}
		}
	}
	return on, caught
}

// TestStubbornSetsKeepEveryProperty: on every claim and broken-variant
// example of the protocols that declare dependencies, each property alone
// and all of them together get the same verdict, with the same violated
// property, with the reduction on and off, and counterexamples replay; for
// the correct variants, the dependency declaration with the invisibility
// of commuting deliveries to every property holds on every state of the
// full graph (when it has at most half the limit's states).
// Broken variants are checked with the correct protocol's declaration
// (borrowed) where it holds for them; each broken variant must be caught
// by the property it names with the reduction on. Searches stop at 10,000
// states (-short: 3,000); under the race detector, a sixth of the
// configurations, at 800.
func TestStubbornSetsKeepEveryProperty(t *testing.T) {
	limit := int64(10_000)
	if testing.Short() {
		limit = 3_000
	}
	if racebuild.Enabled {
		limit = 800
	}
	s := raceSample(5)
	caughtOn := map[string]bool{} // protocol/variant/property caught with the reduction on
	applied := 0
	i := 0
	for _, d := range protocols.All() {
		if !slices.Contains([]string{"ucast", "mcast", "fa"}, d.Name) {
			continue
		}
		for _, cl := range d.AllClaims() {
			if i++; !s.takes(i - 1) {
				continue
			}
			cfg := cl.Config.Clone()
			cfg.Protocol = d.Name
			t.Run(d.Name+" "+cl.Name, func(t *testing.T) {
				cfg, m := machineFor(t, cfg, true)
				if m == nil {
					t.Skip("the correct variant declares no dependencies")
				}
				if cfg.Variant == "correct" {
					// The declaration, with the invisibility of commuting
					// deliveries to every property, on every state of the
					// full graph (when it is small enough).
					ck, err := properties.BuildFor(cfg, m)
					if err != nil {
						t.Fatal(err)
					}
					ck.Stubborn, ck.Symmetry = false, false
					endStates(t, ck, int(limit)/2, true)
				}
				on, caught := compareProps(t, cfg, func() model.Machine { _, m := machineFor(t, cfg, true); return m }, limit)
				if len(on) > 0 {
					applied++
				}
				for _, p := range caught {
					caughtOn[d.Name+"/"+cfg.Variant+"/"+p] = true
				}
				t.Logf("variant %s: reduction on for %v, failing with it %v", cfg.Variant, on, caught)
			})
		}
	}
	s.log(t, i, "claims")
	if applied < s.atLeast(10) {
		t.Fatalf("the reduction applied to %d configurations", applied)
	}
	if s.every > 1 || testing.Short() {
		return
	}
	// Every broken variant of these protocols whose property the
	// reduction keeps, caught with the reduction on.
	for _, want := range []string{
		"ucast/no-credit-check/pool-bound", "ucast/blocked-lifo/fifo", "ucast/no-credit-return/credit-conservation",
		"mcast/credit-to-src/credit-conservation", "mcast/early-release/buffer-held",
		"mcast/fa-no-increment/fa-values", "mcast/split-increment/fa-values",
	} {
		if !caughtOn[want] {
			t.Errorf("%s: not caught with the reduction on", want)
		}
	}
}

// TestStubbornSetsEveryPropertyOnRandomConfigurations compares the
// verdicts of all properties with the reduction on and off on random small
// MCAST and UCAST configurations (those of at most 3,000 states), and
// checks the dependency declaration, with the invisibility of commuting
// deliveries to the properties, on every state of their full graphs.
// -short: 40 configurations; race detector: 8.
func TestStubbornSetsEveryPropertyOnRandomConfigurations(t *testing.T) {
	rng := rand.New(rand.NewSource(393))
	n, limit := 200, 3_000
	if testing.Short() {
		n = 40
	}
	if racebuild.Enabled {
		n, limit = 8, 1_000
	}
	compared := 0
	for i := 0; i < n; i++ {
		var cfg model.Config
		var name string
		if i%3 == 2 {
			P := 2 + rng.Intn(2)
			var fl []ucast.Flow
			for s := 0; s < P; s++ {
				for r := 0; r < P; r++ {
					if s != r && rng.Intn(2) == 0 {
						fl = append(fl, ucast.Flow{Src: s, Dst: r, Count: 1 + rng.Intn(2)})
					}
				}
			}
			if len(fl) == 0 {
				fl = append(fl, ucast.Flow{Src: 0, Dst: 1, Count: 2})
			}
			cfg = ucast.Flows(P, 1+rng.Intn(2), fl...)
			name = fmt.Sprintf("ucast P=%d %v", P, fl)
		} else {
			// One or two casts of one packet on 3 or 4 NIs, sometimes
			// beside a unicast flow.
			fams := []string{"binary", "binomial", "chain", "star"}
			P := 3 + rng.Intn(2)
			casts := []topology.Cast{{Root: rng.Intn(P), Count: 1}}
			if rng.Intn(2) == 0 {
				casts = append(casts, topology.Cast{Root: rng.Intn(P), Count: 1})
			}
			cfg = mcast.Casts(fams[rng.Intn(len(fams))], P, 1+rng.Intn(2), casts...)
			if rng.Intn(3) == 0 {
				src := rng.Intn(P)
				cfg.Params.(*mcast.Params).Flows = []ucast.Flow{{Src: src, Dst: (src + 1 + rng.Intn(P-1)) % P, Count: 1}}
			}
			name = fmt.Sprintf("mcast P=%d %s", P, cfg.Params.(*mcast.Params).Describe())
		}
		t.Run(fmt.Sprintf("%d %s", i, name), func(t *testing.T) {
			cfg, _ := machineFor(t, cfg, false)
			ck, err := properties.Build(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !ck.Stubborn {
				t.Fatalf("no stubborn sets: %s", ck.StubbornOff())
			}
			// The full graph: the declaration (with invisibility) at every
			// state.
			ck.Stubborn, ck.Symmetry = false, false
			if _, _, ok := endStates(t, ck, limit, true); !ok {
				t.Skipf("more than %d states", limit)
			}
			var v [2]string
			for k, por := range []bool{true, false} {
				_, m := machineFor(t, cfg, false)
				v[k], _ = verdictOf(t, cfg, m, nil, por, int64(limit))
			}
			if v[0] != v[1] {
				t.Fatalf("%q with stubborn sets, %q without", v[0], v[1])
			}
			compared++
		})
	}
	if compared < n/4 {
		t.Fatalf("compared only %d of %d configurations", compared, n)
	}
}

// TestPropertyFormsOnFullGraphs checks the forms the properties declare
// (model.Property: NodeLocal, Stable, Conserved, Vacuous) on
// every state and transition of the full state graphs (up to a limit) of
// every claim and broken-variant example of every protocol: a NodeLocal
// State fails exactly where Local fails at some node; a Stable State that
// fails fails in every successor; a Conserved State fails exactly where a
// sum differs from its initial value or Bounds fails at some node, and
// each step changes the sums exactly by what it changes at its node, the
// packet it takes and the packets it sends; State holds where Vacuous
// holds at every node. Under the race detector, a
// sixth of the configurations with a smaller limit.
func TestPropertyFormsOnFullGraphs(t *testing.T) {
	limit := 6_000
	if testing.Short() {
		limit = 2_000
	}
	s := raceSample(2)
	if s.every > 1 {
		limit = 1_000
	}
	checked := map[string]int{}
	eachClaimOf(t, s, 10, func(t *testing.T, cfg model.Config) {
		def, err := model.Lookup(cfg.Protocol)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err = def.Resolve(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if len(cfg.Faults) > 0 {
			t.Skip("faults")
		}
		m, err := def.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		sys, err := model.NewSystem(cfg, m)
		if err != nil {
			t.Fatal(err)
		}
		var props []*model.Property
		for i := range def.Properties {
			p := &def.Properties[i]
			if p.State != nil && (p.NodeLocal || p.Stable || p.Conserved != nil || p.Vacuous != nil) {
				props = append(props, p)
			}
		}
		if len(props) == 0 {
			t.Skip("no declared forms")
		}
		init := sys.Initial()
		initSums := map[string][]int64{}
		for _, p := range props {
			if p.Conserved != nil {
				initSums[p.Name] = properties.ConservedSums(p, init, nil)
			}
		}
		enc := func(w *model.World) string { return string(w.Encode(nil)) }
		seen := map[string]bool{enc(init): true}
		queue := []*model.World{init}
		var out model.Outbox
		for len(queue) > 0 && len(seen) < limit {
			w := queue[0]
			queue = queue[1:]
			for _, p := range props {
				bad := p.State(w) != nil
				if p.NodeLocal {
					local := false
					for n := range w.Nodes {
						local = local || p.Local(w, n) != nil
					}
					if bad != local {
						t.Fatalf("%s: State %v, Local at some node %v, at\n%s", p.Name, bad, local, w.Format())
					}
				}
				if p.Vacuous != nil {
					vacuous := true
					for n := range w.Nodes {
						vacuous = vacuous && p.Vacuous(w, n)
					}
					if vacuous && bad {
						t.Fatalf("%s: Vacuous at every node, but State fails at\n%s", p.Name, w.Format())
					}
					if vacuous {
						checked[p.Name+" vacuous"]++
					}
				}
				if p.Conserved != nil && p.State(init) == nil {
					form := !slices.Equal(properties.ConservedSums(p, w, nil), initSums[p.Name])
					for n := range w.Nodes {
						form = form || p.Conserved.Bounds(w, n) != nil
					}
					if bad != form {
						t.Fatalf("%s: State %v, conserved form %v, at\n%s", p.Name, bad, form, w.Format())
					}
				}
				checked[p.Name]++
			}
			for _, a := range w.Enabled(nil) {
				y := w.Clone()
				if err := y.Apply(a, &out); err != nil {
					t.Fatal(err)
				}
				for _, p := range props {
					if p.Stable && p.State(w) != nil && p.State(y) == nil {
						t.Fatalf("%s: declared stable, but %s undoes its violation at\n%s", p.Name, sys.ActionName(a), w.Format())
					}
					if p.Conserved == nil {
						continue
					}
					cs := p.Conserved
					delta := make([]int64, cs.Sums(sys))
					add := func(q int, v int64) { delta[q] += v }
					sub := func(q int, v int64) { delta[q] -= v }
					cs.Node(w, int(a.Node), sub)
					cs.Node(y, int(a.Node), add)
					if out.Arrival {
						cs.Packet(w, a.Peer, a.Node, out.Arrived, sub)
					}
					for _, tr := range out.Sends {
						cs.Packet(y, a.Node, tr.To, tr.Pkt, add)
					}
					before, after := properties.ConservedSums(p, w, nil), properties.ConservedSums(p, y, nil)
					for q := range delta {
						if after[q]-before[q] != delta[q] {
							t.Fatalf("%s: %s changes sum %d by %d, its step-local change is %d, at\n%s", p.Name, sys.ActionName(a), q, after[q]-before[q], delta[q], w.Format())
						}
					}
				}
				if e := enc(y); !seen[e] {
					seen[e] = true
					queue = append(queue, y)
				}
			}
		}
	})
	for _, p := range []string{"credit-conservation", "pool-bound", "buffer-held", "fa-values", "fa-values vacuous"} {
		if checked[p] == 0 {
			t.Errorf("%s: no state checked", p)
		}
	}
	t.Logf("states checked per property: %v", checked)
}
