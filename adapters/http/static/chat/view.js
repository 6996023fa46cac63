// One conversation on the page: its history, the turns sent from here, and the event streams
// that show them. Opening another conversation closes the view: its streams are aborted and
// nothing more is drawn for it.

import { api, postJson, refusal } from "../api.js";
import { h, heardLine, pinToEnd } from "./dom.js";
import { attachments, shownFiles } from "./files.js";
import { renderHistory } from "./history.js";
import { reason } from "./settings.js";
import { keepProgress, keepSession, progress } from "./store.js";
import { Turn } from "./turn.js";

// A turn's stream ends at its `completed` event; a followed session at the end of the turn
// that continues after a confirmation (or at the next confirmation, which follows on its own).
export const turnEnd = (event) => event.type === "completed";
export const continuationEnd = (event) => event.type === "confirmation_required"
  || (event.type === "completed" && event.finish_reason !== "awaiting_confirmation");

// A command the server answers instead of the model (adapters/http/chat_commands.py): it is no
// part of the record, so nothing waits for the history to show it, and its answer is shown as
// the text it is (a memory as it was written).
export const isCommand = (text) =>
  /^\/(new|compact|memory|forget|steer|voice|checkin)(\s[\s\S]*)?$/i.test(text.trim());

const RESUME_TRIES = 12;
const HISTORY = 100; // messages shown when a conversation is opened
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
const aborted = (error) => error && error.name === "AbortError";

export class ChatView {
  /** `onSession(id, title)`: a session was made for this view; `onTurnEnd()`: a turn ended;
   * `mode()`: the mode a new session starts in; `onMode(mode)`: the open session's mode. */
  constructor({ log, session, stopButton, onSession, onTurnEnd, mode, onMode }) {
    Object.assign(this, { log, session, stopButton, onSession, onTurnEnd, mode, onMode });
    // The rest of how its turns run (settings.js): read from its record when it is opened,
    // kept here for a conversation not made yet and sent when its first message makes it.
    this.choice = { model: null, tools: null, output_schema: null };
    this.controller = new AbortController();
    this.tools = new Map(); // call id → ToolCard, across the view's turns
    this.cards = new Map(); // confirmation id → its approval or question card
    this.streams = 0;
    this.stopButton.disabled = true;
  }

  get alive() {
    return !this.controller.signal.aborted;
  }

  close() {
    this.controller.abort();
  }

  call(path, options = {}) {
    return api(path, { ...options, signal: this.controller.signal });
  }

  /** The person's message: its files (sent `File`s, or recorded references), then its text. */
  /** The person's message: their files, their text, and what was heard in their voice notes. */
  userMessage(text, files = [], heard = []) {
    const message = h("div", { class: "msg user" }, shownFiles(files), text, ...heard.map(heardLine));
    this.log.append(message);
    return message;
  }

  error(text) {
    this.log.append(h("div", { class: "msg error", text }));
  }

  async ensureSession(title) {
    if (this.session) return this.session;
    const chosen = Object.entries(this.choice).filter(([, value]) => value !== null);
    const body = { mode: this.mode(), ...Object.fromEntries(chosen) };
    const response = await postJson("/api/sessions", body, { signal: this.controller.signal });
    if (!response.ok) {
      this.error(`No conversation was made: ${await reason(response)}`);
      return null;
    }
    const { id } = await response.json();
    if (!this.alive) return null;
    this.session = id;
    keepSession(id);
    this.onSession(id, title);
    return id;
  }

  /** Send `text` with `files` and show its turn as it streams. */
  async send(text, files = []) {
    const mine = this.userMessage(text, files);
    const command = !files.length && isCommand(text);
    pinToEnd();
    try {
      const turn = new Turn(this, mine, command);
      let response = await this.post(text, files);
      if (response && response.status === 404) { // the session is gone (deleted elsewhere)
        this.session = null; // a new one takes the message
        response = await this.post(text, files);
      }
      if (response) await this.stream(response, turn, turnEnd);
      if (command && this.alive && this.session) keepProgress(this.session, { pending: null });
    } catch (error) {
      if (!aborted(error)) this.error(`The message could not be sent: ${error.message}`);
    }
  }

  /** Post `text` and `files` to the session (made first if there is none); null if none
   * could be made. */
  async post(text, files = []) {
    const session = await this.ensureSession(text || files[0]?.name || "Files");
    if (!session) return null;
    keepProgress(session, { pending: { text, from: progress(session).mark || "0-0" } });
    const path = `/api/sessions/${session}/messages`;
    const body = files.length ? { text, attachments: await attachments(files) } : { text };
    return postJson(path, body, { signal: this.controller.signal });
  }

  /** Draw the session's history, then follow whatever of it is still going on. */
  async load() {
    const response = await this.call(`/api/sessions/${this.session}?recent=${HISTORY}`);
    if (!this.alive) return;
    if (response.status === 404) { // no turn recorded yet: the first may be under way
      return this.followUnfinished(false, null, new Set());
    }
    if (!response.ok) return this.error(await refusal(response));
    const detail = await response.json();
    if (!this.alive) return;
    this.onMode(detail.mode);
    this.choice = { model: detail.model, tools: detail.tools, output_schema: detail.output_schema };
    const recent = detail.recent || [];
    if (detail.messages > recent.length) {
      this.log.append(h("div", { class: "msg info", text: "Older messages are not shown." }));
    }
    const { lastUserText, open } = renderHistory(this, recent);
    pinToEnd();
    await this.followUnfinished(detail.running, lastUserText, open);
  }

  async followUnfinished(running, lastUserText, open) {
    const kept = progress(this.session);
    const { pending, ask } = kept;
    if (pending && pending.text !== lastUserText) { // sent, but its turn is not recorded yet
      this.userMessage(pending.text);
      const command = isCommand(pending.text);
      await this.follow(pending.from, continuationEnd, new Turn(this, null, command));
      if (command && this.alive) keepProgress(this.session, { pending: null });
      return;
    }
    if (pending) keepProgress(this.session, { pending: null });
    // An open request shows its card again; one decided meanwhile settles as its turn goes on.
    if (ask && ask.event.calls.every((call) => open.has(call.call_id))) {
      return new Turn(this).show(ask.event, ask.id);
    }
    if (running) return this.follow(kept.mark || null, continuationEnd, new Turn(this));
    for (const id of open) this.tools.get(id)?.unanswered();
  }

  /** The session's events after `lastId` (from now on without one), until `isEnd`. */
  async follow(lastId, isEnd, turn) {
    const headers = lastId ? { "Last-Event-ID": lastId } : {};
    try {
      const response = await this.call(`/api/sessions/${this.session}/events`, { headers });
      await this.stream(response, turn, isEnd);
    } catch (error) {
      if (!aborted(error)) throw error;
    }
  }

  busy(change) {
    this.streams += change;
    if (this.alive) this.stopButton.disabled = this.streams === 0;
  }

  // A stream the server cut (Redis restarting, `parley web` stopping) ends with an `error`
  // event that says where it stopped; the view follows the session from there, so the turn's
  // text goes on in the same bubble and nothing is shown twice.
  async stream(response, turn, isEnd) {
    if (!response.ok) return turn.note("error", await refusal(response));
    let cut = null;
    this.busy(+1);
    try {
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read().catch(() => ({ done: true }));
        if (done || !this.alive) break;
        buffer += decoder.decode(value, { stream: true });
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const lines = buffer.slice(0, end).split("\n");
          buffer = buffer.slice(end + 2);
          const data = lines.filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
          if (!data) continue;
          const id = (lines.find((l) => l.startsWith("id: ")) || "").slice(4);
          const event = JSON.parse(data);
          if (event.type === "error" && event.retry) {
            cut = event;
            continue;
          }
          if (event.type === "joined" && !turn.seen) { // taken into the turn running before it
            turn.takenIn();
            reader.cancel().catch(() => {});
            return;
          }
          turn.show(event, id);
          if (isEnd(event)) {
            reader.cancel().catch(() => {});
            return;
          }
        }
      }
    } finally {
      this.busy(-1);
    }
    if (cut && this.alive) await this.resume(cut.last_event_id, isEnd, turn);
  }

  async resume(lastId, isEnd, turn) {
    const note = turn.note("note", "Connection to the server lost; reconnecting…");
    for (let attempt = 0; attempt < RESUME_TRIES && this.alive; attempt++) {
      await sleep(Math.min(500 * 2 ** attempt, 5000));
      const headers = lastId ? { "Last-Event-ID": lastId } : {};
      const path = `/api/sessions/${this.session}/events`;
      const response = await this.call(path, { headers }).catch(() => null);
      if (response && response.status !== 503 && response.status !== 502) {
        note.remove();
        return this.stream(response, turn, isEnd);
      }
    }
    note.remove();
    if (this.alive) turn.note("error", "The server cannot be reached; send your message again later.");
  }

  /** An approval card was shown: the turn is followed from the request on. */
  asked(event, id, card, turn) {
    if (!this.alive) return;
    keepProgress(this.session, { ask: { event, id } });
    setTimeout(async () => {
      await this.follow(id, continuationEnd, turn);
      if (!this.alive) return;
      card.turnWentOn();
      const kept = progress(this.session).ask;
      if (kept && kept.id === id) keepProgress(this.session, { ask: null });
    }, 0);
  }

  /** `body`: `{ decision }` for an approval, `{ answers }` for the agent's questions. */
  async decide(confirmationId, body) {
    const response = await postJson(`/api/confirmations/${confirmationId}`, body);
    return response.ok ? { ok: true } : { ok: false, message: await refusal(response) };
  }

  /** A run ended (also one that waits for an approval): its turn is in the history now. */
  turnEnded(event, id) {
    if (!this.alive || !this.session) return;
    keepProgress(this.session, { mark: id || progress(this.session).mark || null });
    this.onTurnEnd();
  }
}
