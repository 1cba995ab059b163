package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/topology"
	"lfccheck/protocols/ucast"
)

// Finding a deadlock on a restricted workload (see "The deadlock search"
// in docs/trees.md).
//
// A restriction keeps the first n[h] launches of every host h (a prefix:
// a host launches its work in order). Every run of the restricted
// configuration is then a run of the full one in which the other launches
// have not happened yet: they are enabled there, never forced, and until
// they happen the two configurations take the same steps. So a deadlock of
// the restricted configuration is a state the full one reaches with some
// launches still to come. It need not be a deadlock there: the remaining
// traffic may unblock the cycle (a later packet to a blocked NI's parent
// carries the credits it owes; a packet that takes a credit differently
// changes who waits). So the restricted trace is replayed on the full
// configuration, and the search goes on from the state it reaches, over
// the remaining traffic, for a state where nothing is enabled and work
// remains. Only a trace that replays as a deadlock on the full
// configuration is an answer; a restricted search that finds none proves
// nothing about the full one (more traffic can only add blocking), so
// deadlock freedom never comes from a restriction.

// restriction is a restricted workload: the first n[h] launches of each
// host h, counts[t] multicasts on tree t.
type restriction struct {
	n      []int
	counts []int
	k      int // at most k multicasts of each tree that can block on the cycle
	trees  int // those trees
}

// restrictions lists the restricted workloads worth a search for a
// deadlock through the partitions parts: the launches of the trees that
// can block in some partition of parts (with what each host launches
// before them), at most k of each, for k = 1, 2, ... A restriction equal
// to the full workload is left out (that is the full search).
func restrictions(m *mcast.Machine, parts []topology.Partition) []restriction {
	if len(parts) == 0 {
		return nil
	}
	rel := make([]bool, len(m.Topo.Trees))
	nrel, maxK := 0, 0
	for t := range m.Topo.Trees {
		for _, p := range parts {
			if m.Feeds(t, p.From, p.At) {
				rel[t] = true
			}
		}
	}
	perTree := make([]int, len(m.Topo.Trees))
	for _, items := range m.Work {
		for _, it := range items {
			if it.Tag == mcast.TagMulticast && rel[it.Tree] {
				perTree[it.Tree]++
			}
		}
	}
	for t, c := range perTree {
		if c > 0 {
			nrel++
			maxK = max(maxK, c)
		}
		rel[t] = c > 0
	}
	var out []restriction
	for k := 1; k <= maxK; k++ {
		r := restriction{n: make([]int, len(m.Work)), counts: make([]int, len(m.Topo.Trees)), k: k, trees: nrel}
		full := true
		for h, items := range m.Work {
			for i, it := range items {
				if it.Tag == mcast.TagMulticast && rel[it.Tree] && int(it.Seq) <= k {
					r.n[h] = i + 1
				}
			}
			for _, it := range items[:r.n[h]] {
				if it.Tag == mcast.TagMulticast {
					r.counts[it.Tree]++
				}
			}
			full = full && r.n[h] == len(items)
		}
		if full {
			break
		}
		if len(out) > 0 && slicesEqual(out[len(out)-1].n, r.n) {
			out[len(out)-1].k = k
			continue
		}
		out = append(out, r)
	}
	return out
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// prove runs the workload proof on a restriction: a restricted workload
// it proves deadlock-free needs no search.
func (r restriction) prove(m *mcast.Machine, cfg model.Config) (topology.Proof, error) {
	prm := cfg.Params.(*mcast.Params)
	w := topology.Workload{Credits: prm.Credits, Refresh: prm.Refresh}
	if w.Refresh == 0 {
		w.Refresh = ucast.DefaultRefresh(w.Credits)
	}
	for t, c := range r.counts {
		if c > 0 {
			tr := m.Topo.Trees[t]
			w.Casts = append(w.Casts, topology.Cast{Group: m.Topo.Groups[tr.Group].Name, Root: int(tr.Root), Count: c})
		}
	}
	if len(w.Casts) == 0 {
		return topology.Proof{Verdict: topology.DeadlockFree, Reason: "no multicasts"}, nil
	}
	return topology.Prove(m.Topo, cfg.Nodes, w)
}

// config is the restricted configuration: cfg with the work lists of the
// restriction.
func (r restriction) config(m *mcast.Machine, cfg model.Config) (model.Config, []mcast.Work) {
	work := m.WorkPrefix(r.n)
	cfg.Params = cfg.Params.(*mcast.Params).WithWork(work)
	return cfg, work
}

// workString renders work lists as --work takes them.
func workString(work []mcast.Work) string {
	var s []string
	for _, w := range work {
		s = append(s, w.String())
	}
	return strings.Join(s, " ")
}

// fromState is a model whose initial state is a given state of ck's
// (explore.Model only: none of the checker's other capabilities).
type fromState struct {
	ck   *properties.Checker
	init []byte
	verr error // the initial state's violation: a deadlock there
}

func (f *fromState) Initial() ([]byte, error) { return f.init, f.verr }
func (f *fromState) Successors(state []byte, visit func(code uint32, succ []byte, err error) bool) error {
	return f.ck.Successors(state, visit)
}

// errNoMap says a restricted trace could not be followed on the full
// configuration's reduced state graph.
var errNoMap = errors.New("the restricted trace does not map onto the full configuration")

// mapTrace replays the actions acts (named as in another system of the
// same protocol and topology) on ck's system and returns the codes of the
// same run in ck's search graph (representatives with symmetry, ample
// actions fused: after each action, the state reached, if it is one the
// graph stores, is a successor of the last one stored) and the encoding
// of the state it ends in.
func mapTrace(ck *properties.Checker, names []string) ([]uint32, []byte, error) {
	ck = ck.Fork()
	w := ck.Sys.Initial()
	cur, err := ck.Initial()
	if err != nil {
		return nil, nil, errNoMap
	}
	cur = append([]byte(nil), cur...)
	var codes []uint32
	var out model.Outbox
	for _, name := range names {
		a, err := ck.Sys.ParseAction(name)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", errNoMap, err)
		}
		if err := w.Apply(a, &out); err != nil {
			return nil, nil, fmt.Errorf("%w: %s is not enabled", errNoMap, name)
		}
		enc := ck.Canonical(w, nil)
		found := false
		if err := ck.Successors(cur, func(code uint32, b []byte, _ error) bool {
			if bytes.Equal(b, enc) {
				codes, found = append(codes, code), true
				return false
			}
			return true
		}); err != nil {
			return nil, nil, fmt.Errorf("%w: %v", errNoMap, err)
		}
		if found {
			cur = enc
		}
	}
	if !bytes.Equal(cur, ck.Canonical(w, nil)) {
		return nil, nil, errNoMap
	}
	return codes, cur, nil
}

// actionNames names the actions a trace of ck's search graph stands for.
func actionNames(ck *properties.Checker, codes []uint32) []string {
	acts, _ := ck.Actions(codes, 0)
	names := make([]string, len(acts))
	for i, a := range acts {
		names[i] = ck.Sys.ActionName(a)
	}
	return names
}

// extendTrace replays a restricted deadlock (the actions names) on the
// full configuration ck and searches on from the state it reaches, best
// first by h, for a deadlock of the full configuration. The result's trace
// is from ck's initial state.
func extendTrace(ck *properties.Checker, names []string, opt explore.Options, h func([]byte) int) (explore.Result, error) {
	prefix, start, err := mapTrace(ck, names)
	if err != nil {
		return explore.Result{}, err
	}
	f := &fromState{ck: ck.Fork(), init: start}
	f.verr = f.ck.Successors(start, func(uint32, []byte, error) bool { return false })
	r, err := explore.BestFirstDeep(f, opt, h)
	if err != nil {
		return r, err
	}
	if r.Verdict == explore.Fail {
		r.Trace = append(append([]uint32(nil), prefix...), r.Trace...)
	}
	return r, nil
}

// restrictedSearch tries the restrictions in turn until one yields a
// deadlock of the full configuration or the deadline passes. It returns
// the phases it ran and, for a deadlock, the full configuration's result.
func restrictedSearch(ck *properties.Checker, cfg model.Config, parts []topology.Partition, opt explore.Options, deadline time.Time) ([]searchPhase, *explore.Result, error) {
	m, ok := ck.Sys.M.(*mcast.Machine)
	if !ok {
		return nil, nil, nil
	}
	var phases []searchPhase
	for _, r := range restrictions(m, parts) {
		left := time.Until(deadline)
		if left <= 0 || stopped(opt.Stop) {
			break
		}
		rcfg, work := r.config(m, cfg)
		ph := searchPhase{Phase: "restricted", Workload: workString(work), Trees: r.trees, AtMost: r.k}
		pr, err := r.prove(m, cfg)
		if err != nil {
			return nil, nil, err
		}
		if pr.Verdict == topology.DeadlockFree {
			ph.Verdict, ph.Reason = "refuted", "the proof: "+pr.Reason
			phases = append(phases, ph)
			continue
		}
		rck, err := properties.Build(rcfg)
		if err != nil {
			return nil, nil, fmt.Errorf("internal error: the restricted configuration: %v", err)
		}
		h, herr := partitionHeuristic(rck, parts)
		ropt := opt
		ropt.Timeout = roundTimeout(left)
		rr, err := explore.BestFirstDeep(rck, ropt, h)
		if err == nil && *herr != nil {
			err = *herr
		}
		if err != nil {
			return nil, nil, err
		}
		ph.setStats(rr)
		if rr.Verdict != explore.Fail {
			phases = append(phases, ph)
			if rr.Verdict == explore.Incomplete {
				break
			}
			continue
		}
		names := actionNames(rck, rr.Trace)
		ph.Steps = len(names)
		ext := searchPhase{Phase: "extension"}
		eopt := opt
		eopt.Timeout = roundTimeout(time.Until(deadline))
		fh, ferr := partitionHeuristic(ck, parts)
		er, err := extendTrace(ck, names, eopt, fh)
		if err == nil && *ferr != nil {
			err = *ferr
		}
		switch {
		case errors.Is(err, errNoMap):
			ext.Verdict, ext.Reason = "incomplete", err.Error()
		case err != nil:
			return nil, nil, err
		default:
			ext.setStats(er)
		}
		ph.Extension = &ext
		phases = append(phases, ph)
		if err == nil && er.Verdict == explore.Fail {
			return phases, &er, nil
		}
		if er.Verdict == explore.Incomplete && time.Until(deadline) <= 0 {
			break
		}
	}
	return phases, nil, nil
}

// stopped reports whether the interrupt channel is closed.
func stopped(stop <-chan struct{}) bool {
	if stop == nil {
		return false
	}
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// roundTimeout is a phase's share of the time, to the millisecond (at
// least one).
func roundTimeout(d time.Duration) time.Duration {
	return max(d.Round(time.Millisecond), time.Millisecond)
}
