package properties

import (
	"fmt"
	"slices"

	"lfccheck/explore"
	"lfccheck/model"
)

// Symmetry under fairness
//
// A liveness property checked on the state graph keeps the symmetry
// reduction: the search stores one representative per orbit and records,
// on every edge, the renaming that took the successor to its
// representative (explore.PermCode); the explorer then analyses the real
// graph as the cover of representatives and renamings (explore.Cover),
// where per-node properties and fairness classes move with the nodes.
// This needs the renamings (with the identity) to form a group, and the
// fairness classes to be renamed consistently (a class's actions renamed
// are one class's); liveCover says why not where they are not.

// LivenessCover reports whether the last search's liveness analysis runs
// on the cover of representatives and renamings (set by Live).
func (c *Checker) LivenessCover() bool { return c.coverCodes }

// liveCover returns the cover of the checker's symmetries for the graph
// analysis of obls, or the reason there is none.
func (c *Checker) liveCover(obls []obligation) (*explore.Cover, string) {
	if len(c.sym)+1 > 128 {
		return nil, fmt.Sprintf("%d renamings are more than the 128 the liveness analysis can track", len(c.sym)+1)
	}
	elems := make([]*model.Perm, 0, len(c.sym)+1)
	id := &model.Perm{Node: make([]model.NodeID, c.Sys.P)}
	for i := range id.Node {
		id.Node[i] = model.NodeID(i)
	}
	if len(c.sym) > 0 && c.sym[0].Tree != nil {
		id.Tree = make([]uint16, len(c.sym[0].Tree))
		for t := range id.Tree {
			id.Tree[t] = uint16(t)
		}
	}
	elems = append(elems, id)
	for i := range c.sym {
		elems = append(elems, &c.sym[i])
	}
	find := func(p *model.Perm) int {
		for i, e := range elems {
			if slices.Equal(e.Node, p.Node) && slices.Equal(e.Tree, p.Tree) {
				return i
			}
		}
		return -1
	}
	S := len(elems)
	cv := &explore.Cover{Size: S, Next: make([]uint8, S*S)}
	invs := make([]*model.Perm, S)
	for i, e := range elems {
		invs[i] = e.Inverse()
	}
	for g := range elems {
		for p := range elems {
			k := find(compose(elems[g], invs[p]))
			if k < 0 {
				return nil, fmt.Sprintf("the renamings %s and %s compose to one that is not a symmetry", elems[g], invs[p])
			}
			cv.Next[g*S+p] = uint8(k)
		}
	}
	// Obligations: the label of (property, h) at g(q) is that of
	// (property, g^-1(h)) at q.
	cv.Obl = make([][]int, S)
	for g := range elems {
		cv.Obl[g] = make([]int, len(obls))
		for j, o := range obls {
			want := o
			if c.Props[o.prop].PerNode {
				want.node = int(invs[g].Node[o.node])
			}
			k := slices.Index(obls, want)
			if k < 0 {
				return nil, fmt.Sprintf("liveness property %s is checked for node %d but not for node %d", c.Props[o.prop].Name, o.node, want.node)
			}
			cv.Obl[g][j] = k
		}
	}
	// Fairness classes renamed.
	l, sys := c.live, c.Sys
	P := sys.P
	cv.Class = make([][]int32, S)
	for g := range elems {
		m := make([]int32, len(l.classes))
		for i := range m {
			m[i] = -2
		}
		for ki := range sys.Kinds {
			for node := 0; node < P; node++ {
				for peer := 0; peer < P; peer++ {
					a := model.Action{Kind: uint8(ki), Node: model.NodeID(node), Peer: model.NodeID(peer)}
					from := l.classOf(sys, a)
					if from < 0 {
						continue
					}
					to := int32(l.classOf(sys, elems[g].Action(sys, a)))
					if to < 0 || m[from] != -2 && m[from] != to {
						return nil, fmt.Sprintf("fairness class %q is not renamed to one class by %s", l.classes[from].Name, elems[g])
					}
					m[from] = to
				}
			}
		}
		cv.Class[g] = m
	}
	cv.Act = func(code uint32, g int) uint32 {
		return elems[g].Action(sys, model.ActionFromCode(code)).Code()
	}
	return cv, ""
}

// compose returns the renaming a after b (first b, then a).
func compose(a, b *model.Perm) *model.Perm {
	p := &model.Perm{Node: make([]model.NodeID, len(b.Node))}
	for i, n := range b.Node {
		p.Node[i] = a.Node[n]
	}
	if b.Tree != nil && a.Tree != nil {
		p.Tree = make([]uint16, len(b.Tree))
		for t, u := range b.Tree {
			p.Tree[t] = a.Tree[u]
		}
	}
	return p
}
