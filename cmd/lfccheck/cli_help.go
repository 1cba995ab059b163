package main

import (
	"fmt"

	"lfccheck/protocols/topology"
)

const usage = `lfccheck: model checker for the LFC network-interface protocols

usage:
  lfccheck                    run the built-in suite of checks (same as 'lfccheck suite')
  lfccheck suite [flags]      the built-in suite: thesis claims and broken variants
  lfccheck check [flags]      check one configuration exhaustively
  lfccheck list [--json]      list protocols, their parameters, variants and properties
  lfccheck replay [--json] [--svg F] [--html F] FILE
                              re-execute a saved trace step by step (and draw it)
  lfccheck show [--svg F] [--html F] [--steps FROM:TO] FILE
                              draw a saved trace as a sequence chart or a browser viewer
  lfccheck merge [--json] FILE...
                              combine the JSON results of a swarm's shards into one verdict
  lfccheck trees [flags]      print multicast trees and their static analysis (App. A.1)
  lfccheck sweep [flags]      check a grid of sizes; report the largest verified per series
  lfccheck serve [flags]      explore a configuration's states in the browser (--addr HOST:PORT,
                              loopback by default; --trace FILE continues a saved trace)
  lfccheck version [--json]   the version and build (also: lfccheck --version)
  lfccheck help [TOPIC]       this text; topics: check, suite, sweep, list, replay, show, merge, trees, serve, version,
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
  --liveness-search scc checks the properties on the state graph without
  keeping it: one depth-first search finds its strongly connected
  components as it goes and analyses each completed one (the same
  verdicts; lassos that replay but are not shortest; exact store, one
  worker, no symmetry).
`

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
