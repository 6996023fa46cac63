"""Long-term memories kept directly in a stack's database, as the `remember` tool would
keep them, for the tests of what chats show of them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from bot.store.database import open_database
from bot.store.memory import Memories
from tests.support.stack import Stack, web_settings


@asynccontextmanager
async def memory_store(stack: Stack) -> AsyncIterator[Memories]:
    """The memories of the stack's database."""
    database = await open_database(web_settings(stack.env))
    try:
        yield Memories(database.engine)
    finally:
        await database.aclose()
