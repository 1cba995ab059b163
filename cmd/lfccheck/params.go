package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"lfccheck/internal/fileio"
	"lfccheck/model"
	"lfccheck/protocols"
)

// paramFlag collects the values given for one protocol parameter, in order.
type paramFlag struct {
	spec   model.ParamSpec
	values []string
}

func (p *paramFlag) String() string     { return strings.Join(p.values, ",") }
func (p *paramFlag) Set(v string) error { return p.Append(v) }

// GetSlice, Append and Replace make it a pflag.SliceValue: the values one
// by one (String joins them with commas, which values may hold).
func (p *paramFlag) GetSlice() []string { return append([]string(nil), p.values...) }
func (p *paramFlag) Append(v string) error {
	p.values = append(p.values, v)
	return nil
}
func (p *paramFlag) Replace(vs []string) error {
	p.values = append([]string(nil), vs...)
	return nil
}
func (p *paramFlag) Type() string {
	if p.spec.File {
		return "file"
	}
	return "value"
}

// paramFlags are the flags of every registered protocol's parameters,
// registered once per key; after parsing, apply hands the ones given to the
// chosen protocol, which must declare them.
type paramFlags struct {
	fs    *pflag.FlagSet
	order []string
	flags map[string]*paramFlag
}

func registerParams(fs *pflag.FlagSet) *paramFlags {
	pf := &paramFlags{fs: fs, flags: map[string]*paramFlag{}}
	for _, d := range protocols.All() {
		for _, s := range d.Params {
			if pf.flags[s.Key] != nil {
				continue
			}
			f := &paramFlag{spec: s}
			pf.flags[s.Key] = f
			pf.order = append(pf.order, s.Key)
			fs.Var(f, s.Key, paramHelp(s.Key))
		}
	}
	return pf
}

// paramHelp is a parameter's help: its doc and default as each protocol
// that declares it gives them, the protocols that agree in one group
// ("doc (default D) [p1, p2]; other doc [p3]").
func paramHelp(key string) string {
	var groups []string
	byText := map[string]int{}
	var names [][]string
	for _, d := range protocols.All() {
		s := d.Param(key)
		if s == nil {
			continue
		}
		text := s.Doc
		if s.Default != "" {
			text += " (default " + s.Default + ")"
		}
		i, ok := byText[text]
		if !ok {
			i = len(groups)
			byText[text] = i
			groups = append(groups, text)
			names = append(names, nil)
		}
		names[i] = append(names[i], d.Name)
	}
	for i := range groups {
		groups[i] += " [" + strings.Join(names[i], ", ") + "]"
	}
	return strings.Join(groups, "; ")
}

// given lists the keys given on the command line, in registration order.
func (pf *paramFlags) given() []string {
	var ks []string
	for _, k := range pf.order {
		if pf.fs.Changed(k) {
			ks = append(ks, k)
		}
	}
	return ks
}

// inputs names the files given to file parameters (--topology), for
// fileio.Distinct.
func (pf *paramFlags) inputs() []fileio.Named {
	var in []fileio.Named
	for _, k := range pf.given() {
		if f := pf.flags[k]; f.spec.File {
			for _, v := range f.values {
				in = append(in, fileio.Named{Flag: "--" + k, Path: v})
			}
		}
	}
	return in
}

// apply builds def's parameters from defaults and the flags given. list
// makes every non-repeatable value a comma-separated list (sweep); it
// returns the parameter sets of the grid.
func (pf *paramFlags) apply(def *model.Def, read func(path string) ([]byte, error)) (model.Params, error) {
	p := def.NewParams()
	for _, k := range pf.given() {
		f := pf.flags[k]
		spec := def.Param(k)
		if spec == nil {
			return nil, usagef("protocol %s has no parameter --%s (its parameters: %s)", def.Name, k, def.ParamKeys())
		}
		if !spec.Repeat && len(f.values) > 1 {
			return nil, usagef("--%s given %d times; it takes one value", k, len(f.values))
		}
		for _, v := range f.values {
			if err := setParam(p, *spec, v, read); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// fileSetter is implemented by parameters that take a file's contents and
// name the file in their errors.
type fileSetter interface {
	SetFile(key, name string, data []byte) error
}

func setParam(p model.Params, spec model.ParamSpec, v string, read func(string) ([]byte, error)) error {
	if spec.File {
		data, err := read(v)
		if err != nil {
			return usagef("--%s: %v", spec.Key, err)
		}
		if fsr, ok := p.(fileSetter); ok {
			if err := fsr.SetFile(spec.Key, v, data); err != nil {
				return usageError{err}
			}
			return nil
		}
		v = string(data)
	}
	if err := p.Set(spec.Key, v); err != nil {
		return usagef("--%s %s: %v", spec.Key, v, err)
	}
	return nil
}

// commandFor renders the command that checks cfg, from its key=value form.
// Parameters read from files cannot be printed as a command.
func commandFor(cfg model.Config) (string, error) {
	def, err := model.Lookup(cfg.Protocol)
	if err != nil {
		return "", err
	}
	args := []string{"lfccheck", "check"}
	for _, s := range cfg.Settings() {
		if spec := def.Param(s.Key); spec != nil && spec.File {
			return "", fmt.Errorf("--%s needs a file", s.Key)
		}
		args = append(args, "--"+s.Key, shellQuote(s.Value))
	}
	return strings.Join(args, " "), nil
}

func shellQuote(s string) string {
	safe := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.,:/=+@%", c)) {
			safe = false
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
