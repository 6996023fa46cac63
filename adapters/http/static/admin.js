// The operators' dashboard: the runs of a window (filtered, paged), their charts, and a run's
// trace as a graph and a timeline with each node's details. The filters and the open run live
// in the page's address, so a reload or a shared link shows the same thing.
//
// Timings for the benchmark (tests/bench/dashboard.py): the marks `parley:runs`,
// `parley:charts` and `parley:ready` (both drawn) of the first load, and a measure
// `parley:trace` from a click on a run to its graph drawn.
//
// A `delegate` call's helper has a run and a trace of its own: its panel under the graph
// (opened from it, or by a click on the call's node) draws it, nested as deep as helpers go.

import { getJson } from "./api.js";
import { drawCharts } from "./admin-charts.js";
import {
  drawGraph, drawHelpers, drawTimeline, duration, helperOf, openHelper, token,
} from "./admin-trace.js";

const LIMIT = 25;
const RANGES = { "1h": 3600e3, "6h": 6 * 3600e3, "24h": 24 * 3600e3, "7d": 7 * 86400e3, "30d": 30 * 86400e3 };
const FILTERS = ["outcome", "platform", "model", "trigger", "q"];
const SHORT_TIME = { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit" };
const $ = (id) => document.getElementById(id);
const state = { offset: 0, run: null, graph: null, view: "graph", generation: 0 };

function frame() {
  return new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
}

function mark(name) {
  if (performance.getEntriesByName(name, "mark").length === 0) performance.mark(name);
}

function showProblem(error) {
  const problem = $("problem");
  problem.textContent = error ? String(error.message || error) : "";
  problem.hidden = !error;
}

// --- the filters and the address -------------------------------------------------------

function localInput(date) {
  const shifted = new Date(date.getTime() - date.getTimezoneOffset() * 60000);
  return shifted.toISOString().slice(0, 16);
}

function windowParams() {
  const range = $("f-range").value;
  if (range === "custom") {
    const start = new Date($("f-start").value);
    const end = new Date($("f-end").value);
    if (!Number.isNaN(start.getTime()) && !Number.isNaN(end.getTime())) {
      return { start: start.toISOString(), end: end.toISOString() };
    }
  }
  const end = new Date();
  return { start: new Date(end.getTime() - (RANGES[range] || RANGES["24h"])).toISOString(), end: end.toISOString() };
}

function filterParams() {
  const chosen = {};
  for (const name of FILTERS) {
    const value = $(`f-${name}`).value.trim();
    if (value) chosen[name] = value;
  }
  return chosen;
}

function query(params) {
  return new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== null)).toString();
}

function remember() {
  const kept = { range: $("f-range").value, ...filterParams() };
  if (kept.range === "custom") Object.assign(kept, { from: $("f-start").value, to: $("f-end").value });
  if (state.offset) kept.offset = state.offset;
  if (state.run) kept.run = state.run;
  history.replaceState(null, "", `${location.pathname}?${query(kept)}`);
}

function restore() {
  const given = new URLSearchParams(location.search);
  if (given.get("range") && [...$("f-range").options].some((o) => o.value === given.get("range"))) {
    $("f-range").value = given.get("range");
  }
  const now = new Date();
  $("f-start").value = given.get("from") || localInput(new Date(now.getTime() - RANGES["24h"]));
  $("f-end").value = given.get("to") || localInput(now);
  for (const name of FILTERS) {
    const value = given.get(name);
    if (!value) continue;
    const field = $(`f-${name}`);
    if (field.tagName === "SELECT" && ![...field.options].some((o) => o.value === value)) {
      field.appendChild(new Option(value, value));
    }
    field.value = value;
  }
  state.offset = Math.max(0, Number.parseInt(given.get("offset") || "0", 10) || 0);
  state.run = /^[0-9a-f]{32}$/.test(given.get("run") || "") ? given.get("run") : null;
  showCustom();
}

function showCustom() {
  for (const label of document.querySelectorAll("#filters .custom")) label.hidden = $("f-range").value !== "custom";
}

function fillChoices(facets) {
  const lists = { platform: facets.platforms, model: facets.models, trigger: facets.triggers };
  for (const [name, values] of Object.entries(lists)) {
    const field = $(`f-${name}`);
    const current = field.value;
    const options = [new Option("any", "")];
    for (const value of new Set([...values, ...(current ? [current] : [])])) options.push(new Option(value, value));
    field.replaceChildren(...options);
    field.value = current;
  }
}

// --- the runs and their totals ---------------------------------------------------------

function cell(text, className) {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function outcomeCell(run) {
  const td = document.createElement("td");
  const badge = document.createElement("span");
  badge.className = `badge status-${token(run.status)}`;
  badge.textContent = run.status;
  td.appendChild(badge);
  if (run.finish_reason && run.finish_reason !== "end_turn") td.append(" ", run.finish_reason);
  return td;
}

function runRow(run) {
  const row = document.createElement("tr");
  row.dataset.id = run.id;
  row.tabIndex = 0;
  if (run.id === state.run) row.classList.add("selected");
  const session = cell(run.title || run.session);
  session.title = run.session;
  row.append(
    cell(new Date(run.started_at).toLocaleString([], SHORT_TIME)), session, cell(run.platform),
    cell(run.trigger, "wide"), cell(run.model, "wide"), outcomeCell(run), cell(duration(run.latency_ms), "num"),
    cell(`${run.tokens.input} / ${run.tokens.output}`, "num wide"), cell(run.reliability ?? "–", "num"),
  );
  row.addEventListener("click", () => choose(run.id));
  row.addEventListener("keydown", (event) => { if (event.key === "Enter") choose(run.id); });
  return row;
}

function percent(rate) {
  return rate === null || rate === undefined ? "–" : `${Math.round(rate * 1000) / 10}%`;
}

function drawRuns(page) {
  $("t-runs").textContent = String(page.total);
  $("t-success").textContent = percent(page.success_rate);
  $("t-latency").textContent = duration(page.average_latency_ms);
  $("t-reliability").textContent = page.average_reliability === null ? "–" : page.average_reliability.toFixed(1);
  $("runs").tBodies[0].replaceChildren(...page.items.map(runRow));
  $("no-runs").hidden = page.items.length > 0;
  const last = page.offset + page.items.length;
  $("page-note").textContent = page.items.length ? `${page.offset + 1}–${last} of ${page.total}` : `0 of ${page.total}`;
  $("newer").disabled = page.offset === 0;
  $("older").disabled = page.offset + page.items.length >= page.total;
}

// Runs, charts and the filters' choices for the current filters; `first` marks the timings.
async function load(first = false) {
  const generation = ++state.generation;
  const current = () => generation === state.generation;
  const span = windowParams();
  const filters = filterParams();
  remember();
  showProblem(null);
  const runs = getJson(`/api/metrics/runs?${query({ ...span, ...filters, offset: state.offset, limit: LIMIT })}`)
    .then((page) => { if (current()) drawRuns(page); })
    .then(() => first && mark("parley:runs"));
  const charts = getJson(`/api/metrics/series?${query({ ...span, ...filters })}`)
    .then((series) => (current() ? drawCharts(series) : null))
    .then(() => first && mark("parley:charts"));
  const choices = getJson(`/api/metrics/facets?${query(span)}`).then((f) => { if (current()) fillChoices(f); });
  try {
    await Promise.all([runs, charts, choices]);
    await frame();
    if (first) mark("parley:ready");
    document.body.dataset.loaded = String(generation);
  } catch (error) {
    showProblem(error);
  }
}

// --- one run -----------------------------------------------------------------------------

function term(list, name, value) {
  const dt = document.createElement("dt");
  dt.textContent = name;
  const dd = document.createElement("dd");
  dd.textContent = value;
  list.append(dt, dd);
}

function drawRunHead(run, metrics) {
  $("run-title").textContent = run.title || run.session;
  $("run-meta").textContent = [
    run.session, run.platform, run.trigger, run.model, `${run.status} (${run.finish_reason})`,
    new Date(run.started_at).toLocaleString(), `run ${run.id}`,
  ].join(" · ");
  const list = $("run-metrics");
  list.replaceChildren();
  const m = metrics || {};
  term(list, "steps", String(m.steps ?? "–"));
  term(list, "failures", String(m.failed ?? "–"));
  term(list, "retries", String(m.retries ?? "–"));
  term(list, "tokens", String(m.tokens ?? run.tokens.input + run.tokens.output));
  term(list, "reliability", String(m.reliability ?? run.reliability ?? "–"));
  term(list, "latency", duration(run.latency_ms));
  term(list, "first text", duration(run.first_text_ms));
  const tools = Object.entries(m.tool_usage || {}).map(([name, calls]) => `${name} × ${calls}`);
  $("run-tools").textContent = tools.length ? `Tools: ${tools.join(", ")}` : "No tool was called.";
}

// What a node's details say first: why it failed, or what it gave back.
const WHY = [["error", "Error"], ["message", "Error"], ["result", "Result"], ["answer", "Answer judged"]];

function showWhy(detail) {
  const found = WHY.find(([key]) => typeof detail[key] === "string" && detail[key] !== "");
  $("node-why").hidden = !found;
  if (!found) return;
  $("node-why-title").textContent = found[1];
  $("node-why-text").textContent = detail[found[0]];
}

function traceOf(run) {
  return getJson(`/api/traces/${encodeURIComponent(run)}/graph`);
}

// The helpers' panels that belong with the drawing `element` is in: those after its graph
// (the run's own, for its timeline).
function helpersNear(element) {
  const drawing = element.closest(".drawing");
  return !drawing || drawing.id === "timeline-box" ? $("helpers-box") : drawing.nextElementSibling;
}

// A node of the run's trace, or of a helper's (`graph`): its details; a delegate call's
// node opens its helper's trace too.
function selectNode(node, element, graph = state.graph) {
  for (const chosen of document.querySelectorAll("#run .selected")) chosen.classList.remove("selected");
  element.classList.add("selected");
  if (helperOf(node)) openHelper(helpersNear(element), node);
  const first = Math.min(...graph.nodes.map((n) => n.started_at));
  $("node-title").textContent = `${node.kind}: ${node.name}`;
  const list = $("node-fields");
  list.replaceChildren();
  term(list, "kind", node.kind);
  term(list, "name", node.name);
  term(list, "status", node.status);
  term(list, "step", String(node.step));
  term(list, "latency", duration(node.latency_ms));
  term(list, "started", `+${duration((node.started_at - first) * 1000)}`);
  if (node.parent) term(list, "parent", `node ${node.parent}`);
  if (graph !== state.graph) term(list, "helper run", graph.run.id);
  showWhy(node.detail ?? {});
  $("node-detail").textContent = JSON.stringify(node.detail ?? {}, null, 2);
  $("node").hidden = false;
  $("node").dataset.id = String(node.id);
}

function showView(view) {
  state.view = view;
  for (const tab of document.querySelectorAll("#run .tabs [data-view]")) {
    tab.setAttribute("aria-selected", String(tab.dataset.view === view));
  }
  $("graph-box").hidden = view !== "graph";
  $("timeline-box").hidden = view !== "timeline";
  if (view === "timeline" && state.graph && !$("timeline-box").dataset.drawn) {
    drawTimeline($("timeline-box"), state.graph, selectNode);
    $("timeline-box").dataset.drawn = "1";
  }
}

// Open a run: its graph drawn first (the click's measure ends there), the timeline when shown.
async function openRun(id) {
  state.run = id;
  remember();
  for (const row of $("runs").tBodies[0].rows) row.classList.toggle("selected", row.dataset.id === id);
  try {
    const graph = await traceOf(id);
    if (state.run !== id) return;
    state.graph = graph;
    $("run").hidden = false;
    $("node").hidden = true;
    drawRunHead(graph.run, graph.metrics);
    delete $("timeline-box").dataset.drawn;
    drawGraph($("graph-box"), graph, selectNode);
    drawHelpers($("helpers-box"), graph, traceOf, selectNode);
    showView(state.view);
    await frame();
    document.body.dataset.trace = id;
  } catch (error) {
    showProblem(error);
  }
}

async function choose(id) {
  performance.clearMarks("parley:trace-start");
  performance.mark("parley:trace-start");
  delete document.body.dataset.trace;
  await openRun(id);
  if (document.body.dataset.trace === id) performance.measure("parley:trace", "parley:trace-start");
}

// --- wiring --------------------------------------------------------------------------------

$("filters").addEventListener("submit", (event) => {
  event.preventDefault();
  state.offset = 0;
  load();
});
$("f-range").addEventListener("change", showCustom);
$("refresh").addEventListener("click", () => load());
$("newer").addEventListener("click", () => { state.offset = Math.max(0, state.offset - LIMIT); load(); });
$("older").addEventListener("click", () => { state.offset += LIMIT; load(); });
for (const tab of document.querySelectorAll("#run .tabs [data-view]")) {
  tab.addEventListener("click", () => showView(tab.dataset.view));
}

restore();
load(true);
if (state.run) openRun(state.run);
