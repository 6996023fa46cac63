"""The moment a worker is ready for every configured platform, announced in Redis.

A worker takes jobs as soon as arq polls (Redis connected, liveness key written, its turns'
machinery wired), while the SDKs of its platforms still load in the background (see
`adapters.platforms.loading`); once they have, it is ready for every reply. It says so by adding an
entry (its liveness id, host and process id) to one capped stream, so whoever waits for a
worker (a deploy script, the end-to-end tests) blocks on a real signal with XREAD instead of
guessing from a log line, and `XREVRANGE parley:workers + - COUNT 10` shows which workers
started lately.
"""

from __future__ import annotations

import os
import socket

from redis.asyncio import Redis
from redis.typing import EncodableT, FieldT

from bot.redis.keys import READY_STREAM

KEPT = 1000  # entries: one per start, so only the recent starts matter


async def announce(redis: Redis, worker_id: str) -> None:
    """Add this worker to the stream; call it once its platforms are loaded."""
    entry: dict[FieldT, EncodableT] = {
        "worker": worker_id,
        "host": socket.gethostname(),
        "pid": os.getpid(),
    }
    await redis.xadd(READY_STREAM, entry, maxlen=KEPT, approximate=True)
