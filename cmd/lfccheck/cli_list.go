package main

import (
	"fmt"

	"lfccheck/model"
	"lfccheck/protocols"
)

func runList(args []string, e env) (int, error) {
	fs := newFlags("list", e)
	jsonOut := fs.Bool("json", false, "print JSON")
	if err := parseNoArgs(fs, args, "[--json]"); err != nil {
		return 0, err
	}
	type prop struct {
		Name string `json:"name"`
		Kind string `json:"kind"`
		Doc  string `json:"doc"`
	}
	type param struct {
		Key     string `json:"key"`
		Doc     string `json:"doc"`
		Default string `json:"default,omitempty"`
	}
	type variant struct {
		Name    string `json:"name"`
		Doc     string `json:"doc"`
		Catches string `json:"caught_by,omitempty"`
		Example string `json:"example,omitempty"`
	}
	type proto struct {
		Name       string    `json:"name"`
		Doc        string    `json:"doc"`
		Params     []param   `json:"parameters"`
		Variants   []variant `json:"variants"`
		Properties []prop    `json:"properties"`
		Fairness   []string  `json:"fairness"`
	}
	var all []proto
	for _, d := range protocols.All() {
		x := proto{Name: d.Name, Doc: d.Doc}
		for _, s := range d.Params {
			x.Params = append(x.Params, param{s.Key, s.Doc, s.Default})
		}
		for _, v := range d.Variants {
			vv := variant{Name: v.Name, Doc: v.Doc, Catches: v.Catches}
			if v.Catches != "" {
				cmd, err := commandFor(d.VariantClaim(v).Config)
				if err != nil {
					return 0, fmt.Errorf("internal error: variant %s: %v", v.Name, err)
				}
				vv.Example = cmd
			}
			x.Variants = append(x.Variants, vv)
		}
		for _, pr := range d.Properties {
			x.Properties = append(x.Properties, prop{pr.Name, pr.Kind(), pr.Doc})
		}
		fair, err := fairnessOf(d)
		if err != nil {
			return 0, fmt.Errorf("internal error: %v", err)
		}
		x.Fairness = fair
		all = append(all, x)
	}
	if *jsonOut {
		e.stdout.Write(marshalIndent(all))
		return exitPass, nil
	}
	for _, p := range all {
		fmt.Fprintf(e.stdout, "%s: %s\n  parameters:\n", p.Name, p.Doc)
		for _, s := range p.Params {
			fmt.Fprintf(e.stdout, "    --%-16s %s\n", s.Key, s.Doc)
		}
		fmt.Fprintf(e.stdout, "  variants:\n")
		for _, v := range p.Variants {
			fmt.Fprintf(e.stdout, "    %-18s %s\n", v.Name, v.Doc)
			if v.Catches != "" {
				fmt.Fprintf(e.stdout, "    %-18s caught by %s: %s\n", "", v.Catches, v.Example)
			}
		}
		fmt.Fprintf(e.stdout, "  properties:\n")
		for _, pr := range p.Properties {
			fmt.Fprintf(e.stdout, "    %-20s %s [%s]\n", pr.Name, pr.Doc, pr.Kind)
		}
		fmt.Fprintf(e.stdout, "  fairness (liveness checks):\n")
		for _, f := range p.Fairness {
			fmt.Fprintf(e.stdout, "    %s\n", f)
		}
	}
	return exitPass, nil
}

// fairnessOf describes the fairness a protocol's action kinds get, built
// from its default configuration.
func fairnessOf(d *model.Def) ([]string, error) {
	cfg, err := d.Resolve(model.Config{Protocol: d.Name})
	if err != nil {
		return nil, err
	}
	m, err := d.New(cfg)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range m.Kinds() {
		class := k.FairClass
		if class == "" {
			class = k.Pattern
		}
		if k.Fair == model.Unfair {
			out = append(out, fmt.Sprintf("%q: none", k.Pattern))
			continue
		}
		out = append(out, fmt.Sprintf("%q: %s, one class per %q", k.Pattern, k.Fair, class))
	}
	return out, nil
}
