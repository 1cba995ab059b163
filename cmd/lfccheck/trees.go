package main

import (
	"bytes"

	"lfccheck/internal/fileio"
	"lfccheck/model"
	"lfccheck/model/topology"
)

func runTrees(args []string, e env) (int, error) {
	fs := newFlags("trees", e)
	nodes := fs.Int("nodes", 16, "number of NIs, P")
	tree := fs.String("tree", "binary", "tree family for the broadcast group: binary, binomial, chain, star, kary:K")
	topoFile := fs.String("topology", "", "topology file with groups and trees (see 'lfccheck help topology')")
	dot := fs.Bool("dot", false, "print the trees as a Graphviz digraph")
	jsonOut := fs.Bool("json", false, "print the analysis as JSON")
	edges := fs.Bool("edges", false, "list every tree's edges in the text output")
	svg := fs.String("svg", "", "also draw the trees as SVG into this file ('-': standard output, instead of the text)")
	if err := parseNoArgs(fs, args, "[flags]"); err != nil {
		return 0, err
	}
	if *dot && *jsonOut {
		return 0, usagef("trees: give --dot or --json, not both")
	}
	if *svg != "" {
		if err := fileio.CheckOutput(*svg); err != nil {
			return 0, usagef("--svg: %v", err)
		}
		if *svg == "-" && (*dot || *jsonOut) {
			return 0, usagef("trees: --svg - writes to standard output, so --dot and --json cannot")
		}
	}
	var spec *model.TopologySpec
	fam := *tree
	if *topoFile != "" {
		if fs.Changed("tree") {
			return 0, usagef("trees: give --tree or --topology, not both")
		}
		data, err := readInput(*topoFile, maxTopologySize)
		if err != nil {
			return 0, usagef("--topology: %v", err)
		}
		s, n, err := topology.ParseFile(*topoFile, data)
		if err != nil {
			return 0, usageError{err}
		}
		if fs.Changed("nodes") && *nodes != n {
			return 0, usagef("--nodes %d disagrees with %s, which has nodes %d", *nodes, *topoFile, n)
		}
		spec, *nodes, fam = s, n, ""
	}
	if fam == "" && spec == nil {
		return 0, usagef("trees: --tree is empty")
	}
	if spec == nil && *nodes > model.MaxNodes && *nodes <= topology.MaxStaticNodes {
		// Beyond the explorer's bound: the dependency graph only.
		if *dot || *svg != "" || *edges {
			return 0, usagef("trees: --dot, --svg and --edges draw or list at most %d nodes; for %d nodes only the analysis is printed", model.MaxNodes, *nodes)
		}
		r, err := topology.AnalyzeFamily(fam, *nodes)
		if err != nil {
			return 0, usageError{err}
		}
		if *jsonOut {
			e.stdout.Write(marshalIndent(r))
		} else {
			topology.WriteFamilyText(e.stdout, r)
		}
		return exitPass, nil
	}
	if *nodes < 2 || *nodes > model.MaxNodes {
		return 0, usagef("nodes must be in 2..%d (and up to %d for a tree family's analysis alone), got %d", model.MaxNodes, topology.MaxStaticNodes, *nodes)
	}
	topo, err := topology.Resolve(fam, spec, *nodes)
	if err != nil {
		return 0, usageError{err}
	}
	if *svg != "" {
		var b bytes.Buffer
		if err := topology.WriteSVG(&b, topo); err != nil {
			return 0, err
		}
		if err := fileio.WriteOutput(*svg, b.Bytes(), e.stdout); err != nil {
			return 0, usagef("--svg: %v", err)
		}
		if *svg == "-" {
			return exitPass, nil
		}
	}
	switch {
	case *dot:
		topology.WriteDOT(e.stdout, topo)
	case *jsonOut:
		e.stdout.Write(marshalIndent(topology.Analyze(topo, *nodes)))
	default:
		topology.WriteText(e.stdout, topology.Analyze(topo, *nodes), *edges)
	}
	return exitPass, nil
}
