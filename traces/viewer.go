package traces

import (
	"bytes"
	"encoding/json"
	"html/template"
	"strconv"
	"strings"

	"lfccheck/model"
)

// viewerData is what the HTML viewer's script reads. It covers the
// window's steps only, and holds the states as differences: every
// distinct state line once (Lines), the state before the window's first
// step as line numbers (Base), and for each step an edit script (Diffs)
// that turns the previous state into the next.
type viewerData struct {
	Title         string       `json:"title"`
	N             int          `json:"n"`    // steps in the trace
	From          int          `json:"from"` // the window's first step
	To            int          `json:"to"`   // and its last
	LeftOut       string       `json:"left_out,omitempty"`
	Steps         []Step       `json:"steps"`  // steps From..To
	Actors        []int        `json:"actors"` // the acting lane of each
	Lines         []string     `json:"lines"`
	Base          []int        `json:"base"`
	Diffs         [][]int      `json:"diffs"`
	Lanes         []string     `json:"lanes"`
	Gutter        int          `json:"gutter"`
	Packets       []*arrowData `json:"packets"`
	Related       []related    `json:"related,omitempty"`
	Violation     string       `json:"violation,omitempty"`
	ViolationStep int          `json:"violation_step,omitempty"`
	Explanation   []string     `json:"explanation,omitempty"`
	LoopStart     int          `json:"loop_start,omitempty"`
}

// HTML writes a self-contained viewer of the outcome of running acts on
// sys, of its last DefaultWindowSteps steps (HTMLWith chooses others).
func HTML(sys *model.System, acts []model.Action, o Outcome) ([]byte, error) {
	return HTMLWith(sys, acts, o, Options{})
}

// HTMLWith writes a self-contained viewer of the steps opt chooses: the
// sequence chart (SVG), which follows the current step and whose
// lifelines can be hidden or merged (a node's host and NI in one); the
// step list; the state after the current step with what changed
// highlighted; buttons, a slider and the arrow keys to step through it;
// a packet followed from its send to its delivery (click its arrow); a
// search over steps and state lines; the steps the violation is about,
// and the violation with its explanation at the end. When the window
// leaves steps out, the page says which and gives the command that draws
// them. It needs no network access and works from file://.
func HTMLWith(sys *model.System, acts []model.Action, o Outcome, opt Options) ([]byte, error) {
	p, err := walk(sys, acts, o, opt)
	if err != nil {
		return nil, err
	}
	c := &chart{picture: p}
	c.draw()
	d := viewerData{Title: sys.Cfg.Describe(), N: p.n, From: p.win.From, To: p.win.To, LeftOut: p.note,
		Actors: p.actors, Gutter: p.gutter, Packets: p.arrows, Related: p.related}
	if d.Actors == nil {
		d.Actors = []int{}
	}
	if d.Packets == nil {
		d.Packets = []*arrowData{}
	}
	for i, name := range p.names {
		k := p.win.From + i
		st := Step{N: k, Action: name, Changes: []string{}}
		if k <= len(o.Steps) {
			st.Changes = o.Steps[k-1].Changes
		}
		d.Steps = append(d.Steps, st)
	}
	if d.Steps == nil {
		d.Steps = []Step{}
	}
	for l := 0; l < 2*sys.P; l++ {
		name := "host "
		if l%2 == 1 {
			name = "ni "
		}
		d.Lanes = append(d.Lanes, name+strconv.Itoa(l/2))
	}
	ids := map[string]int{}
	encode := func(w *model.World) []int {
		var out []int
		for _, line := range strings.Split(strings.TrimRight(w.Format(), "\n"), "\n") {
			id, ok := ids[line]
			if !ok {
				id = len(d.Lines)
				ids[line] = id
				d.Lines = append(d.Lines, line)
			}
			out = append(out, id)
		}
		return out
	}
	prev := encode(p.states[0])
	d.Base = prev
	d.Diffs = [][]int{}
	for _, w := range p.states[1:] {
		cur := encode(w)
		d.Diffs = append(d.Diffs, editScript(prev, cur))
		prev = cur
	}
	if o.Violation != nil {
		d.Violation = "violated: " + o.Violation.Property + ": " + o.Violation.Message
		d.ViolationStep = o.ViolationStep
		if o.Explanation != nil {
			d.Explanation = o.Explanation.Text()
		}
	}
	if o.Loop > 0 {
		d.LoopStart = len(acts) - o.Loop + 1
	}
	js, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = viewerTemplate.Execute(&b, struct {
		Title  string
		SVG    template.HTML
		Data   template.JS
		Script template.JS
	}{d.Title, template.HTML(c.b.String()), template.JS(js), template.JS(viewerScript)})
	return b.Bytes(), err
}

// editScript turns the line list a into b as runs of three numbers and
// the lines inserted: keep k lines, delete d, insert n (the n line
// numbers follow); what is left of a after the last run is kept.
func editScript(a, b []int) []int {
	pos := make(map[int]int, len(a))
	for i, x := range a {
		pos[x] = i
	}
	out := []int{}
	keep, del := 0, 0
	var ins []int
	flush := func() {
		if del > 0 || len(ins) > 0 {
			out = append(out, keep, del, len(ins))
			out = append(out, ins...)
			keep, del, ins = 0, 0, nil
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			flush()
			keep++
			i++
			j++
		case j < len(b) && (i >= len(a) || !inAfter(pos, b[j], i)):
			ins = append(ins, b[j])
			j++
		default:
			del++
			i++
		}
	}
	flush()
	return out
}

// inAfter reports whether line x is in the old list at position i or
// later.
func inAfter(pos map[int]int, x, i int) bool {
	p, ok := pos[x]
	return ok && p >= i
}

var viewerTemplate = template.Must(template.New("viewer").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>lfccheck: {{.Title}}</title>
<style>
body { font-family: sans-serif; margin: 0; display: flex; height: 100vh; }
#chart { flex: 3; overflow: auto; border-right: 1px solid #ccc; }
#chart svg { display: block; }
#side { flex: 2; display: flex; flex-direction: column; padding: 8px; min-width: 320px; overflow: auto; }
#controls, #lifelines, #find { display: flex; gap: 6px; align-items: center; margin-bottom: 6px; flex-wrap: wrap; }
#slider, #search { flex: 1; }
#stepno { font-weight: bold; }
#leftout { background: #fff0d0; border: 1px solid #e0a040; padding: 4px; font-size: 12px; margin-bottom: 6px; overflow-wrap: anywhere; }
#leftout code { user-select: all; }
#action { font-family: monospace; margin: 4px 0; overflow-wrap: anywhere; }
#changes { font-family: monospace; font-size: 12px; color: #060; margin: 0 0 6px 0; padding-left: 18px; overflow-wrap: anywhere; }
#results { font-family: monospace; font-size: 12px; max-height: 160px; overflow: auto; margin: 0 0 6px 0; padding-left: 18px; }
#results li, #related li { cursor: pointer; }
#related { font-size: 12px; color: #a05000; margin: 0 0 6px 0; padding-left: 18px; }
#packet { font-family: monospace; font-size: 12px; color: #c00060; margin-bottom: 6px; }
#state { font-family: monospace; font-size: 12px; white-space: pre-wrap; overflow-wrap: anywhere; background: #f7f7f7; padding: 6px; }
#state .changed { background: #fff0a0; }
#state .match { outline: 1px solid #1f4e99; }
#violation { color: #b00; font-family: monospace; font-size: 12px; white-space: pre-wrap; overflow-wrap: anywhere; margin-top: 8px; }
svg .row { cursor: pointer; pointer-events: all; }
svg .row.current { fill: #fff3b0; }
svg .row.found { fill: #dfe9ff; }
svg .lname { cursor: pointer; }
svg [data-p] { cursor: pointer; }
svg line.pkt { pointer-events: stroke; }
svg .pkt.active { stroke-width: 3; }
svg text.pkt.active { font-weight: bold; }
svg line.pkt.followed { stroke: #c00060; stroke-width: 3.5; }
svg text.pkt.followed { fill: #c00060; font-weight: bold; }
</style>
</head>
<body>
<div id="chart">{{.SVG}}</div>
<div id="side">
<div><b>{{.Title}}</b></div>
<div id="leftout" hidden></div>
<div id="controls">
<button id="first" title="first step (Home)">&laquo;</button>
<button id="prev" title="previous step (left arrow)">&#x25C0;</button>
<input id="slider" type="range" min="0" value="0">
<button id="next" title="next step (right arrow)">&#x25B6;</button>
<button id="last" title="last step (End)">&raquo;</button>
</div>
<div id="lifelines">lifelines:
<label><input id="show-hosts" type="checkbox" checked> hosts</label>
<label><input id="show-nis" type="checkbox" checked> NIs</label>
<label title="one lifeline per node: its host and NI"><input id="merge" type="checkbox"> merge host+NI</label>
<button id="show-all" title="show every lifeline (click a lifeline's name to hide it)">show all</button>
<select id="zoom" title="zoom"><option value="1">100%</option><option value="fit">fit width</option><option value="0.75">75%</option><option value="0.5">50%</option><option value="0.3">30%</option></select>
</div>
<div id="find"><input id="search" type="search" placeholder="search steps and state lines (Enter: next)"><span id="nfound"></span></div>
<ul id="results"></ul>
<div id="stepno"></div>
<div id="action"></div>
<ul id="changes"></ul>
<div id="packet"></div>
<ul id="related"></ul>
<div id="state"></div>
<div id="violation" hidden></div>
</div>
<script id="data" type="application/json">{{.Data}}</script>
<script>
{{.Script}}</script>
</body>
</html>
`))

// viewerScript is the viewer's program, inside CDATA so that the page
// stays well-formed markup.
const viewerScript = `//<![CDATA[
"use strict";
const data = JSON.parse(document.getElementById("data").textContent);
const n = data.n, lo = data.from - 1, hi = data.to;
const slider = document.getElementById("slider");
const chartDiv = document.getElementById("chart");
const svg = chartDiv.querySelector("svg");
slider.min = lo;
slider.max = hi;
if (data.left_out) {
  const lo = document.getElementById("leftout");
  const i = data.left_out.indexOf(": ");
  lo.textContent = data.left_out.slice(0, i + 2);
  const code = document.createElement("code");
  code.textContent = data.left_out.slice(i + 2);
  lo.appendChild(code);
  lo.hidden = false;
}
// States: apply the edit scripts, keeping every 64th state.
function apply(prev, d, ins) {
  const out = [];
  let i = 0, j = 0;
  while (j < d.length) {
    const keep = d[j++], del = d[j++], m = d[j++];
    for (let t = 0; t < keep; t++) { out.push(prev[i++]); }
    i += del;
    for (let t = 0; t < m; t++) { out.push(d[j]); if (ins) { ins.add(d[j]); } j++; }
  }
  while (i < prev.length) { out.push(prev[i++]); }
  return out;
}
const saved = new Map([[lo, data.base]]);
{
  let ids = data.base;
  for (let k = lo + 1; k <= hi; k++) {
    ids = apply(ids, data.diffs[k - lo - 1]);
    if ((k - lo) % 64 === 0) { saved.set(k, ids); }
  }
}
function stateAt(k) {
  const r = lo + Math.floor((k - lo) / 64) * 64;
  let ids = saved.get(r);
  for (let q = r + 1; q <= k; q++) { ids = apply(ids, data.diffs[q - lo - 1]); }
  return ids;
}
// Packets: their elements, and which ones each step sends or delivers.
const pktEls = new Map(), atStep = new Map();
for (const el of svg.querySelectorAll("[data-p]")) {
  const id = Number(el.dataset.p);
  if (!pktEls.has(id)) { pktEls.set(id, []); }
  pktEls.get(id).push(el);
  el.addEventListener("click", (e) => { followPacket(id); e.stopPropagation(); });
}
for (const p of data.packets) {
  for (const k of [p.sent, p.recv]) {
    if (!atStep.has(k)) { atStep.set(k, []); }
    atStep.get(k).push(p.id);
  }
}
// Lifelines: hide, merge, zoom.
const L = data.lanes.length, gutter = data.gutter, laneW = 84;
const hidden = new Array(L).fill(false);
let X = [], zoom = 1, width = 0;
const laneEls = Array.from(svg.querySelectorAll("[data-l]"));
const pairEls = Array.from(svg.querySelectorAll("[data-a]"));
function setShown(el, on) { el.style.display = on ? "" : "none"; }
function layout() {
  const merge = document.getElementById("merge").checked;
  const hosts = document.getElementById("show-hosts").checked, nis = document.getElementById("show-nis").checked;
  let col = 0;
  X = new Array(L).fill(null);
  for (let node = 0; node < L / 2; node++) {
    const h = 2 * node, ni = h + 1;
    const hv = hosts && !hidden[h], nv = nis && !hidden[ni];
    if (merge && (hv || nv)) {
      const x = gutter + col * laneW + laneW / 2;
      X[h] = hv ? x : null;
      X[ni] = nv ? x : null;
      col++;
      continue;
    }
    if (hv) { X[h] = gutter + col * laneW + laneW / 2; col++; }
    if (nv) { X[ni] = gutter + col * laneW + laneW / 2; col++; }
  }
  for (const el of laneEls) {
    const l = Number(el.dataset.l), x = X[l];
    setShown(el, x !== null);
    if (el.classList.contains("lname")) {
      // merged: one name per node, on the NI's lifeline when it shows
      const both = merge && X[l ^ 1] !== null && x !== null;
      if (both && l % 2 === 0) { setShown(el, false); }
      el.textContent = both ? "node " + (l >> 1) : data.lanes[l];
    }
    if (x === null) { continue; }
    const dx = Number(el.dataset.dx || 0);
    if (el.tagName === "line") { el.setAttribute("x1", x); el.setAttribute("x2", x); }
    else if (el.tagName === "circle") { el.setAttribute("cx", x); }
    else { el.setAttribute("x", x + dx); }
  }
  for (const el of pairEls) {
    const a = Number(el.dataset.a), b = Number(el.dataset.b), xa = X[a], xb = X[b];
    const on = xa !== null && xb !== null && (a === b || xa !== xb);
    setShown(el, on);
    if (!on) { continue; }
    if (el.tagName === "line") { el.setAttribute("x1", xa); el.setAttribute("x2", xb); }
    else if (el.tagName === "text") { el.setAttribute("x", xa + Number(el.dataset.t) * (xb - xa)); }
    else if (el.tagName === "path") {
      const y = Number(el.dataset.y), d = Number(el.dataset.d);
      el.setAttribute("d", "M" + xa + "," + y + " C" + xa + "," + (y + d) + " " + xb + "," + (y + d) + " " + xb + "," + y);
    }
  }
  const right = gutter + col * laneW;
  for (const el of svg.querySelectorAll(".loop")) {
    if (el.tagName === "path") {
      el.setAttribute("d", "M" + (right + 8) + "," + el.dataset.y1 + " H" + (right + 16) + " V" + el.dataset.y2 + " H" + (right + 8));
    } else {
      const y = el.getAttribute("y");
      el.setAttribute("x", right + 28);
      el.setAttribute("transform", "rotate(-90 " + (right + 28) + " " + y + ")");
    }
  }
  width = right + 240;
  const zs = document.getElementById("zoom").value;
  zoom = zs === "fit" ? Math.min(1, (chartDiv.clientWidth - 4) / width) : Number(zs);
  const h = svg.viewBox.baseVal.height;
  svg.setAttribute("viewBox", "0 0 " + width + " " + h);
  svg.setAttribute("width", width * zoom);
  svg.setAttribute("height", h * zoom);
}
for (const el of svg.querySelectorAll(".lname")) {
  el.addEventListener("click", () => {
    const l = Number(el.dataset.l);
    hidden[l] = true;
    if (document.getElementById("merge").checked) { hidden[l ^ 1] = true; }
    layout();
  });
}
for (const id of ["show-hosts", "show-nis", "merge"]) { document.getElementById(id).onchange = layout; }
document.getElementById("show-all").onclick = () => {
  hidden.fill(false);
  document.getElementById("show-hosts").checked = true;
  document.getElementById("show-nis").checked = true;
  document.getElementById("merge").checked = false;
  layout();
};
document.getElementById("zoom").onchange = () => { layout(); follow(cur); };
window.addEventListener("resize", () => { if (document.getElementById("zoom").value === "fit") { layout(); } });
// Following a packet.
let followed = -1;
function followPacket(id) {
  for (const el of pktEls.get(followed) || []) { el.classList.remove("followed"); }
  followed = id;
  for (const el of pktEls.get(id) || []) { el.classList.add("followed"); }
  const p = data.packets[id], box = document.getElementById("packet");
  box.replaceChildren();
  if (!p) { return; }
  const at = (k) => k === 0 ? "is still in flight at the end" : "at step " + k;
  box.append("packet " + p.label + " from " + data.lanes[p.from] + " to " + data.lanes[p.to] + ": sent " + at(p.sent) + ", delivered " + at(p.recv) + " ");
  for (const [name, k] of [["send", p.sent], ["delivery", p.recv]]) {
    if (k < lo || k > hi || k === 0) { continue; }
    const b = document.createElement("button");
    b.id = "go-" + name;
    b.textContent = "go to its " + name;
    b.onclick = () => show(k);
    box.appendChild(b);
  }
}
// The steps the violation is about.
{
  const ul = document.getElementById("related");
  for (const r of data.related || []) {
    const li = document.createElement("li");
    li.textContent = "step " + r.step + ": " + r.why + (r.step < lo || r.step > hi ? " (not in this page)" : "");
    li.onclick = () => show(r.step);
    ul.appendChild(li);
  }
}
// Search.
let matches = [], term = "";
const search = document.getElementById("search");
function find() {
  term = search.value.trim().toLowerCase();
  matches = [];
  const res = document.getElementById("results");
  res.replaceChildren();
  for (const r of svg.querySelectorAll(".row.found")) { r.classList.remove("found"); }
  if (term.length < 2) { document.getElementById("nfound").textContent = ""; show(cur); return; }
  const hit = new Set();
  for (let i = 0; i < data.lines.length; i++) { if (data.lines[i].toLowerCase().includes(term)) { hit.add(i); } }
  const add = (k, text) => { matches.push({k: k, text: text}); };
  for (const id of data.base) { if (hit.has(id)) { add(lo, data.lines[id]); } }
  for (let k = lo + 1; k <= hi; k++) {
    const s = data.steps[k - lo - 1];
    if (s.action.toLowerCase().includes(term)) { add(k, s.action); }
    for (const c of s.changes || []) { if (c.toLowerCase().includes(term)) { add(k, c); } }
    const ins = new Set();
    apply([], data.diffs[k - lo - 1], ins);
    for (const id of ins) { if (hit.has(id)) { add(k, data.lines[id]); } }
  }
  const seen = new Set();
  for (const m of matches) {
    if (!seen.has(m.k)) {
      seen.add(m.k);
      const r = document.getElementById("row-" + m.k);
      if (r) { r.classList.add("found"); }
    }
    if (res.children.length < 200) {
      const li = document.createElement("li");
      li.textContent = "step " + m.k + ": " + m.text;
      li.onclick = () => show(m.k);
      res.appendChild(li);
    }
  }
  document.getElementById("nfound").textContent = matches.length + " found in " + seen.size + " steps";
  show(cur);
}
search.addEventListener("input", find);
search.addEventListener("keydown", (e) => {
  if (e.key !== "Enter" || matches.length === 0) { return; }
  const next = matches.find((m) => m.k > cur) || matches[0];
  show(next.k);
  e.preventDefault();
});
// Stepping.
let cur = lo, curRow = null, active = [];
function follow(k) {
  const r = document.getElementById("row-" + k);
  if (!r) { return; }
  const cr = chartDiv.getBoundingClientRect(), rr = r.getBoundingClientRect();
  if (rr.top < cr.top + 40 || rr.bottom > cr.bottom - 20) {
    chartDiv.scrollTop += rr.top - cr.top - chartDiv.clientHeight / 3;
  }
  const l = data.actors[k - lo - 1];
  if (l !== undefined && X[l] !== null) {
    const x = X[l] * zoom;
    if (x < chartDiv.scrollLeft + 40 || x > chartDiv.scrollLeft + chartDiv.clientWidth - 40) {
      chartDiv.scrollLeft = x - chartDiv.clientWidth / 2;
    }
  }
}
function show(k) {
  cur = Math.max(lo, Math.min(hi, k));
  slider.value = cur;
  let label = "step " + cur + " of " + n;
  if (data.left_out) { label += " (this page: steps " + data.from + "-" + data.to + ")"; }
  if (data.loop_start && cur >= data.loop_start) { label += " (in the loop, which repeats steps " + data.loop_start + "-" + n + ")"; }
  document.getElementById("stepno").textContent = label;
  let action = cur === 0 ? "initial state" : cur === lo ? "state after step " + cur + " (earlier steps are not in this page)" : data.steps[cur - lo - 1].action;
  document.getElementById("action").textContent = action;
  const ch = document.getElementById("changes");
  ch.replaceChildren();
  const ins = new Set();
  if (cur > lo) {
    for (const c of data.steps[cur - lo - 1].changes || []) {
      const li = document.createElement("li");
      li.textContent = c;
      ch.appendChild(li);
    }
    apply([], data.diffs[cur - lo - 1], ins);
  }
  const st = document.getElementById("state");
  st.replaceChildren();
  for (const id of stateAt(cur)) {
    const div = document.createElement("div");
    div.textContent = data.lines[id];
    let cls = [];
    if (ins.has(id)) { cls.push("changed"); }
    if (term.length >= 2 && data.lines[id].toLowerCase().includes(term)) { cls.push("match"); }
    div.className = cls.join(" ");
    st.appendChild(div);
  }
  if (curRow) { curRow.classList.remove("current"); }
  curRow = document.getElementById("row-" + cur);
  if (curRow) { curRow.classList.add("current"); }
  for (const el of active) { el.classList.remove("active"); }
  active = [];
  for (const id of atStep.get(cur) || []) {
    for (const el of pktEls.get(id) || []) { el.classList.add("active"); active.push(el); }
  }
  const v = document.getElementById("violation");
  if (cur === n && data.violation) {
    v.textContent = [data.violation].concat(data.explanation || []).join("\n");
    v.hidden = false;
  } else {
    v.hidden = true;
  }
  follow(cur);
}
document.getElementById("first").onclick = () => show(lo);
document.getElementById("prev").onclick = () => show(cur - 1);
document.getElementById("next").onclick = () => show(cur + 1);
document.getElementById("last").onclick = () => show(hi);
slider.oninput = () => show(Number(slider.value));
svg.addEventListener("click", (e) => {
  // the row under the pointer, whatever is drawn over it
  for (const el of document.elementsFromPoint(e.clientX, e.clientY)) {
    if (el.classList && el.classList.contains("row")) { show(Number(el.id.slice(4))); return; }
  }
});
document.addEventListener("keydown", (e) => {
  if (e.target === slider || e.target === search || e.target.tagName === "SELECT") { return; }
  if (e.key === "ArrowRight") { show(cur + 1); e.preventDefault(); }
  else if (e.key === "ArrowLeft") { show(cur - 1); e.preventDefault(); }
  else if (e.key === "Home") { show(lo); e.preventDefault(); }
  else if (e.key === "End") { show(hi); e.preventDefault(); }
});
layout();
show(lo);
//]]>
`
