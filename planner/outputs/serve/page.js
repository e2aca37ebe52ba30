// planner serve: the page. Every text from the plan is set with textContent (never innerHTML):
// titles, docs and names are data, not markup.
"use strict";

const state = {
  plan: null, version: null, edits: {}, scenario: null, seq: 0, shown: 0, timer: null, charts: null, scales: {},
};
const $ = (id) => document.getElementById(id);

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  };
  const r = await fetch(path, init);
  return r.json();
}

function request() {
  return { scenario: state.scenario, edits: state.edits };
}

async function loadPlan() {
  const plan = await api("/api/plan");
  state.plan = plan;
  state.version = plan.version;
  state.edits = {};
  $("title").textContent = plan.title;
  document.title = plan.title + " (planner serve)";
  $("plan-error").textContent = plan.error || "";
  const select = $("scenario");
  const keep = state.scenario;
  select.replaceChildren();
  const base = el("option", "the plan as written");
  base.value = "";
  select.appendChild(base);
  for (const s of plan.scenarios) {
    const o = el("option", s);
    o.value = s;
    select.appendChild(o);
  }
  state.scenario = plan.scenarios.includes(keep) ? keep : null;
  select.value = state.scenario || "";
  $("simulate").disabled = !plan.uncertain;
  buildInputs(plan.inputs);
  await compute();
  charts();
}

function buildInputs(inputs) {
  const box = $("inputs");
  box.replaceChildren();
  for (const inp of inputs) {
    const row = el("div", null, "input");
    row.dataset.input = inp.name;
    const label = el("label", inp.name);
    row.appendChild(label);
    if (inp.kind === "bool") {
      const box2 = document.createElement("input");
      box2.type = "checkbox";
      box2.dataset.name = inp.name;
      box2.className = "toggle";
      box2.checked = inp.value;
      box2.addEventListener("change", () => edit(inp.name, box2.checked));
      row.appendChild(box2);
    } else {
      const scale = scaleOf(inp);
      state.scales[inp.name] = scale;
      const slider = document.createElement("input");
      slider.type = "range";
      slider.className = "slider";
      slider.dataset.name = inp.name;
      slider.min = scale.min; slider.max = scale.max; slider.step = scale.step;
      slider.value = scale.to(inp.value);
      const field = document.createElement("input");
      field.type = "number";
      field.className = "field";
      field.dataset.name = inp.name;
      field.step = inp.integer ? "1" : "any";
      field.value = inp.value;
      slider.addEventListener("input", () => {
        const value = scale.from(Number(slider.value));
        field.value = value;
        edit(inp.name, value);
      });
      field.addEventListener("change", () => {
        if (field.value === "") return;
        slider.value = scale.to(Number(field.value));
        edit(inp.name, Number(field.value));
      });
      row.appendChild(slider);
      row.appendChild(field);
      row.appendChild(el("span", " " + inp.unit, "unit"));
    }
    if (inp.doc) row.appendChild(el("span", inp.doc, "doc"));
    const where = [];
    const unit = inp.unit ? " " + inp.unit : "";
    if (inp.lower) where.push((inp.lower.inclusive ? "≥ " : "> ") + inp.lower.value + unit);
    if (inp.upper) where.push((inp.upper.inclusive ? "≤ " : "< ") + inp.upper.value + unit);
    if (inp.integer) where.push("whole number");
    if (where.length) row.appendChild(el("span", "where " + where.join(", "), "where"));
    box.appendChild(row);
  }
}

// A slider over two orders of magnitude or more (0.1x..10x an unbounded value) moves on a log scale, to
// four significant digits; any other linearly, by the input's step.
const LOG_STEPS = 1000;
function scaleOf(inp) {
  if (!inp.integer && inp.min > 0 && inp.max / inp.min >= 50) {
    const span = Math.log(inp.max / inp.min);
    return {
      min: 0, max: LOG_STEPS, step: 1,
      to: (v) => v > 0 ? LOG_STEPS * Math.log(v / inp.min) / span : 0,
      from: (s) => Number((inp.min * Math.exp(s / LOG_STEPS * span)).toPrecision(4)),
    };
  }
  return { min: inp.min, max: inp.max, step: inp.step || "any", to: (v) => v, from: (s) => s };
}

function edit(name, value) {
  state.edits[name] = value;
  const row = document.querySelector(`[data-input="${CSS.escape(name)}"]`);
  if (row) row.classList.add("edited");
  clearTimeout(state.timer);
  state.timer = setTimeout(() => { compute(); }, 25);
  clearTimeout(state.charts);
  state.charts = setTimeout(charts, 400);
}

async function compute() {
  const seq = ++state.seq;
  const data = await api("/api/compute", request());
  if (seq < state.shown) return;  // a later answer is on the page already
  state.shown = seq;
  if (noticeVersion(data.version)) return;
  $("error").textContent = data.error || "";
  $("plan-error").textContent = data.plan_error || "";
  if (data.error) { $("status").textContent = "not computed: see the error"; return; }
  for (const [name, value] of Object.entries(data.inputs)) {
    if (name in state.edits) continue;
    for (const e of document.querySelectorAll(`[data-name="${CSS.escape(name)}"]`)) {
      if (e.type === "checkbox") e.checked = value;
      else if (e.type === "range") e.value = state.scales[name].to(value);
      else e.value = value;
    }
  }
  const rows = $("headlines").tBodies[0];
  rows.replaceChildren();
  for (const h of data.headlines) {
    const tr = el("tr");
    tr.appendChild(el("td", h.doc || h.name));
    const td = el("td", h.text, "figure");
    td.dataset.figure = h.name;
    tr.appendChild(td);
    rows.appendChild(tr);
  }
  const ans = $("answers").tBodies[0];
  ans.replaceChildren();
  for (const a of data.answers) {
    const tr = el("tr");
    tr.appendChild(el("td", a.question));
    tr.appendChild(el("td", a.scenario || ""));
    const td = el("td", a.error ? a.error : a.text, a.error ? "failed" : "figure");
    if (a.name) td.dataset.answer = a.name;
    tr.appendChild(td);
    ans.appendChild(tr);
  }
  const c = data.checks;
  const summary = $("checks-summary");
  summary.textContent = `${c.passed} passed, ${c.failed} failed`;
  summary.className = c.failed ? "failed" : "passed";
  const checks = $("checks").tBodies[0];
  checks.replaceChildren();
  for (const r of c.rows) {
    const tr = el("tr", null, r.passed ? "passed" : "failed");
    tr.appendChild(el("td", r.passed ? "✓" : "✗"));
    tr.appendChild(el("td", r.text));
    tr.appendChild(el("td", r.scenario || ""));
    tr.appendChild(el("td", r.why));
    checks.appendChild(tr);
  }
  $("status").textContent = `version ${data.version}`;
}

async function charts() {
  if (!state.plan || !state.plan.sweeps) return;
  const data = await api("/api/charts", { edits: state.edits });
  if (noticeVersion(data.version)) return;
  const box = $("charts");
  box.replaceChildren();
  if (data.error) box.appendChild(el("p", data.error, "failed"));
  for (const chart of data.charts) {
    const img = document.createElement("img");
    img.alt = chart.title;
    img.src = chart.png;
    img.className = "chart";
    box.appendChild(img);
  }
}

async function simulate() {
  const box = $("montecarlo");
  box.replaceChildren(el("p", "simulating…"));
  const data = await api("/api/simulate", request());
  box.replaceChildren();
  if (data.error) box.appendChild(el("p", data.error, "failed"));
  for (const f of data.figures) {
    const img = document.createElement("img");
    img.alt = f.name;
    img.src = f.png;
    img.className = "histogram";
    box.appendChild(img);
  }
  if (data.figures.length) box.appendChild(el("p", `${data.samples} trials`));
}

async function write() {
  const data = await api("/api/write", request());
  $("written").textContent = data.error ? "" : `wrote ${data.written} literal(s) into ${state.plan.file}`;
  $("written").className = "written";
  $("error").textContent = data.error || "";
  $("diff").textContent = data.diff || "";
  if (!data.error) await loadPlan();  // the plan as written now holds the edits
}

// the plan's file changed: its inputs are read again (a version in every answer, and a poll)
function noticeVersion(version) {
  if (version !== undefined && state.version !== null && version !== state.version) {
    loadPlan();
    return true;
  }
  return false;
}

async function poll() {
  try {
    const data = await api("/api/version");
    noticeVersion(data.version);
    $("plan-error").textContent = data.error || "";
  } catch (e) { /* the server stopped: try again later */ }
  setTimeout(poll, 1000);
}

$("scenario").addEventListener("change", () => { state.scenario = $("scenario").value || null; compute(); });
$("reset").addEventListener("click", () => loadPlan());
$("simulate").addEventListener("click", simulate);
$("write").addEventListener("click", write);
loadPlan().then(() => setTimeout(poll, 1000));
