"""What a turn is prepared with before it runs: who it is for, what they chose (their model
among it), what their conversation remembers, what they always allow. All of it is read from
the database, and a database that cannot be read costs the turn these extras, never the turn
itself."""

from __future__ import annotations

import asyncio
import dataclasses
import logging

from bot.agent.loop import TurnRequest
from bot.agent.state import SessionState
from bot.chats import chat_of
from bot.config import Settings
from bot.envelope import Envelope
from bot.llm.registry import served_model
from bot.mailbox import Mailbox
from bot.memory.turn import with_memory
from bot.people.preferences import Preferences, may_prefer
from bot.run_config import MODES, RunConfig
from bot.tools.base import ToolContext
from bot.tools.services import ToolServices

log = logging.getLogger(__name__)


async def tool_context(
    head: Envelope, settings: Settings, services: ToolServices | None
) -> ToolContext:
    """What the turn's tools know: the chat, the person, and what they chose (the defaults
    when they chose nothing or the database is away)."""
    preferences = Preferences()
    if services is not None:
        try:
            preferences = await services.people.preferences(head.sender.id)
        except Exception:
            log.warning("could not read the preferences of %s", head.sender.id, exc_info=True)
    return ToolContext(
        session_key=head.session,
        user=head.sender,
        settings=settings,
        platform=head.platform,
        chat_kind=head.chat_kind,
        reply_to=head.reply_to,
        preferences=preferences,
        services=services,
    )


async def prepared(request: TurnRequest, state: SessionState) -> TurnRequest:
    """`request` with what the database adds to it: the scope's memories, and the tools
    its person always allows in its chat. Both are read at once, on connections of their
    own: the turn's first event waits for them, and on a busy worker every read made after
    another costs a turn of the event loop more."""
    remembered, allowed = await asyncio.gather(with_memory(request, state), _allowed(request))
    return remembered if allowed is None else dataclasses.replace(remembered, allowed=allowed)


async def _allowed(request: TurnRequest) -> tuple[str, ...] | None:
    """Read for every run, so a grant revoked with /permissions is gone from the next run
    on, also in a turn that was waiting for an approval; None if it cannot be read."""
    ctx = request.ctx
    if ctx.services is None:
        return None
    try:
        allowed = await ctx.services.grants.tools_of(ctx.user.id, chat_of(ctx.session_key))
    except Exception:
        log.warning("could not read what %s always allows", ctx.user.id, exc_info=True)
        return None
    return tuple(allowed)


def preferred_model(ctx: ToolContext) -> str | None:
    """The model the person prefers, if they still may (the operator may have changed
    PARLEY_USER_MODELS since) and this deployment serves it; else None, and the chat's or
    the default model answers."""
    wanted, settings = ctx.preferences.model, ctx.settings
    if wanted is None:
        return None
    admin = ctx.user.is_admin or settings.is_admin(ctx.user.id)
    return served_model(settings, wanted) if may_prefer(settings, wanted, admin) else None


async def run_config(
    head: Envelope, state: SessionState, mailbox: Mailbox, *, goes_on: bool
) -> RunConfig:
    """How the turn is to run: as its message asked (an API run), as the turn it `goes_on`
    with was asked to, else in the chat's mode (`/mode`)."""
    if head.run is not None:
        return head.run
    if goes_on and state.turn is not None:  # as it began, whatever the chat chose since
        return state.turn.config or RunConfig()
    mode = await mailbox.option(chat_of(head.session), "mode")
    return RunConfig(mode=mode) if mode in MODES and mode != "react" else RunConfig()
