// The window's runs side by side (`/api/metrics/groups`): by the model that answered, the
// mode, the system prompt or the tool set, each group with its runs, success rate, average
// latency and score, tokens and estimated cost, the filters applied as to the list. A click
// on a group filters the list by it. Runs recorded before runs kept what they ran with make a
// group of their own, "not recorded", which no filter names, so it is not clickable.

import { duration } from "./admin-trace.js";
import { $, choiceLabel, percent } from "./admin-page.js";

const NAMES = { model: "Model", mode: "Mode", prompt: "Prompt", tools: "Tool set" };
const UNRECORDED = "recorded before runs kept what they ran with";

function cell(text, className = "", title = "") {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) td.className = className;
  if (title) td.title = title;
  return td;
}

function cost(usd) {
  if (usd === null || usd === undefined) return "–";
  return usd >= 0.01 ? `$${usd.toFixed(2)}` : `$${Number(usd.toPrecision(2))}`;
}

function groupRow(group, by, chosen, onPick) {
  const row = document.createElement("tr");
  const known = group.key !== null;
  const name = known ? cell(choiceLabel(by, group.key), "group-key", group.key)
    : cell("not recorded", "group-key unrecorded", UNRECORDED);
  row.append(
    name,
    cell(String(group.runs), "num"),
    cell(percent(group.success_rate), "num", `${group.succeeded} of ${group.ended} ended`),
    cell(duration(group.average_latency_ms), "num"),
    cell(group.average_reliability === null ? "–" : group.average_reliability.toFixed(1), "num"),
    cell(`${group.tokens.input} / ${group.tokens.output}`, "num"),
    cell(cost(group.cost_usd), "num", "estimated from list prices, over the runs that have one"),
  );
  if (!known) return row;
  row.dataset.key = group.key;
  row.tabIndex = 0;
  row.classList.toggle("selected", group.key === chosen);
  row.addEventListener("click", () => onPick(by, group.key));
  row.addEventListener("keydown", (event) => { if (event.key === "Enter") onPick(by, group.key); });
  return row;
}

// `answer` drawn (null: no grouping chosen); `onPick(by, key)` is called with a group's key
// when it is clicked.
export function drawGroups(answer, onPick) {
  $("group-table").hidden = !answer;
  if (!answer) {
    delete $("groups").dataset.by;
    $("group-rows").replaceChildren();
    $("groups-note").textContent = "";
    return;
  }
  const chosen = $(`f-${answer.by}`).value;
  $("groups").dataset.by = answer.by;
  $("groups-key").textContent = NAMES[answer.by] || answer.by;
  $("group-rows").replaceChildren(...answer.groups.map((g) => groupRow(g, answer.by, chosen, onPick)));
  const shown = answer.groups.length;
  $("groups-note").textContent = answer.total === 0 ? "no run to group"
    : shown < answer.total ? `the ${shown} with most runs of ${answer.total} groups`
      : `${answer.total} ${answer.total === 1 ? "group" : "groups"}`;
}
