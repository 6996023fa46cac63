// A row of an evaluation opened: the recorded run's trace and its replay's, side by side,
// each drawn as the runs page draws a trace (admin-trace.js), with its head (model, outcome,
// latency, tokens) and, on a click on a node, the node's details under it. A replay not
// recorded yet, or skipped, says so in place of its drawing.
//
// `document.body.dataset.pair` names the row's run once both sides are drawn, and a measure
// `parley:pair` times a click on a row to that.

import { getJson } from "./api.js";
import { drawGraph, duration } from "./admin-trace.js";
import { $, frame } from "./admin-page.js";

const SIDES = { before: "pair-before", after: "pair-after" };
let opened = null; // the run whose traces are asked for last: only its answers are drawn

function graphOf(run) {
  return getJson(`/api/traces/${encodeURIComponent(run)}/graph`);
}

function sideMeta(graph) {
  const run = graph.run;
  const tokens = run.tokens ? run.tokens.input + run.tokens.output : null;
  return [
    run.model, `${run.status} (${run.finish_reason})`, duration(run.latency_ms),
    tokens === null ? null : `${tokens} ${tokens === 1 ? "token" : "tokens"}`, `score ${graph.metrics?.reliability ?? "–"}`,
    run.trigger, `run ${run.id}`,
  ].filter(Boolean).join(" · ");
}

// The details of a node clicked in one side's graph, under that graph.
function showNode(side, node, element) {
  for (const chosen of $(SIDES[side]).querySelectorAll(".selected")) chosen.classList.remove("selected");
  element.classList.add("selected");
  const shown = $(SIDES[side]).querySelector(".side-node");
  const detail = node.detail ?? {};
  const why = ["error", "message", "result", "answer"].find((key) => typeof detail[key] === "string" && detail[key]);
  const lines = [`${node.kind}: ${node.name} (${node.status}), step ${node.step}, ${duration(node.latency_ms)}`];
  if (why) lines.push("", `${why}: ${detail[why]}`);
  lines.push("", JSON.stringify(detail, null, 2));
  shown.textContent = lines.join("\n");
  shown.hidden = false;
  shown.dataset.id = String(node.id);
}

function drawSide(side, row, { graph, error }) {
  const figure = $(SIDES[side]);
  const drawing = figure.querySelector(".drawing");
  figure.querySelector(".side-node").hidden = true;
  figure.dataset.run = graph ? graph.run.id : "";
  figure.querySelector(".side-meta").textContent = graph ? sideMeta(graph) : "";
  if (!graph) {
    const note = Object.assign(document.createElement("p"), { className: "hint" });
    note.textContent = missing(side, row, error);
    drawing.replaceChildren(note);
    return;
  }
  drawGraph(drawing, graph, (node, element) => showNode(side, node, element), `graph-${side}`);
}

// Why a side has no trace to draw.
function missing(side, row, error) {
  if (side === "after" && row.skipped) return `Not replayed: ${row.skipped}`;
  if (side === "after" && !row.after) return "Not recorded yet: the replay is still to run.";
  const whose = side === "after" ? "the replay's" : "the recorded run's";
  return `Could not load ${whose} trace: ${error ? error.message || error : "not found"}`;
}

async function loaded(run) {
  try {
    return { graph: await graphOf(run), error: null };
  } catch (error) {
    return { graph: null, error };
  }
}

// Open `row` of the evaluation: both traces fetched at once, drawn when both are in.
export async function openPair(row) {
  opened = row.run;
  delete document.body.dataset.pair;
  const [before, after] = await Promise.all([
    loaded(row.run), row.after ? loaded(row.replay) : { graph: null, error: null },
  ]);
  if (opened !== row.run) return;
  $("pair-title").textContent = `Run ${row.run.slice(0, 8)} and its replay`;
  drawSide("before", row, before);
  drawSide("after", row, after);
  $("pair").hidden = false;
  await frame();
  document.body.dataset.pair = row.run;
}

// A click on a row: its traces opened, and the measure `parley:pair` taken.
export async function choosePair(row) {
  performance.clearMarks("parley:pair-start");
  performance.mark("parley:pair-start");
  await openPair(row);
  if (document.body.dataset.pair === row.run) performance.measure("parley:pair", "parley:pair-start");
}

export function closePair() {
  opened = null;
  $("pair").hidden = true;
  delete document.body.dataset.pair;
}
