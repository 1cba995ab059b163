package topology

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzTopologyFile: parsing never panics; a file that parses builds, and
// the spec rendered back as a file parses to the same spec.
func FuzzTopologyFile(f *testing.F) {
	files, _ := filepath.Glob("../../examples/*.topo")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{"nodes 4\ngroup all 0 1 2 3\ntree all 0 0->2 2->1 0->3\ntree all * chain\n",
		"nodes 2\ngroup g 0 1\ntree g * kary:1\n", "nodes 3\ngroup g 0 0 1\n", "nodes 65\n", "", "# only a comment\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, nodes, err := ParseFile("f.topo", data)
		if err != nil {
			return
		}
		if _, err := Build(spec, nodes); err != nil {
			t.Fatalf("parsed but does not build: %v", err)
		}
		text := renderFile(spec, nodes)
		spec2, nodes2, err := ParseFile("g.topo", []byte(text))
		if err != nil || nodes2 != nodes || !sameSpec(spec, spec2) {
			t.Fatalf("round trip of\n%s\ngave %v (%v)", text, spec2, err)
		}
	})
}
