// lfccheck explorer: the page keeps the path (a list of action names and a
// position in it); the server replays it from the initial state on every
// request and answers with the state, the enabled actions and the
// properties.
"use strict";

const $ = (id) => document.getElementById(id);

const ui = {
  model: 0,        // the configuration's id on the server
  path: [],        // action names; path[0..pos) is the current path
  pos: 0,
  loopStart: 0,    // a loaded lasso's loop (kept while the path is unchanged)
  loopPath: null,  // the path the loop belongs to
  view: null,      // the server's last answer
  busy: false,
  lastExport: "",  // the last exported trace file (for tests and copying)
};

function showError(msg) {
  const e = $("error");
  e.textContent = msg;
  e.hidden = !msg;
}

async function api(method, url, body) {
  const opt = { method, headers: {} };
  if (body !== undefined) {
    opt.headers["Content-Type"] = "application/json";
    opt.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  const resp = await fetch(url, opt);
  const text = await resp.text();
  let data = null;
  try { data = JSON.parse(text); } catch (e) { /* not JSON */ }
  if (!resp.ok) {
    throw new Error((data && data.error) || resp.status + " " + resp.statusText);
  }
  return { data, text };
}

function current() { return ui.path.slice(0, ui.pos); }

function loopFor(actions) {
  if (!ui.loopStart || !ui.loopPath) return 0;
  if (actions.length !== ui.loopPath.length) return 0;
  for (let i = 0; i < actions.length; i++) if (actions[i] !== ui.loopPath[i]) return 0;
  return ui.loopStart;
}

function pathRequest() {
  const actions = current();
  const req = { model: ui.model, actions };
  const loop = loopFor(actions);
  if (loop) req.loop_start = loop;
  return req;
}

async function refresh() {
  ui.busy = true;
  document.body.dataset.busy = "1";
  try {
    const { data } = await api("POST", "api/state", pathRequest());
    ui.view = data;
    showError("");
    render();
    drawChart();
  } catch (e) {
    showError(e.message);
  } finally {
    ui.busy = false;
    document.body.dataset.busy = "";
    document.body.dataset.step = String(ui.pos);
  }
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function render() {
  const v = ui.view;
  $("describe").textContent = v.describe;
  // Path bar: the initial state, then every step of the path (those after
  // the position dimmed: forward goes there).
  const bar = $("pathbar");
  bar.replaceChildren();
  const chip0 = el("span", "chip" + (ui.pos === 0 ? " current" : ""), "0 initial");
  chip0.id = "chip-0";
  chip0.onclick = () => go(0);
  bar.append(chip0);
  const loop = loopFor(ui.path);
  const chip = (i) => {
    const a = ui.path[i];
    let cls = "chip";
    if (i + 1 === ui.pos) cls += " current";
    if (i + 1 > ui.pos) cls += " ahead";
    if (loop && i + 1 >= loop) cls += " loop";
    const c = el("span", cls, (i + 1) + " " + a);
    c.id = "chip-" + (i + 1);
    c.title = "go to step " + (i + 1);
    c.onclick = () => go(i + 1);
    bar.append(c);
  };
  // A long path shows the steps around the current one, and its last.
  const W = 150, n = ui.path.length;
  const lo = Math.max(0, ui.pos - W), hi = Math.min(n, ui.pos + W);
  if (lo > 0) bar.append(el("span", "gap", "\u2026 " + lo + " steps \u2026"));
  for (let i = lo; i < hi; i++) chip(i);
  if (hi < n) {
    if (hi < n - 1) bar.append(el("span", "gap", "\u2026 " + (n - 1 - hi) + " steps \u2026"));
    chip(n - 1);
  }
  const cur = $("chip-" + ui.pos);
  if (cur && cur.scrollIntoView) cur.scrollIntoView({ block: "nearest" });

  const st = $("status");
  st.textContent = "step " + ui.pos + ": " + (v.violation ? v.violation.property + " violated" : v.status);
  st.className = v.violation ? "bad" : (v.terminal ? "end" : "");
  const vio = $("violation");
  vio.hidden = !v.violation;
  if (v.violation) {
    $("violation-text").textContent = v.violation.text;
    $("explanation").textContent = (v.violation.explanation || []).join("\n");
  }

  const list = $("actions");
  list.replaceChildren();
  v.enabled.forEach((c, i) => {
    const li = el("li");
    const b = el("button", "action", c.action);
    b.id = "action-" + i;
    b.dataset.action = c.action;
    b.onclick = () => take(c.action);
    li.append(b);
    if (c.violation) li.append(el("span", "badge bad", c.end ? "end state: " + c.violation : "violates " + c.violation));
    else if (c.end) li.append(el("span", "badge end", "proper end state"));
    const ch = el("ul", "changes");
    c.changes.forEach((x) => ch.append(el("li", "", x)));
    li.append(ch);
    list.append(li);
  });
  if (v.enabled.length === 0) {
    list.append(el("li", "hint", v.violation ? "none: the path ends at the violation (go back to try another step)" : "none: no action is enabled"));
  }

  const tb = $("properties").tBodies[0];
  tb.replaceChildren();
  v.properties.forEach((p) => {
    const tr = el("tr");
    tr.dataset.property = p.name;
    const name = el("td", "", p.name);
    name.title = p.doc || "";
    tr.append(name, el("td", "", p.kind), el("td", p.status, p.status), el("td", "", p.note || ""));
    tb.append(tr);
  });

  const state = $("state");
  state.replaceChildren();
  v.state.forEach((l, i) => state.append(el("span", "line" + (v.changed[i] ? " changed" : ""), l)));
  $("state-title").textContent = ui.pos === 0 ? "Initial state" : "State after step " + ui.pos;
  const step = v.last;
  $("step-title").textContent = step ? "Step " + step.step + ": " + step.action : "";
  const chg = $("changes");
  chg.replaceChildren();
  if (step) step.changes.forEach((x) => chg.append(el("li", "", x)));

  $("back").disabled = ui.pos === 0;
  $("forward").disabled = ui.pos >= ui.path.length;
}

// The chart of the current path, redrawn after every move while shown.
let chartURL = null;

async function drawChart() {
  const box = $("chart");
  if (box.hidden) return;
  try {
    const resp = await fetch("api/chart", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(pathRequest()) });
    if (!resp.ok) throw new Error((await resp.json()).error);
    const blob = await resp.blob();
    if (chartURL) URL.revokeObjectURL(chartURL);
    chartURL = URL.createObjectURL(blob);
    $("chart-img").src = chartURL;
    box.dataset.step = String(ui.pos);
  } catch (e) {
    showError("chart: " + e.message);
  }
}

function toggleChart() {
  const box = $("chart");
  box.hidden = !box.hidden;
  $("chart-toggle").textContent = box.hidden ? "chart" : "hide chart";
  drawChart();
}

function go(n) {
  if (n < 0 || n > ui.path.length || ui.busy) return;
  ui.pos = n;
  refresh();
}

function take(action) {
  if (ui.busy) return;
  if (ui.path[ui.pos] !== action) ui.path = ui.path.slice(0, ui.pos).concat([action]);
  ui.pos++;
  refresh();
}

function setPath(model, actions, loopStart) {
  ui.model = model;
  ui.path = actions.slice();
  ui.pos = actions.length;
  ui.loopStart = loopStart || 0;
  ui.loopPath = loopStart ? actions.slice() : null;
  refresh();
}

async function exportPath() {
  try {
    const { text } = await api("POST", "api/export", pathRequest());
    ui.lastExport = text;
    const url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
    const a = el("a");
    a.href = url;
    a.download = "lfccheck-path.json";
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
    document.body.dataset.exported = String(ui.pos);
  } catch (e) {
    showError("export: " + e.message);
  }
}

async function loadFile(file) {
  try {
    const text = await file.text();
    const { data } = await api("POST", "api/load?name=" + encodeURIComponent(file.name), text);
    setPath(data.model, data.actions, data.loop_start);
  } catch (e) {
    showError("load: " + e.message);
  }
}

// Checks.
let polling = null;

async function startCheck() {
  try {
    await api("POST", "api/check", { model: ui.model });
    pollCheck();
  } catch (e) {
    showError("check: " + e.message);
  }
}

async function cancelCheck() {
  try {
    await api("POST", "api/check/cancel", {});
  } catch (e) {
    showError("cancel: " + e.message);
  }
}

function fmt(n) { return Math.round(n).toLocaleString("en-US"); }

async function pollCheck() {
  if (polling) clearTimeout(polling);
  polling = null;
  let s;
  try {
    ({ data: s } = await api("GET", "api/check"));
  } catch (e) {
    showError("check: " + e.message);
    return;
  }
  $("check-start").hidden = !s.available || s.running;
  $("check-cancel").hidden = !s.running;
  if (!s.model) return;
  $("check").hidden = false;
  const box = $("check");
  box.dataset.state = s.running ? "running" : (s.error ? "error" : "done");
  const p = s.progress;
  if (s.running) {
    $("check-status").textContent = "checking " + s.describe + ": " + fmt(p.states) + " states, depth " + p.depth +
      ", " + fmt(p.states_per_s) + " states/s, " + s.elapsed_s.toFixed(1) + "s";
    $("check-text").textContent = p.line || "";
    $("check-load").hidden = true;
    polling = setTimeout(pollCheck, 500);
    return;
  }
  if (s.error) {
    $("check-status").textContent = "check failed: " + s.error;
    $("check-text").textContent = "";
    $("check-load").hidden = true;
    return;
  }
  const r = s.result;
  let line = "verdict: " + r.verdict;
  if (r.property) line += ": " + r.property + " violated: " + r.message;
  if (r.reason) line += " (" + r.reason + ")";
  $("check-status").textContent = line + "; " + fmt(r.states) + " states, depth " + r.depth + ", " + r.elapsed_s.toFixed(2) + "s";
  $("check-text").textContent = r.text;
  const load = $("check-load");
  load.hidden = !r.actions || r.actions.length === 0;
  load.onclick = () => setPath(s.model, r.actions, r.loop_start);
}

async function start() {
  $("back").onclick = () => go(ui.pos - 1);
  $("forward").onclick = () => go(ui.pos + 1);
  $("export").onclick = exportPath;
  $("chart-toggle").onclick = toggleChart;
  $("load-file").onchange = (ev) => { if (ev.target.files[0]) loadFile(ev.target.files[0]); ev.target.value = ""; };
  $("check-start").onclick = startCheck;
  $("check-cancel").onclick = cancelCheck;
  document.addEventListener("keydown", (ev) => {
    if (ev.target.tagName === "INPUT") return;
    if (ev.key === "ArrowLeft") go(ui.pos - 1);
    if (ev.key === "ArrowRight") go(ui.pos + 1);
  });
  try {
    const { data } = await api("GET", "api/session");
    if (data.trace) setPath(data.trace.model, data.trace.actions, data.trace.loop_start);
    else setPath(data.model, [], 0);
  } catch (e) {
    showError(e.message);
  }
  pollCheck();
}

start();
