"""What a turn is prepared with before it runs: who it is for, what they chose, what their
conversation remembers. All of it is read from the database, and a database that cannot be
read costs the turn these extras, never the turn itself."""

from __future__ import annotations

import logging

from bot.agent.loop import TurnRequest
from bot.agent.state import SessionState
from bot.config import Settings
from bot.envelope import Envelope
from bot.memory.turn import with_memory
from bot.tools.base import ToolContext
from bot.tools.services import ToolServices

log = logging.getLogger(__name__)


async def tool_context(
    head: Envelope, settings: Settings, services: ToolServices | None
) -> ToolContext:
    """What the turn's tools know: the chat, the person, and the time zone they chose
    (PARLEY_TIMEZONE when they chose none or the database is away)."""
    zone = None
    if services is not None:
        try:
            zone = await services.people.timezone(head.sender.id)
        except Exception:
            log.warning("could not read the time zone of %s", head.sender.id, exc_info=True)
    return ToolContext(
        session_key=head.session,
        user=head.sender,
        settings=settings,
        platform=head.platform,
        chat_kind=head.chat_kind,
        reply_to=head.reply_to,
        zone=zone,
        services=services,
    )


async def prepared(request: TurnRequest, state: SessionState) -> TurnRequest:
    """`request` with what the database adds to it: the scope's memories."""
    return await with_memory(request, state)
