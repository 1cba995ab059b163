package imc

import (
	"fmt"
	"strconv"
	"strings"

	"lfccheck/model"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/topology"
	"lfccheck/protocols/ucast"
)

// Params are I_mc's parameters.
type Params struct {
	// Window is W, the send window per destination (§8.2.2).
	Window int `json:"window"`
	// SeqMod is the sequence number space (0: Window+1).
	SeqMod int `json:"seq_mod,omitempty"`
	// RecvBuffers is the NI's receive buffers, shared by all senders; a
	// multicast packet holds its buffer until the host has copied it and
	// every child has acknowledged it (§8.3.2).
	RecvBuffers int `json:"recv_buffers"`
	// Tree is the tree family of the broadcast group of all nodes.
	Tree string `json:"tree,omitempty"`
	// Topology is an explicit topology instead (groups and trees, as
	// MCAST takes it).
	Topology *topology.TopologySpec `json:"topology,omitempty"`
	// Casts is the workload: [GROUP/]ROOT:COUNT, each root multicasting
	// on its tree (default 0:2).
	Casts []topology.Cast `json:"casts,omitempty"`

	topoNodes int // the node count a topology given by Set declares
}

// Defaults returns the default parameters.
func Defaults() *Params { return &Params{Window: 2, RecvBuffers: 2} }

// ParamSpecs declares the parameters.
func ParamSpecs() []model.ParamSpec {
	return []model.ParamSpec{
		{Key: "window", Doc: "send window per destination, W: packets sent to one child and not yet acknowledged (§8.2.2)", Default: "2"},
		{Key: "seq-mod", Doc: "sequence numbers on the wire are 0..seq-mod-1 and wrap (at least window+1)", Default: "window + 1"},
		{Key: "recv-buffers", Doc: "NI receive buffers shared by all senders; a multicast packet holds one until its host has copied it and every child has acknowledged it (§8.3.2)", Default: "2"},
		{Key: "tree", Doc: "tree family for the broadcast group of all nodes: binary, binomial, chain, star, kary:K", Default: "binary"},
		{Key: "topology", Doc: "topology file with groups and trees instead of --tree (see 'lfccheck help topology')", File: true},
		{Key: "cast", Doc: "multicast workload entry [GROUP/]ROOT:COUNT, repeatable (one cast per root: a root's packets are one stream)", Default: "0:2", Repeat: true},
	}
}

// Set applies one setting.
func (p *Params) Set(key, v string) error {
	var err error
	switch key {
	case "window":
		p.Window, err = ucast.IntIn(v, 1, 16)
	case "seq-mod":
		p.SeqMod, err = ucast.IntIn(v, 2, 64)
	case "recv-buffers":
		p.RecvBuffers, err = ucast.IntIn(v, 1, 16)
	case "tree":
		if err = topology.CheckFamily(v); err == nil {
			p.Tree = v
		}
	case "topology":
		return p.SetFile(key, "topology", []byte(strings.ReplaceAll(v, ";", "\n")))
	case "cast":
		var c topology.Cast
		if c, err = mcast.ParseCast(v); err == nil {
			p.Casts = append(p.Casts, c)
		}
	default:
		return fmt.Errorf("imc has no parameter %q", key)
	}
	return err
}

// Settings returns the non-default parameters.
func (p *Params) Settings() []model.Setting {
	var s []model.Setting
	d := Defaults()
	if p.Window != d.Window {
		s = append(s, model.Setting{Key: "window", Value: strconv.Itoa(p.Window)})
	}
	if p.SeqMod != 0 {
		s = append(s, model.Setting{Key: "seq-mod", Value: strconv.Itoa(p.SeqMod)})
	}
	if p.RecvBuffers != d.RecvBuffers {
		s = append(s, model.Setting{Key: "recv-buffers", Value: strconv.Itoa(p.RecvBuffers)})
	}
	if p.Tree != "" {
		s = append(s, model.Setting{Key: "tree", Value: p.Tree})
	}
	if p.Topology != nil {
		s = append(s, model.Setting{Key: "topology", Value: mcast.FormatTopology(p.Topology, p.specNodes())})
	}
	for _, c := range p.Casts {
		s = append(s, model.Setting{Key: "cast", Value: c.String()})
	}
	return s
}

// SetFile applies the contents of a topology file, naming the file in
// errors.
func (p *Params) SetFile(key, name string, data []byte) error {
	if key != "topology" {
		return fmt.Errorf("parameter %q takes no file", key)
	}
	spec, nodes, err := topology.ParseFile(name, data)
	if err != nil {
		return err
	}
	p.Topology, p.topoNodes = spec, nodes
	return nil
}

// specNodes is the node count of the explicit topology: declared, or one
// more than its largest member.
func (p *Params) specNodes() int {
	if p.topoNodes > 0 {
		return p.topoNodes
	}
	n := 0
	for _, g := range p.Topology.Groups {
		for _, m := range g.Members {
			n = max(n, m+1)
		}
	}
	return n
}

func (p *Params) tree() string {
	if p.Tree == "" && p.Topology == nil {
		return "binary"
	}
	return p.Tree
}

// topo builds the configuration's topology for nodes nodes.
func (p *Params) topo(nodes int) (*topology.Topology, error) {
	return topology.Resolve(p.tree(), p.Topology, nodes)
}

func (p *Params) casts() []topology.Cast {
	if len(p.Casts) == 0 {
		return []topology.Cast{{Root: 0, Count: 2}}
	}
	return p.Casts
}

func (p *Params) mod() int {
	if p.SeqMod == 0 {
		return p.Window + 1
	}
	return p.SeqMod
}

// Describe renders every parameter.
func (p *Params) Describe() string {
	var cs []string
	for _, c := range p.casts() {
		cs = append(cs, c.String())
	}
	trees := "tree=" + p.tree()
	if p.Topology != nil {
		trees = "topology=" + mcast.FormatTopology(p.Topology, p.specNodes())
	}
	return fmt.Sprintf("window=%d seq-mod=%d recv-buffers=%d %s casts=%s", p.Window, p.mod(), p.RecvBuffers, trees, strings.Join(cs, ","))
}

// Resolve validates; the default node count is 4 (the smallest binary
// tree in which a node forwards).
func (p *Params) Resolve(nodes int) (int, error) {
	if p.Topology != nil {
		if p.Tree != "" {
			return 0, fmt.Errorf("give a tree family or a topology, not both")
		}
		if nodes != 0 && nodes != p.specNodes() {
			return 0, fmt.Errorf("nodes %d disagrees with the topology, which has nodes %d", nodes, p.specNodes())
		}
		nodes = p.specNodes()
	}
	if nodes == 0 {
		nodes = 4
	}
	if p.SeqMod != 0 && p.SeqMod <= p.Window {
		return 0, fmt.Errorf("seq-mod %d must exceed the window %d: go-back-N cannot tell a retransmission from a new packet otherwise", p.SeqMod, p.Window)
	}
	topo, err := p.topo(nodes)
	if err != nil {
		return 0, err
	}
	seen := map[int]bool{}
	total := 0
	for _, c := range p.casts() {
		if _, err := topo.CastTree(c); err != nil {
			return 0, fmt.Errorf("cast %s: %v", c, err)
		}
		if seen[c.Root] {
			return 0, fmt.Errorf("cast %s: a second cast from root %d (give one cast per root)", c, c.Root)
		}
		seen[c.Root] = true
		total += c.Count
	}
	if total > maxPackets {
		return 0, fmt.Errorf("casts send %d packets: at most %d", total, maxPackets)
	}
	return nodes, nil
}

// Clone returns a deep copy.
func (p *Params) Clone() model.Params {
	c := *p
	c.Casts = append([]topology.Cast(nil), p.Casts...)
	if p.Topology != nil {
		t := *p.Topology
		t.Groups = append([]topology.GroupSpec(nil), t.Groups...)
		t.Trees = append([]topology.TreeSpec(nil), t.Trees...)
		c.Topology = &t
	}
	return &c
}
