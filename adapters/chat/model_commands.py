"""`/model`: the model a conversation uses, shown to anyone and switched by an admin, the same
on every platform.

It belongs to the session (a Telegram chat or topic, a Slack thread or DM): `default` goes
back to PARLEY_MODEL, and a name (or an alias of PARLEY_MODELS) must be one this deployment
serves (`bot.llm.served`).
"""

from __future__ import annotations

from bot.config.settings import Settings
from bot.llm.served import served_model
from bot.mailbox.inbox import Mailbox


async def answer(
    mailbox: Mailbox, settings: Settings, session: str, said: str, *, may_change: bool
) -> str:
    current = await mailbox.option(session, "model") or settings.model
    wanted = said.strip()
    if not wanted:
        return f"This chat uses {current}."
    if not may_change:
        return f"This chat uses {current}. Only an admin can switch models."
    if wanted == "default":
        await mailbox.set_option(session, "model", None)
        return f"Back to the default model, {settings.model}."
    served = served_model(settings, wanted)
    if served is None:
        return f"I cannot switch to {wanted!r}: this deployment's API does not serve it."
    await mailbox.set_option(session, "model", served)
    return f"Switched this chat to {served}."
