package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Config is one run's configuration: the parameters every protocol has
// (which protocol and variant, how many nodes, which properties) plus the
// protocol's own parameters. Its JSON form is part of the trace and result
// formats: the protocol's parameters appear as fields of the same object.
type Config struct {
	Protocol string
	Variant  string
	// Nodes is P. Zero means "not given": the protocol picks its default
	// or the value its parameters imply (a topology's node count).
	Nodes      int
	Properties []string
	// Params are the protocol's parameters; nil means its defaults.
	Params Params
	// Faults are the link faults a run may suffer (nil: reliable links,
	// the default); see Faults.
	Faults Faults
}

// Params are a protocol's own parameters. Every protocol declares them
// (Def.Params) and implements this interface on its parameter struct, whose
// JSON fields join the configuration's JSON object.
type Params interface {
	// Set applies one key=value setting as given on a command line or in a
	// scenario; a repeatable key appends. It rejects malformed and
	// out-of-range values: a zero never silently becomes a default.
	Set(key, value string) error
	// Settings returns the canonical key=value form of the parameters, in
	// declaration order, omitting those at their defaults. Applying them
	// with Set to fresh defaults gives back the same parameters.
	Settings() []Setting
	// Describe renders every parameter, defaults filled in, on one line for
	// people ("credits=1 packets=2 refresh=1 ...").
	Describe() string
	// Resolve fills in derived defaults and checks the parameters against
	// the node count (0: not given), returning the node count to use.
	Resolve(nodes int) (int, error)
	// Clone returns a deep copy.
	Clone() Params
}

// Setting is one parameter in key=value form.
type Setting struct {
	Key   string
	Value string
}

func (s Setting) String() string { return s.Key + "=" + s.Value }

// ParamSpec declares one parameter of a protocol: the command line takes
// it as --KEY VALUE, scenarios and printed examples as KEY=VALUE.
type ParamSpec struct {
	Key string
	Doc string
	// Default is the default as shown in help ("" when there is none or
	// it is derived; Doc then says how).
	Default string
	// Repeat marks a parameter that may be given several times.
	Repeat bool
	// File marks a parameter whose command-line value names a file that
	// the command line reads; the file's contents are the setting's value.
	File bool
}

// Settings returns the whole configuration in key=value form: protocol,
// variant, nodes, the protocol's settings, then properties.
func (c Config) Settings() []Setting {
	s := []Setting{{"protocol", c.Protocol}}
	if c.Variant != "" {
		s = append(s, Setting{"variant", c.Variant})
	}
	if c.Nodes != 0 {
		s = append(s, Setting{"nodes", strconv.Itoa(c.Nodes)})
	}
	if c.Params != nil {
		s = append(s, c.Params.Settings()...)
	}
	if len(c.Faults) > 0 {
		s = append(s, Setting{"faults", c.Faults.String()})
	}
	for _, p := range c.Properties {
		s = append(s, Setting{"property", p})
	}
	return s
}

// ParseSettings builds a configuration from key=value settings, the form
// Config.Settings gives. The protocol setting must come first.
func ParseSettings(settings []Setting) (Config, error) {
	var c Config
	if len(settings) == 0 || settings[0].Key != "protocol" {
		return c, fmt.Errorf("the first setting must be protocol=NAME")
	}
	def, err := Lookup(settings[0].Value)
	if err != nil {
		return c, err
	}
	c.Protocol = def.Name
	c.Params = def.NewParams()
	for _, s := range settings[1:] {
		switch s.Key {
		case "protocol":
			return c, fmt.Errorf("protocol given twice")
		case "variant":
			c.Variant = s.Value
		case "nodes":
			n, err := ParseDecimal(s.Value)
			if err != nil || n < 2 || n > MaxNodes {
				return c, fmt.Errorf("nodes=%s: want a number in 2..%d", s.Value, MaxNodes)
			}
			c.Nodes = n
		case "property":
			c.Properties = append(c.Properties, s.Value)
		case "faults":
			f, err := ParseFaults(s.Value)
			if err != nil {
				return c, fmt.Errorf("faults=%s: %v", s.Value, err)
			}
			c.Faults = f
		default:
			if def.Param(s.Key) == nil {
				return c, fmt.Errorf("protocol %s has no parameter %q (it has: %s)", def.Name, s.Key, def.ParamKeys())
			}
			if err := c.Params.Set(s.Key, s.Value); err != nil {
				return c, fmt.Errorf("%s=%s: %v", s.Key, s.Value, err)
			}
		}
	}
	return c, nil
}

// SplitSettings reads "key=value key=value ..." (values without spaces).
func SplitSettings(s string) ([]Setting, error) {
	var out []Setting
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q: want key=value", f)
		}
		out = append(out, Setting{k, v})
	}
	return out, nil
}

// MarshalJSON writes the configuration as one object: protocol, variant,
// nodes, the protocol's parameters, properties.
func (c Config) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	head, _ := json.Marshal(struct {
		Protocol string `json:"protocol"`
		Variant  string `json:"variant"`
		Nodes    int    `json:"nodes"`
	}{c.Protocol, c.Variant, c.Nodes})
	b.Write(head[:len(head)-1])
	if c.Params != nil {
		p, err := json.Marshal(c.Params)
		if err != nil {
			return nil, err
		}
		if inner := bytes.TrimSpace(p[1 : len(p)-1]); len(inner) > 0 {
			b.WriteByte(',')
			b.Write(inner)
		}
	}
	if len(c.Faults) > 0 {
		// Written by hand: json.Marshal would escape the links' '>'.
		// Faults.String writes only letters, digits and ":@->,".
		b.WriteString(`,"faults":"` + c.Faults.String() + `"`)
	}
	if len(c.Properties) > 0 {
		props, _ := json.Marshal(c.Properties)
		b.WriteString(`,"properties":`)
		b.Write(props)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads the form MarshalJSON writes. The protocol must be
// registered; unknown fields are errors.
func (c *Config) UnmarshalJSON(data []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return err
	}
	var common struct {
		Protocol   string   `json:"protocol"`
		Variant    string   `json:"variant"`
		Nodes      int      `json:"nodes"`
		Properties []string `json:"properties"`
		Faults     string   `json:"faults"`
	}
	rest := map[string]json.RawMessage{}
	for k, v := range fields {
		switch k {
		case "protocol", "variant", "nodes", "properties", "faults":
			one, _ := json.Marshal(map[string]json.RawMessage{k: v})
			if err := json.Unmarshal(one, &common); err != nil {
				return fmt.Errorf("config.%s: %v", k, err)
			}
		default:
			rest[k] = v
		}
	}
	if common.Protocol == "" {
		return fmt.Errorf("config.protocol is missing")
	}
	def, err := Lookup(common.Protocol)
	if err != nil {
		return fmt.Errorf("config: %v", err)
	}
	p := def.NewParams()
	raw, _ := json.Marshal(rest)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(p); err != nil {
		return fmt.Errorf("config: %s parameters: %v", def.Name, err)
	}
	faults, err := ParseFaults(common.Faults)
	if err != nil {
		return fmt.Errorf("config.faults: %v", err)
	}
	*c = Config{Protocol: common.Protocol, Variant: common.Variant, Nodes: common.Nodes, Properties: common.Properties, Params: p, Faults: faults}
	return nil
}

// Clone returns a deep copy of c.
func (c Config) Clone() Config {
	c.Properties = append([]string(nil), c.Properties...)
	c.Faults = c.Faults.Clone()
	if c.Params != nil {
		c.Params = c.Params.Clone()
	}
	return c
}

// Describe renders the configuration on one line for people.
func (c Config) Describe() string {
	s := fmt.Sprintf("%s (%s) nodes=%d", c.Protocol, c.Variant, c.Nodes)
	if c.Params != nil {
		if d := c.Params.Describe(); d != "" {
			s += " " + d
		}
	}
	if len(c.Faults) > 0 {
		s += " faults=" + c.Faults.String()
	}
	return s
}
