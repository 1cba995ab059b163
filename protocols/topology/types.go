package topology

import (
	"fmt"

	"lfccheck/model"
)

// Group is a multicast group: a fixed set of members (thesis §3.1.3, §4.2.3).
type Group struct {
	Name    string
	Members []model.NodeID // sorted
}

// Parent values of a Tree for nodes without a parent.
const (
	IsRoot    = -1
	NotMember = -2
)

// Tree is one member's spanning tree over its group: the forwarding table
// entries (treetab, Fig. 4.5) of every NI for this tree.
type Tree struct {
	Group    int
	Root     model.NodeID
	Parent   []int            // per node: parent id, IsRoot or NotMember
	Children [][]model.NodeID // per node: children in forwarding order
}

// Topology is the static multicast configuration: groups and their trees.
type Topology struct {
	Groups []Group
	Trees  []Tree
}

// TreeOf returns the id of the tree rooted at root in group g, or -1.
func (t *Topology) TreeOf(g int, root model.NodeID) int {
	for i := range t.Trees {
		if t.Trees[i].Group == g && t.Trees[i].Root == root {
			return i
		}
	}
	return -1
}

// GroupSpec is a group in a configuration's explicit topology.
type GroupSpec struct {
	Name    string `json:"name"`
	Members []int  `json:"members"`
}

// TreeSpec is one tree of an explicit topology: a built-in family name or
// explicit parent->child edges (as [parent, child] pairs, in forwarding
// order). Root -1 with a family stands for every member of the group that
// has no tree of its own (the "*" of topology files).
type TreeSpec struct {
	Group  string   `json:"group"`
	Root   int      `json:"root"`
	Family string   `json:"family,omitempty"`
	Edges  [][2]int `json:"edges,omitempty"`
}

// TopologySpec is an explicit topology as written in a configuration (and
// so in every trace, which therefore needs no topology file to replay).
type TopologySpec struct {
	Groups []GroupSpec `json:"groups"`
	Trees  []TreeSpec  `json:"trees"`
}

// Cast is one entry of a multicast workload: Root multicasts Count packets
// on its tree in Group (by name; empty means the first group containing
// Root).
type Cast struct {
	Group string `json:"group,omitempty"`
	Root  int    `json:"root"`
	Count int    `json:"count"`
}

// String renders a cast as [GROUP/]ROOT:COUNT, the form --cast takes.
func (c Cast) String() string {
	g := ""
	if c.Group != "" {
		g = c.Group + "/"
	}
	return fmt.Sprintf("%s%d:%d", g, c.Root, c.Count)
}

// CastTree finds the tree a cast multicasts on.
func (t *Topology) CastTree(c Cast) (int, error) {
	if c.Count < 1 {
		return 0, fmt.Errorf("count must be at least 1")
	}
	for g := range t.Groups {
		if c.Group != "" && t.Groups[g].Name != c.Group {
			continue
		}
		if c.Root < 0 || c.Root >= model.MaxNodes {
			break
		}
		if id := t.TreeOf(g, model.NodeID(c.Root)); id >= 0 {
			return id, nil
		}
		if c.Group != "" {
			return 0, fmt.Errorf("node %d is not a member of group %q", c.Root, c.Group)
		}
	}
	if c.Group != "" {
		return 0, fmt.Errorf("no group %q", c.Group)
	}
	return 0, fmt.Errorf("node %d is not a member of any group", c.Root)
}
