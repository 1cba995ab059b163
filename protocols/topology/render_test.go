package topology

import (
	"fmt"
	"reflect"
	"strings"
)

// renderFile writes a spec back in the topology file format.
func renderFile(spec *TopologySpec, nodes int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "nodes %d\n", nodes)
	for _, g := range spec.Groups {
		fmt.Fprintf(&b, "group %s", g.Name)
		for _, m := range g.Members {
			fmt.Fprintf(&b, " %d", m)
		}
		b.WriteByte('\n')
	}
	for _, t := range spec.Trees {
		root := "*"
		if t.Root >= 0 {
			root = fmt.Sprint(t.Root)
		}
		fmt.Fprintf(&b, "tree %s %s", t.Group, root)
		if t.Family != "" {
			fmt.Fprintf(&b, " %s", t.Family)
		}
		for _, e := range t.Edges {
			fmt.Fprintf(&b, " %d->%d", e[0], e[1])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func sameSpec(a, b *TopologySpec) bool { return reflect.DeepEqual(a, b) }
