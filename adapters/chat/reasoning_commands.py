"""`/reasoning`: whether the model thinks before it answers in a chat, and whether its thinking
is shown, the same on every platform.

`off`, `hidden` (it thinks; nothing of it is shown), `on` (each thought folded above the
answer), `stream` (shown as it comes), or `default` (the deployment's, PARLEY_REASONING, which a
chat shared with others shows at most `hidden`). Like `/mode` it belongs to the chat, every
topic and thread in it (`bot.vocabulary.chats.chat_of`). Thinking costs tokens, and shown in
a group everyone reads it: only an admin may change it.
"""

from __future__ import annotations

from bot.mailbox.inbox import Mailbox
from bot.vocabulary.chats import chat_of
from bot.vocabulary.run_config import Reasoning, reasoning_in, reasoning_of

SAID: dict[Reasoning, str] = {
    "off": "I answer without thinking first",
    "hidden": "I think before I answer, and keep my thinking to myself",
    "on": "I think before I answer, and show my thinking folded above the answer",
    "stream": "I think before I answer, and show my thinking as it comes",
}
HOW = "Say /reasoning on, stream, hidden or off (or default)."


async def answer(
    mailbox: Mailbox,
    session: str,
    said: str,
    *,
    deployment: Reasoning,
    chat_kind: str,
    may_change: bool,
) -> str:
    chat = chat_of(session)
    current = reasoning_in(
        chat_kind, reasoning_of(await mailbox.option(chat, "reasoning")), deployment
    )
    wanted = said.strip().lower()
    if not wanted:
        return f"Here {SAID[current]}. {HOW}"
    if wanted != "default" and reasoning_of(wanted) is None:
        return f"There is no reasoning {wanted[:40]!r}. {HOW}"
    if not may_change:
        return f"Here {SAID[current]}. Only an admin may change it."
    choice = reasoning_of(wanted)
    await mailbox.set_option(chat, "reasoning", choice)
    return f"From now on {SAID[reasoning_in(chat_kind, choice, deployment)]} here."
