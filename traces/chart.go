package traces

import (
	"bytes"
	"fmt"
	"html"
	"strings"

	"lfccheck/model"
)

// Frame is one step of a run as pictures need it: the action, what it
// changed, what it transmitted and handed to a host, and the state after it.
type Frame struct {
	Action     model.Action
	Name       string
	Changes    []string
	Sends      []model.Transmit
	Deliveries []model.Delivery
	State      *model.World
}

// Record re-executes acts from sys's initial state and returns the initial
// state and one frame per step. Every action must be enabled (a trace that
// Run accepted).
func Record(sys *model.System, acts []model.Action) (*model.World, []Frame, error) {
	w := sys.Initial()
	init := w.Clone()
	var out model.Outbox
	frames := make([]Frame, 0, len(acts))
	for i, a := range acts {
		pre := w.Clone()
		if err := w.Apply(a, &out); err != nil {
			return nil, nil, &StepError{Step: i + 1, Action: sys.ActionName(a), Err: err}
		}
		frames = append(frames, Frame{Action: a, Name: sys.ActionName(a), Changes: model.Diff(pre, w),
			Sends:      append([]model.Transmit(nil), out.Sends...),
			Deliveries: append([]model.Delivery(nil), out.Deliveries...),
			State:      w.Clone()})
	}
	return init, frames, nil
}

// Chart layout, in pixels.
const (
	chartGutter = 300 // step numbers and action names
	chartLane   = 84  // one lifeline
	chartHead   = 56  // lifeline names
	chartRow    = 30  // one step
)

// chart draws a recorded run as a message sequence chart.
type chart struct {
	sys    *model.System
	init   *model.World
	frames []Frame
	o      Outcome
	b      bytes.Buffer
}

// lane returns the x of node id's host (ni false) or NI lifeline.
func (c *chart) lane(id model.NodeID, ni bool) int {
	k := 2 * int(id)
	if ni {
		k++
	}
	return chartGutter + k*chartLane + chartLane/2
}

func (c *chart) row(k int) int { return chartHead + chartRow/2 + k*chartRow }

func (c *chart) f(format string, a ...any) { fmt.Fprintf(&c.b, format, a...) }

func esc(s string) string { return html.EscapeString(s) }

// actorLane is the lifeline of the part that performs a.
func (c *chart) actorLane(a model.Action) int {
	return c.lane(a.Node, c.sys.Kinds[a.Kind].Owner != model.OwnerHost)
}

// SVG draws the outcome of running acts on sys (as Run or RunLasso
// produced it) as a message sequence chart: one lifeline per host and per
// NI, a row per step with the acting part marked, an arrow for every packet
// from the step that transmitted it to the step that delivered it (data
// packets solid, control packets dashed, labelled as in the text output
// with "+N" for piggybacked credits), copies to hosts, blocked sends and
// full pools along the lifelines (for nodes that implement model.Marker),
// the violating step highlighted, a lasso's loop bracketed and a wait-for
// cycle drawn across the NIs. The output is deterministic.
func SVG(sys *model.System, acts []model.Action, o Outcome) ([]byte, error) {
	init, frames, err := Record(sys, acts)
	if err != nil {
		return nil, err
	}
	c := &chart{sys: sys, init: init, frames: frames, o: o}
	c.draw()
	return c.b.Bytes(), nil
}

func (c *chart) draw() {
	P := c.sys.P
	n := len(c.frames)
	footer := c.footer()
	waits := c.waits()
	bottom := c.row(n) + chartRow
	if len(waits) > 0 {
		bottom += 2 * chartRow
	}
	width := chartGutter + 2*P*chartLane + 240 // room for the loop bracket and mark texts
	height := bottom + 20 + 16*len(footer)
	c.f(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="monospace" font-size="12">`+"\n", width, height, width, height)
	c.f(`<title>%s</title>`+"\n", esc(c.sys.Cfg.Describe()))
	c.f(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="context-stroke"/></marker></defs>` + "\n")
	c.f(`<rect x="0" y="0" width="%d" height="%d" fill="white"/>`+"\n", width, height)
	// Rows: a band per step (the viewer highlights it), the violating
	// step in red.
	for k := 0; k <= n; k++ {
		fill := "none"
		if c.o.Violation != nil && !c.o.Live && k == c.o.ViolationStep {
			fill = "#fde2e2"
		}
		c.f(`<rect class="row" id="row-%d" x="0" y="%d" width="%d" height="%d" fill="%s"/>`+"\n", k, c.row(k)-chartRow/2, width, chartRow, fill)
	}
	// Lifelines and their names.
	for id := 0; id < P; id++ {
		for _, ni := range []bool{false, true} {
			x := c.lane(model.NodeID(id), ni)
			name := fmt.Sprintf("host %d", id)
			if ni {
				name = fmt.Sprintf("ni %d", id)
			}
			c.f(`<text x="%d" y="%d" text-anchor="middle" font-weight="bold">%s</text>`+"\n", x, chartHead-20, name)
			c.f(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888" stroke-width="%d"/>`+"\n", x, chartHead-10, x, bottom, map[bool]int{false: 1, true: 2}[ni])
		}
	}
	c.marks()
	// Step labels and actors.
	c.f(`<text x="8" y="%d" fill="#555">initial state</text>`+"\n", c.row(0)+4)
	for k, fr := range c.frames {
		y := c.row(k + 1)
		c.f(`<text x="8" y="%d">%3d. %s</text>`+"\n", y+4, k+1, esc(fr.Name))
		c.f(`<circle cx="%d" cy="%d" r="4" fill="black"/>`+"\n", c.actorLane(fr.Action), y)
	}
	c.packets()
	c.loop(chartGutter + 2*P*chartLane + 8)
	if len(waits) > 0 {
		y := c.row(n) + chartRow + chartRow/2
		c.f(`<text x="8" y="%d" fill="#b00">wait-for cycle</text>`+"\n", y+4)
		for i, wt := range waits {
			// arcs below the lifelines, deeper in turn so that they do
			// not overlap; the labels sit at the tails
			x1, x2 := c.lane(wt.From, true), c.lane(wt.To, true)
			yy := y - 8
			depth := 14 + 10*(i%3)
			c.f(`<path d="M%d,%d C%d,%d %d,%d %d,%d" fill="none" stroke="#c00" stroke-width="2" marker-end="url(#arrow)"/>`+"\n",
				x1, yy, x1, yy+depth, x2, yy+depth, x2, yy)
			c.f(`<text x="%d" y="%d" fill="#c00" font-size="9">%s</text>`+"\n", x1+4, yy-2, esc(wt.Label))
		}
	}
	for i, l := range footer {
		c.f(`<text x="8" y="%d" fill="#b00">%s</text>`+"\n", bottom+16+16*i, esc(l))
	}
	c.f("</svg>\n")
}

// footer is the violation and its explanation, as text lines.
func (c *chart) footer() []string {
	if c.o.Violation == nil {
		return nil
	}
	out := []string{fmt.Sprintf("violated: %s: %s", c.o.Violation.Property, c.o.Violation.Message)}
	if c.o.Explanation != nil {
		out = append(out, c.o.Explanation.Text()...)
	}
	return out
}

func (c *chart) waits() []model.Wait {
	if c.o.Explanation == nil {
		return nil
	}
	return c.o.Explanation.Waits
}

// marks draws the conditions nodes report (model.Marker) along their
// lifelines: an orange bar over the steps where a part has any, and its
// texts where they change.
func (c *chart) marks() {
	states := []*model.World{c.init}
	for _, fr := range c.frames {
		states = append(states, fr.State)
	}
	for id := 0; id < c.sys.P; id++ {
		for _, part := range []model.Owner{model.OwnerHost, model.OwnerNI} {
			prev := ""
			for k, w := range states {
				mk, ok := w.Nodes[id].(model.Marker)
				if !ok {
					return
				}
				var texts []string
				for _, m := range mk.Marks() {
					if m.Part == part {
						texts = append(texts, m.Text)
					}
				}
				cur := strings.Join(texts, "; ")
				x := c.lane(model.NodeID(id), part == model.OwnerNI)
				if cur != "" {
					c.f(`<rect x="%d" y="%d" width="6" height="%d" fill="#f0a030" opacity="0.8"/>`+"\n", x-3, c.row(k), chartRow)
					if cur != prev {
						c.f(`<text x="%d" y="%d" fill="#a05000" font-size="9">%s</text>`+"\n", x+6, c.row(k)+12, esc(cur))
					}
				}
				prev = cur
			}
		}
	}
}

// packets draws transmissions, deliveries and copies to hosts.
func (c *chart) packets() {
	type sent struct {
		row int
		pkt model.Packet
	}
	P := c.sys.P
	inflight := make([][]sent, P*P) // per link from*P+to, FIFO
	for k, fr := range c.frames {
		y := c.row(k + 1)
		a := fr.Action
		kind := c.sys.Kinds[a.Kind]
		if kind == model.Deliver {
			q := inflight[int(a.Peer)*P+int(a.Node)]
			if len(q) > 0 {
				c.arrow(c.lane(a.Peer, true), q[0].row, c.lane(a.Node, true), y, q[0].pkt, "")
				inflight[int(a.Peer)*P+int(a.Node)] = q[1:]
			}
		}
		if kind.Owner == model.OwnerHost && len(fr.Sends) > 0 {
			// the host's launch runs the NI's send handler in the same step
			c.f(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#444" marker-end="url(#arrow)"/>`+"\n", c.lane(a.Node, false), y, c.lane(a.Node, true), y)
		}
		for _, s := range fr.Sends {
			inflight[int(a.Node)*P+int(s.To)] = append(inflight[int(a.Node)*P+int(s.To)], sent{y, s.Pkt})
		}
		for _, d := range fr.Deliveries {
			x1, x2 := c.lane(d.Host, true), c.lane(d.Host, false)
			c.f(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#060" stroke-width="1.5" marker-end="url(#arrow)"/>`+"\n", x1, y, x2, y)
			c.f(`<text x="%d" y="%d" fill="#060" font-size="10" text-anchor="middle">%s</text>`+"\n", (x1+x2)/2, y-4, esc(d.Pkt.String()))
		}
	}
	// Packets still in flight at the end run to the bottom.
	end := c.row(len(c.frames)) + chartRow/2
	for link, q := range inflight {
		for _, s := range q {
			from, to := model.NodeID(link/P), model.NodeID(link%P)
			c.arrow(c.lane(from, true), s.row, c.lane(to, true), end, s.pkt, " (in flight)")
		}
	}
}

// arrow draws a packet from (x1,y1) to (x2,y2): solid for data, dashed for
// control packets, labelled at its middle.
func (c *chart) arrow(x1, y1, x2, y2 int, p model.Packet, note string) {
	dash := ""
	color := "#1f4e99"
	if !p.Tag.IsData() {
		dash = ` stroke-dasharray="5,3"`
		color = "#777"
	}
	c.f(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="1.5"%s marker-end="url(#arrow)"/>`+"\n", x1, y1, x2, y2, color, dash)
	c.f(`<text x="%d" y="%d" fill="%s" font-size="10" text-anchor="middle">%s</text>`+"\n", (x1+x2)/2, (y1+y2)/2-3, color, esc(p.String()+note))
}

// loop brackets a lasso's loop at x, right of the lifelines.
func (c *chart) loop(x int) {
	if c.o.Loop == 0 {
		return
	}
	n := len(c.frames)
	y1, y2 := c.row(n-c.o.Loop+1)-chartRow/2+3, c.row(n)+chartRow/2-3
	c.f(`<path d="M%d,%d H%d V%d H%d" fill="none" stroke="#7030a0" stroke-width="2"/>`+"\n", x, y1, x+8, y2, x)
	c.f(`<text x="%d" y="%d" fill="#7030a0" font-size="10" text-anchor="middle" transform="rotate(-90 %d %d)">loop for ever</text>`+"\n",
		x+20, (y1+y2)/2, x+20, (y1+y2)/2)
}
