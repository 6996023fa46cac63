// How the open conversation runs its turns (the dialog ⚙ Settings opens): the model, the mode,
// the tools its turns may offer and the schema their answers must follow. They are the
// session's (PATCH /api/sessions/{id}); a conversation not made yet keeps them in its view
// until its first message makes it (POST /api/sessions, view.js). The server checks them as it
// checks an API run's config, and its refusal, a sentence naming the field, is shown here:
// the form stays open with what was typed, so it can be fixed.

import { api, getJson } from "../api.js";
import { h } from "./dom.js";

const $ = (id) => document.getElementById(id);

/** The server's reason for a refused call: its problems (each naming its field), else its
 * error. */
export async function reason(response) {
  const body = await response.json().catch(() => ({}));
  if (Array.isArray(body.problems) && body.problems.length) return body.problems.join(" ");
  return body.error || response.statusText || `HTTP ${response.status}`;
}

/** Every tool a turn may be offered, as `GET /api/tools` lists them: Parley's own, then each
 * MCP server's. */
function toolsOf(listed) {
  const own = (listed.tools || []).map((tool) => ({ name: tool.name, about: tool.description }));
  const servers = Object.entries(listed.mcp_servers || {});
  const theirs = servers.flatMap(([server, status]) =>
    (status.tools || []).map((name) => ({ name, about: `From the MCP server ${server}` })));
  return [...own, ...theirs];
}

export class SettingsForm {
  /** `view()`: the conversation shown (view.js), whose `choice` is the model, tools and schema
   * and whose `mode()` is its mode; `onMode(mode)`: a mode was chosen. */
  constructor({ view, onMode }) {
    Object.assign(this, { view, onMode });
    this.dialog = $("settings");
    this.problem = $("settings-problem");
    this.catalog = null; // the deployment's models and tools, read at the first opening
    this.openedModel = "";
    $("settings-open").onclick = () => this.open();
    $("settings-cancel").onclick = () => this.dialog.close();
    $("settings-all").onclick = () => this.tick(true);
    $("settings-none").onclick = () => this.tick(false);
    $("settings-form").onsubmit = (e) => {
      e.preventDefault();
      this.save();
    };
  }

  boxes() {
    return [...$("settings-tools").querySelectorAll("input[type=checkbox]")];
  }

  tick(on) {
    for (const box of this.boxes()) box.checked = on;
  }

  say(text) {
    this.problem.textContent = text || "";
    this.problem.hidden = !text;
  }

  /** The form filled with the conversation's settings, then shown. */
  async open() {
    this.say("");
    try {
      this.catalog ??= await Promise.all([getJson("/api/models"), getJson("/api/tools")]);
    } catch (error) {
      this.say(`The settings cannot be read: ${error.message}`);
      this.dialog.showModal();
      return;
    }
    const [models, tools] = this.catalog;
    const view = this.view();
    const { model, tools: chosen, output_schema: schema } = view.choice;
    this.fillModels(models, model);
    $("settings-mode").value = view.mode();
    this.fillTools(toolsOf(tools), chosen);
    $("settings-schema").value = schema ? JSON.stringify(schema, null, 2) : "";
    this.dialog.showModal();
  }

  /** The default first (no choice), then every model the deployment names, and the one
   * chosen even if it names it no more. */
  fillModels(models, model) {
    const names = models.models.filter((name) => name !== models.default);
    if (model && model !== models.default && !names.includes(model)) names.push(model);
    const select = $("settings-model");
    select.replaceChildren(new Option(`Default (${models.default})`, ""),
      ...names.map((name) => new Option(name, name)));
    select.value = model && model !== models.default ? model : "";
    this.openedModel = select.value;
  }

  /** A box per tool, ticked when the conversation may offer it (every box: no choice). */
  fillTools(listed, chosen) {
    const known = new Set(listed.map((tool) => tool.name));
    const all = [...listed, ...(chosen || []).filter((name) => !known.has(name)).map((name) => ({ name }))];
    $("settings-tools").replaceChildren(...all.map((tool) => {
      const box = h("input", { type: "checkbox", value: tool.name, checked: !chosen || chosen.includes(tool.name) });
      return h("label", { class: "tool-choice", title: tool.about || null }, box, tool.name);
    }));
  }

  /** What the form says, or null (and why) when its schema is not JSON. */
  chosen() {
    const text = $("settings-schema").value.trim();
    let schema = null;
    if (text) {
      try {
        schema = JSON.parse(text);
      } catch (error) {
        this.say(`The output schema is not valid JSON: ${error.message}`);
        return null;
      }
    }
    const boxes = this.boxes();
    const ticked = boxes.filter((box) => box.checked).map((box) => box.value);
    const tools = ticked.length === boxes.length ? null : ticked;
    return { mode: $("settings-mode").value, tools, output_schema: schema };
  }

  /** Send the settings (or keep them for the conversation's first message); a refusal is
   * shown in the form, which stays open. */
  async save() {
    this.say("");
    const chosen = this.chosen();
    if (!chosen) return;
    const model = $("settings-model").value || null;
    const changed = model !== (this.openedModel || null); // a model the record showed stays unpinned
    const view = this.view();
    if (view.session) {
      const body = changed ? { ...chosen, model } : chosen;
      const response = await api(`/api/sessions/${view.session}`, {
        method: "PATCH", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
      });
      if (!response.ok) return this.say(await reason(response));
    }
    const kept = changed ? model : view.choice.model;
    view.choice = { model: kept, tools: chosen.tools, output_schema: chosen.output_schema };
    this.onMode(chosen.mode);
    this.dialog.close();
  }
}
