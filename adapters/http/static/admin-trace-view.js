// Looking around a trace's graph (admin-trace.js draws it): zoom, pan, a minimap and a search
// over its nodes. The view is the SVG's viewBox alone, so nothing is redrawn to move it: a
// scale (screen px per graph unit, 0.2–4) and the graph point at the view's top left.
//
// - Zoom: the wheel, around the pointer; the toolbar's − and +; keys - and + on the graph.
//   "Fit" (and 0) shows the whole graph, at most at its natural size: the view it opens with.
// - Pan: a drag anywhere on the graph, or the arrow keys when it has focus. A press that
//   moves less than DRAG px is a click (a node's opens its details); one that moves further
//   is a drag, and the click that ends it is swallowed before it reaches the node.
// - Minimap: the whole graph small, in the stage's corner, with the part in view outlined; a
//   click or a drag in it centres the view there. It is hidden while the whole graph is in
//   view, where it would only cover nodes.
// - Search: a node matches when its name, kind or details hold the query (case-insensitive,
//   `item.text` is what admin-trace.js gives to look in). Matches are marked (`match`, the one
//   shown `current`), the rest dimmed; Enter (Shift+Enter back) and the ‹ › buttons go through
//   them, each centred in view (at its natural size at least). A query that matches nothing
//   says so and dims nothing; Escape clears it.
//
// Everything here is built with DOM calls; the only texts are the page's own and the query.

const SVG = "http://www.w3.org/2000/svg";
const MIN_SCALE = 0.2;
const MAX_SCALE = 4;
const STEP = 1.25; // a button's or a key's zoom
const NUDGE = 60; // screen px an arrow key pans
const DRAG = 4; // screen px a press moves before it is a drag
const WHEEL = 0.0015; // zoom per wheel pixel: a notch (100 px) is about ×1.16
const MINI_W = 180; // the minimap's largest size, px
const MINI_H = 110;
const STAGE_MIN = 220; // the stage's height: the graph's at its natural size, within these
const STAGE_MAX = 480;
const EDGE = 0.5; // graph units a view may miss of the graph and still show it whole

function svgEl(name, attributes = {}) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  return node;
}

function html(name, attributes = {}, text = null) {
  const node = document.createElement(name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== null) node.textContent = text;
  return node;
}

const clamp = (value, low, high) => Math.min(high, Math.max(low, value));
const round = (value) => Math.round(value * 100) / 100; // attributes without float noise

function button(label, title, className) {
  return html("button", { type: "button", class: className, title, "aria-label": title }, label);
}

/**
 * The view of `svg` (the graph as drawn, `width`×`height` graph units) and its controls.
 * `items`: its nodes as { id, x, y, w, h, kind, text, element }, `text` lower-cased.
 * Returns { element, fit }: `element` goes where the bare drawing would, `fit()` once it is
 * in the page (until the stage has a size, as in a hidden tab, a ResizeObserver waits).
 */
export function traceView(svg, width, height, items) {
  const view = { scale: 1, x: 0, y: 0, touched: false };
  svg.setAttribute("width", "100%");
  svg.setAttribute("height", clamp(height, STAGE_MIN, STAGE_MAX));
  svg.setAttribute("tabindex", 0);
  svg.setAttribute("aria-keyshortcuts", "ArrowLeft ArrowRight ArrowUp ArrowDown + - 0");

  const stage = html("div", { class: "graph-stage" });
  const mini = minimap(width, height, items);
  stage.append(svg, mini.box);

  // --- the toolbar -----------------------------------------------------------------------
  const find = html("input", {
    type: "search", class: "graph-find", placeholder: "Find a node…", spellcheck: "false",
    "aria-label": "find nodes by name, kind or detail",
  });
  const prev = button("‹", "previous match", "find-prev");
  const next = button("›", "next match", "find-next");
  const count = html("span", { class: "graph-count", "aria-live": "polite" });
  const level = html("span", { class: "zoom-level", title: "zoom" });
  const out = button("−", "zoom out", "zoom-out");
  const into = button("+", "zoom in", "zoom-in");
  const reset = button("Fit", "show the whole graph", "zoom-reset");
  const tools = html("div", { class: "graph-tools" });
  tools.append(find, prev, next, count, level, out, into, reset);

  // the stage's size as drawn (fractions of a px too), so a px dragged is 1/scale graph units
  const size = () => {
    const { width: w, height: h } = svg.getBoundingClientRect();
    return { w, h };
  };

  function apply() {
    const { w, h } = size();
    if (!w || !h) return; // not shown yet: the ResizeObserver comes back
    const vw = w / view.scale;
    const vh = h / view.scale;
    // the view's middle stays on the graph, so the graph can't be lost off a side
    view.x = clamp(view.x, -vw / 2, width - vw / 2);
    view.y = clamp(view.y, -vh / 2, height - vh / 2);
    svg.setAttribute("viewBox", `${round(view.x)} ${round(view.y)} ${round(vw)} ${round(vh)}`);
    svg.dataset.scale = String(round(view.scale * 1000) / 1000);
    level.textContent = `${Math.round(view.scale * 100)}%`;
    const x0 = Math.max(0, view.x);
    const y0 = Math.max(0, view.y);
    const x1 = Math.min(width, view.x + vw);
    const y1 = Math.min(height, view.y + vh);
    mini.show(x0, y0, Math.max(0, x1 - x0), Math.max(0, y1 - y0));
    mini.box.hidden = x0 <= EDGE && y0 <= EDGE && x1 >= width - EDGE && y1 >= height - EDGE;
  }

  function fit() {
    const { w, h } = size();
    if (!w || !h) return;
    view.scale = clamp(Math.min(1, w / width, h / height), MIN_SCALE, MAX_SCALE);
    const vw = w / view.scale;
    const vh = h / view.scale;
    view.x = vw >= width ? (width - vw) / 2 : 0; // centred when it fits, from its start if not
    view.y = vh >= height ? (height - vh) / 2 : 0;
    view.touched = false;
    apply();
  }

  // Zoom by `factor` keeping the graph point at screen (sx, sy) of the stage where it is.
  function zoomAt(factor, sx, sy) {
    const scale = clamp(view.scale * factor, MIN_SCALE, MAX_SCALE);
    const gx = view.x + sx / view.scale;
    const gy = view.y + sy / view.scale;
    Object.assign(view, { scale, x: gx - sx / scale, y: gy - sy / scale, touched: true });
    apply();
  }

  function zoomMiddle(factor) {
    const { w, h } = size();
    zoomAt(factor, w / 2, h / 2);
  }

  function centreOn(gx, gy, scale = view.scale) {
    const { w, h } = size();
    Object.assign(view, { scale, x: gx - w / 2 / scale, y: gy - h / 2 / scale, touched: true });
    apply();
  }

  function panBy(dx, dy) { // screen px
    view.x += dx / view.scale;
    view.y += dy / view.scale;
    view.touched = true;
    apply();
  }

  out.addEventListener("click", () => zoomMiddle(1 / STEP));
  into.addEventListener("click", () => zoomMiddle(STEP));
  reset.addEventListener("click", fit);

  // --- the search ------------------------------------------------------------------------
  const search = { query: "", matches: [], at: -1 };

  function mark(item, names) {
    for (const [name, on] of Object.entries(names)) {
      item.element.classList.toggle(name, on);
      mini.rects.get(item.id)?.classList.toggle(name, on);
    }
  }

  function runSearch() {
    const query = find.value.trim().toLowerCase();
    search.query = query;
    search.matches = query ? items.filter((item) => item.text.includes(query)) : [];
    const dim = search.matches.length > 0;
    const matched = new Set(search.matches);
    for (const item of items) {
      mark(item, { match: matched.has(item), dimmed: dim && !matched.has(item), current: false });
    }
    svg.classList.toggle("searching", dim);
    search.at = dim ? 0 : -1;
    showMatch();
  }

  function showMatch() {
    const total = search.matches.length;
    const none = search.query !== "" && total === 0;
    count.textContent = !search.query ? "" : none ? "No match" : `${search.at + 1} of ${total}`;
    count.classList.toggle("none", none);
    find.classList.toggle("none", none);
    prev.disabled = next.disabled = total < 2;
    search.matches.forEach((item, index) => mark(item, { current: index === search.at }));
    const item = search.matches[search.at];
    if (!item) return;
    centreOn(item.x + item.w / 2, item.y + item.h / 2, Math.max(view.scale, 1));
  }

  function step(by) {
    const total = search.matches.length;
    if (!total) return;
    search.at = (search.at + by + total) % total;
    showMatch();
  }

  find.addEventListener("input", runSearch);
  find.addEventListener("keydown", (event) => {
    if (event.key === "Enter") { event.preventDefault(); step(event.shiftKey ? -1 : 1); }
    if (event.key === "Escape" && find.value) { event.preventDefault(); find.value = ""; runSearch(); }
  });
  prev.addEventListener("click", () => step(-1));
  next.addEventListener("click", () => step(1));

  // --- the pointer and the keys on the graph ---------------------------------------------
  let drag = null;
  let swallow = false; // the click that ends a drag: not a node's

  // The press is followed on the window, so a drag that leaves the stage goes on; once it is a
  // drag, the pointer is the graph's (captured) till it is let go.
  const follow = (event) => {
    if (!drag || event.pointerId !== drag.id) return;
    const dx = event.clientX - drag.x;
    const dy = event.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < DRAG) return;
    if (!drag.moved) {
      drag.moved = true;
      svg.setPointerCapture(event.pointerId);
      svg.classList.add("panning");
    }
    Object.assign(view, { x: drag.vx - dx / view.scale, y: drag.vy - dy / view.scale, touched: true });
    apply();
  };
  const letGo = (event) => {
    if (!drag || (event && event.pointerId !== drag.id)) return;
    if (drag.moved) {
      swallow = true;
      setTimeout(() => { swallow = false; }); // a click comes at once if it comes at all
      svg.classList.remove("panning");
    }
    drag = null;
    window.removeEventListener("pointermove", follow);
    window.removeEventListener("pointerup", letGo);
    window.removeEventListener("pointercancel", letGo);
  };
  svg.addEventListener("pointerdown", (event) => {
    if (event.button !== 0) return;
    letGo(); // a press whose end was never seen (let go outside the window) ends here
    drag = { id: event.pointerId, x: event.clientX, y: event.clientY, vx: view.x, vy: view.y, moved: false };
    window.addEventListener("pointermove", follow);
    window.addEventListener("pointerup", letGo);
    window.addEventListener("pointercancel", letGo);
  });
  svg.addEventListener("click", (event) => {
    if (swallow) { event.stopPropagation(); event.preventDefault(); swallow = false; }
  }, true);

  svg.addEventListener("wheel", (event) => {
    event.preventDefault();
    const pixels = event.deltaY * (event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? 400 : 1);
    const box = svg.getBoundingClientRect();
    zoomAt(Math.exp(-pixels * WHEEL), event.clientX - box.left, event.clientY - box.top);
  }, { passive: false });

  const KEYS = {
    ArrowLeft: () => panBy(-NUDGE, 0), ArrowRight: () => panBy(NUDGE, 0),
    ArrowUp: () => panBy(0, -NUDGE), ArrowDown: () => panBy(0, NUDGE),
    "+": () => zoomMiddle(STEP), "=": () => zoomMiddle(STEP), "-": () => zoomMiddle(1 / STEP), 0: fit,
  };
  svg.addEventListener("keydown", (event) => {
    const key = KEYS[event.key];
    if (!key || event.ctrlKey || event.metaKey || event.altKey) return;
    event.preventDefault();
    key();
  });

  mini.onPoint = (gx, gy) => centreOn(gx, gy);
  new ResizeObserver(() => (view.touched ? apply() : fit())).observe(svg);

  const element = html("div", { class: "graph-view" });
  element.append(tools, stage);
  return { element, fit };
}

// The whole graph small: a box per node, coloured by kind, and the part in view outlined.
// `onPoint(gx, gy)` on a press or a drag in it, with the graph point under the pointer.
function minimap(width, height, items) {
  const k = Math.min(MINI_W / width, MINI_H / height);
  const map = svgEl("svg", {
    class: "minimap-graph", width: round(width * k), height: round(height * k),
    viewBox: `0 0 ${width} ${height}`, "aria-hidden": "true",
  });
  map.appendChild(svgEl("rect", { class: "mini-back", width, height }));
  const rects = new Map();
  for (const item of items) {
    const rect = svgEl("rect", {
      class: `mini-node kind-${item.kind}`, x: item.x, y: item.y, width: item.w, height: item.h,
      rx: 8, "data-id": item.id,
    });
    rects.set(item.id, rect);
    map.appendChild(rect);
  }
  const frame = svgEl("rect", { class: "mini-viewport", x: 0, y: 0, width, height });
  map.appendChild(frame);
  const box = html("div", { class: "minimap", title: "the whole graph: click or drag to move the view" });
  box.hidden = true;
  box.appendChild(map);

  const mini = {
    box, rects, onPoint: null,
    show(x, y, w, h) {
      for (const [name, value] of Object.entries({ x, y, width: w, height: h })) {
        frame.setAttribute(name, String(round(value)));
      }
    },
  };
  const point = (event) => {
    const at = map.getBoundingClientRect();
    const gx = ((event.clientX - at.left) / at.width) * width;
    const gy = ((event.clientY - at.top) / at.height) * height;
    mini.onPoint?.(clamp(gx, 0, width), clamp(gy, 0, height));
  };
  let held = null;
  map.addEventListener("pointerdown", (event) => {
    if (event.button !== 0) return;
    event.preventDefault();
    held = event.pointerId;
    map.setPointerCapture(event.pointerId);
    point(event);
  });
  map.addEventListener("pointermove", (event) => { if (held === event.pointerId) point(event); });
  const release = (event) => { if (held === event.pointerId) held = null; };
  map.addEventListener("pointerup", release);
  map.addEventListener("pointercancel", release);
  return mini;
}
