"""Recall: a scope's memories found by meaning and by words together.

A question is embedded (`bot.memory.embeddings`), compared with the vectors of the scope's
memories that the configured model made (`bot.store.memory_vectors`), and the nearest are
fused with what the full-text index finds (`bot.memory.ranking`). Without a model
(`PARLEY_EMBEDDINGS_MODEL=off`), or when it fails this time, recall goes by words alone,
with one warning: a turn is worth more than a better ranking.

A memory is embedded when it is kept (`kept`); one that could not be then (the model failing,
a memory from before vectors, a change of model) is embedded by the worker's background pass
(`catch_up`), and until then is found by its words. After a failure the model is left alone
for `REST_S`: a model that is down costs one turn its timeout, not every turn.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from sqlalchemy.ext.asyncio import AsyncEngine

from bot.memory.crowds import Crowds
from bot.memory.embeddings import Embedder, EmbeddingFailed
from bot.memory.ranking import fused
from bot.store.memory import Memories, Memory
from bot.store.memory_vectors import MemoryVectors

if TYPE_CHECKING:
    from bot.memory.embeddings import Vectors

log = logging.getLogger(__name__)
NEAREST = 20  # memories taken by meaning into the fusion, at most
# By words at a hundredth of the weight: meaning decides, words break its ties and add the
# memories it did not take. A question's common words ("my", "what", "name") match many
# memories, and at an equal weight those sharing one lifted past the memory it means (on a
# set of reworded questions, words fused at an equal weight halved the hits in the first
# place); a rare word (a name, a number) is found by meaning too, the text being embedded.
BY_WORDS, WORDS_WEIGHT = NEAREST, 0.01
ON_LOOP = 2_000  # vectors compared on the event loop; more go to a thread
# Memories embedded at once by the background pass: a batch holds the model (some 18 ms a
# memory) while a turn's question waits behind it, and larger ones embed no faster.
BATCH = 8
REST_S = 60.0  # seconds recall goes by words after the model failed
# A memory stands out for a message when its cosine is this many standard deviations above
# the mean of its scope's. On the recall benchmark's questions among 200 memories, 2.5 let in
# half of the memories asked about, with 1.6 memories a question in all; small talk ("thanks!",
# "ok cool", "tell me a joke") stays at 1.8 to 2.4, though "hi" or "good night" may reach 2.6
# and bring a memory that does not bear on it: a few words the model is told may not matter.
STANDING_OUT = 2.5
FEWEST_TO_STAND_OUT = 12  # below this, a scope's spread says little (and all fit the prompt)


@dataclass
class Rest:
    """Until when the model is left alone after it failed."""

    seconds: float = REST_S
    until: float = 0.0

    def resting(self) -> bool:
        return time.monotonic() < self.until

    def failed(self, exc: EmbeddingFailed) -> None:
        self.until = time.monotonic() + self.seconds
        log.warning("recall goes by words for %g s: %s", self.seconds, exc)


@dataclass(frozen=True)
class Recall:
    memories: Memories
    vectors: MemoryVectors
    embedder: Embedder | None = None
    rest: Rest = field(default_factory=Rest)
    crowds: Crowds = field(default_factory=Crowds)

    @classmethod
    def on(cls, engine: AsyncEngine, embedder: Embedder | None = None) -> Recall:
        """Recall on one database, by meaning with `embedder`, by words alone without. A
        process makes one and hands it to all that recall (its tools, its turns), so a model
        that failed rests for all of them."""
        return cls(Memories(engine), MemoryVectors(engine), embedder)

    async def search(self, scope: str, query: str, limit: int) -> list[Memory]:
        """The memories of `scope` that `query` is about, best first: by meaning and by
        words, or by words alone without a model."""
        by_words = await self.memories.search(scope, query, max(limit, NEAREST))
        by_meaning = await self._nearest(scope, query)
        if not by_meaning:
            return by_words[:limit]
        words = [memory.id for memory in by_words[:BY_WORDS]]
        order = fused(by_meaning, words, weights=(1.0, WORDS_WEIGHT))[:limit]
        known = {memory.id: memory for memory in by_words}
        missing = [memory_id for memory_id in order if memory_id not in known]
        known.update({memory.id: memory for memory in await self.memories.some(scope, missing)})
        return [known[memory_id] for memory_id in order if memory_id in known]

    async def standing_out(self, scope: str, query: str, limit: int) -> list[Memory]:
        """At most `limit` memories of `scope` that stand out by meaning as what `query` is
        about, best first (`vector_math.outstanding`); none without a model, when it fails,
        or in a scope too small to tell."""
        compared = await self._compared(scope, query, fewest=FEWEST_TO_STAND_OUT)
        if compared is None:
            return []
        stored, asked = compared
        ids = await _computed(len(stored), "outstanding", stored, asked, limit, STANDING_OUT)
        found = {memory.id: memory for memory in await self.memories.some(scope, ids)}
        return [found[memory_id] for memory_id in ids if memory_id in found]

    async def _nearest(self, scope: str, query: str) -> list[int]:
        """The ids of the scope's memories nearest `query` by meaning, their crowding taken
        into account (`bot.memory.crowds`), nearest first; none without a model, or when it
        failed (said once per failure)."""
        compared = await self._compared(scope, query)
        if compared is None:
            return []
        stored, asked = compared
        assert self.embedder is not None  # compared by it
        crowds = await self.crowds.of(scope, self.embedder.name, stored)
        return await _computed(len(stored), "nearest", stored, asked, NEAREST, crowds)

    async def _compared(
        self, scope: str, query: str, fewest: int = 1
    ) -> tuple[list[tuple[int, bytes]], Vectors] | None:
        """The scope's vectors and `query`'s, to compare; None without a model, when it
        failed (said once per failure), or when the scope has fewer than `fewest`."""
        if self.embedder is None or self.rest.resting() or not query.strip():
            return None
        stored = await self.vectors.of_scope(scope, self.embedder.name)
        if len(stored) < fewest:
            return None
        try:
            [asked] = await self.embedder.embed([query], query=True)
        except EmbeddingFailed as exc:
            self.rest.failed(exc)
            return None
        return stored, asked

    async def kept(self, memory: Memory) -> None:
        """Embed a memory just kept; if the model fails, the background pass does it."""
        if self.embedder is None or self.rest.resting():
            return  # the background pass embeds it
        try:
            [vector] = await self.embedder.embed([memory.text], query=False)
        except EmbeddingFailed as exc:
            self.rest.failed(exc)
            return
        await self.vectors.put(memory.id, self.embedder.name, vector.tolist())

    async def catch_up(self) -> int:
        """Embed the memories the configured model has not (new ones it missed, older ones,
        all after a change of model), a batch at a time; how many were."""
        if self.embedder is None or self.rest.resting():
            return 0
        done = 0
        while waiting := await self.vectors.waiting(self.embedder.name, BATCH):
            rows = await self.embedder.embed([memory.text for memory in waiting], query=False)
            for memory, vector in zip(waiting, rows, strict=True):
                await self.vectors.put(memory.id, self.embedder.name, vector.tolist())
            done += len(waiting)
        return done


async def _computed(
    count: int, ranking: Literal["nearest", "outstanding"], *args: object
) -> list[int]:
    """`vector_math`'s `ranking` of `count` vectors: on the event loop when they are few, in
    a thread when they are many."""
    rank = getattr(importlib.import_module("bot.memory.vector_math"), ranking)  # numpy
    if count <= ON_LOOP:
        found: list[int] = rank(*args)
        return found
    return list(await asyncio.to_thread(rank, *args))
