"""`/instructions`, `/tools`, `/skills` and `/activation`: what a chat's admins choose for
everyone in it, told apart and answered the same way on every platform, whatever the command
looks like there (a slash command, or `!name` said in a Slack thread).

In a private chat its person is its admin, and there is nothing to activate: the bot
answers every message there already.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from adapters.chat import instruction_commands
from adapters.chat.activation import Activations
from adapters.chat.skill_commands import ChatSkills
from adapters.chat.tool_commands import ChatTools
from bot.store.chats import ChatSettings
from bot.vocabulary.chat_settings import Activation

NAMES = frozenset({"instructions", "tools", "skills", "activation"})
NOTHING_TO_ACTIVATE = "In a private conversation I answer every message."


class SettingsDeps(Protocol):
    """What a platform's dependencies give these commands."""

    @property
    def chats(self) -> ChatSettings: ...

    @property
    def chat_tools(self) -> ChatTools: ...

    @property
    def chat_skills(self) -> ChatSkills: ...

    @property
    def activations(self) -> Activations: ...


@dataclass(frozen=True)
class Asked:
    """One of these commands as a platform read it: `name` without its prefix, `said` after
    it, by `who`, for the key `here` (a Telegram topic, or the chat itself) inside `chat`."""

    name: str
    said: str
    who: str
    here: str
    chat: str
    private: bool
    may_change: bool
    command: str  # as the person wrote it: `/tools`, `!tools`
    default: Activation  # the chat's activation where its admins chose none


async def answer(deps: SettingsDeps, asked: Asked) -> str:
    """The answer to `asked`, with the change it asks for made when the asker may make it."""
    if asked.name == "instructions":
        return await instruction_commands.answer(
            deps.chats,
            asked.here,
            asked.chat,
            asked.said,
            may_change=asked.may_change,
            command=asked.command,
        )
    if asked.name in ("tools", "skills"):
        switches = deps.chat_tools if asked.name == "tools" else deps.chat_skills
        return await switches.answer(
            asked.chat,
            asked.said,
            who=asked.who,
            may_change=asked.may_change,
            command=asked.command,
        )
    if asked.private:
        return NOTHING_TO_ACTIVATE
    return await deps.activations.answer(
        asked.chat,
        asked.said,
        default=asked.default,
        may_change=asked.may_change,
        command=asked.command,
    )
