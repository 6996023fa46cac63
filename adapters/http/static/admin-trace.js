// A run's trace drawn two ways, both as SVG built with DOM calls (every text from the server
// goes in as text): the graph, with the boxes where `/api/traces/{id}/graph` placed them and
// typed edges between them, and the timeline, one bar per node from its start for its latency.
// Each is built off-document and inserted at once, so a trace of hundreds of nodes is one
// layout for the browser. Under a graph, each `delegate` call's helper: its own run's trace,
// drawn the same way when opened, with its own helpers under it.
//
// Each graph comes with its own view (admin-trace-view.js): zoom, pan, a minimap and a search
// over its nodes, so the lab's two traces side by side each have theirs.

import { traceView } from "./admin-trace-view.js";

const SVG = "http://www.w3.org/2000/svg";
const BOX_W = 200;
const BOX_H = 60;
const PAD = 40;
const LANE = 28; // how far left of a column the edges to its own children run
const EDGE_TYPES = ["success", "error", "retry"];

function el(name, attributes = {}, text = null) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== null) node.textContent = text;
  return node;
}

// A class-safe word for a kind or status the server may name freely.
export function token(word) {
  return String(word).toLowerCase().replace(/[^a-z0-9_-]/g, "") || "other";
}

export function duration(ms) {
  if (ms === null || ms === undefined) return "–";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${Number((ms / 1000).toFixed(ms < 10000 ? 2 : 1))} s`;
  return `${Number((ms / 60000).toFixed(1))} min`;
}

function clip(text, length) {
  const shown = String(text);
  return shown.length <= length ? shown : shown.slice(0, length - 1) + "…";
}

function markers() {
  const defs = el("defs");
  for (const type of EDGE_TYPES) {
    const marker = el("marker", {
      id: `arrow-${type}`, viewBox: "0 0 10 10", refX: 9, refY: 5,
      markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse",
    });
    marker.appendChild(el("path", { d: "M0,0 L10,5 L0,10 z", class: `arrowhead ${type}` }));
    defs.appendChild(marker);
  }
  return defs;
}

function edgePath(from, to) {
  const fy = from.y + BOX_H / 2;
  const ty = to.y + BOX_H / 2;
  if (to.x > from.x) { // to a later step: right side to left side
    const fx = from.x + BOX_W;
    const middle = (fx + to.x) / 2;
    return `M${fx},${fy} C${middle},${fy} ${middle},${ty} ${to.x},${ty}`;
  }
  // to a node of the same step (a call and what it led to): down the column's left side, so
  // the edges of a call's many children merge into one bracket
  const lane = Math.min(from.x, to.x) - LANE / 2;
  return `M${from.x},${fy} H${lane} V${ty} H${to.x}`;
}

// What a search over the graph looks in: a node's name, its kind and every text of its
// details (a tool call's arguments, its result or error, the model that answered), lower-cased.
function searchText(node) {
  const texts = [node.name, node.kind];
  const walk = (value) => {
    if (typeof value === "string") texts.push(value);
    else if (value && typeof value === "object") Object.values(value).forEach(walk);
  };
  walk(node.detail);
  return texts.join("\n").toLowerCase();
}

function nodeBox(node, at, onSelect) {
  const group = el("g", {
    class: `node kind-${token(node.kind)} status-${token(node.status)}`,
    transform: `translate(${at.x},${at.y})`, tabindex: 0, role: "button",
    "data-id": node.id,
  });
  group.appendChild(el("title", {}, `${node.kind} ${node.name} (${node.status})`));
  group.appendChild(el("rect", { width: BOX_W, height: BOX_H, rx: 8 }));
  group.appendChild(el("text", { x: 12, y: 24, class: "name" }, clip(node.name, 24)));
  const second = `${node.kind} · ${duration(node.latency_ms)} · ${node.status}`;
  group.appendChild(el("text", { x: 12, y: 44, class: "sub" }, clip(second, 32)));
  if (helperOf(node)) {
    group.classList.add("has-helper");
    group.appendChild(el("text", { x: BOX_W - 10, y: 24, class: "helper-mark" }, "⤵"));
  }
  group.addEventListener("click", () => onSelect(node, group));
  group.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") { event.preventDefault(); onSelect(node, group); }
  });
  return group;
}

// The graph of `graph` (the /graph answer) into `box`; `onSelect(node, element)` on a click.
// `id` names the drawing: `graph` for the run's own, another for a helper's.
export function drawGraph(box, graph, onSelect, id = "graph") {
  const nodes = graph.nodes || [];
  const left = nodes.length ? Math.min(...nodes.map((n) => n.x)) : 0;
  const place = new Map(nodes.map((n) => [n.id, { x: n.x - left + PAD + LANE, y: n.y + PAD }]));
  const width = Math.max(...[...place.values()].map((p) => p.x + BOX_W), 0) + PAD;
  const height = Math.max(...[...place.values()].map((p) => p.y + BOX_H), 0) + PAD;
  const svg = el("svg", {
    id, class: "graph", viewBox: `0 0 ${width} ${height}`, role: "group",
    "aria-label": `the run's trace: ${nodes.length} nodes`,
  });
  svg.appendChild(markers());
  const edges = el("g", { class: "edges" });
  for (const edge of graph.edges || []) {
    const from = place.get(edge.source);
    const to = place.get(edge.target);
    if (!from || !to) continue; // a node dropped past the trace's cap
    const type = EDGE_TYPES.includes(edge.type) ? edge.type : "success";
    edges.appendChild(el("path", {
      d: edgePath(from, to), class: `edge ${type}`, "marker-end": `url(#arrow-${type})`,
      "data-source": edge.source, "data-target": edge.target,
    }));
  }
  svg.appendChild(edges);
  const boxes = el("g", { class: "nodes" });
  const items = nodes.map((node) => {
    const at = place.get(node.id);
    const element = boxes.appendChild(nodeBox(node, at, onSelect));
    const kind = token(node.kind);
    return { ...at, w: BOX_W, h: BOX_H, id: node.id, kind, text: searchText(node), element };
  });
  svg.appendChild(boxes);
  const view = traceView(svg, width, height, items);
  box.replaceChildren(view.element);
  view.fit(); // the one layout: the stage's size, for the view that shows the whole graph
  return svg;
}

const ROW_H = 22;
const LABEL_W = 220;
const MIN_BAR_W = 320;

// The timeline of the same nodes: one row each, in the order they started.
export function drawTimeline(box, graph, onSelect) {
  const nodes = [...(graph.nodes || [])].sort((a, b) => a.started_at - b.started_at || a.id - b.id);
  const first = nodes.length ? nodes[0].started_at : 0;
  const last = Math.max(first, ...nodes.map((n) => (n.ended_at || n.started_at)));
  const span = Math.max(last - first, 0.001);
  const BAR_W = Math.max(MIN_BAR_W, box.clientWidth - LABEL_W - 40);
  const scale = (seconds) => LABEL_W + (seconds / span) * BAR_W;
  const height = (nodes.length + 1) * ROW_H + 10;
  const svg = el("svg", {
    id: "timeline", width: LABEL_W + BAR_W + 20, height, role: "img",
    "aria-label": `the run's timeline: ${nodes.length} nodes`,
  });
  for (let tick = 0; tick <= 4; tick++) {
    const x = LABEL_W + (tick / 4) * BAR_W;
    svg.appendChild(el("line", { x1: x, x2: x, y1: ROW_H - 6, y2: height, class: "tick" }));
    const label = duration((span * 1000 * tick) / 4);
    svg.appendChild(el("text", { x, y: ROW_H - 10, class: "tick-label" }, label));
  }
  nodes.forEach((node, row) => {
    const y = (row + 1) * ROW_H;
    const start = scale(node.started_at - first);
    const width = Math.max(2, scale((node.ended_at || node.started_at) - first) - start);
    const group = el("g", {
      class: `bar kind-${token(node.kind)} status-${token(node.status)}`, "data-id": node.id,
      tabindex: 0, role: "button",
    });
    group.appendChild(el("title", {}, `${node.name}: ${duration(node.latency_ms)}`));
    group.appendChild(el("text", { x: 4, y: y + 15, class: "label" },
      clip(`${node.step}. ${node.kind} ${node.name}`, 34)));
    group.appendChild(el("rect", { x: start, y: y + 4, width, height: ROW_H - 8, rx: 3 }));
    group.addEventListener("click", () => onSelect(node, group));
    svg.appendChild(group);
  });
  box.replaceChildren(svg);
  return svg;
}

// --- helpers' traces -------------------------------------------------------------------------

// How deep helpers are drawn: PARLEY_DELEGATE_DEPTH's highest value, so a helper's helpers
// are drawn as far as any can go, and a trace that claimed more could not make this loop.
export const HELPER_DEPTH = 4;

// The run of the helper a node's `delegate` call started, if it did (`detail.helper_run`).
export function helperOf(node) {
  const run = node.detail && node.detail.helper_run;
  return typeof run === "string" && /^[0-9a-f]{32}$/.test(run) ? run : null;
}

// Under a graph (`box`, next to its drawing), one panel per helper of its `delegate` calls,
// closed: a helper's trace is fetched (`load(run)`, once) and drawn when its panel opens, so
// a run with many helpers costs nothing until one is looked at. `onSelect(node, element,
// graph)` on a click in a helper's graph.
export function drawHelpers(box, graph, load, onSelect, depth = 1) {
  const calls = depth <= HELPER_DEPTH ? (graph.nodes || []).filter(helperOf) : [];
  box.replaceChildren(...calls.map((call) => helperPanel(call, load, onSelect, depth)));
  box.hidden = calls.length === 0;
}

// The panel of the helper `call` started, in `box` (the one `drawHelpers` filled), opened.
export function openHelper(box, call) {
  const panel = [...box.children].find((p) => p.dataset.node === String(call.id));
  if (!panel) return;
  panel.open = true;
  panel.scrollIntoView({ block: "nearest" });
}

function helperPanel(call, load, onSelect, depth) {
  const run = helperOf(call);
  const panel = document.createElement("details");
  panel.className = "helper";
  Object.assign(panel.dataset, { node: String(call.id), run, depth: String(depth) });
  const summary = document.createElement("summary");
  const asked = typeof call.detail.arguments === "string" ? `: ${clip(call.detail.arguments, 80)}` : "";
  summary.textContent = `Helper of call ${call.id} (step ${call.step}, ${call.status}), run ${run}${asked}`;
  const drawing = document.createElement("div");
  drawing.className = "drawing";
  const nested = document.createElement("div");
  nested.className = "helpers";
  nested.hidden = true;
  panel.append(summary, drawing, nested);
  panel.addEventListener("toggle", async () => {
    if (!panel.open || panel.dataset.state) return;
    panel.dataset.state = "loading";
    drawing.textContent = "Loading the helper's trace…";
    try {
      const sub = await load(run);
      drawGraph(drawing, sub, (node, element) => onSelect(node, element, sub), `graph-${run}`);
      drawHelpers(nested, sub, load, onSelect, depth + 1);
      panel.dataset.state = "drawn";
    } catch (error) {
      drawing.textContent = `Could not load the helper's trace: ${error.message || error}`;
      delete panel.dataset.state; // opened again, it tries again
    }
  });
  return panel;
}
