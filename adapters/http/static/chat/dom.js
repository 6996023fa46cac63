// Small DOM helpers shared by the chat's modules. Text from the server or the model is only
// ever set as text here; markup comes from markdown.js, through DOMPurify.

/** An element with attributes (`class`, `title`, `data-*`, …) and children (nodes or text). */
export function h(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  node.append(...children.filter((child) => child !== null && child !== undefined));
  return node;
}

/** What the person said in a voice note, as Parley heard it (its transcript). */
export function heardLine(text) {
  return h("blockquote", { class: "heard", text: `🎤 ${text}` });
}

/** A `<details>` whose body is text in a `<pre>`: arguments and results, folded by default. */
export function folded(label, body, className = "") {
  return h("details", { class: className }, h("summary", { text: label }), h("pre", { text: body }));
}

/** Arguments as people read them: indented JSON. */
export function pretty(value) {
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

/** "0.42 s", "12 ms": how long a tool took. */
export function seconds(duration) {
  if (!(duration > 0)) return "";
  if (duration >= 1) return `${duration.toFixed(2)} s`;
  return duration < 0.001 ? "<1 ms" : `${Math.round(duration * 1000)} ms`;
}

// The log follows new content only while the reader is at its end: scrolling up to read
// something earlier is not undone by the next delta.
let log = null;
let pinned = true;

export function watchScroll(element) {
  log = element;
  log.addEventListener("scroll", () => {
    pinned = log.scrollHeight - log.scrollTop - log.clientHeight < 60;
  });
}

/** After content changed: to the end, if the reader was there. */
export function keepPinned() {
  if (log && pinned) log.scrollTop = log.scrollHeight;
}

/** To the end whatever the reader was doing: a conversation opened, a message sent. */
export function pinToEnd() {
  pinned = true;
  if (log) log.scrollTop = log.scrollHeight;
}
