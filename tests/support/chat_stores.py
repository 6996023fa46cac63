"""What people keep in a stack's database (memories, grants), written and read directly, as
the tools and buttons would, for the tests of what chats show of it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from bot.memory.local import LocalModel
from bot.memory.recall import Recall
from bot.store.database import Database, open_database
from bot.store.grants import Grants
from bot.store.memory import Memories, Memory
from tests.support.stack import Stack, web_settings


@asynccontextmanager
async def database_of(stack: Stack) -> AsyncIterator[Database]:
    database = await open_database(web_settings(stack.env))
    try:
        yield database
    finally:
        await database.aclose()


@asynccontextmanager
async def memory_store(stack: Stack) -> AsyncIterator[Memories]:
    """The memories of the stack's database."""
    async with database_of(stack) as database:
        yield Memories(database.engine)


@asynccontextmanager
async def recall_store(stack: Stack) -> AsyncIterator[Recall]:
    """The memories of the stack's database, each embedded as it is kept (`kept`) by the
    model inside Parley, as the `remember` tool keeps them."""
    model = LocalModel(timeout=30)
    try:
        async with database_of(stack) as database:
            yield Recall.on(database.engine, model)
    finally:
        await model.aclose()


async def kept(recall: Recall, scope: str, facts: Sequence[str]) -> list[Memory]:
    """`facts` remembered in `scope` and embedded, in order."""
    made = []
    for fact in facts:
        memory, _ = await recall.memories.add(scope, fact)
        await recall.kept(memory)
        made.append(memory)
    return made


@asynccontextmanager
async def grant_store(stack: Stack) -> AsyncIterator[Grants]:
    """The grants ("Always allow") of the stack's database."""
    async with database_of(stack) as database:
        yield Grants(database.engine)
