package main

import (
	"github.com/spf13/pflag"
)

// emptyWants says what a flag given with an empty value should hold, by
// flag name, for the message that refuses it; other flags want "a value".
var emptyWants = map[string]string{
	"trace-out": "a file name", "svg": "a file name", "html": "a file name",
	"topology": "a file name", "trace": "a file name",
	"checkpoint": "a directory", "resume": "a directory", "disk-visited": "a directory",
	"peers": "every worker's HOST:PORT by rank, comma-separated", "listen": "HOST:PORT", "addr": "HOST:PORT",
	"shard": "I/N", "steps": "FROM:TO", "max-memory": "a size such as 8GiB",
	"faults": "e.g. loss:1, or none for reliable links", "variant": "a variant (see 'lfccheck list')",
	"protocol": "a protocol (see 'lfccheck list')", "property": "a property (see 'lfccheck list')",
	"nodes": "node counts such as 2-4 or 2,3,8", "tree": "a tree family (binary, binomial, chain, star, kary:K)",
	"search": "bfs, dfs or random", "engine": "checker or segments", "liveness-search": "graph or scc",
	"disk-keys": "exact or fingerprint", "symmetry": "on or off", "sleep-sets": "on or off",
	"por": "on or off", "step-cache": "on or off",
}

// checkEmpty refuses a text flag given with an empty value: no flag of
// lfccheck gives "" a meaning, and taking it as the flag left out would
// check something other than what was asked (--trace-out ” writing no
// trace, --peers ” searching on one machine, --shard ” the whole
// swarm). Every string, list and parameter flag is checked, and every
// value of a repeated one; hidden flags are refused by their commands.
func checkEmpty(fs *pflag.FlagSet) error {
	var err error
	fs.Visit(func(f *pflag.Flag) {
		if err != nil || f.Hidden {
			return
		}
		var values []string
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			values = sv.GetSlice()
		} else if f.Value.Type() == "string" {
			values = []string{f.Value.String()}
		}
		for _, v := range values {
			if v == "" {
				want := emptyWants[f.Name]
				if want == "" {
					want = "a value"
				}
				err = usagef("--%s is empty: give %s", f.Name, want)
				return
			}
		}
	})
	return err
}
