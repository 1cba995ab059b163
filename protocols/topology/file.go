package topology

import (
	"fmt"
	"strconv"
	"strings"

	"lfccheck/model"
)

// FileFormat documents the topology file format.
const FileFormat = `A topology file is plain text, one statement per line; '#' starts a comment.

  nodes P                        number of NIs (required, first statement)
  group NAME M1 M2 ...           a multicast group and its members
  tree GROUP ROOT FAMILY         ROOT's tree in GROUP is a built-in family:
                                 binary, binomial, chain, star or kary:K
  tree GROUP * FAMILY            the same for every member of GROUP without
                                 a tree line of its own
  tree GROUP ROOT A->B C->D ...  ROOT's tree in GROUP given by its
                                 parent->child edges, in forwarding order

Every member of every group needs a tree. Example (App. A.2's groups):

  nodes 9
  group g1 0 3 4 5 6
  group g2 0 3 6 7 8
  group g3 0 1 2 3 6
  tree g1 * binary
  tree g2 * binary
  tree g3 * binary
`

// ParseFile parses a topology file. Errors have the form "NAME:LINE:
// problem".
func ParseFile(name string, data []byte) (*TopologySpec, int, error) {
	spec := &TopologySpec{}
	nodes := 0
	groupLine := map[string]int{}
	treeLine := map[string]int{}
	errf := func(line int, format string, a ...any) error {
		return fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, a...))
	}
	atoi := func(line int, what, s string) (int, error) {
		n, err := model.ParseDecimal(s)
		if err != nil {
			return 0, errf(line, "%s %q is not a number", what, s)
		}
		if n < 0 || (nodes > 0 && n >= nodes) {
			return 0, errf(line, "%s %d out of range 0..%d", what, n, nodes-1)
		}
		return n, nil
	}
	// A byte-order mark, as some editors write at the start of a UTF-8
	// file, only says the file is UTF-8; it is not part of the first line.
	text := strings.TrimPrefix(string(data), "\ufeff")
	for i, raw := range strings.Split(text, "\n") {
		ln := i + 1
		line := raw
		if k := strings.IndexByte(line, '#'); k >= 0 {
			line = line[:k]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if f[0] != "nodes" && nodes == 0 {
			return nil, 0, errf(ln, "the first statement must be 'nodes P'")
		}
		switch f[0] {
		case "nodes":
			if nodes != 0 {
				return nil, 0, errf(ln, "nodes given twice")
			}
			if len(f) != 2 {
				return nil, 0, errf(ln, "want 'nodes P'")
			}
			n, err := model.ParseDecimal(f[1])
			if err != nil || n < 2 || n > model.MaxNodes {
				return nil, 0, errf(ln, "nodes must be a number in 2..%d, got %q", model.MaxNodes, f[1])
			}
			nodes = n
		case "group":
			if len(f) < 2 {
				return nil, 0, errf(ln, "want 'group NAME MEMBER...'")
			}
			g := GroupSpec{Name: f[1]}
			if _, err := strconv.Atoi(g.Name); err == nil || g.Name == "*" {
				return nil, 0, errf(ln, "group name %q must not be a number or *", g.Name)
			}
			if prev, dup := groupLine[g.Name]; dup {
				return nil, 0, errf(ln, "group %q already defined on line %d", g.Name, prev)
			}
			seen := map[int]bool{}
			for _, s := range f[2:] {
				m, err := atoi(ln, "member", s)
				if err != nil {
					return nil, 0, err
				}
				if seen[m] {
					return nil, 0, errf(ln, "member %d listed twice", m)
				}
				seen[m] = true
				g.Members = append(g.Members, m)
			}
			if len(g.Members) < 2 {
				return nil, 0, errf(ln, "group %q needs at least 2 members", g.Name)
			}
			groupLine[g.Name] = ln
			spec.Groups = append(spec.Groups, g)
		case "tree":
			if len(f) < 4 {
				return nil, 0, errf(ln, "want 'tree GROUP ROOT FAMILY' or 'tree GROUP ROOT A->B ...'")
			}
			gname := f[1]
			if _, ok := groupLine[gname]; !ok {
				return nil, 0, errf(ln, "no group %q (define it with a group line first)", gname)
			}
			ts := TreeSpec{Group: gname, Root: -1}
			if f[2] != "*" {
				r, err := atoi(ln, "root", f[2])
				if err != nil {
					return nil, 0, err
				}
				ts.Root = r
			}
			key := gname + " " + f[2]
			if prev, dup := treeLine[key]; dup {
				return nil, 0, errf(ln, "group %q root %s already has a tree on line %d", gname, f[2], prev)
			}
			treeLine[key] = ln
			if c := f[3][0]; !strings.Contains(f[3], "->") && !(c >= '0' && c <= '9') {
				if len(f) != 4 {
					return nil, 0, errf(ln, "a family tree takes no more words after %q", f[3])
				}
				if err := CheckFamily(f[3]); err != nil {
					return nil, 0, errf(ln, "%v", err)
				}
				ts.Family = f[3]
			} else {
				if ts.Root == -1 {
					return nil, 0, errf(ln, "edges need a root number, not *")
				}
				for _, e := range f[3:] {
					a, b, ok := strings.Cut(e, "->")
					if !ok {
						return nil, 0, errf(ln, "edge %q: want PARENT->CHILD", e)
					}
					x, err := atoi(ln, "node", a)
					if err != nil {
						return nil, 0, err
					}
					y, err := atoi(ln, "node", b)
					if err != nil {
						return nil, 0, err
					}
					ts.Edges = append(ts.Edges, [2]int{x, y})
				}
			}
			spec.Trees = append(spec.Trees, ts)
			// Validate this tree on its own now, so errors carry its line.
			if _, err := Build(&TopologySpec{Groups: []GroupSpec{groupOf(spec, gname)}, Trees: []TreeSpec{ts}}, nodes); err != nil && !strings.Contains(err.Error(), "no tree for member") {
				return nil, 0, errf(ln, "%v", err)
			}
		default:
			return nil, 0, errf(ln, "unknown statement %q (want nodes, group or tree)", f[0])
		}
	}
	if nodes == 0 {
		return nil, 0, fmt.Errorf("%s: empty topology file (no 'nodes P' line)", name)
	}
	if len(spec.Groups) == 0 {
		return nil, 0, fmt.Errorf("%s: no groups defined", name)
	}
	if _, err := Build(spec, nodes); err != nil {
		// Coverage problems belong to the group's line.
		for g, ln := range groupLine {
			if strings.HasPrefix(err.Error(), fmt.Sprintf("group %q: no tree", g)) {
				return nil, 0, errf(ln, "%v", err)
			}
		}
		return nil, 0, fmt.Errorf("%s: %v", name, err)
	}
	return spec, nodes, nil
}

func groupOf(spec *TopologySpec, name string) GroupSpec {
	for _, g := range spec.Groups {
		if g.Name == name {
			return g
		}
	}
	return GroupSpec{}
}
