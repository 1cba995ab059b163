package protocols_test

import (
	"math/rand"
	"testing"

	"lfccheck/model"
	"lfccheck/protocols"
)

// TestLocalChecksAgreeWithState checks every property's Local against its
// State on random runs of every claim and broken-variant example, with
// every property of the protocol: in every state, Local at every node
// finds a violation exactly when State does; and after a step from a
// state that satisfied State, Local at the nodes and link ends the step
// changed (what the explorer and trace replay check) finds one exactly
// when State does, and for a NodeLocal property (which the checker checks
// only at the nodes a step changed) Local at those nodes alone. The broken variants make the violations: the test
// fails unless each property with Local was seen both holding and
// violated.
func TestLocalChecksAgreeWithState(t *testing.T) {
	walks, depth := 40, 60
	if testing.Short() {
		walks = 10
	}
	held, violated := map[string]int{}, map[string]int{}
	eachClaim(t, 20, func(t *testing.T, cfg model.Config) {
		cfg.Properties = nil
		ck, err := protocols.Build(cfg)
		if err != nil {
			t.Fatal(err)
		}
		P := ck.Sys.P
		anyLocal := func(p *model.Property, w *model.World, at []bool) error {
			for n := 0; n < P; n++ {
				if at == nil || at[n] {
					if err := p.Local(w, n); err != nil {
						return err
					}
				}
			}
			return nil
		}
		rng := rand.New(rand.NewSource(1))
		var out model.Outbox
		for walk := 0; walk < walks; walk++ {
			w := ck.Sys.Initial()
			for step := 0; step < depth; step++ {
				acts := w.Enabled(nil)
				if len(acts) == 0 {
					break
				}
				next := w.Clone()
				next.ClearChanges()
				a := acts[rng.Intn(len(acts))]
				if err := next.Apply(a, &out); err != nil {
					t.Fatal(err)
				}
				at, nodes := make([]bool, P), make([]bool, P)
				if !next.Changed(func(i int) { at[i], nodes[i] = true, true }, func(l int) { at[l/P], at[l%P] = true, true }) {
					t.Fatal("one step: Changed does not know what changed")
				}
				for i := range ck.Props {
					p := &ck.Props[i]
					if p.Local == nil {
						continue
					}
					full := p.State(next)
					if (full == nil) != (anyLocal(p, next, nil) == nil) {
						t.Fatalf("%s after %s: State says %v, Local at every node disagrees", p.Name, ck.Sys.ActionName(a), full)
					}
					if p.State(w) == nil && (full == nil) != (anyLocal(p, next, at) == nil) {
						t.Fatalf("%s after %s: State says %v, Local at the changed nodes disagrees", p.Name, ck.Sys.ActionName(a), full)
					}
					if p.NodeLocal && p.State(w) == nil && (full == nil) != (anyLocal(p, next, nodes) == nil) {
						t.Fatalf("%s after %s: State says %v, Local (NodeLocal) at the nodes the step changed, not its links' ends, disagrees", p.Name, ck.Sys.ActionName(a), full)
					}
					if full == nil {
						held[p.Name]++
					} else {
						violated[p.Name]++
					}
				}
				w = next
			}
		}
	})
	for _, name := range []string{"credit-conservation", "pool-bound", "buffer-held"} {
		if held[name] == 0 || violated[name] == 0 {
			t.Errorf("%s: held in %d states and was violated in %d: both must be seen", name, held[name], violated[name])
		}
	}
	t.Logf("states where each property held / was violated: %v / %v", held, violated)
}
