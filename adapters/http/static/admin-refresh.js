// Auto refresh: the runs, the charts and the groups loaded again every 10 s, 30 s, 1 min or
// 5 min, as the control (and the page's address) says. A tick while a load is still in flight
// is skipped, so requests never stack behind a slow server; so is one while the page is
// hidden, which then asks for nothing. A load redraws the list, never the open run's panel.
// `document.body.dataset.skipped` counts the ticks skipped.

import { $, remember, state } from "./admin-page.js";

let timer = null;

function tick(load) {
  if (state.loading > 0 || document.hidden) {
    document.body.dataset.skipped = String(Number(document.body.dataset.skipped || 0) + 1);
    return;
  }
  load();
}

function every(seconds, load) {
  clearInterval(timer);
  timer = seconds > 0 ? setInterval(() => tick(load), seconds * 1000) : null;
}

// `load()` called on each tick the control's interval sets; the choice kept in the address.
export function autoRefresh(load) {
  const field = $("f-refresh");
  field.addEventListener("change", () => {
    remember();
    every(Number(field.value), load);
  });
  every(Number(field.value), load);
}
