"""The moment a worker starts taking jobs, announced in Redis.

A worker is ready once its arq worker is about to poll: Redis is connected, its liveness key
is written and its turns' machinery is wired. It says so by adding an entry (its liveness
id, host and process id) to one capped stream, so whoever waits for a worker (a deploy
script, the end-to-end tests) blocks on a real signal with XREAD instead of guessing from a
log line, and `XREVRANGE parley:workers + - COUNT 10` shows which workers started lately.
"""

from __future__ import annotations

import os
import socket

from redis.asyncio import Redis
from redis.typing import EncodableT, FieldT

from bot.keys import READY_STREAM

KEPT = 1000  # entries: one per start, so only the recent starts matter


async def announce(redis: Redis, worker_id: str) -> None:
    """Add this worker to the stream; call it last before polling."""
    entry: dict[FieldT, EncodableT] = {
        "worker": worker_id,
        "host": socket.gethostname(),
        "pid": os.getpid(),
    }
    await redis.xadd(READY_STREAM, entry, maxlen=KEPT, approximate=True)
