"""The turns a worker is running now, as their helpers see them, and the mark that stops a
helper wherever it runs.

A `delegate` call is made inside its parent's turn, on the parent's worker, so what it
needs of the parent (the budget and time left, the tools the parent may use, its cancel)
is read here, from the turn itself, rather than copied into every tool call's context.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from redis.asyncio import Redis

from bot.agent.deadline import Deadline
from bot.agent.deps import TurnRequest
from bot.redis import keys
from bot.redis.results import done
from bot.vocabulary.events import AgentEvent, FileSent
from bot.vocabulary.run_config import RunConfig
from bot.vocabulary.state import SessionState
from bot.vocabulary.usage import Usage

STOP_TTL = 86_400  # as long as the helper's envelope may wait for a worker


async def _unshown(event: AgentEvent) -> None:
    """Before the turn's reply is open, nothing is shown beside it."""


async def _unposted(event: FileSent) -> str | None:
    """Before the turn's reply is open, no file is posted: what became of it is not known."""
    return None


@dataclass
class LiveTurn:
    """One turn running in this process: its state (mutated as it goes), its request, the
    deployment's turn timeout (PARLEY_TURN_TIMEOUT, for a run whose config sets none), its
    cancel, its clock (`bot.agent.deadline`, which a helper's wait for a person holds),
    `show`: what puts an event into the turn's reply from beside the run (a helper's
    approval prompt, posted in this turn's chat while its `delegate` call waits), and `post`:
    what posts a helper's file there and says what became of it (`ReplyStream.post_file`)."""

    state: SessionState
    request: TurnRequest
    turn_timeout: float
    cancel: asyncio.Event
    show: Callable[[AgentEvent], Awaitable[None]] = _unshown
    post: Callable[[FileSent], Awaitable[str | None]] = _unposted
    deadline: Deadline = field(init=False)

    def __post_init__(self) -> None:
        self.deadline = Deadline(self.config.timeout or self.turn_timeout, self.cancel)

    @property
    def config(self) -> RunConfig:
        """The run's config as the loop reads it: a decision or a resume goes on with the
        config its turn began with."""
        turn = self.state.turn
        if turn is not None and self.request.text is None:
            return turn.config or RunConfig()
        return self.request.config

    @property
    def usage(self) -> Usage:
        return self.state.turn.usage if self.state.turn is not None else Usage()

    @property
    def time_left(self) -> float:
        """Seconds until the turn's own clock stops it."""
        return self.deadline.left


async def stop_helper(redis: Redis, session: str) -> None:
    """Stop the helper `session`: marked first, so a turn that starts later stops at once,
    then told to every worker, so a turn running now stops too."""
    await done(redis.set(keys.session(session, "stopped"), "1", ex=STOP_TTL))
    await done(redis.publish(keys.CANCEL_CHANNEL, session))


async def helper_stopped(redis: Redis, session: str) -> bool:
    return bool(await done(redis.exists(keys.session(session, "stopped"))))
