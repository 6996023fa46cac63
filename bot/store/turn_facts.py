"""What a turn reads from the database before it runs, in one statement on one connection:
what its person chose, the tools they always allow in the chat, how many memories its scope
has (with their version), and what the chat's admins chose (its instruction, a forum
topic's before its chat's, and its tools switched off).

Read one by one, these were five statements on four pooled connections for every turn, each
with its round trips to the database's thread (SQLite) or server, and its connection's reset
when given back: a fifth of a short turn's database work. Here the five row sets come back as
one `UNION ALL`, each row tagged with what it is, built once and executed with the turn's
keys as parameters (its compiled form is cached)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import (
    CompoundSelect,
    String,
    Table,
    bindparam,
    cast,
    func,
    literal_column,
    null,
    select,
    union_all,
)
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store.chats import SETTINGS, TOOLS_OFF
from bot.store.grants import GRANTS
from bot.store.memory import MEMORIES
from bot.store.people import PEOPLE, preferences_of
from bot.vocabulary.chat_settings import ChatRules
from bot.vocabulary.preferences import Preferences

_TEXT = String()


@dataclass(frozen=True)
class TurnFacts:
    """What the database says about a turn: its person's `preferences`, the tools they
    `allowed` in the chat (sorted), how many memories its scope has with a version that
    changes whenever they do (a new one raises the highest id, a forgotten one lowers the
    count: ids are never reused), and its chat's `rules`."""

    preferences: Preferences = field(default_factory=Preferences)
    allowed: tuple[str, ...] = ()
    memories: tuple[int, str] = (0, "0:0")
    rules: ChatRules = field(default_factory=ChatRules)


def _tagged(tag: str, table: Table, *columns: Any) -> Any:
    """A select of `columns` (as text, padded to four with NULLs) led by `tag`."""
    padded = [cast(c, _TEXT) for c in columns] + [cast(null(), _TEXT)] * (4 - len(columns))
    return select(literal_column(f"'{tag}'").label("tag"), *padded).select_from(table)


def _statement() -> CompoundSelect[Any]:
    p = PEOPLE.c
    person = _tagged("p", PEOPLE, p.timezone, p.language, p.model, p.instruction)
    grants = _tagged("g", GRANTS, GRANTS.c.tool).where(
        GRANTS.c.person == bindparam("person"), GRANTS.c.chat == bindparam("chat")
    )
    memories = _tagged("m", MEMORIES, func.count(), func.max(MEMORIES.c.id))
    keys: Any = bindparam("keys", expanding=True)
    settings = _tagged("s", SETTINGS, SETTINGS.c.key, SETTINGS.c.instruction)
    return union_all(
        person.where(p.id == bindparam("person")),
        grants,
        memories.where(MEMORIES.c.scope == bindparam("scope")),
        settings.where(SETTINGS.c.key.in_(keys)),
        _tagged("o", TOOLS_OFF, TOOLS_OFF.c.tool).where(TOOLS_OFF.c.chat == bindparam("chat")),
    )


class TurnReads:
    """The one statement behind `TurnFacts`, built once per process."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self._statement = _statement()

    async def read(self, person: str, chat: str, session: str, scope: str) -> TurnFacts:
        """The facts of a turn in `session` (whose chat is `chat`) for `person`, whose
        memories are `scope`'s."""
        keys = [session, chat] if session != chat else [chat]
        values = {"person": person, "chat": chat, "scope": scope, "keys": keys}
        async with self.engine.connect() as db:
            rows = (await db.execute(self._statement, values)).all()
        return facts_of(rows, keys)


def facts_of(rows: Sequence[Any], keys: list[str]) -> TurnFacts:
    """The facts in the statement's tagged rows."""
    preferences = Preferences()
    allowed: list[str] = []
    off: set[str] = set()
    memories = (0, "0:0")
    instructions: dict[str, str | None] = {}
    for tag, a, b, c, d in rows:
        if tag == "p":
            preferences = preferences_of(a, b, c, d)
        elif tag == "g":
            allowed.append(str(a))
        elif tag == "m":
            memories = (int(a), f"{int(a)}:{int(b or 0)}")
        elif tag == "s":
            instructions[str(a)] = b
        elif tag == "o":
            off.add(str(a))
    instruction = next((instructions[k] for k in keys if instructions.get(k)), None)
    rules = ChatRules(instruction, frozenset(off))
    return TurnFacts(preferences, tuple(sorted(allowed)), memories, rules)
