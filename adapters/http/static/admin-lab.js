// The lab page (/admin/lab): the evaluations, newest first (label, status, when, the candidate
// in one line, who started it), and one opened side by side (admin-compare.js), a click on a
// row showing its two traces (admin-pair.js). While an evaluation listed or opened runs, the
// page asks again every 2 s, never while a load is still waiting for the server nor while the
// page is hidden, and stops once no replay is left to end: a page left open on finished work
// asks nothing.
// "Cancel" stops a running one (the replays not begun are skipped). The open evaluation, its
// chosen row and the list's page live in the address, so a reload or a link shows the same;
// the runs page's "Evaluate these runs…" opens a new one here (admin-evaluate.js).
//
// Timings for the benchmark (tests/bench/lab.py): the mark `parley:evaluation` once the first
// evaluation opened after the navigation is drawn, rows and summary (a frame after they are
// in the document), and the measure `parley:pair` (admin-pair.js).

import { ApiError, api, getJson, refusal } from "./api.js";
import { candidateSummary, drawEvaluation, when } from "./admin-compare.js";
import { choosePair, closePair, openPair } from "./admin-pair.js";
import { $, frame, mark, query, showProblem } from "./admin-page.js";
import { token } from "./admin-trace.js";

const LIMIT = 20;
const POLL_MS = 2000;
const ID = /^[0-9a-f]{32}$/;
const state = {
  offset: 0, open: null, row: null, list: null, report: null,
  loading: false, // a refresh in flight: another asked meanwhile follows it
  again: false, // one was asked while a refresh was in flight
  timer: null, // the next refresh while something runs
};

// --- the address -------------------------------------------------------------------------

function remember() {
  const kept = {};
  if (state.open) kept.evaluation = state.open;
  if (state.row) kept.row = state.row;
  if (state.offset) kept.offset = state.offset;
  const search = query(kept);
  history.replaceState(null, "", search ? `${location.pathname}?${search}` : location.pathname);
}

function restore() {
  const given = new URLSearchParams(location.search);
  state.open = ID.test(given.get("evaluation") || "") ? given.get("evaluation") : null;
  state.row = state.open && ID.test(given.get("row") || "") ? given.get("row") : null;
  state.offset = Math.max(0, Number.parseInt(given.get("offset") || "0", 10) || 0);
}

// --- the list ----------------------------------------------------------------------------

function cell(text, className = "") {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function listRow(item) {
  const row = document.createElement("tr");
  row.dataset.id = item.id;
  row.tabIndex = 0;
  row.classList.toggle("selected", item.id === state.open);
  const label = cell(item.label || "no label", item.label ? "" : "unlabelled");
  label.title = `evaluation ${item.id}`;
  const status = document.createElement("td");
  const badge = Object.assign(document.createElement("span"), { textContent: item.status });
  badge.className = `badge status-${token(item.status)}`;
  status.append(badge);
  const candidate = cell(candidateSummary(item.config));
  candidate.title = JSON.stringify(item.config, null, 2);
  row.append(label, status, cell(when(item.created_at)), candidate, cell(item.created_by));
  row.addEventListener("click", () => openEvaluation(item.id));
  row.addEventListener("keydown", (event) => { if (event.key === "Enter") openEvaluation(item.id); });
  return row;
}

function drawList(page) {
  state.list = page;
  $("evaluations").tBodies[0].replaceChildren(...page.items.map(listRow));
  $("no-evaluations").hidden = page.total > 0;
  const last = page.offset + page.items.length;
  $("evaluations-note").textContent = page.total ? `${page.offset + 1}–${last} of ${page.total}` : "";
  $("newer").disabled = page.offset === 0;
  $("older").disabled = last >= page.total;
}

async function loadList() {
  drawList(await getJson(`/api/evaluations?${query({ offset: state.offset, limit: LIMIT })}`));
}

// --- one evaluation ------------------------------------------------------------------------

function chosenRow() {
  return state.report?.rows.find((row) => row.run === state.row) ?? null;
}

async function loadEvaluation(id) {
  const report = await getJson(`/api/evaluations/${id}`);
  if (state.open !== id) return;
  const before = state.report;
  state.report = report;
  drawEvaluation(report, state.row);
  await frame();
  mark("parley:evaluation");
  document.body.dataset.evaluation = `${id} ${report.status}`;
  const row = chosenRow();
  const waited = before?.rows.find((r) => r.run === state.row);
  if (row && row.after && waited && !waited.after) openPair(row); // its replay came in
}

function openEvaluation(id) {
  state.open = id;
  state.row = null;
  state.report = null;
  closePair();
  remember();
  for (const row of $("evaluations").tBodies[0].rows) row.classList.toggle("selected", row.dataset.id === id);
  refresh();
}

function pickRow(tr) {
  const row = state.report?.rows.find((r) => r.run === tr.dataset.run);
  if (!row) return;
  state.row = row.run;
  remember();
  for (const other of $("compare-rows").rows) other.classList.toggle("selected", other === tr);
  choosePair(row).catch(showProblem);
}

async function cancelOpen() {
  const id = state.open;
  $("cancel").disabled = true;
  try {
    const answer = await api(`/api/evaluations/${id}`, { method: "DELETE", headers: { Accept: "application/json" } });
    if (!answer.ok) throw new ApiError(answer.status, await refusal(answer));
  } catch (error) {
    showProblem(error);
  } finally {
    $("cancel").disabled = false;
  }
  await refresh();
}

// --- loading -------------------------------------------------------------------------------

// Whether something shown may still change: an evaluation listed as running, or the open
// one's replays (a cancelled one's replays begun before it was cancelled end after it).
function running() {
  const waiting = (state.report?.rows ?? []).some((row) => !row.after && !row.skipped);
  return waiting || (state.list?.items ?? []).some((e) => e.status === "running");
}

function schedule() {
  clearTimeout(state.timer);
  state.timer = running() && !document.hidden ? setTimeout(refresh, POLL_MS) : null;
}

// The list and the open evaluation loaded again; then again in POLL_MS while one runs.
async function refresh() {
  if (state.loading) {
    state.again = true;
    return;
  }
  state.loading = true;
  try {
    const open = state.open ? loadEvaluation(state.open) : Promise.resolve();
    await Promise.all([loadList(), open]);
    showProblem(null);
  } catch (error) {
    showProblem(error);
    if (error.status === 404) $("evaluation").hidden = true;
  } finally {
    state.loading = false;
    if (state.again) {
      state.again = false;
      refresh();
    } else {
      schedule();
    }
  }
}

async function first() {
  await refresh();
  const row = chosenRow();
  if (row) await openPair(row);
}

// --- wiring --------------------------------------------------------------------------------

$("refresh").addEventListener("click", () => refresh());
$("newer").addEventListener("click", () => { state.offset = Math.max(0, state.offset - LIMIT); remember(); refresh(); });
$("older").addEventListener("click", () => { state.offset += LIMIT; remember(); refresh(); });
$("cancel").addEventListener("click", cancelOpen);
$("compare-rows").addEventListener("click", (event) => {
  const tr = event.target.closest("tr");
  if (tr) pickRow(tr);
});
$("compare-rows").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && event.target.matches("tr")) pickRow(event.target);
});
document.addEventListener("visibilitychange", () => {
  if (document.hidden) schedule();
  else if (running()) refresh();
});

restore();
first();
