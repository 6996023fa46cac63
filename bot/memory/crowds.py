"""Each scope's crowding (`vector_math.crowding`), kept while its vectors stay the same.

Crowding compares every memory of a scope with every other, which grows with the square of
their number: a scope's 200 memories take a millisecond or two, 10,000 some seconds. It
changes only when a memory comes or goes (or is embedded by another model), so it is kept
for the scopes searched last, by the ids and model of the vectors it was made from, and made
again when they differ. Large scopes are measured in a thread, off the event loop.
"""

from __future__ import annotations

import asyncio
import importlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.memory.embeddings import Vectors

SCOPES = 256  # scopes whose crowding is kept, the last searched
ON_LOOP = 300  # vectors measured on the event loop; more go to a thread


@dataclass
class Crowds:
    size: int = SCOPES
    _kept: OrderedDict[str, tuple[str, tuple[int, ...], Vectors]] = field(
        default_factory=OrderedDict
    )

    async def of(self, scope: str, model: str, stored: Sequence[tuple[int, bytes]]) -> Vectors:
        """The crowding of `scope`'s `stored` vectors, made by `model`, in their order."""
        ids = tuple(memory_id for memory_id, _ in stored)
        kept = self._kept.get(scope)
        if kept is not None and kept[0] == model and kept[1] == ids:
            self._kept.move_to_end(scope)
            return kept[2]
        math = importlib.import_module("bot.memory.vector_math")  # numpy, once needed
        if len(stored) <= ON_LOOP:
            crowds: Vectors = math.crowding(stored)
        else:
            crowds = await asyncio.to_thread(math.crowding, stored)
        self._kept[scope] = (model, ids, crowds)
        self._kept.move_to_end(scope)
        while len(self._kept) > self.size:
            self._kept.popitem(last=False)
        return crowds
