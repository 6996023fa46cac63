// One turn of the conversation as the page shows it: the plan (when the run has one) on top,
// then the bot's text bubbles and tool cards in the order they happened.

import { ApprovalCard, QuestionCard, ToolCard } from "./cards.js";
import { h, heardLine, keepPinned } from "./dom.js";
import { sentFile } from "./files.js";
import { MarkdownText } from "./markdown.js";
import { PlanCard } from "./plan.js";

// How a turn that did not end with an answer says why (an `error` event says it by itself).
const ENDINGS = {
  cancelled: "Stopped.",
  timed_out: "The turn took too long and was stopped.",
  max_iterations: "The turn ended after too many steps without an answer.",
  doom_loop: "The turn was stopped: it kept repeating the same tool call.",
  max_tokens: "The reply reached its length limit.",
  invalid_output: "The answer did not match the form asked for.",
};

/** A bubble's text shown as it is, not as markdown: a command's answer. */
class PlainText {
  constructor(element) {
    this.element = element;
    this.text = "";
  }

  append(text) {
    this.replace(this.text + text);
  }

  replace(text) {
    this.text = text;
    this.element.textContent = text;
    keepPinned();
  }

  flush() {}
}

export class Turn {
  /** `view` is the conversation (view.js): its tool cards, approvals and streams; `asked`,
   * the person's message the turn answers, where what was heard of a voice note is shown;
   * `plain`, that its text is shown as written (the answer to a command). */
  constructor(view, asked = null, plain = false) {
    this.view = view;
    this.asked = asked;
    this.plain = plain;
    this.element = h("div", { class: "turn" });
    view.log.append(this.element);
    this.bubble = null; // the MarkdownText (or PlainText) of the bubble the next text goes to
    this.thought = null; // the <pre> the model's thinking streams into, until its text starts
    this.failover = null; // the note naming the fallback model that took the turn over
    this.plan = null;
    this.status = null;
    this.seen = false; // any of its events shown yet
  }

  add(node) {
    this.element.append(node);
    keepPinned();
    return node;
  }

  /** The model's thinking, folded above the text it leads to (a new fold per model call). */
  thinking(delta) {
    if (!this.thought) {
      this.endBubble();
      this.thought = h("pre", { class: "thought-text" });
      this.add(h("details", { class: "thought" }, h("summary", { text: "Thinking" }), this.thought));
    }
    this.thought.textContent += delta;
    keepPinned();
  }

  /** The bot's text, added to the current bubble (a new one if there is none). */
  text(delta) {
    this.thought = null;
    if (!this.bubble && this.plain) {
      this.bubble = new PlainText(this.add(h("div", { class: "msg bot plain" })));
    } else if (!this.bubble) {
      const element = this.add(h("div", { class: "msg bot markdown" }));
      this.bubble = new MarkdownText(element, keepPinned);
    }
    this.bubble.append(delta);
  }

  /** A whole text at once (history): its own bubble, shown now. */
  wholeText(text) {
    this.text(text);
    this.endBubble();
  }

  endBubble() {
    this.bubble?.flush();
    this.bubble = null;
  }

  note(kind, text) {
    return this.add(h("div", { class: `msg ${kind}`, text }));
  }

  setStatus(text) {
    this.status?.remove();
    this.status = text ? this.add(h("div", { class: "turn-status", role: "status", text })) : null;
  }

  show(event, id) {
    this.seen = true;
    if (event.type !== "state") this.setStatus(null);
    switch (event.type) {
      case "joined":
        this.goOnBelow();
        break;
      case "heard":
        this.asked?.append(heardLine(event.text));
        break;
      case "text_delta":
        this.text(event.text);
        break;
      case "thinking_delta":
        this.thinking(event.text);
        break;
      case "reset":
        this.bubble?.replace("");
        if (this.thought) this.thought.textContent = "";
        break;
      case "iteration":
        if (this.bubble && this.bubble.text) this.endBubble(); // an emptied bubble takes the new text
        this.thought = null;
        break;
      case "tool_call_start":
        this.toolStarted(event);
        break;
      case "tool_call_result":
        this.toolEnded(event);
        break;
      case "file":
        this.fileSent(event.file, event.caption, event.voice_seconds ?? null);
        break;
      case "confirmation_required":
        this.ask(event, id);
        break;
      case "reminder":
        this.view.cards.get(event.confirmation_id)?.remind();
        break;
      case "plan":
        this.showPlan(event);
        break;
      case "failover": // said once, for the model that answers now
        this.failover?.remove();
        this.failover = this.note("info", `↪ answered by ${event.model}`);
        break;
      case "retrying":
        this.setStatus(`The model did not answer; trying again (attempt ${event.attempt})…`);
        break;
      case "compacted":
        this.note("info", "Earlier messages were summarised to make room.");
        break;
      case "error":
        this.note("error", event.message);
        break;
      case "completed":
        this.completed(event, id);
        break;
    }
  }

  /** The person's messages sent meanwhile joined this turn: its answer goes on below them. */
  goOnBelow() {
    this.endBubble();
    this.thought = null;
    this.status = null;
    this.element = h("div", { class: "turn" });
    this.view.log.append(this.element);
    keepPinned();
  }

  /** This turn's message joined the turn already running, whose answer takes it in: it has
   * nothing of its own to show but that. */
  takenIn() {
    this.element.remove();
    this.asked?.append(h("div", { class: "joined-note", text: "↪ taken into the answer in progress" }));
    keepPinned();
  }

  toolStarted(event) {
    this.endBubble();
    this.thought = null;
    const known = this.view.tools.get(event.call_id);
    if (known) return known.running(); // started again, after its approval
    const card = new ToolCard(event);
    this.view.tools.set(event.call_id, card);
    this.add(card.element);
  }

  toolEnded(event) {
    let card = this.view.tools.get(event.call_id);
    if (!card) { // a call that never started (refused before it could) still gets its card
      card = new ToolCard({ call_id: event.call_id, name: event.name, arguments: {} });
      this.view.tools.set(event.call_id, card);
      this.add(card.element);
    }
    card.finish(event);
    keepPinned();
  }

  /** A file a tool sent, with its caption, or the reply said aloud: after the text so
   * far, as the chat platforms post it. */
  fileSent(file, caption, voiceSeconds) {
    this.endBubble();
    this.add(sentFile(file, caption, voiceSeconds));
  }

  showPlan(event) {
    if (!this.plan) {
      this.plan = new PlanCard();
      this.element.prepend(this.plan.element); // above the reply, whatever came first
    }
    this.plan.show(event);
    keepPinned();
  }

  /** An approval card; the turn is followed from here on, as it goes on after the decision
   * (or after the request expires). */
  ask(event, id) {
    this.endBubble();
    const question = Boolean(event.questions?.length);
    for (const call of event.calls) this.view.tools.get(call.call_id)?.awaiting(question);
    const card = question
      ? new QuestionCard(event, (answers) => this.view.decide(event.confirmation_id, { answers }))
      : new ApprovalCard(event, (decision) => this.view.decide(event.confirmation_id, { decision }));
    this.add(card.element);
    this.view.cards.set(event.confirmation_id, card);
    // A helper's request is asked while this turn runs on: no continuation to follow.
    if (!event.helper) this.view.asked(event, id, card, this);
  }

  completed(event, id) {
    if (this.bubble) this.bubble.flush();
    else if (event.text && !this.element.querySelector(".msg.bot")) this.wholeText(event.text);
    this.bubble = null;
    if (ENDINGS[event.finish_reason]) this.note("info", ENDINGS[event.finish_reason]);
    this.view.turnEnded(event, id);
  }
}
