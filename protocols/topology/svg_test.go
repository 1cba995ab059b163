package topology_test

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"lfccheck/protocols/topology"
)

// Every tree's title fits in its own column and inside the picture (they
// overlapped, and the last was cut, when a title was wider than its
// tree), and a legend says what bold and red mean; red only when the
// trees have a cycle.
func TestSVGTitlesFitAndLegend(t *testing.T) {
	width := regexp.MustCompile(`<svg [^>]*width="(\d+)"`)
	title := regexp.MustCompile(`<text x="(\d+)" y="\d+" font-weight="bold">([^<]*)</text>`)
	for _, c := range []struct {
		tree  string
		nodes int
		cycle bool
	}{{"chain", 6, true}, {"chain", 12, true}, {"binary", 8, false}} {
		topo, err := topology.Resolve(c.tree, nil, c.nodes)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := topology.WriteSVG(&b, topo); err != nil {
			t.Fatal(err)
		}
		svg := b.String()
		w, _ := strconv.Atoi(width.FindStringSubmatch(svg)[1])
		titles := title.FindAllStringSubmatch(svg, -1)
		if len(titles) != len(topo.Trees) {
			t.Fatalf("%s P=%d: %d titles for %d trees", c.tree, c.nodes, len(titles), len(topo.Trees))
		}
		for i, m := range titles {
			x, _ := strconv.Atoi(m[1])
			end := x + 8*len(m[2])
			if end > w {
				t.Errorf("%s P=%d: title %q ends at %d, beyond the picture's %d", c.tree, c.nodes, m[2], end, w)
			}
			if i+1 < len(titles) {
				if next, _ := strconv.Atoi(titles[i+1][1]); next > x && end > next {
					t.Errorf("%s P=%d: title %q runs into %q", c.tree, c.nodes, m[2], titles[i+1][2])
				}
			}
		}
		if !strings.Contains(svg, "the tree's root") || strings.Contains(svg, "buffer dependency graph") != c.cycle {
			t.Errorf("%s P=%d: legend wrong (cycle %v):\n%s", c.tree, c.nodes, c.cycle, svg[strings.Index(svg, `<g id="legend">`):])
		}
	}
}
