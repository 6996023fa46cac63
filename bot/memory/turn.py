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


async def with_memory(request: TurnRequest, state: SessionState) -> TurnRequest:
    """`request` with its scope's memories; without them if the database cannot be read,
    since a turn is worth more than what it would remember."""
    services = request.ctx.services
    if services is None:
        return request
    scope = memory_scope(request.ctx)
    query = request.text if request.text is not None else _last_said(state)
    try:
        relevant = await services.memories.search(scope, query, RELEVANT)
        recent = await services.memories.recent(scope, RECENT)
    except Exception:
        log.warning("could not read the memories of %s", scope, exc_info=True)
        return request
    return dataclasses.replace(request, memory=tuple(within_budget(relevant, recent)))
