package intr

import (
	"fmt"

	"lfccheck/model"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/topology"
	"lfccheck/protocols/ucast"
)

// Params are INTR's parameters: UCAST's (without the host library), the
// multicast traffic that runs INTR under MCAST (Tree, Casts), and Panda,
// which puts Panda and its thread scheduler on every host (§6.2.1,
// §6.2.2).
type Params struct {
	ucast.Params
	Tree  string          `json:"tree,omitempty"`
	Casts []topology.Cast `json:"casts,omitempty"`
	Panda bool            `json:"panda,omitempty"`
}

// Defaults returns INTR's default parameters.
func Defaults() *Params { return &Params{Params: *ucast.Defaults()} }

// ParamSpecs declares INTR's parameters.
func ParamSpecs() []model.ParamSpec {
	specs := ucast.WithoutHostLibrary(ucast.ParamSpecs())
	for _, s := range mcast.ParamSpecs() {
		switch s.Key {
		case "tree":
			s.Doc = "with cast: tree family for the broadcast group: binary, binomial, chain, star, kary:K"
			// Without a cast there is no tree to give: an error, so the
			// default is described, not a value.
			s.Default = "binary (with --cast)"
			specs = append(specs, s)
		case "cast":
			s.Doc = "multicast traffic beside the flows, [GROUP/]ROOT:COUNT, repeatable: INTR under MCAST (Fig. 4.7 counts multicast packets)"
			specs = append(specs, s)
		}
	}
	return append(specs, model.ParamSpec{Key: "panda", Default: "off",
		Doc: "on: every host runs Panda over OpenThreads: its lock around LFC calls and signal handling (§6.2.1), interrupts while a thread runs and polling when all are blocked (§6.2.2)"})
}

// Set applies one setting.
func (p *Params) Set(key, v string) error {
	switch key {
	case "tree":
		if err := topology.CheckFamily(v); err != nil {
			return err
		}
		p.Tree = v
	case "cast":
		c, err := mcast.ParseCast(v)
		if err != nil {
			return err
		}
		if c.Group != "" {
			return fmt.Errorf("cast %q: INTR has only the broadcast group of its tree", v)
		}
		p.Casts = append(p.Casts, c)
	case "panda":
		on, err := ucast.OnOff(v)
		if err != nil {
			return err
		}
		p.Panda = on
	default:
		return p.Params.Set(key, v)
	}
	return nil
}

// Settings returns the non-default parameters.
func (p *Params) Settings() []model.Setting {
	s := p.Params.Settings()
	if p.Tree != "" {
		s = append(s, model.Setting{Key: "tree", Value: p.Tree})
	}
	for _, c := range p.Casts {
		s = append(s, model.Setting{Key: "cast", Value: c.String()})
	}
	if p.Panda {
		s = append(s, model.Setting{Key: "panda", Value: "on"})
	}
	return s
}

// Describe renders every parameter.
func (p *Params) Describe() string {
	if len(p.Casts) == 0 && !p.Panda {
		return p.Params.Describe()
	}
	s := fmt.Sprintf("credits=%d", p.Credits)
	if len(p.Flows) > 0 {
		s += " flows=" + ucast.Join(p.Flows)
	} else if len(p.Casts) == 0 {
		s += fmt.Sprintf(" packets=%d", p.Packets)
	}
	if len(p.Casts) > 0 {
		tree := p.Tree
		if tree == "" {
			tree = "binary"
		}
		s += " tree=" + tree + " casts=" + ucast.Join(p.Casts)
	}
	if p.Panda {
		s += " panda=on"
	}
	return s + " " + p.DescribeBuffers()
}

// Resolve fills in defaults and validates. Without casts it is UCAST's;
// with casts the flows are the only unicast traffic (packets is refused).
func (p *Params) Resolve(nodes int) (int, error) {
	if len(p.Casts) == 0 {
		if p.Tree != "" {
			return 0, fmt.Errorf("tree is set but no cast is given: INTR multicasts only with cast")
		}
		return p.Params.Resolve(nodes)
	}
	if p.PacketsGiven() {
		return 0, fmt.Errorf("give packets or casts, not both: with casts the unicast traffic is the flows")
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
	return &c
}

// multicast returns MCAST's parameters for p's traffic.
func (p *Params) multicast() *mcast.Params {
	mp := mcast.Defaults()
	mp.Params = *p.Params.CloneParams()
	mp.Tree = p.Tree
	mp.Casts = append([]topology.Cast(nil), p.Casts...)
	return mp
}
