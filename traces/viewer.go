package traces

import (
	"bytes"
	"encoding/json"
	"html/template"
	"strings"

	"lfccheck/model"
)

// viewerData is what the HTML viewer's script reads.
type viewerData struct {
	Title       string   `json:"title"`
	Steps       []Step   `json:"steps"`
	States      []string `json:"states"` // the state after each step, [0] the initial one
	Violation   string   `json:"violation,omitempty"`
	Explanation []string `json:"explanation,omitempty"`
	LoopStart   int      `json:"loop_start,omitempty"`
}

// HTML writes a self-contained viewer of the outcome of running acts on
// sys: the sequence chart (SVG), the step list, the state after the
// current step with what changed highlighted, buttons, a slider and the
// arrow keys to step through it, and the violation with its explanation
// at the end. It needs no network access and works from file://.
func HTML(sys *model.System, acts []model.Action, o Outcome) ([]byte, error) {
	svg, err := SVG(sys, acts, o)
	if err != nil {
		return nil, err
	}
	init, frames, err := Record(sys, acts)
	if err != nil {
		return nil, err
	}
	d := viewerData{Title: sys.Cfg.Describe(), Steps: o.Steps, States: []string{strings.TrimRight(init.Format(), "\n")}}
	if d.Steps == nil {
		d.Steps = []Step{}
	}
	for _, fr := range frames {
		d.States = append(d.States, strings.TrimRight(fr.State.Format(), "\n"))
	}
	if o.Violation != nil {
		d.Violation = "violated: " + o.Violation.Property + ": " + o.Violation.Message
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
		Title string
		SVG   template.HTML
		Data  template.JS
	}{d.Title, template.HTML(svg), template.JS(js)})
	return b.Bytes(), err
}

var viewerTemplate = template.Must(template.New("viewer").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>lfccheck: {{.Title}}</title>
<style>
body { font-family: sans-serif; margin: 0; display: flex; height: 100vh; }
#chart { flex: 3; overflow: auto; border-right: 1px solid #ccc; }
#side { flex: 2; display: flex; flex-direction: column; padding: 8px; min-width: 320px; overflow: auto; }
#controls { display: flex; gap: 6px; align-items: center; margin-bottom: 6px; }
#slider { flex: 1; }
#stepno { font-weight: bold; }
#action { font-family: monospace; margin: 4px 0; }
#changes { font-family: monospace; font-size: 12px; color: #060; margin: 0 0 6px 0; padding-left: 18px; }
#state { font-family: monospace; font-size: 12px; white-space: pre; background: #f7f7f7; padding: 6px; }
#state .changed { background: #fff0a0; }
#violation { color: #b00; font-family: monospace; font-size: 12px; white-space: pre-wrap; margin-top: 8px; }
svg .row { cursor: pointer; }
svg .row.current { fill: #fff3b0; }
</style>
</head>
<body>
<div id="chart">{{.SVG}}</div>
<div id="side">
<div><b>{{.Title}}</b></div>
<div id="controls">
<button id="first" title="first step (Home)">&laquo;</button>
<button id="prev" title="previous step (left arrow)">&#x25C0;</button>
<input id="slider" type="range" min="0" value="0">
<button id="next" title="next step (right arrow)">&#x25B6;</button>
<button id="last" title="last step (End)">&raquo;</button>
</div>
<div id="stepno"></div>
<div id="action"></div>
<ul id="changes"></ul>
<div id="state"></div>
<div id="violation" hidden></div>
</div>
<script id="data" type="application/json">{{.Data}}</script>
<script>
"use strict";
const data = JSON.parse(document.getElementById("data").textContent);
const n = data.steps.length;
const slider = document.getElementById("slider");
slider.max = n;
let cur = 0;
function show(k) {
  cur = Math.max(0, Math.min(n, k));
  slider.value = cur;
  let label = "step " + cur + " of " + n;
  if (data.loop_start && cur >= data.loop_start) { label += " (in the loop, which repeats steps " + data.loop_start + "-" + n + ")"; }
  document.getElementById("stepno").textContent = label;
  document.getElementById("action").textContent = cur === 0 ? "initial state" : data.steps[cur - 1].action;
  const ch = document.getElementById("changes");
  ch.replaceChildren();
  if (cur > 0) {
    for (const c of data.steps[cur - 1].changes || []) {
      const li = document.createElement("li");
      li.textContent = c;
      ch.appendChild(li);
    }
  }
  const before = new Set(cur > 0 ? data.states[cur - 1].split("\n") : []);
  const st = document.getElementById("state");
  st.replaceChildren();
  for (const line of data.states[cur].split("\n")) {
    const div = document.createElement("div");
    div.textContent = line;
    if (cur > 0 && !before.has(line)) { div.className = "changed"; }
    st.appendChild(div);
  }
  for (const r of document.querySelectorAll("svg .row")) { r.classList.remove("current"); }
  const row = document.getElementById("row-" + cur);
  if (row) { row.classList.add("current"); }
  const v = document.getElementById("violation");
  if (cur === n && data.violation) {
    v.textContent = [data.violation].concat(data.explanation || []).join("\n");
    v.hidden = false;
  } else {
    v.hidden = true;
  }
}
document.getElementById("first").onclick = () => show(0);
document.getElementById("prev").onclick = () => show(cur - 1);
document.getElementById("next").onclick = () => show(cur + 1);
document.getElementById("last").onclick = () => show(n);
slider.oninput = () => show(Number(slider.value));
for (const r of document.querySelectorAll("svg .row")) {
  r.addEventListener("click", () => show(Number(r.id.slice(4))));
}
document.addEventListener("keydown", (e) => {
  if (e.target === slider) { return; }
  if (e.key === "ArrowRight") { show(cur + 1); e.preventDefault(); }
  else if (e.key === "ArrowLeft") { show(cur - 1); e.preventDefault(); }
  else if (e.key === "Home") { show(0); e.preventDefault(); }
  else if (e.key === "End") { show(n); e.preventDefault(); }
});
show(0);
</script>
</body>
</html>
`))
