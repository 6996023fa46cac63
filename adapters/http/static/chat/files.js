// Files a person sends: chosen with the 📎 button, pasted, or dropped on the message box;
// shown as thumbnails (images) or names until sent, then in the person's message. They are
// posted as base64 in the message's JSON (`attachments`, see docs/API.md); the server reads
// what each file is from its bytes. A conversation's history shows them again from
// GET /api/files/{sha256}, fetched with the API's token. Files the bot sends (a `file`
// event, or a tool result's `files` in the history) show in its turn: an image drawn in
// full, a reply said aloud (a `file` event with `voice_seconds`) as an audio player, anything
// else a link that downloads it under its name, and under it the caption the bot sent with it.

import { api } from "../api.js";
import { h } from "./dom.js";

const IMAGE = /^image\/(png|jpeg|gif|webp)$/;

/** The files chosen for the next message, drawn in `list` with a × to take one out. */
export class Chosen {
  constructor(list) {
    this.list = list;
    this.files = [];
  }

  add(files) {
    for (const file of files) this.files.push(file);
    this.draw();
  }

  /** The chosen files, emptied for the next message. */
  take() {
    const files = this.files;
    this.files = [];
    this.draw();
    return files;
  }

  draw() {
    this.list.replaceChildren(...this.files.map((file, i) => chip(file, () => {
      this.files.splice(i, 1);
      this.draw();
    })));
  }
}

function chip(file, remove) {
  const preview = IMAGE.test(file.type) ? picture(URL.createObjectURL(file), file.name) : null;
  return h("span", { class: "file", title: file.name }, preview, h("span", { text: file.name }),
    h("button", { type: "button", title: "Do not send it", text: "×", onclick: remove }));
}

/** `files` as the API takes them: name, type and bytes in base64. */
export async function attachments(files) {
  return Promise.all(files.map(async (file) => ({
    name: file.name,
    media_type: file.type || "application/octet-stream",
    data: await base64(file),
  })));
}

function base64(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).split(",", 2)[1] || "");
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

/** What a message shows of its files: sent ones (File) or recorded ones ({sha256, ...}). */
export function shownFiles(files) {
  if (!files.length) return null;
  return h("div", { class: "files" }, ...files.map((file) => {
    const name = file.name || "file";
    const type = file.type || file.media_type || "";
    if (!IMAGE.test(type)) {
      return h("span", { class: "file", text: `${type.startsWith("audio/") ? "🎤" : "📄"} ${name}` });
    }
    const image = picture(null, name);
    if (file instanceof Blob) image.src = URL.createObjectURL(file);
    else fetched(file.sha256).then((url) => { if (url) image.src = url; });
    return image;
  }));
}

/** An image whose object URL is let go once drawn: the page keeps no copy of the bytes. */
function picture(src, name) {
  const image = h("img", { alt: name, title: name });
  image.addEventListener("load", () => URL.revokeObjectURL(image.src), { once: true });
  if (src) image.src = src;
  return image;
}

/** A file the bot sent: the image itself, a voice reply's player, or a link that downloads
 * it by its name; with its `caption`, as text. */
export function sentFile(file, caption = "", voiceSeconds = null) {
  const below = caption ? h("div", { class: "caption", text: caption }) : null;
  const shown = voiceSeconds === null ? sentItself(file) : player(file, voiceSeconds);
  return h("div", { class: "msg sent-file" }, shown, below);
}

/** A reply said aloud: a player, its sound fetched with the API's token (a plain `src`
 * could not carry it), kept while the page shows it, as the person may play it again. */
function player(file, seconds) {
  const audio = h("audio", { controls: true, preload: "metadata", class: "voice" });
  audio.title = seconds ? `Voice reply (${Math.max(1, Math.round(seconds))} s)` : "Voice reply";
  fetched(file.sha256).then((url) => { if (url) audio.src = url; });
  return audio;
}

function sentItself(file) {
  const name = file.name || "file";
  if (IMAGE.test(file.media_type || "")) {
    const image = picture(null, name);
    fetched(file.sha256).then((url) => { if (url) image.src = url; });
    return image;
  }
  const link = h("a", { href: "#", class: "file", text: `📄 ${name} (${size(file.size)})` });
  link.onclick = async (e) => {
    e.preventDefault();
    const url = await fetched(file.sha256);
    if (!url) return;
    const save = h("a", { href: url, download: name });
    save.click(); // the page's origin, the API's token: a plain link could carry neither
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  };
  return link;
}

function size(bytes) {
  if (bytes >= 1048576) return `${(bytes / 1048576).toFixed(1)} MB`;
  return bytes >= 1024 ? `${Math.round(bytes / 1024)} KB` : `${bytes} bytes`;
}

async function fetched(sha256) {
  const response = await api(`/api/files/${sha256}`);
  return response.ok ? URL.createObjectURL(await response.blob()) : null;
}

/** Paste and drop on `form` add to `chosen`, and the 📎 button opens `input`. */
export function wireFiles(form, input, button, chosen) {
  button.onclick = () => input.click();
  input.onchange = () => {
    chosen.add(input.files);
    input.value = "";
  };
  form.addEventListener("paste", (e) => {
    if (e.clipboardData?.files.length) {
      e.preventDefault();
      chosen.add(e.clipboardData.files);
    }
  });
  form.addEventListener("dragover", (e) => {
    e.preventDefault();
    form.classList.add("dropping");
  });
  form.addEventListener("dragleave", () => form.classList.remove("dropping"));
  form.addEventListener("drop", (e) => {
    e.preventDefault();
    form.classList.remove("dropping");
    if (e.dataTransfer?.files.length) chosen.add(e.dataTransfer.files);
  });
}
