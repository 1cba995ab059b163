// Package protocols is the registry of the protocols lfccheck implements:
// their names, variants and properties, and how to compose one with a
// configuration into a checkable system. The protocols themselves live in
// the subpackages.
package protocols

import (
	"fmt"
	"strings"

	"lfccheck/model"
	"lfccheck/model/topology"
	"lfccheck/properties"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/ucast"
)

// Info describes a protocol.
type Info struct {
	Name       string
	Doc        string
	Variants   []model.VariantInfo
	Properties []properties.Property
	// Multicast protocols get a topology (groups and trees).
	Multicast bool
	New       func(cfg model.Config, topo *model.Topology) (model.Protocol, error)
}

// All lists the protocols in a fixed order.
func All() []Info {
	return []Info{
		{
			Name:       "ucast",
			Doc:        "credit-based reliable FIFO unicast between NIs (thesis §4.1)",
			Variants:   ucast.Variants(),
			Properties: ucast.Properties(),
			New:        func(cfg model.Config, _ *model.Topology) (model.Protocol, error) { return ucast.New(cfg) },
		},
		{
			Name:       "mcast",
			Doc:        "NI-level spanning-tree multicast on UCAST's credits (thesis §4.2)",
			Variants:   mcast.Variants(),
			Properties: mcast.Properties(),
			Multicast:  true,
			New:        func(cfg model.Config, topo *model.Topology) (model.Protocol, error) { return mcast.New(cfg, topo) },
		},
	}
}

// Lookup finds a protocol by name.
func Lookup(name string) (Info, error) {
	var names []string
	for _, p := range All() {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Info{}, fmt.Errorf("unknown protocol %q (known: %s)", name, strings.Join(names, ", "))
}

// Variant finds a variant of the protocol by name.
func (p Info) Variant(name string) (model.VariantInfo, error) {
	var names []string
	for _, v := range p.Variants {
		if v.Name == name {
			return v, nil
		}
		names = append(names, v.Name)
	}
	return model.VariantInfo{}, fmt.Errorf("unknown %s variant %q (known: %s)", p.Name, name, strings.Join(names, ", "))
}

// Build normalizes and validates cfg and composes the protocol it names
// with it, bound to the selected properties (all of the protocol's when
// cfg.Properties is empty). The returned config is the normalized one.
func Build(cfg model.Config) (*properties.Checker, error) {
	info, err := Lookup(cfg.Protocol)
	if err != nil {
		return nil, err
	}
	cfg.Normalize()
	if _, err := info.Variant(cfg.Variant); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	props, err := properties.Select(info.Properties, cfg.Properties)
	if err != nil {
		return nil, err
	}
	var topo *model.Topology
	if info.Multicast {
		if topo, err = topology.Resolve(cfg); err != nil {
			return nil, err
		}
	} else if cfg.Tree != "" || cfg.Topology != nil || len(cfg.Casts) > 0 {
		return nil, fmt.Errorf("protocol %s has no multicast: trees, topologies and casts need --protocol mcast", cfg.Protocol)
	}
	proto, err := info.New(cfg, topo)
	if err != nil {
		return nil, err
	}
	sys, err := model.NewSystem(cfg, proto, topo)
	if err != nil {
		return nil, err
	}
	return properties.NewChecker(sys, props), nil
}
