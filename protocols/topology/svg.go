package topology

import (
	"bytes"
	"fmt"
	"html"
	"io"

	"lfccheck/model"
)

// SVG layout, in pixels.
const (
	svgSlot   = 36   // horizontal space per leaf
	svgLevel  = 56   // vertical space per tree level
	svgMargin = 24   // around each tree
	svgWidth  = 1200 // trees wrap onto a new row beyond this
	svgChar   = 8    // width of a character of a bold 12px title, at most
	svgLegend = 44   // height of the legend below the trees
)

// titleWidth is the width a bold title of n characters takes, at most.
func titleWidth(title string) int { return len(title) * svgChar }

// treeLayout places one tree: leaves in forwarding order on consecutive
// slots, every inner node above the middle of its children.
type treeLayout struct {
	x, y          map[model.NodeID]int
	width, height int
}

func layoutTree(tr *Tree) treeLayout {
	l := treeLayout{x: map[model.NodeID]int{}, y: map[model.NodeID]int{}}
	next, depth := 0, 0
	var place func(n model.NodeID, d int) int
	place = func(n model.NodeID, d int) int {
		depth = max(depth, d)
		l.y[n] = d
		cs := tr.Children[n]
		if len(cs) == 0 {
			l.x[n] = 2 * next
			next++
			return l.x[n]
		}
		first := place(cs[0], d+1)
		last := first
		for _, c := range cs[1:] {
			last = place(c, d+1)
		}
		l.x[n] = (first + last) / 2
		return l.x[n]
	}
	place(tr.Root, 0)
	// slots are in half-slot units so that a parent of two children sits
	// between them
	for n := range l.x {
		l.x[n] = l.x[n]*svgSlot/2 + svgSlot/2
		l.y[n] = l.y[n]*svgLevel + svgSlot
	}
	l.width = next*svgSlot + 2*svgMargin
	l.height = (depth+1)*svgLevel + svgSlot
	return l
}

// WriteSVG draws every tree of t, its root in bold, children below their
// parents in forwarding order, the edges on a cycle of the buffer
// dependency graph in red, without needing Graphviz, with a legend below.
// Each tree is as wide as its title. The output is deterministic.
func WriteSVG(w io.Writer, t *Topology) error {
	onCycle := cycleEdges(t)
	var body bytes.Buffer
	x0, y0, rowH, width := 0, 0, 0, 0
	for i := range t.Trees {
		tr := &t.Trees[i]
		l := layoutTree(tr)
		title := fmt.Sprintf("tree of %d in %s", tr.Root, t.Groups[tr.Group].Name)
		l.width = max(l.width, titleWidth(title)+2*svgMargin)
		if x0 > 0 && x0+l.width > svgWidth {
			x0, y0, rowH = 0, y0+rowH, 0
		}
		ox, oy := x0+svgMargin, y0+svgMargin
		fmt.Fprintf(&body, `<g id="tree-%d">`+"\n", i)
		fmt.Fprintf(&body, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", ox, oy+12, html.EscapeString(title))
		for p, cs := range tr.Children {
			for _, c := range cs {
				pp := model.NodeID(p)
				stroke := `stroke="#444"`
				if onCycle[[3]int{i, p, int(c)}] {
					stroke = `stroke="#c00" stroke-width="3"`
				}
				fmt.Fprintf(&body, `<line x1="%d" y1="%d" x2="%d" y2="%d" %s/>`+"\n",
					ox+l.x[pp], oy+l.y[pp]+12, ox+l.x[c], oy+l.y[c]+12, stroke)
			}
		}
		for _, m := range t.Groups[tr.Group].Members {
			if _, ok := l.x[m]; !ok {
				continue
			}
			stroke := 1
			if m == tr.Root {
				stroke = 3
			}
			fmt.Fprintf(&body, `<circle cx="%d" cy="%d" r="12" fill="white" stroke="black" stroke-width="%d"/>`+"\n", ox+l.x[m], oy+l.y[m]+12, stroke)
			fmt.Fprintf(&body, `<text x="%d" y="%d" text-anchor="middle">%d</text>`+"\n", ox+l.x[m], oy+l.y[m]+16, m)
		}
		fmt.Fprintf(&body, "</g>\n")
		x0 += l.width
		rowH = max(rowH, l.height+2*svgMargin)
		width = max(width, x0)
	}
	// The legend: what bold and red mean.
	ly := y0 + rowH + 16
	fmt.Fprintf(&body, `<g id="legend">`+"\n")
	fmt.Fprintf(&body, `<circle cx="%d" cy="%d" r="7" fill="white" stroke="black" stroke-width="3"/>`+"\n", svgMargin+7, ly-4)
	legend := "the tree's root"
	fmt.Fprintf(&body, `<text x="%d" y="%d">%s</text>`+"\n", svgMargin+22, ly, legend)
	if len(onCycle) > 0 {
		cycle := "an edge on a cycle of the buffer dependency graph (App. A.1): no guarantee against deadlock"
		x := svgMargin + 22 + titleWidth(legend) + 16
		fmt.Fprintf(&body, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#c00" stroke-width="3"/>`+"\n", x, ly-4, x+24, ly-4)
		fmt.Fprintf(&body, `<text x="%d" y="%d">%s</text>`+"\n", x+32, ly, html.EscapeString(cycle))
		width = max(width, x+32+titleWidth(cycle)*7/8+svgMargin)
	}
	fmt.Fprintf(&body, "</g>\n")
	height := y0 + rowH + svgLegend
	_, err := fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n"+
		`<rect x="0" y="0" width="%d" height="%d" fill="white"/>`+"\n%s</svg>\n", width, height, width, height, width, height, body.String())
	return err
}
