// The plan of a `plan_execute` run as a checklist: every `plan` event carries the whole plan,
// which replaces the one shown for the turn.

import { h } from "./dom.js";

const ICONS = { pending: "○", running: "◔", done: "✓", failed: "✗", skipped: "⤼" };
const LABELS = {
  pending: "to do", running: "in progress", done: "done", failed: "failed", skipped: "skipped",
};

export class PlanCard {
  constructor() {
    this.revision = -1;
    this.count = h("span", { class: "plan-count" });
    this.steps = h("ol", { class: "plan-steps" });
    this.element = h("div", { class: "card plan", role: "group", "aria-label": "Plan" },
      h("div", { class: "card-head" }, h("span", { text: "Plan" }), this.count), this.steps);
  }

  /** Show `plan`, unless an earlier revision than the one shown (it came late). */
  show(plan) {
    const revision = Number(plan.revision) || 0;
    if (revision < this.revision) return;
    this.revision = revision;
    const steps = Array.isArray(plan.steps) ? plan.steps : [];
    this.steps.replaceChildren(...steps.map(step));
    const done = steps.filter((s) => s.status === "done").length;
    const revised = revision > 0 ? ` · revised ${revision}×` : "";
    this.count.textContent = `${done}/${steps.length} done${revised}`;
    const open = steps.some((s) => s.status === "pending" || s.status === "running");
    this.element.classList.toggle("finished", !open);
  }
}

function step(item) {
  const status = ICONS[item.status] ? item.status : "pending";
  const after = (item.depends_on || []).length ? `after step ${item.depends_on.join(", ")}` : "";
  const tip = [LABELS[status], after, item.result].filter(Boolean).join(" — ");
  return h("li", { class: `step ${status}`, "data-step": item.id, "data-status": status, title: tip },
    h("span", { class: "step-icon", "aria-label": LABELS[status], text: ICONS[status] }),
    h("span", { class: "step-title", text: item.title }),
    item.result ? h("div", { class: "step-result", text: item.result }) : null);
}
