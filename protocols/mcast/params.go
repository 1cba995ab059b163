package mcast

import (
	"fmt"
	"strconv"
	"strings"

	"lfccheck/model"
	"lfccheck/protocols/topology"
	"lfccheck/protocols/ucast"
)

// Params are MCAST's parameters: UCAST's plus the topology and the
// multicast workload.
type Params struct {
	ucast.Params
	// Tree is a built-in tree family for the broadcast group of all nodes
	// ("" means binary); Topology an explicit topology instead.
	Tree     string                 `json:"tree,omitempty"`
	Topology *topology.TopologySpec `json:"topology,omitempty"`
	Casts    []topology.Cast        `json:"casts,omitempty"`
	// Work, when given, is the whole workload, node by node (it replaces
	// packets, casts and flows).
	Work []Work `json:"work,omitempty"`
	// Keep lets every host keep up to Keep packets after their upcall and
	// free them later (0: every packet is freed when its upcall returns).
	Keep int `json:"keep,omitempty"`
	// Server is the NI whose fetch-and-add variable the work's + entries
	// increment.
	Server int `json:"server,omitempty"`
	// Library is set by the in-process library (package lfc), not by
	// users: programs drive the hosts' processing ("host H process" is a
	// client action of the live runtime), and under MCAST fetch-and-add is
	// offered even before a program posts a request. The model is the same.
	Library bool `json:"-"`

	topoNodes int // the node count a topology given by Set declares
}

// Defaults returns MCAST's default parameters.
func Defaults() *Params { return &Params{Params: *ucast.Defaults()} }

// ParamSpecs declares MCAST's parameters.
func ParamSpecs() []model.ParamSpec {
	specs := ucast.ParamSpecs()
	for i := range specs {
		if specs[i].Key == "flow" {
			specs[i].Doc = "unicast workload entry SRC:DST:COUNT, repeatable (added to the multicasts)"
		}
	}
	return append(specs,
		model.ParamSpec{Key: "tree", Doc: "tree family for the broadcast group: binary, binomial, chain, star, kary:K", Default: "binary"},
		model.ParamSpec{Key: "topology", Doc: "topology file with groups and trees (see 'lfccheck help topology')", File: true},
		model.ParamSpec{Key: "cast", Doc: "explicit multicast workload entry [GROUP/]ROOT:COUNT, repeatable (replaces --packets)", Repeat: true},
		model.ParamSpec{Key: "keep", Doc: "packets a host may keep after their upcall and free later (lfc_packet_free), at most this many at once; the search explores every choice to keep or free (0: each packet is freed when its upcall returns)", Default: "0"},
		model.ParamSpec{Key: "server", Doc: "the NI whose fetch-and-add variable the + entries of work increment", Default: "0"},
		model.ParamSpec{Key: "work", Doc: "one node's whole workload in launch order, NODE:ENTRY[,ENTRY...] with ENTRY = DEST (unicast), * or *GROUP (multicast), each optionally xCOUNT; repeatable (replaces packets, casts and flows)", Repeat: true},
	)
}

// ParseCast reads [GROUP/]ROOT:COUNT.
func ParseCast(s string) (topology.Cast, error) {
	var c topology.Cast
	rest := s
	if g, r, ok := strings.Cut(s, "/"); ok {
		c.Group, rest = g, r
	}
	root, count, ok := strings.Cut(rest, ":")
	r, err1 := model.ParseDecimal(root)
	n, err2 := model.ParseDecimal(count)
	if !ok || err1 != nil || err2 != nil || strings.Contains(s, "/") && c.Group == "" || strings.Contains(rest, "/") {
		return c, fmt.Errorf("cast %q: want [GROUP/]ROOT:COUNT", s)
	}
	if r < 0 || r >= model.MaxNodes {
		return c, fmt.Errorf("cast %q: root %d out of range", s, r)
	}
	if n < 1 || n > model.MaxStreamSeq {
		return c, fmt.Errorf("cast %q: count must be in 1..%d", s, model.MaxStreamSeq)
	}
	c.Root, c.Count = r, n
	return c, nil
}

// Set applies one setting. A topology's value is the text of a topology
// file; ';' may stand for a line break.
func (p *Params) Set(key, v string) error {
	switch key {
	case "tree":
		if err := topology.CheckFamily(v); err != nil {
			return err
		}
		p.Tree = v
	case "topology":
		spec, nodes, err := topology.ParseFile("topology", []byte(strings.ReplaceAll(v, ";", "\n")))
		if err != nil {
			return err
		}
		p.Topology, p.topoNodes = spec, nodes
	case "cast":
		c, err := ParseCast(v)
		if err != nil {
			return err
		}
		p.Casts = append(p.Casts, c)
	case "keep":
		n, err := ucast.IntIn(v, 0, ucast.MaxBuffers)
		if err != nil {
			return err
		}
		p.Keep = n
	case "server":
		n, err := ucast.IntIn(v, 0, model.MaxNodes-1)
		if err != nil {
			return err
		}
		p.Server = n
	case "work":
		w, err := ParseWork(v)
		if err != nil {
			return err
		}
		p.Work = append(p.Work, w)
	default:
		return p.Params.Set(key, v)
	}
	return nil
}

// SetTopologyFile applies a topology file's contents, naming the file in
// errors.
func (p *Params) SetTopologyFile(name string, data []byte) error {
	spec, nodes, err := topology.ParseFile(name, data)
	if err != nil {
		return err
	}
	p.Topology, p.topoNodes = spec, nodes
	return nil
}

// Settings returns the non-default parameters.
func (p *Params) Settings() []model.Setting {
	s := p.Params.Settings()
	if len(p.Casts) > 0 || len(p.Work) > 0 {
		// Casts and work replace the default multicasts: packets is unused.
		for i := 0; i < len(s); i++ {
			if s[i].Key == "packets" {
				s = append(s[:i], s[i+1:]...)
			}
		}
	}
	if p.Tree != "" {
		s = append(s, model.Setting{Key: "tree", Value: p.Tree})
	}
	if p.Topology != nil {
		s = append(s, model.Setting{Key: "topology", Value: FormatTopology(p.Topology, p.nodes())})
	}
	for _, c := range p.Casts {
		s = append(s, model.Setting{Key: "cast", Value: c.String()})
	}
	for _, w := range p.Work {
		s = append(s, model.Setting{Key: "work", Value: w.String()})
	}
	if p.Keep != 0 {
		s = append(s, model.Setting{Key: "keep", Value: strconv.Itoa(p.Keep)})
	}
	if p.Server != 0 {
		s = append(s, model.Setting{Key: "server", Value: strconv.Itoa(p.Server)})
	}
	return s
}

func (p *Params) nodes() int {
	if p.topoNodes > 0 {
		return p.topoNodes
	}
	n := 0
	for _, g := range p.Topology.Groups {
		for _, m := range g.Members {
			if m+1 > n {
				n = m + 1
			}
		}
	}
	return n
}

// FormatTopology renders a topology spec as topology-file statements
// separated by "; ", the inline form Set accepts.
func FormatTopology(spec *topology.TopologySpec, nodes int) string {
	st := []string{fmt.Sprintf("nodes %d", nodes)}
	for _, g := range spec.Groups {
		ms := make([]string, len(g.Members))
		for i, m := range g.Members {
			ms[i] = strconv.Itoa(m)
		}
		st = append(st, "group "+g.Name+" "+strings.Join(ms, " "))
	}
	for _, t := range spec.Trees {
		root := "*"
		if t.Root >= 0 {
			root = strconv.Itoa(t.Root)
		}
		line := "tree " + t.Group + " " + root
		if t.Family != "" {
			line += " " + t.Family
		}
		for _, e := range t.Edges {
			line += fmt.Sprintf(" %d->%d", e[0], e[1])
		}
		st = append(st, line)
	}
	return strings.Join(st, "; ")
}

// Describe renders every parameter.
func (p *Params) Describe() string {
	s := fmt.Sprintf("credits=%d", p.Credits)
	if len(p.Casts) == 0 && len(p.Work) == 0 {
		s += fmt.Sprintf(" packets=%d", p.Packets)
	}
	if len(p.Flows) > 0 {
		s += " flows=" + ucast.Join(p.Flows)
	}
	switch {
	case p.Topology != nil:
		s += fmt.Sprintf(" topology=%d groups", len(p.Topology.Groups))
	case p.Tree != "":
		s += " tree=" + p.Tree
	}
	if len(p.Casts) > 0 {
		s += " casts=" + ucast.Join(p.Casts)
	}
	if len(p.Work) > 0 {
		s += fmt.Sprintf(" work=%d nodes", len(p.Work))
	}
	if p.Keep > 0 {
		s += fmt.Sprintf(" keep=%d", p.Keep)
	}
	if p.Server != 0 {
		s += fmt.Sprintf(" server=%d", p.Server)
	}
	return s + " " + p.DescribeBuffers()
}

// Resolve fills in defaults and validates. The node count defaults to the
// topology's, else 3.
func (p *Params) Resolve(nodes int) (int, error) {
	nodes, err := p.ResolveBase(nodes)
	if err != nil {
		return 0, err
	}
	if p.PacketsGiven() && len(p.Casts) > 0 {
		return 0, fmt.Errorf("give packets or casts, not both: casts replace the default multicasts of packets")
	}
	fa := false
	seen := map[int]bool{}
	for i, w := range p.Work {
		if seen[w.Node] {
			return 0, fmt.Errorf("work %d (%s): node %d's workload is given twice", i+1, w, w.Node)
		}
		seen[w.Node] = true
		for _, e := range w.Items {
			fa = fa || e.FetchAdd
		}
	}
	if p.Server != 0 && !fa && !p.Library {
		return 0, fmt.Errorf("server is set but no work entry is a fetch-and-add request (+)")
	}
	if p.Server >= nodes {
		return 0, fmt.Errorf("server %d out of range 0..%d", p.Server, nodes-1)
	}
	if len(p.Work) > 0 {
		if p.PacketsGiven() || len(p.Casts) > 0 || len(p.Flows) > 0 {
			return 0, fmt.Errorf("give work alone: it is the whole workload and replaces packets, casts and flows")
		}
		return nodes, nil
	}
	if len(p.Casts) == 0 && len(p.Flows) == 0 && p.Packets == 0 {
		return 0, fmt.Errorf("packets is 0 and no cast or flow is given: nothing to send")
	}
	return nodes, nil
}

// ResolveBase is Resolve without the checks of the multicast workload
// (for protocols that give packets and casts other meanings): topology and
// node count, refresh, sizes and flows.
func (p *Params) ResolveBase(nodes int) (int, error) {
	if p.Keep < 0 || p.Keep > ucast.MaxBuffers {
		return 0, fmt.Errorf("keep must be in 0..%d, got %d", ucast.MaxBuffers, p.Keep)
	}
	if p.Server < 0 || p.Server >= model.MaxNodes {
		return 0, fmt.Errorf("server %d out of range", p.Server)
	}
	if p.Topology != nil && p.Tree != "" {
		return 0, fmt.Errorf("give a tree family or a topology, not both")
	}
	if p.Topology != nil && p.topoNodes > 0 {
		if nodes != 0 && nodes != p.topoNodes {
			return 0, fmt.Errorf("nodes %d disagrees with the topology, which has nodes %d", nodes, p.topoNodes)
		}
		nodes = p.topoNodes
	}
	if nodes == 0 {
		nodes = 3
	}
	if p.Refresh == 0 {
		p.Refresh = ucast.DefaultRefresh(p.Credits)
	}
	if err := p.Params.Validate(nodes); err != nil {
		return 0, err
	}
	return nodes, nil
}

// Clone returns a deep copy.
func (p *Params) Clone() model.Params {
	c := *p
	c.Params = *p.Params.CloneParams()
	c.Casts = append([]topology.Cast(nil), p.Casts...)
	c.Work = nil
	for _, w := range p.Work {
		c.Work = append(c.Work, Work{Node: w.Node, Items: append([]WorkEntry(nil), w.Items...)})
	}
	if p.Topology != nil {
		t := *p.Topology
		t.Groups = append([]topology.GroupSpec(nil), t.Groups...)
		t.Trees = append([]topology.TreeSpec(nil), t.Trees...)
		c.Topology = &t
	}
	return &c
}

// SetFile applies the contents of a file given for a parameter (the
// topology), naming the file in errors.
func (p *Params) SetFile(key, name string, data []byte) error {
	if key != "topology" {
		return fmt.Errorf("parameter %q takes no file", key)
	}
	return p.SetTopologyFile(name, data)
}
