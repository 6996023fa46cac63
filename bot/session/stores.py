"""The database's stores as a worker's turns use them: what a turn reads before it runs (the
person's preferences, the grants, the memories), a task's run called off, an "Always allow"
kept. The worker opens them once (`bot.assembly.stores.Stores`, which Parley's own tools are
also built on); the session needs only that they are there.
"""

from __future__ import annotations

from typing import Protocol

from bot.store.grants import Grants
from bot.store.memory import Memories
from bot.store.people import People
from bot.tasks.book import TaskBook


class TurnStores(Protocol):
    @property
    def tasks(self) -> TaskBook: ...

    @property
    def people(self) -> People: ...

    @property
    def memories(self) -> Memories: ...

    @property
    def grants(self) -> Grants: ...
