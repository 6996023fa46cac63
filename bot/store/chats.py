"""What the admins of each chat chose for everyone in it, kept across `/new` and restarts:
its standing instruction (a Telegram topic may have its own), its tools switched off, and
whether the bot answers every message there.

A turn reads its chat's rules with the rest of what it needs, in one statement
(`bot.store.turn_facts`); the web process reads a chat's activation for every group message,
through a cache of its own (`adapters.chat.activation`).
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Table, delete, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store.history import upsert
from bot.store.schema import ChatSettingRow, ChatToolRow
from bot.vocabulary.chat_settings import Activation

SETTINGS: Table = ChatSettingRow.__table__  # type: ignore[assignment]
TOOLS_OFF: Table = ChatToolRow.__table__  # type: ignore[assignment]


class ChatSettings:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def instruction(self, key: str) -> str | None:
        """The instruction set for `key` itself (a chat, or a topic without its chat's)."""
        async with self.engine.connect() as db:
            found = select(SETTINGS.c.instruction).where(SETTINGS.c.key == key)
            return (await db.execute(found)).scalar()

    async def set_instruction(self, key: str, text: str | None) -> None:
        """Set `key`'s instruction, already cleaned (`clean_instruction`); None clears it."""
        await self._set(key, instruction=text)

    async def activation(self, chat: str) -> Activation | None:
        """Whether the bot answers every message in `chat`; None: the deployment's default."""
        async with self.engine.connect() as db:
            found = select(SETTINGS.c.activation).where(SETTINGS.c.key == chat)
            value = (await db.execute(found)).scalar()
        return "always" if value == "always" else "mention" if value == "mention" else None

    async def set_activation(self, chat: str, activation: Activation | None) -> None:
        await self._set(chat, activation=activation)

    async def tools_off(self, chat: str) -> frozenset[str]:
        async with self.engine.connect() as db:
            off = select(TOOLS_OFF.c.tool).where(TOOLS_OFF.c.chat == chat)
            return frozenset((await db.execute(off)).scalars())

    async def switch(self, chat: str, tool: str, *, on: bool, by: str) -> None:
        """Switch `tool` on or off in `chat`; doing it twice changes nothing."""
        async with self.engine.begin() as db:
            if on:
                gone = (TOOLS_OFF.c.chat == chat) & (TOOLS_OFF.c.tool == tool)
                await db.execute(delete(TOOLS_OFF).where(gone))
                return
            row = {"chat": chat, "tool": tool, "switched_by": by, "switched_at": _now()}
            statement = upsert(db, TOOLS_OFF).values(**row)
            await db.execute(statement.on_conflict_do_nothing())

    async def _set(self, key: str, **values: str | None) -> None:
        changed: dict[str, object] = {**values, "updated_at": _now()}
        async with self.engine.begin() as db:
            statement = upsert(db, SETTINGS).values(key=key, **changed)
            await db.execute(
                statement.on_conflict_do_update(index_elements=[SETTINGS.c.key], set_=changed)
            )


def _now() -> datetime:
    return datetime.now(UTC)
