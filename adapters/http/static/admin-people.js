// The dashboard's people page (/admin/people): whose memories Parley keeps (people and group
// chats, the most recently written first), and for one of them its memories, newest first,
// the days' digests marked by their day; a search by meaning, Forget on each memory, Forget
// all once confirmed (a privacy request), and the switch of its daily digest. The chosen one
// and the list's page live in the page's address, so a reload or a link shows the same.
//
// A memory's text is what people said: it is only ever set as text, never parsed as markup.

import { ApiError, api, getJson, refusal } from "./api.js";

const LIMIT = 50;
const SCOPE = /^[a-z]{1,16}:[A-Za-z0-9_.@:+-]{1,180}$/; // adapters/http/people.py's PERSON_ID
const SHORT_TIME = { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" };
const $ = (id) => document.getElementById(id);
const state = { offset: 0, scope: null, query: "", generation: 0 };

function showProblem(error) {
  const problem = $("problem");
  problem.textContent = error ? String(error.message || error) : "";
  problem.hidden = !error;
}

function when(iso) {
  return new Date(iso).toLocaleString([], SHORT_TIME);
}

function counted(number, one, many) {
  return `${number} ${number === 1 ? one : many}`;
}

function isChat(scope) {
  return scope.startsWith("chat:");
}

// A call that changes something: its JSON answer, or an ApiError in the server's words.
async function send(path, method, body) {
  const headers = { Accept: "application/json" };
  const options = { method, headers };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await api(path, options);
  if (!response.ok) throw new ApiError(response.status, await refusal(response));
  return response.json();
}

function scopePath(scope, rest) {
  return `/api/people/${encodeURIComponent(scope)}/${rest}`;
}

function remember() {
  const kept = new URLSearchParams();
  if (state.scope) kept.set("scope", state.scope);
  if (state.offset) kept.set("offset", String(state.offset));
  const search = kept.toString();
  history.replaceState(null, "", search ? `${location.pathname}?${search}` : location.pathname);
}

function restore() {
  const given = new URLSearchParams(location.search);
  state.offset = Math.max(0, Number.parseInt(given.get("offset") || "0", 10) || 0);
  const scope = given.get("scope") || "";
  state.scope = SCOPE.test(scope) ? scope : null;
}

// --- whose memories ------------------------------------------------------------------------

function cell(text, className) {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function digestCell(on) {
  const td = document.createElement("td");
  const badge = document.createElement("span");
  badge.className = on ? "badge digest-on" : "badge digest-off";
  badge.textContent = on ? "on" : "off";
  td.appendChild(badge);
  return td;
}

function scopeRow(item) {
  const row = document.createElement("tr");
  row.dataset.scope = item.scope;
  row.tabIndex = 0;
  row.classList.toggle("selected", item.scope === state.scope);
  row.append(
    cell(item.scope), cell(item.kind === "chat" ? "group chat" : "person"),
    cell(String(item.memories), "num"), cell(String(item.digests), "num"),
    digestCell(item.digests_on), cell(when(item.newest_at)),
  );
  row.addEventListener("click", () => openScope(item.scope));
  row.addEventListener("keydown", (event) => { if (event.key === "Enter") openScope(item.scope); });
  return row;
}

function drawScopes(page) {
  $("scopes").tBodies[0].replaceChildren(...page.items.map(scopeRow));
  $("no-scopes").hidden = page.total > 0;
  $("no-digests").hidden = page.digests_kept;
  const last = page.offset + page.items.length;
  $("page-note").textContent = page.items.length ? `${page.offset + 1}–${last} of ${page.total}` : `0 of ${page.total}`;
  $("newer").disabled = page.offset === 0;
  $("older").disabled = last >= page.total;
}

async function loadScopes() {
  const generation = ++state.generation;
  remember();
  try {
    const page = await getJson(`/api/memory/scopes?offset=${state.offset}&limit=${LIMIT}`);
    if (generation !== state.generation) return;
    drawScopes(page);
    document.body.dataset.scopes = String(generation);
  } catch (error) {
    showProblem(error);
  }
}

// --- one scope's memories ------------------------------------------------------------------

function memoryItem(memory) {
  const item = document.createElement("li");
  item.className = memory.day ? "memory digest" : "memory";
  item.dataset.id = String(memory.id);
  const head = document.createElement("div");
  head.className = "memory-head";
  const number = document.createElement("span");
  number.className = "number";
  number.textContent = `#${memory.id}`;
  head.appendChild(number);
  if (memory.day) {
    const day = document.createElement("span");
    day.className = "badge day";
    day.textContent = `digest of ${memory.day}`;
    head.appendChild(day);
  }
  const written = document.createElement("time");
  written.dateTime = memory.created_at;
  written.textContent = when(memory.created_at);
  const forget = document.createElement("button");
  forget.type = "button";
  forget.className = "forget";
  forget.textContent = "Forget";
  forget.addEventListener("click", () => forgetOne(memory, forget));
  head.append(written, forget);
  const text = document.createElement("p");
  text.className = "text";
  text.textContent = memory.text;
  item.append(head, text);
  return item;
}

function describe(items) {
  if (state.query) {
    return items.length ? `${items.length} found for “${state.query}”, best first.` : `Nothing found for “${state.query}”.`;
  }
  const digests = items.filter((m) => m.day).length;
  if (!items.length) return "Nothing is remembered here.";
  const kept = counted(items.length - digests, "memory", "memories");
  return `${kept} and ${counted(digests, "digest", "digests")}, newest first.`;
}

function drawMemories(items) {
  $("memories").replaceChildren(...items.map(memoryItem));
  $("memory-note").textContent = describe(items);
  $("search-clear").hidden = !state.query;
  $("forget-all").disabled = !state.query && items.length === 0;
}

// The scope's memories (newest first) or, with a query, those it is about (best first).
async function loadMemories() {
  const scope = state.scope;
  const query = state.query;
  const path = scopePath(scope, "memory") + (query ? `?q=${encodeURIComponent(query)}` : "");
  const found = await getJson(path);
  if (scope !== state.scope || query !== state.query) return;
  drawMemories(query ? found.items : [...found.items].reverse());
  document.body.dataset.memories = `${scope} ${query}`;
}

async function loadDigestSwitch() {
  const scope = state.scope;
  const shown = await getJson(scopePath(scope, "digests"));
  if (scope === state.scope) $("digest-switch").checked = shown.on;
}

async function openScope(scope) {
  state.scope = scope;
  state.query = "";
  $("search-q").value = "";
  $("confirm-all").hidden = true;
  remember();
  for (const row of $("scopes").tBodies[0].rows) row.classList.toggle("selected", row.dataset.scope === scope);
  $("scope-title").textContent = scope;
  $("scope-meta").textContent = isChat(scope)
    ? "A group chat's memories: what its people asked it to keep, shared by everyone in it."
    : "A person's own memories: what they asked to be kept in private, on every platform.";
  $("memories").replaceChildren();
  $("memory-note").textContent = "";
  $("scope").hidden = false;
  showProblem(null);
  try {
    await Promise.all([loadMemories(), loadDigestSwitch()]);
  } catch (error) {
    showProblem(error);
  }
}

// --- what an operator changes ----------------------------------------------------------------

async function forgetOne(memory, button) {
  button.disabled = true;
  try {
    await send(scopePath(state.scope, `memory/${memory.id}`), "DELETE");
    showProblem(null);
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) showProblem(error); // 404: gone already
  }
  await Promise.all([loadMemories().catch(showProblem), loadScopes()]);
}

function askForgetAll() {
  const whose = isChat(state.scope) ? "the group chat" : "the person";
  $("confirm-text").textContent =
    `Forget everything ${whose} ${state.scope} has: every memory and digest? This cannot be undone.`;
  $("confirm-all").hidden = false;
  $("confirm-no").focus();
}

async function forgetAll() {
  $("confirm-all").hidden = true;
  try {
    const done = await send(scopePath(state.scope, "memory"), "DELETE");
    state.query = "";
    $("search-q").value = "";
    await loadMemories();
    const gone = counted(done.deleted, "memory or digest", "memories and digests");
    $("memory-note").textContent = `Forgot ${gone}. Nothing is remembered here.`;
    showProblem(null);
  } catch (error) {
    showProblem(error);
  }
  await loadScopes();
}

async function switchDigests() {
  const box = $("digest-switch");
  const wanted = box.checked;
  box.disabled = true;
  try {
    const shown = await send(scopePath(state.scope, "digests"), "PUT", { on: wanted });
    box.checked = shown.on;
    showProblem(null);
  } catch (error) {
    box.checked = !wanted;
    showProblem(error);
  } finally {
    box.disabled = false;
  }
  await loadScopes();
}

async function search(event) {
  event.preventDefault();
  state.query = $("search-q").value.trim();
  try {
    await loadMemories();
    showProblem(null);
  } catch (error) {
    showProblem(error);
  }
}

// --- wiring ----------------------------------------------------------------------------------

$("open-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const scope = $("open-id").value.trim();
  if (!SCOPE.test(scope)) {
    showProblem("A person is platform:id (tg:123, slack:T1:U1), a group chat chat: and its chat (chat:tg:-100123).");
    return;
  }
  openScope(scope);
});
$("refresh").addEventListener("click", () => { loadScopes(); if (state.scope) openScope(state.scope); });
$("newer").addEventListener("click", () => { state.offset = Math.max(0, state.offset - LIMIT); loadScopes(); });
$("older").addEventListener("click", () => { state.offset += LIMIT; loadScopes(); });
$("search").addEventListener("submit", search);
$("search-clear").addEventListener("click", (event) => { $("search-q").value = ""; search(event); });
$("forget-all").addEventListener("click", askForgetAll);
$("confirm-yes").addEventListener("click", forgetAll);
$("confirm-no").addEventListener("click", () => { $("confirm-all").hidden = true; });
$("digest-switch").addEventListener("change", switchDigests);

restore();
loadScopes();
if (state.scope) openScope(state.scope);
