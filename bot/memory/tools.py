"""The tools of long-term memory: `remember`, `forget` and `recall`.

They are built with the store they work on (`memory_tools`) and run on the worker's loop,
whose database connections the store's are. They work on the conversation's scope
(`bot.memory.scope`): the person's own memories in a private chat, the chat's in a group.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import Field

from bot.memory.recall import Recall
from bot.memory.scope import memory_scope
from bot.store.memory import MAX_TEXT, Memories, Memory, MemoryRefused
from bot.tools.base import Tool, ToolContext, ToolError, tool

NUMBER = re.compile(r"#?([1-9][0-9]{0,17})")  # a memory's number, as the prompt shows it
RECALL_LIMIT = 20


def _listed(found: list[Memory]) -> str:
    return "; ".join(memory.line() for memory in found)


def memory_tools(recall: Recall) -> list[Tool]:
    """`remember`, `forget` and `recall`, on `recall`'s memories."""
    return [_remember(recall), _forget(recall.memories), _recall(recall)]


def _remember(recall: Recall) -> Tool:
    @tool(isolation="loop")
    async def remember(
        ctx: ToolContext,
        fact: Annotated[
            str,
            Field(
                min_length=1,
                max_length=MAX_TEXT,
                description="The fact, short and self-contained, written about the person "
                "('Ann takes her coffee black', 'The team deploys on Thursdays')",
            ),
        ],
    ) -> str:
        """Keep a fact in long-term memory: it stays across /new and restarts, and comes back
        in your instructions under "What you remember". Use it only for what the person asked
        you to remember, or clearly wants kept (a preference, a name, a standing instruction);
        never for passing details or anything they did not mean to share. In a group chat the
        memory belongs to the chat, in a private chat to the person. When it is saved, tell them
        ("Saved to memory: …")."""
        try:
            memory, new = await recall.memories.add(memory_scope(ctx), fact)
        except MemoryRefused as exc:
            raise ToolError(str(exc)) from None
        if not new:
            return f"Already in memory: {memory.line()}"
        await recall.kept(memory)  # found by meaning from now on (or once embedded later)
        return f"Saved to memory: {memory.line()}"

    return remember


def _forget(memories: Memories) -> Tool:
    @tool(isolation="loop")
    async def forget(
        ctx: ToolContext,
        what: Annotated[
            str,
            Field(
                min_length=1,
                max_length=MAX_TEXT,
                description="The memory's number ('12' or '#12'), or words that every memory to "
                "forget contains ('green tea')",
            ),
        ],
    ) -> str:
        """Remove memories the person wants forgotten, by number or by their words. Tell the
        person what was removed."""
        number = NUMBER.fullmatch(what.strip())
        try:
            gone = await memories.forget(memory_scope(ctx), int(number[1]) if number else what)
        except MemoryRefused as exc:
            raise ToolError(str(exc)) from None
        if not gone:
            return f"Nothing in memory matches {what[:80]!r}; recall shows what is kept."
        return f"Forgot: {_listed(gone)}"

    return forget


def _recall(kept: Recall) -> Tool:
    @tool(read_only=True, isolation="loop")
    async def recall(
        ctx: ToolContext,
        query: Annotated[
            str,
            Field(
                max_length=MAX_TEXT,
                description="Words to look for; empty for the most recent memories",
            ),
        ] = "",
    ) -> str:
        """Search long-term memory by meaning and words (the best matches first), beyond what
        your instructions already show under "What you remember"."""
        scope = memory_scope(ctx)
        if query.strip():
            found = await kept.search(scope, query, RECALL_LIMIT)
        else:
            found = await kept.memories.recent(scope, RECALL_LIMIT)
        if not found:
            return "Nothing in memory matches." if query.strip() else "Memory is empty."
        return "\n".join(memory.line() for memory in found)

    return recall
