// What the dashboard's parts share: the page's state, its filters and the address that keeps
// them, so a reload or a shared link shows the same view. The address holds the window, the
// filters, the page of runs, the open run, the grouping, the auto refresh and, for a link to
// chosen runs, their ids (`runs=`): then the window is theirs, worked out by the server.

export const RANGES = { "1h": 3600e3, "6h": 6 * 3600e3, "24h": 24 * 3600e3, "7d": 7 * 86400e3, "30d": 30 * 86400e3 };
export const FILTERS = ["outcome", "platform", "model", "trigger", "mode", "prompt", "tools", "q"];
export const GROUPINGS = ["model", "mode", "prompt", "tools"];
export const REFRESHES = [0, 10, 30, 60, 300]; // seconds; 0 is off
export const MAX_CHOSEN = 200;
const RUN_ID = /^[0-9a-f]{32}$/;
const HASHED = new Set(["prompt", "tools"]);

export const $ = (id) => document.getElementById(id);
export const state = {
  offset: 0, run: null, graph: null, view: "graph", generation: 0,
  runs: null, // the chosen runs' ids when the page is restricted to them
  loading: 0, // loads in flight: an auto refresh waits for none
  groupings: 0, // requests for the groups sent: only the latest one's answer is drawn
};

export function frame() {
  return new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
}

export function mark(name) {
  if (performance.getEntriesByName(name, "mark").length === 0) performance.mark(name);
}

export function showProblem(error) {
  const problem = $("problem");
  problem.textContent = error ? String(error.message || error) : "";
  problem.hidden = !error;
}

export function percent(rate) {
  return rate === null || rate === undefined ? "–" : `${Math.round(rate * 1000) / 10}%`;
}

// A prompt's or a tool set's hash as the page shows it: its first 8 characters (the whole
// hash is the option's or the cell's tooltip).
export function shortHash(hash) {
  return String(hash).slice(0, 8);
}

export function choiceLabel(name, value) {
  return HASHED.has(name) ? shortHash(value) : value;
}

function localInput(date) {
  const shifted = new Date(date.getTime() - date.getTimezoneOffset() * 60000);
  return shifted.toISOString().slice(0, 16);
}

// The window asked for: none when the page is restricted to chosen runs (the server gives
// theirs back).
export function windowParams() {
  if (state.runs) return {};
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

export function filterParams() {
  const chosen = {};
  for (const name of FILTERS) {
    const value = $(`f-${name}`).value.trim();
    if (value) chosen[name] = value;
  }
  if (state.runs) chosen.runs = state.runs.join(",");
  return chosen;
}

export function query(params) {
  return new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== null)).toString();
}

export function remember() {
  const kept = { range: $("f-range").value, ...filterParams() };
  if (kept.range === "custom") Object.assign(kept, { from: $("f-start").value, to: $("f-end").value });
  if (state.offset) kept.offset = state.offset;
  if (state.run) kept.run = state.run;
  if ($("g-by").value) kept.group = $("g-by").value;
  if (Number($("f-refresh").value)) kept.refresh = $("f-refresh").value;
  // the ids of chosen runs separated by plain commas, as a link is read and written by hand
  history.replaceState(null, "", `${location.pathname}?${query(kept).replaceAll("%2C", ",")}`);
}

function option(name, value) {
  const made = new Option(choiceLabel(name, value), value);
  if (HASHED.has(name)) made.title = value;
  return made;
}

function pick(field, value) {
  const missing = field.tagName === "SELECT" && ![...field.options].some((o) => o.value === value);
  if (missing) field.appendChild(option(field.id.slice(2), value));
  field.value = value;
}

// The ids of `runs=`, or null when it holds none that could be a run's.
function chosenRuns(given) {
  const ids = (given || "").split(",").filter((id) => RUN_ID.test(id));
  return ids.length ? [...new Set(ids)].slice(0, MAX_CHOSEN) : null;
}

export function restore() {
  const given = new URLSearchParams(location.search);
  if (given.get("range") && [...$("f-range").options].some((o) => o.value === given.get("range"))) {
    $("f-range").value = given.get("range");
  }
  const now = new Date();
  $("f-start").value = given.get("from") || localInput(new Date(now.getTime() - RANGES["24h"]));
  $("f-end").value = given.get("to") || localInput(now);
  for (const name of FILTERS) {
    const value = given.get(name);
    if (value) pick($(`f-${name}`), value);
  }
  if (GROUPINGS.includes(given.get("group"))) $("g-by").value = given.get("group");
  if (REFRESHES.includes(Number(given.get("refresh")))) $("f-refresh").value = String(Number(given.get("refresh")));
  state.offset = Math.max(0, Number.parseInt(given.get("offset") || "0", 10) || 0);
  state.run = RUN_ID.test(given.get("run") || "") ? given.get("run") : null;
  state.runs = chosenRuns(given.get("runs"));
  showCustom();
}

export function showCustom() {
  for (const label of document.querySelectorAll("#filters .custom")) {
    label.hidden = $("f-range").value !== "custom" || Boolean(state.runs);
  }
}

// A filter set to `value` (a group's key), its option made if the facets had none.
export function setFilter(name, value) {
  pick($(`f-${name}`), value);
}

export function fillChoices(facets) {
  const lists = {
    platform: facets.platforms, model: facets.models, trigger: facets.triggers,
    mode: facets.modes, prompt: facets.prompts, tools: facets.tools,
  };
  for (const [name, values] of Object.entries(lists)) {
    const field = $(`f-${name}`);
    const current = field.value;
    const wanted = ["", ...new Set([...values, ...(current ? [current] : [])])];
    // the same choices are left as they are: an auto refresh closes no open list
    if (wanted.join("\n") === [...field.options].map((o) => o.value).join("\n")) continue;
    field.replaceChildren(new Option("any", ""), ...wanted.slice(1).map((value) => option(name, value)));
    field.value = current;
  }
}
