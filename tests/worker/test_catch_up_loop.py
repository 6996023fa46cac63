"""The workers' background embedding: one worker at a time embeds what is waiting, so two
workers after a change of model do the work once; the claim is let go after each pass."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

import numpy as np
from redis.asyncio import Redis

from bot.memory.embeddings import Vectors
from bot.memory.recall import Recall
from bot.redis import keys
from bot.store.database import Database
from bot.store.memory_vectors import MemoryVectors
from tests.support.databases import each_database, opened  # noqa: F401 (fixtures)
from tests.support.waiting import until
from worker import loops


class Slow:
    """A model that takes a while and counts what it embeds (the model stands in for one
    that cannot run here in two workers at once)."""

    name = "slow"

    def __init__(self) -> None:
        self.texts: list[str] = []

    async def embed(self, texts: Sequence[str], *, query: bool) -> Vectors:
        self.texts.extend(texts)
        await asyncio.sleep(0.2)
        return np.full((len(texts), 4), 0.5, dtype=np.float32)

    async def aclose(self) -> None:
        return None


async def test_two_workers_embed_what_waits_once(db: Database, redis_client: Redis) -> None:
    model = Slow()
    recall = Recall.on(db.engine, model)
    for n in range(3):
        await recall.memories.add("tg:1", f"note {n}")
    passes = [
        asyncio.create_task(loops.catch_up_memories(recall, redis_client, worker))
        for worker in ("w1", "w2")
    ]
    try:
        vectors = MemoryVectors(db.engine)

        async def embedded() -> bool:
            return len(await vectors.of_scope("tg:1", "slow")) == 3

        await until(embedded, "the three notes embedded")
        await asyncio.sleep(0.3)  # the other worker's look comes and goes meanwhile
        assert sorted(model.texts) == ["note 0", "note 1", "note 2"]
        assert await redis_client.get(keys.EMBEDDING_CLAIM) is None  # let go after the pass
    finally:
        for task in passes:
            task.cancel()
        for task in passes:
            with contextlib.suppress(asyncio.CancelledError):
                await task
