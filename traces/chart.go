package traces

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"regexp"
	"sort"
	"strconv"
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
// Run accepted). It keeps every state: pictures use a Window instead.
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

// DefaultWindowSteps is how many steps a picture covers unless told
// otherwise: the last ones, where the violation is. A page of that many
// steps at P=16 embeds a few MB.
const DefaultWindowSteps = 1000

// Window is the range of steps a picture covers: steps From to To
// (1-based, inclusive), drawn below the state before step From (the
// initial state when From is 1). From = To + 1 covers no step.
type Window struct{ From, To int }

// Options choose what a picture covers.
type Options struct {
	// Steps, when not nil, is the window to draw; nil: the last
	// DefaultWindowSteps steps (every step of a shorter trace).
	Steps *Window
	// RangeCommand is the command that draws another range of steps,
	// with FROM and TO standing for the range; the picture names it when
	// it leaves steps out. Empty: "lfccheck show --steps FROM:TO ...".
	RangeCommand string
}

// Resolve is the window o chooses for a trace of n steps: an explicit
// range is clamped to the trace (an error when it starts after the end).
func (o Options) Resolve(n int) (Window, error) {
	if o.Steps == nil {
		return Window{From: max(1, n-DefaultWindowSteps+1), To: n}, nil
	}
	w := *o.Steps
	if w.From < 1 {
		w.From = 1
	}
	if w.To > n {
		w.To = n
	}
	if w.From > n && n > 0 || w.From > w.To+1 {
		return w, fmt.Errorf("steps %d:%d: the trace has %d steps", o.Steps.From, o.Steps.To, n)
	}
	return w, nil
}

// ParseSteps parses a range of steps FROM:TO (either side may be empty:
// from the first, to the last step).
func ParseSteps(s string) (Window, error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return Window{}, fmt.Errorf("%q is not a range FROM:TO of steps (for example 100:300)", s)
	}
	w := Window{From: 1, To: math.MaxInt32}
	for _, p := range []struct {
		text string
		v    *int
	}{{a, &w.From}, {b, &w.To}} {
		if p.text == "" {
			continue
		}
		n, err := model.ParseDecimal(p.text)
		if err != nil {
			return Window{}, fmt.Errorf("%q is not a range FROM:TO of steps: %v", s, err)
		}
		*p.v = n
	}
	if w.From > w.To {
		return Window{}, fmt.Errorf("%q is not a range FROM:TO of steps: %d comes after %d", s, w.From, w.To)
	}
	return w, nil
}

// LeftOut says which steps of a trace of n steps the window w leaves
// out and how to draw them ("" when it covers every step).
func (o Options) LeftOut(w Window, n int) string {
	if w.From <= 1 && w.To >= n {
		return ""
	}
	cmd := o.RangeCommand
	if cmd == "" {
		cmd = "lfccheck show --steps FROM:TO --html FILE TRACE"
	}
	var out []string
	if w.From > 1 {
		out = append(out, fmt.Sprintf("1-%d", w.From-1))
	}
	if w.To < n {
		out = append(out, fmt.Sprintf("%d-%d", w.To+1, n))
	}
	return fmt.Sprintf("steps %d-%d of %d shown; steps %s left out; draw a range with: %s", w.From, w.To, n, strings.Join(out, " and "), cmd)
}

// Chart layout, in pixels.
const (
	chartGutter = 300 // step numbers and action names
	chartLane   = 84  // one lifeline
	chartHead   = 56  // lifeline names
	chartRow    = 30  // one step
	chartChar   = 7.2 // width of a character at font-size 12
	labelChar   = 6   // width of a character at font-size 10
)

// arrowData is a packet from one NI to another: lanes, the steps that
// sent and delivered it (Recv 0: still in flight at the end).
type arrowData struct {
	ID    int    `json:"id"`
	From  int    `json:"from"`
	To    int    `json:"to"`
	Sent  int    `json:"sent"`
	Recv  int    `json:"recv"`
	Label string `json:"label"`
	data  bool
}

// copyData is a packet an NI hands to its host at a step.
type copyData struct {
	Step  int
	Node  model.NodeID
	Label string
}

// related is a step the violation is about.
type related struct {
	Step int    `json:"step"`
	Why  string `json:"why"`
}

// picture is a run walked once for a window: what the chart and the
// viewer draw.
type picture struct {
	sys      *model.System
	o        Outcome
	n        int
	win      Window
	note     string         // what the window leaves out, "" for nothing
	states   []*model.World // the state after each step From-1..To
	actors   []int          // the acting lane of each step From..To
	names    []string       // action names of steps From..To
	launches []int          // steps in the window whose host launch sent
	arrows   []*arrowData
	copies   []copyData
	related  []related
	named    map[int]bool // lanes the violation names
	pktRel   []related    // sends and deliveries of packets it names
	gutter   int          // width of the column of step labels
}

// walk runs acts on sys once, keeping states only inside the window.
func walk(sys *model.System, acts []model.Action, o Outcome, opt Options) (*picture, error) {
	n := len(acts)
	win, err := opt.Resolve(n)
	if err != nil {
		return nil, err
	}
	p := &picture{sys: sys, o: o, n: n, win: win, note: opt.LeftOut(win, n)}
	P := sys.P
	type sent struct {
		step int
		pkt  model.Packet
	}
	inflight := make([][]sent, P*P) // per link from*P+to, FIFO
	in := func(k int) bool { return k >= win.From && k <= win.To }
	keep := func(s, r int) bool { // the packet's life meets the window
		if r == 0 {
			r = n + 1
		}
		return s <= win.To && r >= win.From
	}
	// packets the violation names: where they were sent and delivered
	named := map[string]bool{}
	if o.Violation != nil {
		for _, f := range strings.FieldsFunc(o.Violation.Message, func(r rune) bool { return strings.ContainsRune(" ,;:()[]", r) }) {
			named[f] = true
		}
	}
	scope := o.ViolationStep
	w := sys.Initial()
	if win.From == 1 {
		p.states = append(p.states, w.Clone())
	}
	var out model.Outbox
	for i, a := range acts {
		k := i + 1
		if err := w.Apply(a, &out); err != nil {
			return nil, &StepError{Step: k, Action: sys.ActionName(a), Err: err}
		}
		kind := sys.Kinds[a.Kind]
		if kind == model.Deliver {
			link := int(a.Peer)*P + int(a.Node)
			if q := inflight[link]; len(q) > 0 {
				if l := q[0].pkt.String(); named[l] && k <= scope {
					p.pktRel = append(p.pktRel, related{q[0].step, fmt.Sprintf("ni %d sends %s, which the violation names", a.Peer, l)},
						related{k, fmt.Sprintf("ni %d receives %s, which the violation names", a.Node, l)})
				}
				if keep(q[0].step, k) {
					p.arrows = append(p.arrows, &arrowData{From: lane(a.Peer, true), To: lane(a.Node, true), Sent: q[0].step, Recv: k, Label: q[0].pkt.String(), data: q[0].pkt.Tag.IsData()})
				}
				inflight[link] = q[1:]
			}
		}
		// A fault step acts on the head of its link: a lost or corrupted
		// packet is never delivered (a corruption a protocol handles is
		// received, but arrives as no packet), a duplicated one is
		// delivered twice.
		if f := kind.Fault(); f != 0 {
			link := int(a.Peer)*P + int(a.Node)
			if q := inflight[link]; len(q) > 0 {
				if f == model.FaultDup {
					inflight[link] = append([]sent{q[0]}, q...)
				} else {
					inflight[link] = q[1:]
				}
			}
		}
		for _, s := range out.Sends {
			link := int(a.Node)*P + int(s.To)
			inflight[link] = append(inflight[link], sent{k, s.Pkt})
		}
		if k == win.From-1 {
			p.states = append(p.states, w.Clone())
		}
		if !in(k) {
			continue
		}
		p.states = append(p.states, w.Clone())
		p.names = append(p.names, sys.ActionName(a))
		p.actors = append(p.actors, lane(a.Node, kind.Owner != model.OwnerHost))
		if kind.Owner == model.OwnerHost && len(out.Sends) > 0 {
			p.launches = append(p.launches, k)
		}
		for _, d := range out.Deliveries {
			p.copies = append(p.copies, copyData{k, d.Host, d.Pkt.String()})
		}
	}
	for link, q := range inflight {
		for _, s := range q {
			if keep(s.step, 0) {
				p.arrows = append(p.arrows, &arrowData{From: lane(model.NodeID(link/P), true), To: lane(model.NodeID(link%P), true), Sent: s.step, Label: s.pkt.String(), data: s.pkt.Tag.IsData()})
			}
		}
	}
	sort.SliceStable(p.arrows, func(i, j int) bool { return p.arrows[i].Sent < p.arrows[j].Sent })
	for i, ar := range p.arrows {
		ar.ID = i
	}
	p.relate()
	p.setGutter()
	return p, nil
}

// lane is the index of node id's host (ni false) or NI lifeline.
func lane(id model.NodeID, ni bool) int {
	k := 2 * int(id)
	if ni {
		k++
	}
	return k
}

func (p *picture) laneX(l int) int { return p.gutter + l*chartLane + chartLane/2 }

// setGutter fits the column of step labels to the longest one, within
// 150 and chartGutter pixels.
func (p *picture) setGutter() {
	longest := len("initial state")
	for i, name := range p.names {
		longest = max(longest, len(fmt.Sprintf("%3d. %s", p.win.From+i, name)))
	}
	p.gutter = min(chartGutter, max(150, 24+int(float64(longest)*chartChar)))
}

// entity matches the parts a violation message names.
var entity = regexp.MustCompile(`\b(host|ni|NI|node) (\d+)\b`)

// relate finds the steps the violation is about: the violating step; for
// each host or NI that its message names (a node: both), the last step
// before it that changed that part (for an ordered broadcast, the
// deliveries out of order; for a lost interrupt, the timeout that
// stopped the watchdog), among the steps whose changes the outcome
// holds; and the sends and deliveries of the packets it names (packets
// on recovery channels). Steps outside the window are named too.
func (p *picture) relate() {
	v := p.o.Violation
	if v == nil {
		return
	}
	p.named = map[int]bool{}
	scope := p.o.ViolationStep
	if scope > len(p.o.Steps) {
		scope = len(p.o.Steps)
	}
	if !p.o.Live && scope > 0 {
		p.related = append(p.related, related{scope, "the violating step"})
	}
	type part struct {
		prefix string
		lane   int
	}
	var parts []part
	seen := map[string]bool{}
	for _, m := range entity.FindAllStringSubmatch(v.Message, -1) {
		id, err := strconv.Atoi(m[2])
		if err != nil || id >= p.sys.P {
			continue
		}
		kinds := []string{strings.ToLower(m[1])}
		if kinds[0] == "node" {
			kinds = []string{"host", "ni"}
		}
		for _, k := range kinds {
			pre := fmt.Sprintf("%s %d", k, id)
			if !seen[pre] {
				seen[pre] = true
				parts = append(parts, part{pre, lane(model.NodeID(id), k == "ni")})
				p.named[lane(model.NodeID(id), k == "ni")] = true
			}
		}
	}
	last := scope - 1 // a safety violation: before the violating step
	if p.o.Live {
		last = scope // a liveness violation: up to the step from which the goal never holds
	}
	marked := map[int]bool{scope: !p.o.Live}
	for _, pt := range parts {
		for k := last; k >= 1; k-- {
			if changes(p.o.Steps[k-1].Changes, pt.prefix) {
				if !marked[k] {
					marked[k] = true
					p.related = append(p.related, related{k, "the last change of " + pt.prefix + " before the violation"})
				}
				break
			}
		}
	}
	for _, r := range p.pktRel {
		if !marked[r.Step] {
			marked[r.Step] = true
			p.related = append(p.related, r)
		}
	}
	sort.SliceStable(p.related, func(i, j int) bool { return p.related[i].Step < p.related[j].Step })
}

// changes reports whether a change line is about the part prefix ("host
// 1": "host 1 delivered: ...", not "host 10 ...").
func changes(lines []string, prefix string) bool {
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, prefix); ok && (rest == "" || rest[0] == ' ' || rest[0] == ':') {
			return true
		}
	}
	return false
}

// chart draws a picture as a message sequence chart.
type chart struct {
	*picture
	b     bytes.Buffer
	top   int // y of the first row's middle
	boxes map[int][][4]int
}

// row is the y of the middle of row k (the state before the window's
// first step is row From-1).
func (c *chart) row(k int) int { return c.top + (k-c.win.From+1)*chartRow }

func (c *chart) f(format string, a ...any) { fmt.Fprintf(&c.b, format, a...) }

func esc(s string) string { return html.EscapeString(s) }

// SVG draws the outcome of running acts on sys (as Run or RunLasso
// produced it) as a message sequence chart of its last DefaultWindowSteps
// steps (SVGWith chooses others).
func SVG(sys *model.System, acts []model.Action, o Outcome) ([]byte, error) {
	return SVGWith(sys, acts, o, Options{})
}

// SVGWith draws the steps opt chooses as a message sequence chart: one
// lifeline per host and per NI, a row per step with the acting part
// marked, an arrow for every packet from the step that transmitted it to
// the step that delivered it (data packets solid, control packets dashed,
// labelled as in the text output with "+N" for piggybacked credits; a
// packet sent before the window starts at its top, one delivered after it
// ends at its bottom), copies to hosts, blocked sends and full pools along
// the lifelines (for nodes that implement model.Marker), the violating
// step highlighted and the steps it is about marked, a lasso's loop
// bracketed and a wait-for cycle drawn across the NIs. When the window
// leaves steps out, the chart says so at its top. The output is
// deterministic.
func SVGWith(sys *model.System, acts []model.Action, o Outcome, opt Options) ([]byte, error) {
	p, err := walk(sys, acts, o, opt)
	if err != nil {
		return nil, err
	}
	c := &chart{picture: p}
	c.draw()
	return c.b.Bytes(), nil
}

// wrap breaks s into lines of at most width characters, at spaces where
// it can; continuation lines are indented like the first.
func wrap(s string, width int) []string {
	if width < 20 {
		width = 20
	}
	indent := len(s) - len(strings.TrimLeft(s, " "))
	var out []string
	for len(s) > width {
		cut := strings.LastIndexByte(s[:width+1], ' ')
		if cut <= indent+2 {
			cut = width
		}
		out = append(out, s[:cut])
		s = strings.Repeat(" ", indent+2) + strings.TrimLeft(s[cut:], " ")
	}
	return append(out, s)
}

func (c *chart) draw() {
	P := c.sys.P
	width := c.gutter + 2*P*chartLane + 240 // room for the loop bracket and mark texts
	var footer []string
	for _, l := range c.footer() {
		footer = append(footer, wrap(l, int(float64(width-16)/chartChar))...)
	}
	var head []string
	if c.note != "" {
		head = wrap(c.note, int(float64(width-16)/chartChar))
	}
	c.top = chartHead + 16*len(head) + chartRow/2
	waits := c.waits()
	bottom := c.row(c.win.To) + chartRow
	if len(waits) > 0 {
		bottom += 2 * chartRow
	}
	height := bottom + 20 + 16*len(footer)
	c.f(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="monospace" font-size="12">`+"\n", width, height, width, height)
	c.f(`<title>%s</title>`+"\n", esc(c.sys.Cfg.Describe()))
	c.f(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="context-stroke"/></marker></defs>` + "\n")
	c.f(`<rect x="0" y="0" width="%d" height="%d" fill="white"/>`+"\n", width, height)
	for i, l := range head {
		c.f(`<text class="leftout" x="8" y="%d" fill="#a05000">%s</text>`+"\n", 16+16*i, esc(l))
	}
	// Rows: a band per step (the viewer highlights it), the violating
	// step in red, the steps the violation is about in orange.
	rel := map[int]bool{}
	for _, r := range c.related {
		rel[r.Step] = true
	}
	for k := c.win.From - 1; k <= c.win.To; k++ {
		fill := "none"
		switch {
		case c.o.Violation != nil && !c.o.Live && k == c.o.ViolationStep:
			fill = "#fde2e2"
		case rel[k]:
			fill = "#ffe8c8"
		}
		c.f(`<rect class="row" id="row-%d" x="0" y="%d" width="%d" height="%d" fill="%s"/>`+"\n", k, c.row(k)-chartRow/2, width, chartRow, fill)
	}
	// Lifelines and their names (those the violation names in red).
	for l := 0; l < 2*P; l++ {
		x := c.laneX(l)
		name := fmt.Sprintf("host %d", l/2)
		if l%2 == 1 {
			name = fmt.Sprintf("ni %d", l/2)
		}
		color := ""
		if c.named[l] {
			color = ` fill="#b00"`
		}
		c.f(`<text class="lname" data-l="%d" x="%d" y="%d" text-anchor="middle" font-weight="bold"%s>%s</text>`+"\n", l, x, c.top-chartRow/2-20, color, name)
		c.f(`<line class="lline" data-l="%d" x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888" stroke-width="%d"/>`+"\n", l, x, c.top-chartRow/2-10, x, bottom, 1+l%2)
	}
	c.boxes = map[int][][4]int{}
	c.marks()
	// Step labels and actors.
	if c.win.From == 1 {
		c.f(`<text x="8" y="%d" fill="#555">initial state</text>`+"\n", c.row(0)+4)
	} else {
		c.f(`<text x="8" y="%d" fill="#555">after step %d</text>`+"\n", c.row(c.win.From-1)+4, c.win.From-1)
	}
	for i, name := range c.names {
		k := c.win.From + i
		y := c.row(k)
		label := fmt.Sprintf("%3d. %s", k, name)
		if max := int(float64(c.gutter-12) / chartChar); len(label) > max {
			label = label[:max-1] + "…"
		}
		c.f(`<text x="8" y="%d">%s</text>`+"\n", y+4, esc(label))
		c.f(`<circle data-l="%d" cx="%d" cy="%d" r="4" fill="black"/>`+"\n", c.actors[i], c.laneX(c.actors[i]), y)
	}
	c.packets()
	c.loop(c.gutter + 2*P*chartLane + 8)
	if len(waits) > 0 {
		y := c.row(c.win.To) + chartRow + chartRow/2
		c.f(`<text x="8" y="%d" fill="#b00">wait-for cycle</text>`+"\n", y+4)
		for i, wt := range waits {
			// arcs below the lifelines, deeper in turn so that they do
			// not overlap; the labels sit at the tails
			a, b := lane(wt.From, true), lane(wt.To, true)
			x1, x2 := c.laneX(a), c.laneX(b)
			yy := y - 8
			depth := 14 + 10*(i%3)
			c.f(`<path class="wait" data-a="%d" data-b="%d" data-y="%d" data-d="%d" d="M%d,%d C%d,%d %d,%d %d,%d" fill="none" stroke="#c00" stroke-width="2" marker-end="url(#arrow)"/>`+"\n",
				a, b, yy, depth, x1, yy, x1, yy+depth, x2, yy+depth, x2, yy)
			c.f(`<text data-l="%d" data-dx="4" x="%d" y="%d" fill="#c00" font-size="9">%s</text>`+"\n", a, x1+4, yy-2, esc(wt.Label))
		}
	}
	for i, l := range footer {
		c.f(`<text x="8" y="%d" fill="#b00" xml:space="preserve">%s</text>`+"\n", bottom+16+16*i, esc(l))
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
	for id := 0; id < c.sys.P; id++ {
		for _, part := range []model.Owner{model.OwnerHost, model.OwnerNI} {
			prev := ""
			for i, w := range c.states {
				k := c.win.From - 1 + i
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
				l := lane(model.NodeID(id), part == model.OwnerNI)
				x := c.laneX(l)
				if cur != "" {
					c.f(`<rect data-l="%d" data-dx="-3" x="%d" y="%d" width="6" height="%d" fill="#f0a030" opacity="0.8"/>`+"\n", l, x-3, c.row(k), chartRow)
					if cur != prev {
						// reserved so that packet labels keep clear of it
						c.reserve(x+6+len(cur)*labelChar/2, c.row(k)+12, len(cur))
						c.f(`<text data-l="%d" data-dx="6" x="%d" y="%d" fill="#a05000" font-size="9">%s</text>`+"\n", l, x+6, c.row(k)+12, esc(cur))
					}
				}
				prev = cur
			}
		}
	}
}

// packets draws transmissions, deliveries and copies to hosts.
func (c *chart) packets() {
	for _, k := range c.launches {
		// the host's launch runs the NI's send handler in the same step
		y := c.row(k)
		a, b := c.actors[k-c.win.From], c.actors[k-c.win.From]|1
		c.f(`<line class="launch" data-a="%d" data-b="%d" x1="%d" y1="%d" x2="%d" y2="%d" stroke="#444" marker-end="url(#arrow)"/>`+"\n", a, b, c.laneX(a), y, c.laneX(b), y)
	}
	for _, cp := range c.copies {
		a, b := lane(cp.Node, true), lane(cp.Node, false)
		x1, x2, y := c.laneX(a), c.laneX(b), c.row(cp.Step)
		c.f(`<line data-a="%d" data-b="%d" x1="%d" y1="%d" x2="%d" y2="%d" stroke="#060" stroke-width="1.5" marker-end="url(#arrow)"/>`+"\n", a, b, x1, y, x2, y)
		c.reserve((x1+x2)/2, y-4, len(cp.Label))
		c.f(`<text data-a="%d" data-b="%d" data-t="0.5" x="%d" y="%d" fill="#060" font-size="10" text-anchor="middle">%s</text>`+"\n", a, b, (x1+x2)/2, y-4, esc(cp.Label))
	}
	top, end := c.row(c.win.From-1)+chartRow/2, c.row(c.win.To)+chartRow/2
	for _, ar := range c.arrows {
		y1, y2, note := c.row(ar.Sent), c.row(ar.Recv), ""
		if ar.Sent < c.win.From {
			y1, note = top, fmt.Sprintf(" (sent at step %d)", ar.Sent)
		}
		switch {
		case ar.Recv == 0:
			y2, note = end, note+" (in flight)"
		case ar.Recv > c.win.To:
			y2, note = end, note+fmt.Sprintf(" (delivered at step %d)", ar.Recv)
		}
		c.arrow(ar, c.laneX(ar.From), y1, c.laneX(ar.To), y2, note)
	}
}

// reserve records a label's box (centred at x, baseline y, n characters
// at font-size 10) and reports whether it overlaps one already placed.
func (c *chart) reserve(x, y, n int) bool {
	w := n * labelChar
	box := [4]int{x - w/2, y - 9, x + w/2, y + 2}
	free := true
	for b := box[1] / chartRow; b <= box[3]/chartRow; b++ {
		for _, o := range c.boxes[b] {
			if box[0] < o[2] && o[0] < box[2] && box[1] < o[3] && o[1] < box[3] {
				free = false
			}
		}
	}
	if free {
		for b := box[1] / chartRow; b <= box[3]/chartRow; b++ {
			c.boxes[b] = append(c.boxes[b], box)
		}
	}
	return free
}

// labelSpots are the places along an arrow, as fractions of its length,
// where its label may sit, tried in turn until one overlaps no label.
var labelSpots = []float64{0.5, 0.3, 0.7, 0.2, 0.8, 0.4, 0.6, 0.15, 0.85}

// arrow draws a packet from (x1,y1) to (x2,y2): solid for data, dashed for
// control packets, labelled at the first spot along it where the label
// does not overlap another (above it when it is level).
func (c *chart) arrow(ar *arrowData, x1, y1, x2, y2 int, note string) {
	dash := ""
	color := "#1f4e99"
	if !ar.data {
		dash = ` stroke-dasharray="5,3"`
		color = "#777"
	}
	c.f(`<line class="pkt" data-p="%d" data-a="%d" data-b="%d" x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="1.5"%s marker-end="url(#arrow)"/>`+"\n", ar.ID, ar.From, ar.To, x1, y1, x2, y2, color, dash)
	label := ar.Label + note
	t := -1.0
	for _, s := range labelSpots {
		if c.reserve(x1+int(s*float64(x2-x1)), y1+int(s*float64(y2-y1))-3, len(label)) {
			t = s
			break
		}
	}
	if t < 0 {
		t = 0.5 // every spot overlaps a label: the middle
	}
	lx, ly := x1+int(t*float64(x2-x1)), y1+int(t*float64(y2-y1))-3
	c.f(`<text class="pkt" data-p="%d" data-a="%d" data-b="%d" data-t="%g" x="%d" y="%d" fill="%s" font-size="10" text-anchor="middle">%s</text>`+"\n", ar.ID, ar.From, ar.To, t, lx, ly, color, esc(label))
}

// loop brackets a lasso's loop at x, right of the lifelines.
func (c *chart) loop(x int) {
	if c.o.Loop == 0 {
		return
	}
	start := c.n - c.o.Loop + 1
	if start < c.win.From {
		start = c.win.From
	}
	if start > c.win.To {
		return
	}
	y1, y2 := c.row(start)-chartRow/2+3, c.row(c.win.To)+chartRow/2-3
	c.f(`<path class="loop" data-y1="%d" data-y2="%d" d="M%d,%d H%d V%d H%d" fill="none" stroke="#7030a0" stroke-width="2"/>`+"\n", y1, y2, x, y1, x+8, y2, x)
	c.f(`<text class="loop" x="%d" y="%d" fill="#7030a0" font-size="10" text-anchor="middle" transform="rotate(-90 %d %d)">loop for ever</text>`+"\n",
		x+20, (y1+y2)/2, x+20, (y1+y2)/2)
}
