package topology

import (
	"fmt"
	"io"
	"strings"
)

// maxCycleLines bounds the steps of a cycle the text output lists.
const maxCycleLines = 12

// WriteProofText prints a proof.
func WriteProofText(w io.Writer, pr Proof) {
	fmt.Fprintf(w, "workload: C=%d, CREDIT_REFRESH %d; %s on %s", pr.Credits, pr.Refresh,
		plural(pr.Multicasts, "multicast packet"), plural(pr.TreesUsed, "tree"))
	if pr.Unicasts > 0 {
		fmt.Fprintf(w, ", %s", plural(pr.Unicasts, "unicast packet"))
	}
	fmt.Fprintln(w)
	if pr.Need > 0 && len(pr.Uncovered) == 0 {
		fmt.Fprintf(w, "a deadlock needs a cycle of partitions each holding C-R+1 = %s at once\n", plural(pr.Need, "blocked packet"))
		fmt.Fprintf(w, "trees used: %s, %s; %d can hold %d; %s among those\n",
			plural(pr.Partitions, "partition"), plural(pr.Edges, "edge"), pr.Holding, pr.Need, plural(pr.Components, "cyclic component"))
	}
	if c := pr.Component; c != nil {
		atLeast := ""
		if !c.Exact {
			atLeast = " at least"
		}
		verb := "falls short"
		switch {
		case c.Fills:
			verb = "may fill"
		case c.ByCycles:
			verb = "not refuted by this count"
		}
		fmt.Fprintf(w, "component of %s, shortest cycle%s %d: a cycle of %d can hold %d blocked packets at once, a deadlock needs %d: %s\n",
			plural(c.Partitions, "partition"), atLeast, c.ShortestCycle, c.Length, c.Blocked, c.Needed, verb)
		for i, st := range pr.Cycle {
			if i == maxCycleLines && len(pr.Cycle) > maxCycleLines+1 {
				fmt.Fprintf(w, "  ... %d more steps\n", len(pr.Cycle)-i)
				break
			}
			fmt.Fprintf(w, "  %s; %s of the workload can block in %d at %d\n", st.CycleStep, plural(st.Packets, "packet"), st.From, st.At)
		}
		switch {
		case c.ByCycles && c.Shortfall != nil:
			which := "its only cycle has"
			if c.Cycles > 1 {
				which = fmt.Sprintf("each of its %d cycles has", c.Cycles)
			}
			fmt.Fprintf(w, "cycle by cycle: %s partitions too few packets can fill; in this one %s\n", which, c.Shortfall)
		case c.Fills && c.Cycles > 1:
			fmt.Fprintf(w, "cycle by cycle: %d refuted (partitions too few packets can fill), not this one\n", c.Cycles-1)
		}
	}
	fmt.Fprintf(w, "answer: %s: %s\n", pr.Verdict, pr.Reason)
	fmt.Fprintf(w, "assuming: %s\n", strings.Join(pr.Assumptions, "; "))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
