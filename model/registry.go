package model

import (
	"fmt"
	"slices"
	"strings"
)

// Def defines a protocol: everything the generic packages need to check
// it, print it and run it. A protocol is a package that builds a Def; the
// protocols package registers every Def in a fixed order.
type Def struct {
	Name string
	Doc  string
	// Params declares the protocol's parameters; NewParams returns them
	// at their defaults.
	Params    []ParamSpec
	NewParams func() Params
	// Variants lists the correct protocol first, then broken variants that
	// tests and the suite use to show the checker catches each property.
	Variants []Variant
	// Properties are the protocol's properties, in checking order.
	Properties []Property
	// Renamed maps property names the protocol used before to the
	// property that checks them now, so that --property and old trace
	// files keep working.
	Renamed map[string]string
	// Acyclic declares that every run is finite, so the state graph has no
	// cycle; the checker uses ample-set reduction only when it is set.
	Acyclic bool
	// Stutter declares that a run may stop for ever in any state where
	// only actions without fairness are enabled (a host may compute for
	// ever without polling); without it, runs stop only where nothing is
	// enabled. Liveness checks treat such states as ends of fair runs.
	Stutter bool
	// New builds the machine for a resolved configuration.
	New func(cfg Config) (Machine, error)
	// Claims are the thesis claims the protocol reproduces, each with the
	// configuration that tests it and the verdict it should get.
	Claims []Claim
	// Static are claims checked by a static analysis instead of a search
	// (for example the buffer dependency graph of a protocol's trees); the
	// suite runs them next to the others.
	Static []StaticClaim
	// Stats are statistics the checker gathers during a search and the
	// CLI prints with its result (for example recoveries started, packets
	// on recovery channels, the largest recovery tree).
	Stats []Stat
	// Sweep is the default grid of 'lfccheck sweep' for the protocol:
	// parameters with comma-separated values, one series per combination.
	Sweep []Setting
}

// Variant is a named protocol variant. A broken variant names the
// property that must catch it and a configuration in which it does; the
// suite runs that configuration and 'lfccheck list' prints it as a
// command.
type Variant struct {
	Name    string
	Doc     string
	Catches string
	Example Config
	// Cyclic says the variant has infinite runs although the protocol is
	// declared Acyclic (a livelock variant): no reduction relies on
	// acyclicity for it.
	Cyclic bool
}

// Claim is one checked statement: a configuration and the verdict it must
// get ("pass", or "fail PROPERTY").
type Claim struct {
	Name   string // short label, unique within the protocol
	Config Config
	Expect string
	Ref    string // thesis reference, e.g. "Fig. 4.8"
	Doc    string // the claim in words
}

// StaticClaim is a claim decided without a search: Check returns the
// verdict (compared with Expect) and a size worth printing (for example
// the vertices of a graph).
type StaticClaim struct {
	Name   string
	Expect string
	Ref    string
	Doc    string
	Check  func() (verdict string, size int64, err error)
}

// AllClaims returns the protocol's claims followed by the claim of every
// broken variant's example (VariantClaim), in declaration order.
func (d *Def) AllClaims() []Claim {
	cs := append([]Claim(nil), d.Claims...)
	for _, v := range d.Variants {
		if v.Catches != "" {
			cs = append(cs, d.VariantClaim(v))
		}
	}
	return cs
}

// VariantClaim is the claim a broken variant's example makes: it fails
// with the property that catches it, checking that property alone.
func (d *Def) VariantClaim(v Variant) Claim {
	cfg := v.Example.Clone()
	cfg.Protocol, cfg.Variant = d.Name, v.Name
	cfg.Properties = []string{v.Catches}
	return Claim{Name: v.Name, Config: cfg, Expect: "fail " + v.Catches, Doc: "broken variant: " + v.Doc}
}

var registry []*Def

// Register adds a protocol definition. Registering a name twice panics.
func Register(d *Def) {
	for _, r := range registry {
		if r.Name == d.Name {
			panic("model: protocol " + d.Name + " registered twice")
		}
	}
	registry = append(registry, d)
}

// Registered lists the registered protocols in registration order.
func Registered() []*Def { return append([]*Def(nil), registry...) }

// Lookup finds a registered protocol by name.
func Lookup(name string) (*Def, error) {
	var names []string
	for _, d := range registry {
		if d.Name == name {
			return d, nil
		}
		names = append(names, d.Name)
	}
	return nil, fmt.Errorf("unknown protocol %q (known: %s)", name, strings.Join(names, ", "))
}

// Variant finds a variant by name.
func (d *Def) Variant(name string) (Variant, error) {
	var names []string
	for _, v := range d.Variants {
		if v.Name == name {
			return v, nil
		}
		names = append(names, v.Name)
	}
	return Variant{}, fmt.Errorf("unknown %s variant %q (known: %s)", d.Name, name, strings.Join(names, ", "))
}

// Param finds a declared parameter by key.
func (d *Def) Param(key string) *ParamSpec {
	for i := range d.Params {
		if d.Params[i].Key == key {
			return &d.Params[i]
		}
	}
	return nil
}

// ParamKeys lists the declared parameter keys, comma-separated.
func (d *Def) ParamKeys() string {
	var ks []string
	for _, p := range d.Params {
		ks = append(ks, p.Key)
	}
	return strings.Join(ks, ", ")
}

// Resolve checks cfg against the protocol and fills in its defaults: the
// variant, the parameters and the node count. It returns a copy; cfg is
// unchanged.
func (d *Def) Resolve(cfg Config) (Config, error) {
	c := cfg.Clone()
	if c.Variant == "" {
		c.Variant = d.Variants[0].Name
	}
	if _, err := d.Variant(c.Variant); err != nil {
		return c, err
	}
	if c.Params == nil {
		c.Params = d.NewParams()
	}
	if c.Nodes != 0 && (c.Nodes < 2 || c.Nodes > MaxNodes) {
		return c, fmt.Errorf("nodes must be in 2..%d, got %d", MaxNodes, c.Nodes)
	}
	n, err := c.Params.Resolve(c.Nodes)
	if err != nil {
		return c, err
	}
	if n < 2 || n > MaxNodes {
		return c, fmt.Errorf("nodes must be in 2..%d, got %d", MaxNodes, n)
	}
	c.Nodes = n
	if err := c.Faults.Check(n); err != nil {
		return c, err
	}
	return c, nil
}

// PropertyName is the name of the property that checks what name named:
// name itself, or the property it was renamed to (Def.Renamed).
func (d *Def) PropertyName(name string) string {
	if to, ok := d.Renamed[name]; ok {
		return to
	}
	return name
}

// PropertyNames maps names through PropertyName, dropping the repeats
// that renaming makes (two old names of one property).
func (d *Def) PropertyNames(names []string) []string {
	if len(d.Renamed) == 0 {
		return names
	}
	var out, renamed []string
	for _, n := range names {
		to := d.PropertyName(n)
		if to != n {
			renamed = append(renamed, to)
		}
		if slices.Contains(out, to) && (to != n || slices.Contains(renamed, to)) {
			continue
		}
		out = append(out, to)
	}
	return out
}
