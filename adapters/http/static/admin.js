// The operators' dashboard: the runs of a window (filtered, paged), their charts, the runs
// grouped by model, mode, prompt or tool set, and a run's trace as a graph and a timeline with
// each node's details. The filters, the grouping, the auto refresh and the open run live in
// the page's address (admin-page.js), so a reload or a shared link shows the same thing; a
// link may name the runs it shows (`?runs=ID,ID`), and the page says so and offers to clear it.
// "Evaluate these runs…" replays the runs the filters choose with a candidate
// (admin-evaluate.js), compared on the lab page (/admin/lab).
//
// Timings for the benchmark (tests/bench/dashboard.py): the marks `parley:runs`,
// `parley:charts` and `parley:ready` (the list, the charts and, when a grouping is chosen, the
// groups drawn) of the first load, and a measure `parley:trace` from a click on a run to its
// graph drawn.

import { getJson } from "./api.js";
import { drawCharts } from "./admin-charts.js";
import { evaluateForm } from "./admin-evaluate.js";
import { drawGroups } from "./admin-groups.js";
import {
  $, filterParams, fillChoices, frame, mark, percent, query, remember, restore, setFilter,
  showCustom, showProblem, state, windowParams,
} from "./admin-page.js";
import { autoRefresh } from "./admin-refresh.js";
import { TIME_SPENT, choose, openRun, showView } from "./admin-run.js";
import { duration, token } from "./admin-trace.js";

const LIMIT = 25;
const SHORT_TIME = { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit" };

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

// The window's average run split by where its time went: one bar, a part per state as wide as
// its share, each named with its average in its title and in the line under the bar.
function drawTimeSpent(states) {
  const known = TIME_SPENT.filter(([state]) => states[state] !== null && states[state] !== undefined);
  const total = known.reduce((sum, [state]) => sum + Math.max(0, states[state]), 0);
  const parts = known.filter(([state]) => states[state] > 0).map(([state, what]) => {
    const part = document.createElement("span");
    part.className = `state-${state}`;
    part.dataset.state = state;
    part.style.width = `${(100 * states[state]) / total}%`;
    part.title = `${what}: ${duration(states[state])} on average`;
    return part;
  });
  $("t-states").replaceChildren(...parts);
  $("t-states-note").textContent = total
    ? known.map(([state, what]) => `${what} ${duration(states[state])}`).join(" · ")
    : "where the time went: no run counted it";
}

function drawRuns(page) {
  $("t-runs").textContent = String(page.total);
  $("t-success").textContent = percent(page.success_rate);
  $("t-latency").textContent = duration(page.average_latency_ms);
  $("t-reliability").textContent = page.average_reliability === null ? "–" : page.average_reliability.toFixed(1);
  const iterations = page.average_iterations;
  $("t-iterations").textContent = iterations === null ? "–" : `${iterations.toFixed(1)} / ${page.max_iterations}`;
  drawTimeSpent(page.average_states_ms || {});
  $("runs").tBodies[0].replaceChildren(...page.items.map(runRow));
  $("no-runs").hidden = page.items.length > 0;
  const last = page.offset + page.items.length;
  $("page-note").textContent = page.items.length ? `${page.offset + 1}–${last} of ${page.total}` : `0 of ${page.total}`;
  $("newer").disabled = page.offset === 0;
  $("older").disabled = page.offset + page.items.length >= page.total;
  $("keep").disabled = page.items.length === 0 || Boolean(state.runs);
  $("evaluate-open").disabled = page.total === 0;
  drawRestriction(page);
}

// The note of a page restricted to chosen runs, with the window the server found for them.
function drawRestriction(page) {
  $("restricted").hidden = !state.runs;
  $("f-range").disabled = Boolean(state.runs);
  if (!state.runs || !page) return;
  const span = [page.start, page.end].map((at) => new Date(at).toLocaleString([], SHORT_TIME)).join(" – ");
  $("restricted-note").textContent = `Only the ${state.runs.length} runs this link names are shown `
    + `(${page.total} of them match the filters), started ${span}.`;
}

// --- loading -------------------------------------------------------------------------------

// The groups, drawn unless a later request for them (a load, or another grouping) was sent;
// none are asked for until a grouping is chosen (their tokens are read from the runs' rows).
function loadGroups(asked) {
  const asking = ++state.groupings;
  const by = $("g-by").value;
  if (!by) return Promise.resolve(drawGroups(null, pickGroup));
  return getJson(`/api/metrics/groups?${query({ ...asked, by })}`)
    .then((answer) => { if (asking === state.groupings) drawGroups(answer, pickGroup); });
}

// Runs, charts, groups and the filters' choices for the current filters; `first` marks the
// timings. A page restricted to chosen runs asks for no window: the server answers with
// theirs, and the filters' choices are those of that window.
async function load(first = false) {
  const generation = ++state.generation;
  const current = () => generation === state.generation;
  state.loading += 1;
  const span = windowParams();
  const asked = { ...span, ...filterParams() };
  remember();
  showProblem(null);
  drawRestriction(null);
  const runs = getJson(`/api/metrics/runs?${query({ ...asked, offset: state.offset, limit: LIMIT })}`);
  const listed = runs.then((page) => { if (current()) drawRuns(page); }).then(() => first && mark("parley:runs"));
  const charts = getJson(`/api/metrics/series?${query(asked)}`)
    .then((series) => (current() ? drawCharts(series) : null))
    .then(() => first && mark("parley:charts"));
  const groups = loadGroups(asked);
  const facets = state.runs
    ? runs.then((page) => getJson(`/api/metrics/facets?${query({ start: page.start, end: page.end })}`))
    : getJson(`/api/metrics/facets?${query(span)}`);
  const choices = facets.then((f) => { if (current()) fillChoices(f); });
  try {
    await Promise.all([listed, charts, groups, choices]);
    await frame();
    if (first) mark("parley:ready");
    document.body.dataset.loaded = String(generation);
  } catch (error) {
    showProblem(error);
  } finally {
    state.loading -= 1;
  }
}

function reload() {
  state.offset = 0;
  showCustom();
  load();
}

// A click on a group: the list (and everything else) filtered by its key.
function pickGroup(by, key) {
  setFilter(by, key);
  reload();
}

// --- wiring --------------------------------------------------------------------------------

$("filters").addEventListener("submit", (event) => {
  event.preventDefault();
  reload();
});
$("f-range").addEventListener("change", showCustom);
$("refresh").addEventListener("click", () => load());
$("newer").addEventListener("click", () => { state.offset = Math.max(0, state.offset - LIMIT); load(); });
$("older").addEventListener("click", () => { state.offset += LIMIT; load(); });
$("keep").addEventListener("click", () => {
  state.runs = [...$("runs").tBodies[0].rows].map((row) => row.dataset.id);
  reload();
});
$("unrestrict").addEventListener("click", () => {
  state.runs = null;
  reload();
});
$("g-by").addEventListener("change", () => {
  remember();
  loadGroups({ ...windowParams(), ...filterParams() }).catch(showProblem);
});
for (const tab of document.querySelectorAll("#run .tabs [data-view]")) {
  tab.addEventListener("click", () => showView(tab.dataset.view));
}

evaluateForm();
restore();
load(true);
if (state.run) openRun(state.run);
autoRefresh(load);
