// One run's panel: its head and numbers, what it ran with (the `config` of its graph's answer,
// "not recorded" for a run recorded before runs kept it), and its trace as a graph and a
// timeline with each node's details. The panel is drawn when a run is opened and never by a
// load of the list, so an auto refresh leaves it, and the node shown, as they are.
//
// A `delegate` call's helper has a run and a trace of its own: its panel under the graph
// (opened from it, or by a click on the call's node) draws it, nested as deep as helpers go.

import { getJson } from "./api.js";
import {
  drawGraph, drawHelpers, drawTimeline, duration, helperOf, openHelper,
} from "./admin-trace.js";
import { $, frame, remember, shortHash, showProblem, state } from "./admin-page.js";

function term(list, name, value) {
  const dt = document.createElement("dt");
  dt.textContent = name;
  const dd = document.createElement("dd");
  dd.textContent = value;
  list.append(dt, dd);
}

// The states a run's time is split in (`metrics.states`), as the run's head names them.
export const TIME_SPENT = [
  ["calling", "calling the model"], ["streaming", "streaming"], ["tools", "running tools"],
  ["person", "waiting for a person"], ["other", "other"],
];

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
  term(list, "iterations", String(run.iterations ?? "–"));
  // Where the run's time went (a run recorded before it was counted has none).
  const states = m.states || {};
  for (const [state, what] of TIME_SPENT) {
    if (states[state] !== undefined) term(list, what, duration(states[state]));
  }
  const tools = Object.entries(m.tool_usage || {}).map(([name, calls]) => `${name} × ${calls}`);
  $("run-tools").textContent = tools.length ? `Tools: ${tools.join(", ")}` : "No tool was called.";
}

function listed(parts) {
  return parts.filter(([, value]) => value !== null && value !== undefined).map(([name, value]) => `${name} ${value}`);
}

// What a run ran with, as [name, shown, tooltip] rows.
function configRows(config) {
  const prompt = config.prompt || {};
  const tools = config.tools || [];
  const budget = listed([["tokens", config.token_budget], ["steps", config.max_steps]]).join(", ");
  const sampling = listed([["temperature", config.temperature], ["top_p", config.top_p]]).join(", ");
  const parts = [["bootstrap", prompt.bootstrap], ["skills", prompt.skills], ["instructions", prompt.instructions]];
  return [
    ["model", config.model, "the model asked for (the run's own is the one that answered)"],
    ["mode", config.mode],
    ["tools", tools.length ? tools.join(", ") : "none", `${tools.length} offered`],
    ["tool set", shortHash(config.tools_hash), `${config.tools_hash}: the hash of the tools offered`],
    ["schema", config.output_schema ? "yes" : "no", config.output_schema ? JSON.stringify(config.output_schema) : ""],
    ["timeout", duration(config.timeout * 1000)],
    ["budget", budget || "none"],
    ["reasoning", config.reasoning],
    ["sampling", sampling || "the model's defaults"],
    ["retries", String(config.retry_attempts), "attempts of a model call"],
    ["prompt", shortHash(prompt.hash), `${prompt.hash}: the hash of the system prompt's parts`],
    ["prompt parts", parts.map(([part, hash]) => `${part} ${shortHash(hash)}`).join(" · "),
      parts.map(([part, hash]) => `${part}: ${hash}`).join("\n")],
  ];
}

function configRow(name, shown, title = "") {
  const row = document.createElement("tr");
  const th = document.createElement("th");
  th.scope = "row";
  th.textContent = name;
  const td = document.createElement("td");
  td.textContent = String(shown ?? "–");
  if (title) td.title = title;
  row.append(th, td);
  return row;
}

function drawConfig(config) {
  const rows = config ? configRows(config).map((row) => configRow(...row))
    : [configRow("ran with", "not recorded", "the run was recorded before runs kept what they ran with")];
  $("config-rows").replaceChildren(...rows);
  $("run-config").classList.toggle("unrecorded", !config);
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

export function showView(view) {
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
export async function openRun(id) {
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
    drawConfig(graph.config ?? null);
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

export async function choose(id) {
  performance.clearMarks("parley:trace-start");
  performance.mark("parley:trace-start");
  delete document.body.dataset.trace;
  await openRun(id);
  if (document.body.dataset.trace === id) performance.measure("parley:trace", "parley:trace-start");
}
