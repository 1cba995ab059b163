package protocols_test

import (
	"bytes"
	"math/rand"
	"testing"

	"lfccheck/model"
	"lfccheck/properties"
)

// TestStepsCommuteWithRenamings checks what the symmetry reduction and
// the search over segment ids rest on, beyond the first violation: on
// every state of the full state graph (up to a limit, whatever the
// properties say) of every claim and broken-variant example that has a
// symmetry, for every renaming p and enabled action a, renaming the
// state after a gives the state after p(a) from the renamed state.
func TestStepsCommuteWithRenamings(t *testing.T) {
	limit, walks, steps := 2_000, 40, 300
	s := raceSample(4)
	if s.every > 1 {
		limit, walks = 600, 10
	}
	checked := 0
	eachClaimOf(t, s, 5, func(t *testing.T, cfg model.Config) {
		if len(cfg.Faults) > 0 {
			t.Skip("faults")
		}
		ck, err := properties.Build(cfg)
		if err != nil {
			t.Fatal(err)
		}
		syms := ck.Symmetries()
		if !ck.Symmetry || len(syms) == 0 {
			t.Skip("no symmetry")
		}
		sys := ck.Sys
		init := sys.Initial()
		seen := map[string]bool{string(init.Encode(nil)): true}
		queue := []*model.World{init}
		var out model.Outbox
		var acts []model.Action
		ren, after, renAfter := sys.Initial(), sys.Initial(), sys.Initial()
		// commutes checks every enabled action of w; it returns them.
		commutes := func(w *model.World) []model.Action {
			acts = w.Enabled(acts[:0])
			for _, a := range acts {
				after.CopyFrom(w)
				if err := after.Apply(a, &out); err != nil {
					t.Fatal(err)
				}
				for i := range syms {
					p := &syms[i]
					ren.RenameFrom(w, p)
					pa := p.Action(sys, a)
					if err := ren.Apply(pa, &out); err != nil {
						t.Fatalf("%s is not enabled in the state renamed by %s: %v, from\n%s", sys.ActionName(pa), p, err, w.Format())
					}
					renAfter.RenameFrom(after, p)
					if !bytes.Equal(ren.Encode(nil), renAfter.Encode(nil)) {
						t.Fatalf("%s then renaming by %s differs from renaming then %s, from\n%s\nrenamed after the step:\n%s\nthe step after renaming:\n%s",
							sys.ActionName(a), p, sys.ActionName(pa), w.Format(), renAfter.Format(), ren.Format())
					}
				}
			}
			checked++
			return acts
		}
		for len(queue) > 0 && len(seen) < limit {
			w := queue[0]
			queue = queue[1:]
			for _, a := range commutes(w) {
				after.CopyFrom(w)
				if err := after.Apply(a, &out); err != nil {
					t.Fatal(err)
				}
				if e := string(after.Encode(nil)); !seen[e] {
					seen[e] = true
					queue = append(queue, after.Clone())
				}
			}
		}
		rng := rand.New(rand.NewSource(1))
		w := sys.Initial()
		for range walks {
			w.CopyFrom(init)
			for range steps {
				enabled := commutes(w)
				if len(enabled) == 0 {
					break
				}
				if err := w.Apply(enabled[rng.Intn(len(enabled))], &out); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
	if checked == 0 {
		t.Fatal("no state checked")
	}
}
