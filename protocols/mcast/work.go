package mcast

import (
	"fmt"
	"strconv"
	"strings"

	"lfccheck/model"
	"lfccheck/protocols/topology"
	"lfccheck/protocols/ucast"
)

// Work is one node's explicit workload: the packets its host launches, in
// order. It is what a live run records (package lfc writes its clients'
// sends as Work so that the run replays through the model), and what
// --work gives on the command line.
type Work struct {
	Node  int         `json:"node"`
	Items []WorkEntry `json:"items"`
}

// WorkEntry is Count launches of one kind: unicast packets to Dest, or,
// with Multicast set, multicasts on the node's tree of Group ("": the
// first group the node belongs to), or, with FetchAdd set, fetch-and-add
// requests to the server's variable (the process waits for each value).
type WorkEntry struct {
	FetchAdd  bool   `json:"fetch_add,omitempty"`
	Multicast bool   `json:"multicast,omitempty"`
	Dest      int    `json:"dest,omitempty"`
	Group     string `json:"group,omitempty"`
	Count     int    `json:"count"`
}

// String renders an entry as DEST, * or *GROUP, or +, with xCOUNT when
// Count is not 1.
func (e WorkEntry) String() string {
	s := strconv.Itoa(e.Dest)
	switch {
	case e.FetchAdd:
		s = "+"
	case e.Multicast:
		s = "*" + e.Group
	}
	// A group name ending in x and digits would read as a count: the
	// count is then written even when it is 1.
	if _, ok := countAt(s); e.Count != 1 || ok {
		s += "x" + strconv.Itoa(e.Count)
	}
	return s
}

// countAt returns where the xCOUNT suffix of a work entry starts, if it
// has one: an x after the first byte followed by nothing but digits.
func countAt(item string) (int, bool) {
	i := strings.LastIndex(item, "x")
	return i, i > 0 && i+1 < len(item) && strings.Trim(item[i+1:], "0123456789") == ""
}

// String renders a node's workload as NODE:ENTRY,ENTRY,..., the form
// --work takes.
func (w Work) String() string { return strconv.Itoa(w.Node) + ":" + ucast.Join(w.Items) }

// ParseWork reads NODE:ENTRY[,ENTRY...], where an entry is DEST (a unicast
// packet to node DEST), * (a multicast on the node's tree of its first
// group), *GROUP, or + (a fetch-and-add request to the server's variable),
// optionally followed by xCOUNT.
func ParseWork(s string) (Work, error) {
	node, rest, ok := strings.Cut(s, ":")
	n, err := model.ParseDecimal(node)
	if !ok || err != nil || rest == "" {
		return Work{}, fmt.Errorf("work %q: want NODE:ENTRY[,ENTRY...] with ENTRY one of DEST, *, *GROUP or +, optionally xCOUNT", s)
	}
	if n < 0 || n >= model.MaxNodes {
		return Work{}, fmt.Errorf("work %q: node %d out of range", s, n)
	}
	w := Work{Node: n}
	for _, item := range strings.Split(rest, ",") {
		var e WorkEntry
		body, count, hasCount := item, "", false
		if i, ok := countAt(item); ok {
			body, count, hasCount = item[:i], item[i+1:], true
		}
		e.Count = 1
		if hasCount {
			if e.Count, err = model.ParseDecimal(count); err != nil || e.Count < 1 || e.Count > ucast.MaxWorkPerHost {
				return Work{}, fmt.Errorf("work %q: entry %q: count must be a number in 1..%d", s, item, ucast.MaxWorkPerHost)
			}
		}
		switch {
		case body == "+":
			e.FetchAdd = true
		case strings.HasPrefix(body, "*"):
			e.Multicast, e.Group = true, body[1:]
			if strings.ContainsAny(e.Group, " \t;:,*") {
				return Work{}, fmt.Errorf("work %q: entry %q: bad group name", s, item)
			}
		default:
			if e.Dest, err = model.ParseDecimal(body); err != nil {
				return Work{}, fmt.Errorf("work %q: entry %q: want DEST, *, *GROUP or +", s, item)
			}
			if e.Dest < 0 || e.Dest >= model.MaxNodes {
				return Work{}, fmt.Errorf("work %q: entry %q: destination %d out of range", s, item, e.Dest)
			}
		}
		w.Items = append(w.Items, e)
	}
	return w, nil
}

// explicitWork builds the workload of p.Work on topo: every node's entries
// in order, unicast packets numbered per ordered pair and multicasts per
// tree.
func explicitWork(p *Params, topo *topology.Topology, nodes int) ([][]ucast.WorkItem, error) {
	work := make([][]ucast.WorkItem, nodes)
	useq := make([]int, nodes*nodes)
	tseq := make([]int, len(topo.Trees))
	fseq := make([]int, nodes)
	for i, w := range p.Work {
		if w.Node >= nodes {
			return nil, fmt.Errorf("work %d (%s): node %d out of range 0..%d", i+1, w, w.Node, nodes-1)
		}
		for _, e := range w.Items {
			var it ucast.WorkItem
			var seq *int // the entry's stream
			switch {
			case e.FetchAdd:
				it, seq = ucast.WorkItem{Tag: ucast.TagFARequest}, &fseq[w.Node]
			case e.Multicast:
				t, err := topo.CastTree(topology.Cast{Group: e.Group, Root: w.Node, Count: e.Count})
				if err != nil {
					return nil, fmt.Errorf("work %d (%s): entry %s: %v", i+1, w, e, err)
				}
				it, seq = ucast.WorkItem{Tag: TagMulticast, Tree: uint16(t)}, &tseq[t]
			case e.Dest >= nodes || e.Dest == w.Node:
				return nil, fmt.Errorf("work %d (%s): entry %s: destination must be another node in 0..%d", i+1, w, e, nodes-1)
			default:
				it, seq = ucast.WorkItem{Tag: ucast.TagUnicast, Dest: model.NodeID(e.Dest)}, &useq[w.Node*nodes+e.Dest]
			}
			for k := 0; k < e.Count; k++ {
				*seq++
				if *seq > model.MaxStreamSeq {
					return nil, fmt.Errorf("work %d (%s): more than %d packets in one stream (entry %s)", i+1, w, model.MaxStreamSeq, e)
				}
				it.Seq = uint16(*seq)
				work[w.Node] = append(work[w.Node], it)
			}
		}
	}
	return work, ucast.CheckWork(work)
}
