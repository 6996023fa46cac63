// The web chat (served at / as chat.html): the conversation list, the open conversation, its
// settings, and the message box. See chat/ for the parts.

import { api, refusal } from "./api.js";
import { Conversations } from "./chat/conversations.js";
import { watchScroll } from "./chat/dom.js";
import { Chosen, wireFiles } from "./chat/files.js";
import { SettingsForm } from "./chat/settings.js";
import { currentSession, forgetProgress, keepSession, progress } from "./chat/store.js";
import { ChatView } from "./chat/view.js";

const log = document.getElementById("log");
const form = document.getElementById("form");
const text = document.getElementById("text");
const stopButton = document.getElementById("stop");
const planFirst = document.getElementById("plan-first");
const PLAN_KEY = "parley.planFirst"; // the mode new conversations start in, in this browser
let view = null;

planFirst.checked = localStorage.getItem(PLAN_KEY) === "1";
const chosenMode = () => (planFirst.checked ? "plan_execute" : "react");
const keepMode = () => localStorage.setItem(PLAN_KEY, planFirst.checked ? "1" : "0");
planFirst.onchange = async () => {
  keepMode();
  if (!view.session) return;
  const path = `/api/sessions/${view.session}`;
  const body = JSON.stringify({ mode: chosenMode() });
  const headers = { "Content-Type": "application/json" };
  const response = await api(path, { method: "PATCH", headers, body });
  if (!response.ok) view.error(await refusal(response));
};

// The settings form sends the mode with the rest: the checkbox only shows it.
new SettingsForm({
  view: () => view,
  onMode: (mode) => {
    planFirst.checked = mode === "plan_execute";
    keepMode();
  },
});

const conversations = new Conversations({
  list: document.getElementById("conversations"),
  more: document.getElementById("more"),
  open: (id) => open(id),
  deleted: (id) => {
    forgetProgress(id);
    if (view && view.session === id) open(null);
  },
});

// The list is read again after each turn, at most once a second.
let listTimer = 0;
function refreshList() {
  clearTimeout(listTimer);
  listTimer = setTimeout(() => conversations.load().catch(() => {}), 1000);
}

/** Show conversation `session` (a new, empty one for null), closing the one shown. */
function open(session) {
  view?.close();
  log.replaceChildren();
  keepSession(session);
  conversations.select(session);
  const opened = view = new ChatView({
    log,
    session,
    stopButton,
    onSession: (id, title) => conversations.added(id, title),
    onTurnEnd: refreshList,
    mode: chosenMode,
    onMode: (mode) => { planFirst.checked = mode === "plan_execute"; },
  });
  text.focus();
  if (session) opened.load().catch((error) => opened.alive && opened.error(error.message));
}

const chosen = new Chosen(document.getElementById("chosen"));
wireFiles(form, document.getElementById("files"), document.getElementById("attach"), chosen);

form.onsubmit = (e) => {
  e.preventDefault();
  const message = text.value.trim();
  if (!message && !chosen.files.length) return;
  text.value = "";
  view.send(message, chosen.take());
};
text.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey) {
    e.preventDefault();
    form.requestSubmit();
  }
});
stopButton.onclick = () => {
  if (view.session) api(`/api/sessions/${view.session}/stop`, { method: "POST" });
};
document.getElementById("new-chat").onclick = () => open(null);
watchScroll(log);

// Ask for the token on opening, not at the first message; say so if nothing can be served.
api("/api/tools").then(async (response) => {
  if (!response.ok) view.error(await refusal(response));
});
const restored = currentSession();
open(restored);
conversations.load().then(() => {
  // The open conversation is listed also before its first turn is recorded.
  const listed = conversations.items.some((item) => item.id === `http:${restored}`);
  if (restored && view.session === restored && !listed) {
    conversations.added(restored, progress(restored).pending?.text || "New chat");
  }
}).catch(() => {});
