"""`/instructions [text | clear]`: a standing instruction for everyone in a chat, the same on
every platform: shown to anyone, set and cleared in a group or channel by an admin only
(it changes everyone's answers there), and by anyone in their own private chat.

It is kept in SQL (`bot.store.chats`) under the key the platform gives (`here`): a Telegram
forum topic may have its own, and one without reads its group's; a Slack channel's applies
to every thread in it. A turn carries it in the system prompt after the bootstrap files and
before its person's own preferences (`bot.agent.prompt`).
"""

from __future__ import annotations

from bot.store.chats import ChatSettings
from bot.vocabulary.chat_settings import MAX_INSTRUCTION, clean_instruction

CLEAR = "clear"


async def answer(
    chats: ChatSettings, here: str, chat: str, said: str, *, may_change: bool, command: str
) -> str:
    """The answer to `command` (`/instructions`, `!instructions`) with `said` after it, for
    the key `here` (a topic, or the chat itself) inside `chat`."""
    wanted = said.strip()
    if not wanted:
        return await _shown(chats, here, chat, command)
    if not may_change:
        return "Only an admin may change this chat's instruction."
    if wanted.lower() == CLEAR:
        await chats.set_instruction(here, None)
        fallback = await chats.instruction(chat) if here != chat else None
        if fallback:
            return f'Cleared. This topic follows its group\'s instruction again: "{fallback}"'
        return "Cleared: no standing instruction here any more."
    try:
        kept = clean_instruction(wanted)
    except ValueError as exc:
        return f"{exc} Nothing was changed."
    await chats.set_instruction(here, kept)
    return f'From now on I follow this in every answer here: "{kept}"'


async def _shown(chats: ChatSettings, here: str, chat: str, command: str) -> str:
    how = (
        f"An admin may set one with {command} TEXT (at most {MAX_INSTRUCTION} characters) "
        f"or remove it with {command} {CLEAR}."
    )
    own = await chats.instruction(here)
    if own:
        return f'The instruction here: "{own}"\n{how}'
    inherited = await chats.instruction(chat) if here != chat else None
    if inherited:
        return f'This topic follows its group\'s instruction: "{inherited}"\n{how}'
    return f"No standing instruction here. {how}"
