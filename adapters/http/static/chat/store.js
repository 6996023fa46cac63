// What this browser keeps about the chat (localStorage), so a reload finds its conversation:
// the current session, and for each recent session how far its events were seen.
//
// `mark` is the id of the last `completed` event seen in the session. `pending` is the last
// message sent and the mark at the time (`from`): until the durable history shows that
// message, its turn is shown from the event stream, from there on. `ask` is an approval
// request still open (the event and its id).

const SESSION_KEY = "parley.chat.session";
const PROGRESS_KEY = "parley.chat.progress";
const KEPT_SESSIONS = 20;

function readAll() {
  try {
    const kept = JSON.parse(localStorage.getItem(PROGRESS_KEY) || "{}");
    return kept && typeof kept === "object" && !Array.isArray(kept) ? kept : {};
  } catch {
    return {};
  }
}

export function currentSession() {
  return localStorage.getItem(SESSION_KEY);
}

export function keepSession(session) {
  if (session) localStorage.setItem(SESSION_KEY, session);
  else localStorage.removeItem(SESSION_KEY);
}

/** What is kept about `session`'s events. */
export function progress(session) {
  return readAll()[session] || {};
}

/** Change what is kept about `session` (a null value removes that field); the sessions
 * touched least recently are forgotten first. */
export function keepProgress(session, changes) {
  const all = readAll();
  const kept = { ...(all[session] || {}), ...changes, at: Date.now() };
  for (const [name, value] of Object.entries(kept)) if (value === null) delete kept[name];
  all[session] = kept;
  const newest = Object.entries(all).sort((a, b) => (b[1].at || 0) - (a[1].at || 0));
  localStorage.setItem(PROGRESS_KEY, JSON.stringify(Object.fromEntries(newest.slice(0, KEPT_SESSIONS))));
}

export function forgetProgress(session) {
  const all = readAll();
  delete all[session];
  localStorage.setItem(PROGRESS_KEY, JSON.stringify(all));
}
