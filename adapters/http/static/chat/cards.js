// Tool calls and approval requests as cards in the conversation.

import { folded, h, pretty, seconds } from "./dom.js";

/** One tool call: its name and (folded) arguments, then its (folded) result and duration. */
export class ToolCard {
  constructor(call) {
    const args = call.arguments ?? call.input ?? {};
    const helper = call.name === "delegate"; // a helper: named by its task
    const task = String(args.task ?? "").replace(/\s+/g, " ").trim();
    const name = helper ? `Helper: ${task.length > 80 ? task.slice(0, 79) + "…" : task}` : call.name;
    this.status = h("span", { class: "tool-status", text: "running…" });
    this.element = h("div", { class: "msg tool running", "data-call": call.call_id ?? call.id },
      h("div", { class: "tool-head" },
        h("span", { class: "tool-icon", "aria-hidden": "true", text: helper ? "🤝" : "⚙" }),
        h("span", { class: "tool-name", text: name }),
        this.status),
      folded("Arguments", pretty(args), "tool-args"));
  }

  /** Started again, e.g. after its approval: running once more. */
  running() {
    this.element.classList.remove("awaiting");
    this.element.classList.add("running");
    this.status.textContent = "running…";
  }

  /** Waiting for a person: for an approval, or (`question`) for their answer. */
  awaiting(question = false) {
    this.element.classList.replace("running", "awaiting");
    this.status.textContent = question ? "waiting for your answer" : "waiting for approval";
  }

  /** A call the history shows without a result, nothing waiting on it either. */
  unanswered() {
    this.element.classList.remove("running", "awaiting");
    this.status.textContent = "no result";
  }

  /** The call's end: the result folded, a failure marked as one, and how long it took. */
  finish({ content, is_error: failed, duration, cached }) {
    this.element.classList.remove("running", "awaiting");
    this.element.classList.toggle("failed", Boolean(failed));
    this.element.classList.toggle("done", !failed);
    const took = seconds(duration);
    const parts = [failed ? "failed" : "done", took && `in ${took}`, cached && "(cached)"];
    this.status.textContent = parts.filter(Boolean).join(" ");
    this.element.querySelector(".tool-result")?.remove();
    this.element.append(folded(failed ? "Error" : "Result", content ?? "", "tool-result"));
  }
}

/** What every card that waits for a person has: a countdown, and once settled an outcome. */
class WaitingCard {
  startClock(event) {
    this.outcome = h("div", { class: "outcome", role: "status" });
    this.expiry = h("div", { class: "expiry" });
    this.expiresAt = event.expires_at ? event.expires_at * 1000 : null;
    this.settled = false;
  }

  tickEvery() {
    if (!this.expiresAt) return;
    this.tick();
    this.timer = setInterval(() => this.tick(), 1000);
  }

  tick() {
    const left = Math.round((this.expiresAt - Date.now()) / 1000);
    if (left < -1) return this.settle("Expired.", "expired"); // a second's grace for the clocks
    const shown = Math.max(left, 0);
    this.expiry.textContent = `Expires in ${Math.floor(shown / 60)}:${String(shown % 60).padStart(2, "0")}`;
  }

  /** The reminder before the expiry: said once on the card, while it still waits. */
  remind() {
    if (this.settled || this.element.querySelector(".reminder")) return;
    this.expiry.before(h("div", { class: "reminder", role: "status", text: "⏰ Still waiting for you." }));
  }

  /** The turn went on without a decision from this page: expired, or decided elsewhere. */
  turnWentOn() {
    if (this.settled || this.deciding) return; // this page's own decision is on its way
    const expired = this.expiresAt !== null && Date.now() >= this.expiresAt - 1000;
    this.settle(expired ? "Expired." : "Decided elsewhere.", expired ? "expired" : "elsewhere");
  }

  settle(text, kind) {
    if (this.settled) return;
    this.settled = true;
    clearInterval(this.timer);
    this.buttons.remove();
    this.expiry.remove();
    this.outcome.textContent = text;
    this.element.classList.add("settled", kind);
  }
}

/**
 * A call's arguments as the server shows them to a person deciding (`shown`, the same blocks
 * as Telegram's and Slack's prompts: adapters/chat/approvals.py): the JSON of most, and a
 * program or a text of several lines as the text it is, labelled with its argument's name.
 * A request kept from before there was `shown` is shown as JSON.
 */
function shownArguments(call) {
  const blocks = call.shown ?? [{ label: null, text: pretty(call.arguments), language: "json" }];
  return blocks.map(({ label, text, language }) => label === null
    ? h("pre", { class: "args", text })
    : h("div", { class: "arg-text" }, h("div", { class: "arg-label", text: label }), code(text, language)));
}

/** Text in a code block, highlighted when highlight.js knows its language. */
function code(text, language) {
  const block = h("code", { text });
  if (language && window.hljs?.getLanguage(language)) {
    block.className = `language-${language}`;
    window.hljs.highlightElement(block);
  }
  return h("pre", { class: "code" }, block);
}

/**
 * A request to approve tool calls: what would run, Approve and Deny, and once settled, the
 * decision (made here or elsewhere) or that the request expired.
 */
export class ApprovalCard extends WaitingCard {
  constructor(event, decide) {
    super();
    this.startClock(event);
    const names = [...new Set(event.calls.map((call) => call.name))].join(", ");
    const button = (decision, text) =>
      h("button", { type: "button", class: decision, text, onclick: () => this.press(decision, decide) });
    this.buttons = h("div", { class: "actions" }, button("approve", "Approve"), button("deny", "Deny"));
    this.element = h("div", { class: "msg card ask", "data-confirmation": event.confirmation_id },
      h("div", { class: "card-head", text: `Allow ${names}?` }),
      ...(event.helper ? [h("div", { class: "helper-line", text: `🤖 Asked by a helper working on: ${event.helper}` })] : []),
      ...event.calls.map((call) => h("div", { class: "call" },
        h("span", { class: "tool-name", text: call.name }), ...shownArguments(call))),
      this.buttons, this.expiry, this.outcome);
    this.tickEvery();
  }

  async press(decision, decide) {
    if (this.settled || this.deciding) return;
    this.deciding = true;
    this.buttons.remove();
    const answer = await decide(decision);
    if (answer.ok) this.settle(decision === "approve" ? "Approved." : "Denied.", decision);
    else this.settle(answer.message.replace(/^confirmation /, "Not decided: ") + ".", "refused");
  }
}

/**
 * The agent's questions (`ask_user`): each with its options to pick, or a field for an
 * answer in one's own words; Send answers them all at once.
 */
export class QuestionCard extends WaitingCard {
  constructor(event, answer) {
    super();
    this.startClock(event);
    this.chosen = event.questions.map(() => null);
    this.others = event.questions.map(() => h("input", { type: "text", class: "other", maxlength: 2000, placeholder: "Or in your own words…" }));
    const send = h("button", { type: "button", class: "approve send", text: "Send", onclick: () => this.send(answer) });
    this.buttons = h("div", { class: "actions" }, send);
    this.element = h("div", { class: "msg card ask question", "data-confirmation": event.confirmation_id },
      ...event.questions.map((question, index) => this.question(question, index)),
      this.buttons, this.expiry, this.outcome);
    this.tickEvery();
  }

  question(question, index) {
    const options = question.options.map((label, number) => h("button", {
      type: "button", class: "option", text: label,
      onclick: (e) => {
        this.chosen[index] = number;
        for (const other of e.target.parentNode.children) other.classList.toggle("chosen", other === e.target);
      },
    }));
    return h("div", { class: "call" },
      h("div", { class: "card-head", text: question.question }),
      h("div", { class: "actions options" }, ...options), this.others[index]);
  }

  /** Settled: the choices stay in sight (what was picked), but cannot be changed. */
  settle(text, kind) {
    super.settle(text, kind);
    for (const input of this.element.querySelectorAll(".options button, input.other")) input.disabled = true;
  }

  async send(answer) {
    if (this.settled || this.deciding) return;
    const answers = this.chosen.map((option, index) => {
      const own = this.others[index].value.trim();
      return own ? { other: own } : option === null ? null : { option };
    });
    if (answers.includes(null)) {
      this.expiry.textContent = "Answer every question first.";
      return;
    }
    this.deciding = true;
    this.buttons.remove();
    const sent = await answer(answers);
    if (sent.ok) this.settle("Answered.", "approve");
    else this.settle(sent.message.replace(/^confirmation /, "Not answered: ") + ".", "refused");
  }
}
