"""Loading a turn's memories where the turn is prepared, the way the person's time zone is:
a database that cannot be read costs the turn its memories, never the turn."""

from __future__ import annotations

import dataclasses
import logging

from bot.agent.loop import TurnRequest
from bot.agent.state import SessionState
from bot.memory.prompt import within_budget
from bot.memory.scope import memory_scope
from bot.messages import TextBlock

log = logging.getLogger(__name__)
RELEVANT = 10  # memories matching the message, at most
RECENT = 10  # the newest memories, at most


def _last_said(state: SessionState) -> str:
    """What the person said last, for a turn resumed or decided on without a new message."""
    for message in reversed(state.messages):
        if message.role == "user":
            said = [b.text for b in message.content if isinstance(b, TextBlock)]
            if said:
                return "\n".join(said)
    return ""


MemoryCount = tuple[int, str]  # how many memories a scope has, and their version


async def with_memory(
    request: TurnRequest, state: SessionState, counted: MemoryCount | None
) -> TurnRequest:
    """`request` with its scope's memories, given their count and version as the turn's
    set-up read them (`Memories.version`); without them if they could not be read (None)
    or cannot be now, since a turn is worth more than what it would remember.

    They are chosen again only when the scope's memories changed (a memory saved or
    forgotten, or a new scope after /new); otherwise the turn carries the same ones as the
    last, so the system prompt, and the provider's cache of the conversation behind it,
    stay the same from one message to the next. A scope without memories costs a turn one
    read, the count, and a new session most often has none."""
    services = request.ctx.services
    if services is None or counted is None:
        return request
    scope = memory_scope(request.ctx)
    memories = services.memories
    count, version = counted[0], f"{scope}@{counted[1]}"
    try:
        if version != state.memory_version and count == 0:
            state.memory, state.memory_version = [], version  # nothing to choose from
        elif version != state.memory_version:
            query = request.text if request.text is not None else _last_said(state)
            relevant = await memories.search(scope, query, RELEVANT)
            recent = await memories.recent(scope, RECENT)
            state.memory, state.memory_version = within_budget(relevant, recent), version
    except Exception:
        log.warning("could not read the memories of %s", scope, exc_info=True)
        return request
    return dataclasses.replace(request, memory=tuple(state.memory))
