"""The turns a worker is running now, as their helpers see them, and the mark that stops a
helper wherever it runs.

A `delegate` call is made inside its parent's turn, on the parent's worker, so what it
needs of the parent (the budget and time left, the tools the parent may use, its cancel)
is read here, from the turn itself, rather than copied into every tool call's context.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from redis.asyncio import Redis

from bot.agent.deps import TurnRequest
from bot.redis import keys
from bot.redis.results import done
from bot.vocabulary.run_config import RunConfig
from bot.vocabulary.state import SessionState
from bot.vocabulary.usage import Usage

STOP_TTL = 86_400  # as long as the helper's envelope may wait for a worker


@dataclass
class LiveTurn:
    """One turn running in this process: its state (mutated as it goes), its request, the
    deployment's turn timeout (PARLEY_TURN_TIMEOUT, for a run whose config sets none), its
    cancel, and when it started (monotonic)."""

    state: SessionState
    request: TurnRequest
    turn_timeout: float
    cancel: asyncio.Event
    started: float = field(default_factory=time.monotonic)

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
        """Seconds until the turn's own clock stops it (`bot.agent.deadline`)."""
        return self.started + (self.config.timeout or self.turn_timeout) - time.monotonic()


async def stop_helper(redis: Redis, session: str) -> None:
    """Stop the helper `session`: marked first, so a turn that starts later stops at once,
    then told to every worker, so a turn running now stops too."""
    await done(redis.set(keys.session(session, "stopped"), "1", ex=STOP_TTL))
    await done(redis.publish(keys.CANCEL_CHANNEL, session))


async def helper_stopped(redis: Redis, session: str) -> bool:
    return bool(await done(redis.exists(keys.session(session, "stopped"))))
