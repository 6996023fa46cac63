"""`/instructions`, `/tools`, `/skills` and `/activation`: what a chat's admins choose for
everyone in it, told apart and answered the same way on every platform, whatever the command
looks like there (a slash command, or `!name` said in a Slack thread).

In a private chat its person is its admin, and there is nothing to activate: the bot
answers every message there already. What the commands act on (`ChatChoices`) is built once
per platform from its dependencies, and the ingress reads the same parts for every message in
a group (its activation, what was said there before the bot was addressed).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from adapters.chat import instruction_commands
from adapters.chat.access import Gate
from adapters.chat.activation import Activations
from adapters.chat.group_context import GroupContext
from adapters.chat.skill_commands import ChatSkills
from adapters.chat.tool_commands import ChatTools
from adapters.chat.tool_list import ToolCatalog
from bot.config.settings import Settings
from bot.skills.library import Skills
from bot.store.chats import ChatSettings
from bot.tools.policy import Policy
from bot.vocabulary.chat_settings import Activation

NAMES = frozenset({"instructions", "tools", "skills", "activation"})
NOTHING_TO_ACTIVATE = "In a private conversation I answer every message."


class ChatChoices:
    """What the chat settings are read and changed with, built once from a platform's
    dependencies: mixed into each platform's `IngressDeps`, which gives the four attributes
    declared here."""

    settings: Settings
    gate: Gate
    chats: ChatSettings
    tools: ToolCatalog

    @cached_property
    def activations(self) -> Activations:
        """Whether a group's or channel's messages need to be addressed to the bot."""
        return Activations(self.gate.redis, self.chats)

    @cached_property
    def group_context(self) -> GroupContext:
        """What a group said before the bot was addressed (PARLEY_GROUP_CONTEXT)."""
        return GroupContext(self.gate.redis, self.settings.group_context)

    @cached_property
    def chat_tools(self) -> ChatTools:
        """The tools offered in each chat, and its admins' switches (`/tools`)."""
        policy = Policy(self.settings.policy, self.settings.allowed_users)
        return ChatTools(self.tools, self.chats, policy)

    @cached_property
    def chat_skills(self) -> ChatSkills:
        """The operator's skills offered in each chat, and its admins' switches (`/skills`)."""
        return ChatSkills(Skills.of(self.settings), self.chats)


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


async def answer(deps: ChatChoices, asked: Asked) -> str:
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
