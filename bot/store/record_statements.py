"""The statements a run's record executes, each built once for the database's dialect.

Every run ends with a record (its session, its run, its messages, the session's totals),
and on a busy worker these few statements run hundreds of times a second. Building a
statement object, and the cache key SQLAlchemy computes from it to find its compiled SQL,
cost more CPU than executing it: an `INSERT … ON CONFLICT DO UPDATE` that names each column's
`excluded` value builds a proxy per column. So each is built once per `History` and executed
with the row as parameters: its cache key is computed once, its SQL compiled once, and on
PostgreSQL the statement prepared once per pooled connection. Only the database's own
dialect is imported, when its statements are built: PostgreSQL's costs a SQLite worker a
fortieth of a second at start, before its first turn.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Integer, Table, bindparam, func, select, update
from sqlalchemy.sql import Executable

from bot.store.schema import MessageFileRow, MessageRow, RunRow, SessionRow

SESSIONS: Table = SessionRow.__table__  # type: ignore[assignment]
RUNS: Table = RunRow.__table__  # type: ignore[assignment]
MESSAGES: Table = MessageRow.__table__  # type: ignore[assignment]
FILES: Table = MessageFileRow.__table__  # type: ignore[assignment]
TOKEN_COUNTS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
TOTALS = (*TOKEN_COUNTS, "cost_usd")
KEPT_ON_UPDATE = frozenset({"id", "session_key", "started_at"})  # a run's, once written


def insert_of(dialect: str, table: Table) -> Any:
    """`INSERT … ON CONFLICT` in the dialect's words (both speak it, differently)."""
    name = "postgresql" if dialect == "postgresql" else "sqlite"
    return importlib.import_module(f"sqlalchemy.dialects.{name}").insert(table)


class RecordStatements:
    """The record's statements for one dialect; execute each with its row as parameters."""

    def __init__(self, dialect: str) -> None:
        self._dialect = dialect
        self.session = insert_of(dialect, SESSIONS).on_conflict_do_nothing(index_elements=["key"])
        message = insert_of(dialect, MESSAGES).on_conflict_do_nothing(index_elements=["id"])
        self.message = message.returning(MESSAGES.c.id)  # the ids it added, not those it had
        self.message_file = insert_of(dialect, FILES).on_conflict_do_nothing(
            index_elements=["message_id", "sha256"]
        )
        self.grown_message = (  # the last message recorded, grown since: its text again
            update(MESSAGES)
            .where(MESSAGES.c.id == bindparam("grown_id"))
            .values(
                content=bindparam("grown_content", type_=MESSAGES.c.content.type),
                text=bindparam("grown_text", type_=MESSAGES.c.text.type),
            )
        )
        self.recorded_runs = self._recorded_runs()
        self.session_totals = self._session_totals()
        self._runs: dict[frozenset[str], Executable] = {}

    def run(self, columns: Iterable[str]) -> Executable:
        """The run's upsert for a row of these columns: a run recorded again (a turn resumed
        after a crash) takes its newer values, but keeps its id, session and start."""
        key = frozenset(columns)
        statement = self._runs.get(key)
        if statement is None:
            insert = insert_of(self._dialect, RUNS)
            changes = {name: insert.excluded[name] for name in sorted(key - KEPT_ON_UPDATE)}
            statement = insert.on_conflict_do_update(index_elements=["id"], set_=changes)
            self._runs[key] = statement
        return statement

    @staticmethod
    def _recorded_runs() -> Executable:
        """What the runs about to be written counted when recorded before, if they were (a
        turn resumed after a crash): their ids and `TOTALS` (parameter `ids`, a list)."""
        runs = RUNS.c
        recorded: Any = bindparam("ids", expanding=True)
        return select(runs.id, *(runs[name] for name in TOTALS)).where(runs.id.in_(recorded))

    @staticmethod
    def _session_totals() -> Executable:
        """The session's row brought up to date by adding what the record added, so that a
        record costs the same in a session's thousandth turn as in its first: parameters
        `session`, `new_model`, `now`, `runs_added`, `messages_added` and each of `TOTALS`
        prefixed with `added_` (`added_cost_usd` None when no run had a price)."""
        columns = SESSIONS.c
        added = {name: bindparam(f"added_{name}", type_=columns[name].type) for name in TOTALS}
        cost, more = columns.cost_usd, added["cost_usd"]
        return (
            update(SESSIONS)
            .where(columns.key == bindparam("session"))
            .values(
                model=bindparam("new_model", type_=columns.model.type),
                run_count=columns.run_count + bindparam("runs_added", type_=Integer()),
                message_count=columns.message_count + bindparam("messages_added", type_=Integer()),
                updated_at=bindparam("now", type_=columns.updated_at.type),
                # no price known so far stays unknown, as SQL's SUM of NULLs is
                cost_usd=func.coalesce(cost + more, cost, more),
                **{name: columns[name] + added[name] for name in TOKEN_COUNTS},
            )
        )


@dataclass(frozen=True)
class Added:
    """What one record added to its session: runs and messages new to the database, and the
    runs' usage less what their earlier records of them counted."""

    runs: int
    messages: int
    totals: dict[str, Any]

    @classmethod
    def of(cls, rows: list[dict[str, Any]], earlier: dict[str, Any], messages: int) -> Added:
        """From the run rows written and `earlier`, the rows `recorded_runs` found by id."""
        totals: dict[str, Any] = dict.fromkeys(TOKEN_COUNTS, 0)
        cost: float | None = None
        for row in rows:
            before = earlier.get(row["id"])
            for name in TOKEN_COUNTS:
                totals[name] += row[name] - (getattr(before, name) if before else 0)
            if row["cost_usd"] is not None:
                was = before.cost_usd if before is not None else None
                cost = (cost or 0.0) + row["cost_usd"] - (was or 0.0)
        new = sum(1 for row in rows if row["id"] not in earlier)
        return cls(new, messages, totals | {"cost_usd": cost})

    def parameters(self, session: str, model: str, now: datetime) -> dict[str, Any]:
        """`session_totals`' parameters."""
        return {
            "session": session,
            "new_model": model,
            "now": now,
            "runs_added": self.runs,
            "messages_added": self.messages,
            **{f"added_{name}": value for name, value in self.totals.items()},
        }
