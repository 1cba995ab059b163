package imc

import (
	"fmt"
	"strings"

	"lfccheck/model"
	"lfccheck/protocols/irx"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/topology"
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
	// Timer is when H_mc's retransmission timer may expire (the host
	// level only), as H_rx's (irx.Params.Timer).
	Timer string `json:"timer,omitempty"`

	topoNodes int    // the node count a topology given by Set declares
	proto     string // the protocol's name in messages ("" is imc)
}

// Defaults returns the default parameters.
func Defaults() *Params { return &Params{Window: 2, RecvBuffers: 2} }

// DefaultsFor returns the default parameters of the protocol named
// proto that runs on this package's machine (hmc), for its messages.
func DefaultsFor(proto string) *Params {
	p := Defaults()
	if proto != "imc" {
		p.proto = proto
	}
	return p
}

func (p *Params) name() string {
	if p.proto == "" {
		return "imc"
	}
	return p.proto
}

// gbn is the go-back-N parameters in p (the timer's only for hmc).
func (p *Params) gbn() irx.GBNParams {
	g := irx.GBNParams{Window: &p.Window, SeqMod: &p.SeqMod, RecvBuffers: &p.RecvBuffers}
	if p.proto == "hmc" {
		g.Timer = &p.Timer
	}
	return g
}

// ParamSpecs declares the parameters.
func ParamSpecs() []model.ParamSpec { return ParamSpecsAt(irx.NI) }

// ParamSpecsAt declares the parameters of the protocol at level lvl.
func ParamSpecsAt(lvl irx.Level) []model.ParamSpec {
	buffers := "NI receive buffers shared by all senders; a multicast packet holds one until its host has copied it and every child has acknowledged it (§8.3.2)"
	if lvl == irx.Host {
		buffers = "receive buffers shared by all senders: every packet that arrives (data or acknowledgement, new or duplicate) holds one until the host has handled it (delivered it and queued it for the children) (§8.2.2, §8.3.1)"
	}
	specs := append(irx.GBNSpecs("send window per destination, W: packets sent to one child and not yet acknowledged (§8.2.2)", buffers, "2"), []model.ParamSpec{
		{Key: "tree", Doc: "tree family for the broadcast group of all nodes: binary, binomial, chain, star, kary:K", Default: "binary"},
		{Key: "topology", Doc: "topology file with groups and trees instead of --tree (see 'lfccheck help topology')", File: true},
		{Key: "cast", Doc: "multicast workload entry [GROUP/]ROOT:COUNT, repeatable (one cast per root: a root's packets are one stream)", Default: "0:2", Repeat: true},
	}...)
	if lvl == irx.Host {
		specs = append(specs, irx.TimerSpec)
	}
	return specs
}

// Set applies one setting.
func (p *Params) Set(key, v string) error {
	if ok, err := p.gbn().Set(key, v); ok {
		return err
	}
	var err error
	switch key {
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
		return fmt.Errorf("%s has no parameter %q", p.name(), key)
	}
	return err
}

// Settings returns the non-default parameters.
func (p *Params) Settings() []model.Setting {
	d := Defaults()
	s := p.gbn().Settings(d.Window, d.RecvBuffers)
	if p.Tree != "" {
		s = append(s, model.Setting{Key: "tree", Value: p.Tree})
	}
	if p.Topology != nil {
		s = append(s, model.Setting{Key: "topology", Value: mcast.FormatTopology(p.Topology, p.specNodes())})
	}
	for _, c := range p.Casts {
		s = append(s, model.Setting{Key: "cast", Value: c.String()})
	}
	return p.gbn().AppendTimer(s)
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

func (p *Params) mod() int { return p.gbn().Mod() }

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
	return fmt.Sprintf("window=%d seq-mod=%d recv-buffers=%d %s casts=%s", p.Window, p.mod(), p.RecvBuffers, trees, strings.Join(cs, ",")) + p.gbn().TimerText()
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
	if err := p.gbn().Check(); err != nil {
		return 0, err
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
