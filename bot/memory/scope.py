"""Whose memories a conversation sees: the one rule, used by the tools and the prompt alike.

In a private chat (and the HTTP API, whose sessions are private) the person's own, keyed by
their sender id (`tg:123`, `slack:U1`), so they follow the person across chats and
platforms. In a group, channel or thread the chat's, shared by everyone in it and kept apart
from each member's own: a person's private memories never appear in a group, nor a group's
in a private chat. A chat's topics and threads share the chat's memories.
"""

from __future__ import annotations

from bot.tools.base import ToolContext
from bot.vocabulary.chats import chat_of

CHAT_PREFIX = "chat:"


def memory_scope(ctx: ToolContext) -> str:
    return scope_of(ctx.chat_kind, ctx.user.id, ctx.session_key)


def scope_of(chat_kind: str, person: str, session: str) -> str:
    """The rule itself, for those that have no tool context: the lists people see in chat
    (`/memory`) show and forget exactly what the tools would."""
    if chat_kind == "private":
        return person
    return CHAT_PREFIX + chat_of(session)


def is_private(scope: str) -> bool:
    """Whether `scope` is a person's own memories rather than a chat's."""
    return not scope.startswith(CHAT_PREFIX)
