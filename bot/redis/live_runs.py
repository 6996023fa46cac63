"""A run while it is queued or runs, readable by whoever asks for its trace before its record
is written: `GET /api/traces/{id}` answers with the run's status (`queued`, `running`), the
state it is in, its trace so far and the numbers measured from it.

The worker running it rewrites the session's key for it (`parley:{session}:run:{id}`, found
by the run's id through `parley:run:{id}`) as the run passes from state to state (a model call
starts, its text streams, its tools run), so what is read is at most one state behind; the
keys lapse a turn's time after the last rewrite, so a run whose worker died is not shown
running for long (its successor rewrites them as it resumes), they go with a deleted session's
keys, and they are dropped once the run's record is in SQL, which answers from then on. The
value is the JSON the API answers with, so the web process only relays it.
"""

from __future__ import annotations

import json
from typing import Any

from redis.asyncio import Redis

from bot.redis import keys
from bot.redis.results import done, text

SLACK_S = 60.0  # kept this long past a turn's time: a run's last rewrite may come early in it


class LiveRuns:
    def __init__(self, redis: Redis, turn_timeout: float) -> None:
        self.redis = redis
        self.ttl_ms = round((turn_timeout + SLACK_S) * 1000)

    async def show(self, run_id: str, session: str, shown: dict[str, Any]) -> None:
        """`shown` is the run as `GET /api/traces/{id}` answers for it now. It is kept with
        the session's keys (so a deleted session's go with them), found by the run's id."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(keys.session(session, f"run:{run_id}"), json.dumps(shown), px=self.ttl_ms)
            pipe.set(keys.live_run(run_id), session, px=self.ttl_ms)
            await pipe.execute()

    async def drop(self, run_id: str, session: str) -> None:
        await done(self.redis.delete(keys.session(session, f"run:{run_id}"), keys.live_run(run_id)))

    async def of(self, run_id: str) -> dict[str, Any] | None:
        """The run as last shown, or None when it is neither queued nor running."""
        session = await done(self.redis.get(keys.live_run(run_id)))
        if session is None:
            return None
        raw = await done(self.redis.get(keys.session(text(session), f"run:{run_id}")))
        if raw is None:  # its session was deleted
            return None
        shown: dict[str, Any] = json.loads(raw)
        return shown
