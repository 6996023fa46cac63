// "Evaluate these runs…" on the runs page: the runs its filters choose, replayed with a
// candidate configuration (`POST /api/evaluations`, docs/API.md "Evaluations"). The form
// takes the candidate's model (the window's models offered, any other typed), its mode, the
// instructions in place of the chats' own, a label, a token budget and how many runs, the
// newest first. The runs are the window's and the filters' (`filter`); on a link to chosen
// runs (`runs=`), those of them the filters match (`runs`, their ids). The API's refusals
// are shown in the form, each problem on its line; a started evaluation opens on the lab page
// (/admin/lab).

import { getJson, postJson } from "./api.js";
import { $, FILTERS, filterParams, query, state, windowParams } from "./admin-page.js";

const MAX_CHOSEN = 200; // the runs list's page: a link names at most as many runs

function whole(field) {
  const value = $(field).value.trim();
  return value === "" ? undefined : Number(value);
}

function candidate() {
  const config = { mode: $("e-mode").value };
  const model = $("e-model").value.trim();
  if (model) config.model = model;
  if ($("e-replace").checked) config.instructions = $("e-instructions").value.trim();
  return config;
}

// The runs' part of the body: `filter`, or the ids of the chosen runs the filters match.
async function chosenRuns(limit) {
  if (!state.runs) {
    const filter = { ...windowParams(), ...filterParams() };
    if (limit !== undefined) filter.limit = limit;
    return { filter };
  }
  const asked = { ...filterParams(), limit: Math.min(limit ?? MAX_CHOSEN, MAX_CHOSEN) };
  const page = await getJson(`/api/metrics/runs?${query(asked)}`);
  return { runs: page.items.map((run) => run.id) };
}

function showProblems(error, problems = []) {
  $("e-error").textContent = error || "";
  $("e-error").hidden = !error;
  $("e-problems").replaceChildren(...problems.map((said) => Object.assign(document.createElement("li"), { textContent: said })));
  $("e-problems").hidden = problems.length === 0;
}

async function start(event) {
  event.preventDefault();
  showProblems(null);
  $("e-start").disabled = true;
  try {
    const body = { config: candidate(), label: $("e-label").value.trim(), ...(await chosenRuns(whole("e-limit"))) };
    const budget = whole("e-budget");
    if (budget !== undefined) body.budget = budget;
    if (body.runs && body.runs.length === 0) {
      showProblems("None of the runs this link names matches the filters.");
      return;
    }
    const answer = await postJson("/api/evaluations", body, { headers: { Accept: "application/json" } });
    const said = await answer.json().catch(() => ({}));
    if (answer.status === 202) {
      location.assign(`/admin/lab?evaluation=${encodeURIComponent(said.id)}`);
      return;
    }
    showProblems(said.error || answer.statusText || `HTTP ${answer.status}`, said.problems || []);
  } catch (error) {
    showProblems(String(error.message || error));
  } finally {
    $("e-start").disabled = false;
  }
}

// What the form replays, in words, from the filters in force and the list's total.
function scope() {
  const filters = FILTERS.filter((name) => $(`f-${name}`).value.trim()).map((name) => `${name} ${$(`f-${name}`).value.trim()}`);
  const by = filters.length ? `matching ${filters.join(", ")}` : "of every kind";
  const total = $("t-runs").textContent;
  if (state.runs) return `Those of the ${state.runs.length} runs this link names ${by} (${total} of them), newest first.`;
  const range = $("f-range").selectedOptions[0]?.textContent ?? "";
  return `The newest runs ${by} in the window (${range}): ${total} of them, up to the limit.`;
}

function open() {
  const models = [...$("f-model").options].map((option) => option.value).filter(Boolean);
  $("e-models").replaceChildren(...models.map((model) => new Option(model, model)));
  $("e-scope").textContent = scope();
  $("e-limit").max = String(state.runs ? MAX_CHOSEN : 500);
  showProblems(null);
  $("evaluate").showModal();
  $("e-model").focus();
}

// The button and its form wired; the button is enabled while the list has runs.
export function evaluateForm() {
  $("evaluate-open").addEventListener("click", open);
  $("e-close").addEventListener("click", () => $("evaluate").close());
  $("e-replace").addEventListener("change", () => { $("e-instructions").disabled = !$("e-replace").checked; });
  $("evaluate-form").addEventListener("submit", start);
}
