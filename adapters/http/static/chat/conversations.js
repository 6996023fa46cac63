// The side panel: this API's conversations, the most recently active first, from the record
// of sessions (GET /api/sessions, which lists every platform's: only `http` ones are shown).

import { api, refusal } from "../api.js";
import { h } from "./dom.js";

const PAGE = 100; // sessions asked for at a time
const WANTED = 30; // conversations worth showing before "Older…" is offered
const MAX_PAGES = 5; // read at a time, however few of them are this API's
const bare = (id) => id.replace(/^http:/, "");

function when(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const today = new Date().toDateString() === date.toDateString();
  if (!today) return date.toLocaleDateString();
  return date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

export class Conversations {
  /** `open(id)`: show that conversation; `deleted(id)`: it is gone. */
  constructor({ list, more, open, deleted }) {
    Object.assign(this, { list, more, open, deleted });
    this.items = [];
    this.offset = 0;
    this.total = 0;
    this.current = null;
    this.extra = new Map(); // made here, not in the record yet (no turn recorded): id → title
    this.more.onclick = () => this.load(false);
  }

  /** Read the list again from the start (`fresh`) or its next part. The record lists every
   * platform's sessions: a few pages are read at most, "Older…" reads on. */
  async load(fresh = true) {
    const found = fresh ? [] : [...this.items];
    const wanted = found.length + WANTED;
    let offset = fresh ? 0 : this.offset;
    let total = 0;
    for (let pages = 0; pages < MAX_PAGES; pages++) {
      const response = await api(`/api/sessions?offset=${offset}&limit=${PAGE}`);
      if (!response.ok) {
        this.list.replaceChildren(h("li", { class: "problem", text: await refusal(response) }));
        return;
      }
      const page = await response.json();
      total = page.total;
      offset += page.items.length;
      found.push(...page.items.filter((item) => item.id.startsWith("http:")));
      if (!page.items.length || offset >= total || found.length >= wanted) break;
    }
    Object.assign(this, { items: found, offset, total });
    for (const item of found) this.extra.delete(bare(item.id));
    this.render();
  }

  /** A conversation made on this page: listed at once, with its first message as title. */
  added(id, title) {
    this.extra.set(id, title);
    this.select(id);
  }

  select(id) {
    this.current = id;
    this.render();
  }

  render() {
    const made = [...this.extra].map(([id, title]) => ({ id, title, updated_at: new Date().toISOString() }));
    const rows = [...made, ...this.items].map((item) => this.row(item));
    this.list.replaceChildren(...rows);
    if (!rows.length) this.list.append(h("li", { class: "empty", text: "No conversations yet." }));
    this.more.hidden = this.offset >= this.total;
  }

  row(item) {
    const id = bare(item.id);
    const title = (item.title || "").trim() || "Untitled";
    const remove = h("button",
      { type: "button", class: "delete", title: "Delete", "aria-label": `Delete “${title}”`, text: "×" });
    remove.onclick = () => this.remove(id, remove);
    const current = id === this.current ? "true" : null;
    return h("li", { class: "conversation", "data-id": id, "aria-current": current },
      h("button", { type: "button", class: "open", title, onclick: () => this.open(id) },
        h("span", { class: "title", text: title }),
        h("span", { class: "when", text: when(item.updated_at) })),
      remove);
  }

  /** Deleting asks for a second press, so a stray click deletes nothing. */
  async remove(id, button) {
    if (!button.classList.contains("confirm")) {
      button.classList.add("confirm");
      button.textContent = "Delete?";
      setTimeout(() => {
        button.classList.remove("confirm");
        button.textContent = "×";
      }, 4000);
      return;
    }
    button.disabled = true;
    const response = await api(`/api/sessions/${id}`, { method: "DELETE" });
    if (!response.ok && response.status !== 404) {
      button.disabled = false;
      button.title = await refusal(response);
      return;
    }
    this.extra.delete(id);
    this.items = this.items.filter((item) => bare(item.id) !== id);
    this.render();
    this.deleted(id);
  }
}
