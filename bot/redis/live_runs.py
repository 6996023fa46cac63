"""A run while it is queued or runs, readable by whoever asks for its trace before its record
is written: `GET /api/traces/{id}` answers with the run's status (`queued`, `running`), the
state it is in, its trace so far and the numbers measured from it.

The worker running it rewrites one key (`parley:run:{id}`) as the run passes from state to
state (a model call starts, its text streams, its tools run), so what is read is at most one
state behind; the key lapses a turn's time after its last rewrite, so a run whose worker died
is not shown running for long (its successor rewrites it as it resumes), and it is dropped
once the run's record is in SQL, which is what answers from then on. The value is the JSON
the API answers with, so the web process only relays it.
"""

from __future__ import annotations

import json
from typing import Any

from redis.asyncio import Redis

from bot.redis import keys
from bot.redis.results import done

SLACK_S = 60.0  # kept this long past a turn's time: a run's last rewrite may come early in it


class LiveRuns:
    def __init__(self, redis: Redis, turn_timeout: float) -> None:
        self.redis = redis
        self.ttl_ms = round((turn_timeout + SLACK_S) * 1000)

    async def show(self, run_id: str, shown: dict[str, Any]) -> None:
        """`shown` is the run as `GET /api/traces/{id}` answers for it now."""
        await done(self.redis.set(keys.live_run(run_id), json.dumps(shown), px=self.ttl_ms))

    async def drop(self, run_id: str) -> None:
        await done(self.redis.delete(keys.live_run(run_id)))

    async def of(self, run_id: str) -> dict[str, Any] | None:
        """The run as last shown, or None when it is neither queued nor running."""
        raw = await done(self.redis.get(keys.live_run(run_id)))
        if raw is None:
            return None
        shown: dict[str, Any] = json.loads(raw)
        return shown
