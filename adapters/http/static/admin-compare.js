// One evaluation drawn side by side (`GET /api/evaluations/{id}`): its head (label, status,
// who started it and when, its lanes and budget, the candidate it replays with), the summary
// of both sides with the change, and a row per recorded run beside its replay: outcome,
// score, latency, tokens and cost as before → after with the change, coloured green where
// the replay did better and red where it did worse, whether the two answers are the same,
// and the two answers; a replay that was skipped says why. Every text the server sends (the
// label, the answers, the reasons) is set as text, never as markup.

import { duration, token } from "./admin-trace.js";
import { $, percent } from "./admin-page.js";

const SHORT_TIME = { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" };
const MINUS = "\u2212";

export function when(iso) {
  return new Date(iso).toLocaleString([], SHORT_TIME);
}

export function cost(usd) {
  if (usd === null || usd === undefined) return "–";
  return usd >= 0.01 ? `$${usd.toFixed(2)}` : `$${Number(usd.toPrecision(2))}`;
}

function count(value) {
  return value === null || value === undefined ? "–" : String(value);
}

function clip(text, length) {
  const shown = String(text);
  return shown.length <= length ? shown : shown.slice(0, length - 1) + "…";
}

// The candidate in one line: each field it sets, the rest being the deployment's own.
export function candidateSummary(config) {
  const parts = [];
  for (const [name, value] of Object.entries(config || {})) {
    if (name === "instructions") {
      parts.push(value === "" ? "no instructions" : `instructions “${clip(value, 60)}”`);
    } else if (name === "tools") {
      parts.push(`tools ${value.length ? value.join(", ") : "none"}`);
    } else if (name === "output_schema") {
      parts.push("an output schema");
    } else if (name === "retry") {
      parts.push(`retries ${value.attempts}`);
    } else {
      parts.push(`${name.replaceAll("_", " ")} ${value}`);
    }
  }
  return parts.length ? parts.join(" · ") : "the deployment's settings";
}

// --- changes -----------------------------------------------------------------------------

// How a figure is shown, and which way is better: `up` when more is better.
// `step` shows the size of a change (never negative).
const tenths = (d) => String(Math.round(d * 10) / 10);
const FIGURES = {
  score: { show: count, up: true, step: tenths },
  latency_ms: { show: duration, up: false, step: duration },
  tokens: { show: count, up: false, step: String },
  cost: { show: cost, up: false, step: cost },
  success_rate: { show: percent, up: true, step: (d) => `${Math.round(d * 1000) / 10} pt` },
  median_latency_ms: { show: duration, up: false, step: duration },
  median_score: { show: count, up: true, step: tenths },
};

// The change from `before` to `after` of figure `name`: its text and whether it is
// "better", "worse" or "same"; null when either side lacks it.
export function change(name, before, after) {
  if (before === null || before === undefined || after === null || after === undefined) return null;
  const figure = FIGURES[name];
  const delta = after - before;
  if (Math.abs(delta) < 1e-9) return { text: "=", verdict: "same" };
  const better = figure.up ? delta > 0 : delta < 0;
  const size = figure.step(Math.abs(delta));
  return { text: `${delta > 0 ? "+" : MINUS}${size}`, verdict: better ? "better" : "worse" };
}

function span(text, className) {
  const made = document.createElement("span");
  made.textContent = text;
  if (className) made.className = className;
  return made;
}

function cell(className = "") {
  const td = document.createElement("td");
  if (className) td.className = className;
  return td;
}

function changeSpan(found) {
  return span(found ? found.text : "", `delta ${found ? found.verdict : "none"}`);
}

// A figure's cell: before → after, then the change.
function figureCell(name, before, after) {
  const td = cell("num figure");
  const show = FIGURES[name].show;
  const found = change(name, before?.[name], after?.[name]);
  td.append(span(before ? show(before[name]) : "–", "was"), " → ", span(after ? show(after[name]) : "–", "now"));
  td.append(" ", changeSpan(found));
  td.dataset.delta = found ? found.verdict : "none";
  return td;
}

function badge(outcome) {
  return span(outcome, `badge status-${token(outcome)}`);
}

function outcomeCell(row) {
  const td = cell("outcome");
  const after = row.after ? row.after.outcome : row.skipped ? "skipped" : "replaying";
  td.append(row.before ? badge(row.before.outcome) : span("not recorded", "missing"), " → ", badge(after));
  if (row.before && row.after) {
    const was = row.before.outcome === "completed";
    const now = row.after.outcome === "completed";
    td.dataset.delta = was === now ? "same" : now ? "better" : "worse";
  }
  return td;
}

function sameCell(row) {
  const td = cell("same");
  const verdicts = { true: ["same", "same answer"], false: ["differs", "another answer"] };
  const [className, text] = verdicts[String(row.same_answer)] || ["unknown", "–"];
  td.append(span(text, `mark ${className}`));
  return td;
}

function answerCell(text, className, why = null) {
  const td = cell(`answer ${className}`);
  const shown = why ? `skipped: ${why}` : text;
  const block = span(shown ?? "–", why ? "text skipped" : "text");
  if (shown) block.title = shown;
  td.append(block);
  return td;
}

function compareRow(row, position, chosen) {
  const tr = document.createElement("tr");
  Object.assign(tr.dataset, { run: row.run, replay: row.replay });
  tr.tabIndex = 0;
  if (row.skipped) tr.classList.add("skipped");
  tr.classList.toggle("selected", row.run === chosen);
  const first = cell("num");
  first.textContent = String(position + 1);
  first.title = `run ${row.run}, replayed as ${row.replay}`;
  tr.append(
    first, outcomeCell(row), figureCell("score", row.before, row.after),
    figureCell("latency_ms", row.before, row.after), figureCell("tokens", row.before, row.after),
    figureCell("cost", row.before, row.after), sameCell(row),
    answerCell(row.answers.before, "before"), answerCell(row.answers.after, "after", row.skipped),
  );
  return tr;
}

// --- the summary -------------------------------------------------------------------------

const SUMMARY = [
  ["success_rate", "Succeeded"], ["median_latency_ms", "Median latency"], ["median_score", "Median score"],
  ["tokens", "Tokens"], ["cost", "Estimated cost"],
];

function summaryRow(name, label, before, after) {
  const tr = document.createElement("tr");
  tr.dataset.figure = name;
  const th = document.createElement("th");
  th.scope = "row";
  th.textContent = label;
  const show = FIGURES[name].show;
  const found = change(name, before[name], after[name]);
  const was = cell("num");
  was.textContent = show(before[name]);
  const now = cell("num");
  now.textContent = show(after[name]);
  const delta = cell("num");
  delta.append(changeSpan(found));
  delta.dataset.delta = found ? found.verdict : "none";
  tr.append(th, was, now, delta);
  return tr;
}

function drawSummary(report) {
  const { summary, rows } = report;
  const skipped = rows.filter((row) => row.skipped).length;
  const waiting = rows.filter((row) => !row.after && !row.skipped).length;
  const same = summary.same_answers === 1 ? "1 same answer" : `${summary.same_answers} same answers`;
  const parts = [`${summary.compared} of ${rows.length} runs compared`, same];
  if (skipped) parts.push(`${skipped} skipped`);
  if (waiting) parts.push(`${waiting} still replaying`);
  $("summary-note").textContent = parts.join(" · ");
  $("summary-rows").replaceChildren(
    ...SUMMARY.map(([name, label]) => summaryRow(name, label, summary.before, summary.after)),
  );
}

// --- the whole ---------------------------------------------------------------------------

function drawHead(report) {
  $("evaluation-title").textContent = report.label || `evaluation ${report.id.slice(0, 8)}`;
  const status = $("evaluation-status");
  status.textContent = report.status;
  status.className = `badge status-${token(report.status)}`;
  $("cancel").hidden = report.status !== "running";
  const budget = report.budget ? `a budget of ${report.budget} tokens` : "no token budget";
  $("evaluation-meta").textContent = [
    `started ${when(report.created_at)} by ${report.created_by}`,
    `${report.rows.length} runs`, `${report.lanes} at once`, budget, `evaluation ${report.id}`,
  ].join(" · ");
  $("evaluation-candidate").textContent = `Candidate: ${candidateSummary(report.config)}`;
}

// `report` drawn; `chosen` is the run whose row is selected (its traces shown).
export function drawEvaluation(report, chosen) {
  drawHead(report);
  drawSummary(report);
  $("compare-rows").replaceChildren(...report.rows.map((row, n) => compareRow(row, n, chosen)));
  $("evaluation").hidden = false;
}
