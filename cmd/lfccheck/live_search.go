package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/properties"
)

// liveSearchUsage documents check --liveness-search.
const liveSearchUsage = "how liveness properties on the state graph are checked: graph records the whole state graph during a breadth-first search and analyses it afterwards (shortest counterexamples; runs with symmetry, sleep sets, workers); scc finds the strongly connected components during one depth-first search that keeps no graph, only the visited set, a number and a bit per property per state, and the stacks (the same verdicts; counterexamples not shortest; exact store, one worker, no symmetry, no checkpoint, frontier or distribution)"

// liveSearchFlags is check --liveness-search.
type liveSearchFlags struct{ mode string }

func (l *liveSearchFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&l.mode, "liveness-search", "graph", liveSearchUsage)
}

// scc says whether the on-the-fly search was asked for, and refuses what
// it cannot run with.
func (l *liveSearchFlags) scc(fs *pflag.FlagSet, sf *searchFlags, hunt *explore.Hunt, frontier, distributed bool, cpf *checkpointFlags) (bool, error) {
	switch l.mode {
	case "graph":
		return false, nil
	case "scc":
	default:
		return false, usagef("--liveness-search: want graph or scc, got %q", l.mode)
	}
	switch {
	case hunt != nil:
		return false, usagef("--liveness-search scc is a depth-first search of its own: not with --search")
	case sf.fingerprint:
		return false, usagef("--liveness-search scc reads states back from the exact store: drop --fingerprint")
	case frontier:
		return false, usagef("--liveness-search scc keeps every state: not with --frontier")
	case distributed:
		return false, usagef("--liveness-search scc runs in one process: not with --distributed or --peers")
	case cpf.dir != "" || cpf.resume != "":
		return false, usagef("--liveness-search scc writes no checkpoint: not with --checkpoint or --resume")
	case fs.Changed("workers") && sf.workers > 1:
		return false, usagef("--liveness-search scc runs on one worker: not with --workers %d", sf.workers)
	}
	return true, nil
}

// setUpOnTheFly prepares ck for the on-the-fly search: no symmetry
// reduction (its search does not track renamings around cycles), and a
// liveness property on the state graph to check.
func setUpOnTheFly(ck *properties.Checker) error {
	ck.OnTheFly, ck.Symmetry = true, false
	if ck.Live() == nil {
		return usagef("--liveness-search scc: no property of this check is checked on the state graph (see the liveness: line; --liveness-graph puts every liveness property on it)")
	}
	return nil
}

// checkOnTheFly is checkOne with the on-the-fly liveness search.
func checkOnTheFly(ck *properties.Checker, opt explore.Options) (checked, error) {
	c, err := checkResultOf(ck, opt, func() (explore.Result, *explore.HuntStats, error) {
		r, err := explore.LiveDFS(ck, opt)
		return r, nil, err
	})
	c.json.Search = "scc"
	return c, err
}

// liveSearchOf is the JSON liveness_search of a check: graph or scc when
// a liveness property is checked on the state graph, else "".
func liveSearchOf(ck *properties.Checker) string {
	if ck.OnTheFly {
		return "scc"
	}
	for i := range ck.Props {
		if p := &ck.Props[i]; p.Live != model.NotLive && !ck.OnEndStates(p) {
			return "graph"
		}
	}
	return ""
}

// onTheFlyLine describes an on-the-fly liveness search.
func onTheFlyLine(j checkResult) string {
	per := 0.0
	if j.States > 0 {
		per = float64(j.StoreBytes+j.OnTheFlyBytes) / float64(j.States)
	}
	return fmt.Sprintf("search: depth-first, 1 worker, strongly connected components found on the fly (--liveness-search scc; a counterexample is not necessarily shortest); visited set %s, numbers, bits and stacks %s (%.1f bytes/state in all), largest component graph %s",
		explore.FormatBytes(uint64(j.StoreBytes)), explore.FormatBytes(uint64(j.OnTheFlyBytes)), per, explore.FormatBytes(uint64(j.ComponentBytes)))
}
