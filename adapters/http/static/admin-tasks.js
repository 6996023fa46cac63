// The dashboard's tasks page (/admin/tasks): every scheduled task and quiet check-in
// (GET /api/tasks), where it answers, who made it, when it runs next, and what its runs spent
// today against its daily cap (PARLEY_TASK_TOKENS_PER_DAY, or its own), a task at its cap
// marked as one that does not run again until tomorrow (UTC); Cancel ends one
// (DELETE /api/tasks/{id}). The filters and the page live in the address.
//
// A task's prompt is what a person wrote: it is only ever set as text, never parsed as markup.

import { ApiError, api, getJson, refusal } from "./api.js";

const LIMIT = 50;
const SHORT_TIME = { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" };
const $ = (id) => document.getElementById(id);
const state = { offset: 0, all: false, chat: "", generation: 0 };

function showProblem(error) {
  $("problem").textContent = error ? String(error.message || error) : "";
  $("problem").hidden = !error;
}

function cell(text, className = "") {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function when(iso) {
  return iso ? new Date(iso).toLocaleString([], SHORT_TIME) : "—";
}

/** What a task spent today against its cap: the figures and a bar, "at its cap" once there. */
function spendCell(task) {
  const td = cell("", "spend");
  const cap = task.tokens_per_day;
  const spent = task.tokens_today;
  const figures = document.createElement("span");
  figures.textContent = cap ? `${spent.toLocaleString()} of ${cap.toLocaleString()}` : `${spent.toLocaleString()} (no cap)`;
  td.append(figures);
  if (cap) {
    const meter = document.createElement("meter");
    meter.min = 0;
    meter.max = cap;
    meter.value = Math.min(spent, cap);
    meter.high = cap * 0.8;
    meter.title = `${Math.round((100 * spent) / cap)}% of today's cap`;
    td.append(meter);
    if (spent >= cap) {
      td.classList.add("capped");
      td.title = "At its daily cap: it runs again tomorrow (UTC)";
    }
  }
  return td;
}

function row(task) {
  const tr = document.createElement("tr");
  tr.dataset.id = String(task.id);
  const what = cell(task.prompt, "prompt");
  what.title = task.prompt;
  if (task.quiet) {
    const badge = document.createElement("span");
    badge.className = "badge";
    badge.textContent = "check-in";
    badge.title = "Quiet: posts only when it has something to say";
    what.prepend(badge);
  }
  tr.append(
    cell(String(task.id), "num"),
    cell(task.session, "where"),
    cell(task.creator_name || task.creator),
    what,
    cell(`${task.when} (${task.timezone})`),
    cell(task.status === "active" ? when(task.next_run_at) : "—"),
    cell(String(task.runs), "num"),
    spendCell(task),
    cell(task.from_config ? `${task.status}, configured` : task.status),
    actions(task),
  );
  return tr;
}

function actions(task) {
  const td = cell("");
  if (task.status !== "active" || task.from_config) return td;
  const button = document.createElement("button");
  button.type = "button";
  button.className = "danger";
  button.textContent = "Cancel";
  button.onclick = () => cancel(task, button);
  td.append(button);
  return td;
}

async function cancel(task, button) {
  button.disabled = true;
  try {
    const response = await api(`/api/tasks/${task.id}`, { method: "DELETE" });
    if (!response.ok) throw new ApiError(response.status, await refusal(response));
    await load();
  } catch (error) {
    showProblem(error);
    button.disabled = false;
  }
}

function summary(tasks, total) {
  const spent = tasks.reduce((sum, task) => sum + task.tokens_today, 0);
  const capped = tasks.filter((task) => task.tokens_per_day && task.tokens_today >= task.tokens_per_day);
  const quiet = tasks.filter((task) => task.quiet).length;
  const parts = [
    `${total} task${total === 1 ? "" : "s"}`,
    `${quiet} of these check-ins`,
    `${spent.toLocaleString()} tokens spent today by these`,
  ];
  if (capped.length) parts.push(`${capped.length} at its daily cap (#${capped.map((t) => t.id).join(", #")})`);
  return parts.join(" · ");
}

async function load() {
  const generation = ++state.generation;
  const query = new URLSearchParams({ offset: String(state.offset), limit: String(LIMIT) });
  if (state.all) query.set("status", "all");
  if (state.chat) query.set("session", state.chat);
  remember();
  try {
    const page = await getJson(`/api/tasks?${query}`);
    if (generation !== state.generation) return; // a newer load is on its way
    showProblem(null);
    $("tasks").tBodies[0].replaceChildren(...page.items.map(row));
    $("no-tasks").hidden = page.items.length > 0;
    $("spend").textContent = summary(page.items, page.total);
    const last = Math.min(page.offset + page.items.length, page.total);
    $("page-note").textContent = page.total ? `${page.offset + 1}–${last} of ${page.total}` : "";
    $("newer").disabled = page.offset === 0;
    $("older").disabled = last >= page.total;
    document.dispatchEvent(new CustomEvent("parley:tasks", { detail: page.items.length }));
  } catch (error) {
    if (generation === state.generation) showProblem(error);
  }
}

function remember() {
  const kept = new URLSearchParams();
  if (state.all) kept.set("status", "all");
  if (state.chat) kept.set("session", state.chat);
  if (state.offset) kept.set("offset", String(state.offset));
  const search = kept.toString();
  history.replaceState(null, "", search ? `${location.pathname}?${search}` : location.pathname);
}

function restore() {
  const kept = new URLSearchParams(location.search);
  state.all = kept.get("status") === "all";
  state.chat = kept.get("session") || "";
  state.offset = Math.max(0, Number.parseInt(kept.get("offset") || "0", 10) || 0);
  $("all").checked = state.all;
  $("chat").value = state.chat;
}

$("task-filters").onsubmit = (e) => {
  e.preventDefault();
  state.all = $("all").checked;
  state.chat = $("chat").value.trim();
  state.offset = 0;
  load();
};
$("all").onchange = () => $("task-filters").requestSubmit();
$("newer").onclick = () => { state.offset = Math.max(0, state.offset - LIMIT); load(); };
$("older").onclick = () => { state.offset += LIMIT; load(); };

restore();
load();
