// A conversation's durable history (`recent` of GET /api/sessions/{id}, oldest first) drawn
// as the live chat draws it: the person's messages, the bot's thinking (folded) and markdown,
// tool cards, the files a tool sent (its result's `files`, each with its caption), and an
// answer's voice note (its message's `voice`) below it.

import { folded, h } from "./dom.js";
import { Turn } from "./turn.js";

// The worker puts the time a message was sent before its text, as a block of its own, for
// the model; the person sees their message as they wrote it.
const STAMP = /^\[\w{3} \d{4}-\d\d-\d\d \d\d:\d\d[^\]\n]*\]$/;
// The model reads a voice note's transcript under this line (bot/files/voice.py: MARK); the
// person sees what they typed, and what was heard as a quote.
const HEARD = /(?:^|\n+)\[Transcript of the person's voice note\]\n/;

// A conversation with an output schema (settings.js) asks the model for it under the person's
// text, and asks again after an answer that did not match (bot/agent/output.py: instruction,
// repair_prompt): neither is the person's, and the answer asked again for was taken back live
// (a `reset` event), so the history shows only the answer that matched.
const SCHEMA_ASKED = "Give your final answer as JSON only, with no other text, matching this JSON Schema:\n";
const REPAIR = "Your answer does not match the required JSON Schema:\n";

function textOf(content) {
  const texts = content.filter((block) => block.type === "text").map((block) => block.text)
    .filter((text) => !text.startsWith(SCHEMA_ASKED));
  return texts.filter((text, i) => !(STAMP.test(text) && i + 1 < texts.length)).join("\n");
}

/** Whether `content` is only the model being asked again for an answer its schema takes. */
function isRepair(content) {
  return content.length === 1 && content[0].type === "text" && content[0].text.startsWith(REPAIR);
}

/**
 * Draw `messages` in `view`; return the text of the last message the person wrote, and the
 * ids of tool calls still without a result (an approval may be waiting for them).
 */
export function renderHistory(view, messages) {
  let turn = null;
  let lastUserText = null;
  const open = new Set();
  for (const message of messages) {
    const content = Array.isArray(message.content) ? message.content : [];
    if (message.summary) {
      view.log.append(h("div", { class: "msg summary" },
        folded("Earlier messages, summarised", message.text || textOf(content))));
      turn = null;
      continue;
    }
    if (message.role === "user" && isRepair(content)) {
      const answers = turn ? turn.element.querySelectorAll(".msg.bot") : [];
      answers[answers.length - 1]?.remove();
      continue;
    }
    if (message.role === "user") {
      for (const block of content.filter((b) => b.type === "tool_result")) {
        open.delete(block.tool_use_id);
        view.tools.get(block.tool_use_id)?.finish({ content: block.content, is_error: block.is_error });
        for (const file of block.files || []) {
          (turn = turn || new Turn(view)).fileSent(file, file.caption);
        }
      }
      const text = textOf(content) || (content.length ? "" : message.text);
      const files = content.filter((b) => b.type === "image" || b.type === "document")
        .map((b) => b.file);
      if (text || files.length) {
        const [typed, ...heard] = text.split(HEARD);
        lastUserText = typed;
        view.userMessage(typed, files, heard);
        turn = null;
      }
      continue;
    }
    turn = turn || new Turn(view);
    for (const block of content) {
      if (block.type === "thinking" && block.thinking) turn.thinking(block.thinking);
      else if (block.type === "text" && block.text) turn.wholeText(block.text);
      else if (block.type === "tool_use") {
        open.add(block.id);
        turn.toolStarted({ call_id: block.id, name: block.name, arguments: block.input });
      }
    }
    if (message.voice) turn.fileSent(message.voice, "", 0); // its length: the player says it
  }
  return { lastUserText, open };
}
