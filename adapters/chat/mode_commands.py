"""`/mode`: how the agent answers in a chat, the same on every platform.

`direct` (the default) answers in one loop of model and tool calls; `plan` (the agent mode
`plan_execute`) first writes a plan, carries its steps out one by one with the plan shown as
a checklist, and then answers: slower and dearer, better for tasks of several parts. The
mode belongs to the chat (every topic and thread in it, `bot.vocabulary.chats.chat_of`); in a group
only an admin may change it, since it changes everyone's replies and cost.
"""

from __future__ import annotations

from bot.mailbox.inbox import Mailbox
from bot.vocabulary.chats import chat_of

NAMES = {
    "direct": "react",
    "react": "react",
    "plan": "plan_execute",
    "plan_execute": "plan_execute",
}
SAID = {
    "react": "directly",
    "plan_execute": "by planning first and showing the plan as a checklist",
}
HOW = "Say /mode plan to plan first, or /mode direct to answer directly."


async def answer(mailbox: Mailbox, session: str, said: str, *, may_change: bool) -> str:
    chat = chat_of(session)
    current = await mailbox.option(chat, "mode") or "react"
    wanted = said.strip().lower()
    if not wanted:
        return f"Here I answer {SAID.get(current, SAID['react'])}. {HOW}"
    mode = NAMES.get(wanted)
    if mode is None:
        return f"There is no mode {wanted[:40]!r}. {HOW}"
    if not may_change:
        return f"Here I answer {SAID.get(current, SAID['react'])}. Only an admin may change it."
    await mailbox.set_option(chat, "mode", None if mode == "react" else mode)
    return f"From now on I answer {SAID[mode]} here."
