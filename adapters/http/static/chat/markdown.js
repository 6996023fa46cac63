// The model's markdown as the page shows it: parsed by marked, code highlighted by
// highlight.js, and everything passed through DOMPurify before it becomes part of the page.
// HTML the model writes is shown as the text it is, never taken as markup: marked hands it over
// as `html` tokens, which are escaped here, and DOMPurify would drop anything that slipped by.
// The libraries are the vendored UMD builds the page loads before this module (globals).

const { Marked } = window.marked;
const purify = window.DOMPurify;
const hljs = window.hljs;

const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
export const escapeHtml = (text) => String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);

// A reply is drawn again whole for each frame of its stream, but only its last code block
// changes: the others are highlighted once and taken from here.
const highlights = new Map();
const KEPT_HIGHLIGHTS = 200;

function highlighted(code, lang) {
  const language = (lang || "").trim().split(/\s+/)[0].toLowerCase();
  const key = `${language}\n${code}`;
  let html = highlights.get(key);
  if (html === undefined) {
    if (language && hljs.getLanguage(language)) {
      const { value } = hljs.highlight(code, { language, ignoreIllegals: true });
      html = `<pre><code class="hljs language-${escapeHtml(language)}">${value}</code></pre>`;
    } else {
      html = `<pre><code class="hljs">${escapeHtml(code)}</code></pre>`;
    }
    if (highlights.size >= KEPT_HIGHLIGHTS) highlights.delete(highlights.keys().next().value);
    highlights.set(key, html);
  }
  return html;
}

const parser = new Marked({ gfm: true, breaks: true });
parser.use({
  renderer: {
    // Raw HTML, block or inline, is shown as text.
    html({ text, block }) {
      const shown = escapeHtml(block ? text.replace(/\n+$/, "") : text);
      return block ? `<p class="raw">${shown}</p>` : shown;
    },
    // An unclosed fence (a reply still streaming) is a code block up to the end of the text,
    // so a half-written block is already shown, and highlighted, as code.
    code({ text, lang }) {
      return highlighted(text, lang);
    },
    // An image is not fetched by itself: its address could carry what the model was led to
    // put there to someone else's server. It is a link the person may follow.
    image({ href, text }) {
      return `<a href="${escapeHtml(href)}">🖼 ${escapeHtml(text || href)}</a>`;
    },
  },
});

// Links leave the chat in a tab of their own, which cannot reach back into this page.
purify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A" && node.hasAttribute("href")) {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});

/** Show `text` (markdown) in `element`, replacing what it showed. */
export function renderMarkdown(element, text) {
  const html = parser.parse(text);
  const fragment = purify.sanitize(html, { RETURN_DOM_FRAGMENT: true, FORBID_TAGS: ["style", "form"] });
  element.replaceChildren(fragment);
  for (const block of element.querySelectorAll("pre")) addCopyButton(block);
}

function addCopyButton(block) {
  if (!navigator.clipboard) return; // only offered where the browser allows it (https, localhost)
  const button = document.createElement("button");
  button.type = "button";
  button.className = "copy"; // its label is drawn by the style sheet: not part of the text
  button.title = "Copy";
  button.setAttribute("aria-label", "Copy the code");
  button.onclick = async () => {
    await navigator.clipboard.writeText(block.querySelector("code")?.textContent ?? "");
    button.classList.add("copied");
  };
  block.prepend(button);
}

/**
 * A bot bubble's text: every delta is added to the whole, and the whole is shown again as
 * markdown at most once a frame (a model sends many deltas a frame; parsing each is waste).
 * A long reply, whose drawing takes a good part of a frame, is drawn less often, so the page
 * stays responsive while it streams.
 */
export class MarkdownText {
  constructor(element, onRender = () => {}) {
    this.element = element;
    this.text = "";
    this.frame = 0;
    this.timer = 0;
    this.cost = 0; // how long the last drawing took, in ms
    this.onRender = onRender;
  }

  append(text) {
    this.text += text;
    this.schedule();
  }

  replace(text) {
    this.text = text;
    this.schedule();
  }

  schedule() {
    if (this.frame || this.timer) return;
    const draw = () => {
      this.timer = 0;
      this.frame = requestAnimationFrame(() => this.flush());
    };
    if (this.cost > 8) this.timer = setTimeout(draw, 2 * this.cost);
    else draw();
  }

  /** Show the text now: the end of a reply is never left waiting for a frame. */
  flush() {
    cancelAnimationFrame(this.frame);
    clearTimeout(this.timer);
    this.frame = this.timer = 0;
    const started = performance.now();
    renderMarkdown(this.element, this.text);
    this.cost = performance.now() - started;
    this.onRender();
  }
}
