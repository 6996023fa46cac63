"""What tools reach beyond their call with: the database's tasks, people and memories.

Passed in the `ToolContext` to tools that run on the worker's loop (`isolation="loop"`),
whose connections these are; a tool in a thread or a helper process gets none.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.store.memory import Memories
from bot.store.people import People
from bot.tasks.book import TaskBook


@dataclass(frozen=True)
class ToolServices:
    tasks: TaskBook
    people: People
    memories: Memories
