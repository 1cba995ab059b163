// Package protocols is the registry of the protocols lfccheck implements:
// their names, variants and properties, and how to compose one with a
// configuration into a checkable system. The protocols themselves live in
// the subpackages.
package protocols

import (
	"fmt"
	"strings"

	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols/ucast"
)

// Info describes a protocol.
type Info struct {
	Name       string
	Doc        string
	Variants   []model.VariantInfo
	Properties []properties.Property
	New        func(cfg model.Config) (model.Protocol, error)
}

// All lists the protocols in a fixed order.
func All() []Info {
	return []Info{
		{
			Name:       "ucast",
			Doc:        "credit-based reliable FIFO unicast between NIs (thesis §4.1)",
			Variants:   ucast.Variants(),
			Properties: ucast.Properties(),
			New:        func(cfg model.Config) (model.Protocol, error) { return ucast.New(cfg) },
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
	proto, err := info.New(cfg)
	if err != nil {
		return nil, err
	}
	sys, err := model.NewSystem(cfg, proto)
	if err != nil {
		return nil, err
	}
	return properties.NewChecker(sys, props), nil
}
