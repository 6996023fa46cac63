"""The statements a run's record executes, each built once for the database's dialect.

Every run ends with a record (its session, its run, its messages, the session's totals),
and on a busy worker these few statements run hundreds of times a second. Building a
statement object, and the cache key SQLAlchemy computes from it to find its compiled SQL,
cost more CPU than executing it: an `INSERT … ON CONFLICT DO UPDATE` that names each column's
`excluded` value builds a proxy per column. So each is built once per `History` and executed
with the row as parameters: its cache key is computed once, its SQL compiled once, and on
PostgreSQL the statement prepared once per pooled connection.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import Table, bindparam, func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.sql import Executable

from bot.store.schema import MessageRow, RunRow, SessionRow

SESSIONS: Table = SessionRow.__table__  # type: ignore[assignment]
RUNS: Table = RunRow.__table__  # type: ignore[assignment]
MESSAGES: Table = MessageRow.__table__  # type: ignore[assignment]
TOKEN_COUNTS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
TOTALS = (*TOKEN_COUNTS, "cost_usd")
KEPT_ON_UPDATE = frozenset({"id", "session_key", "started_at"})  # a run's, once written


def insert_of(dialect: str, table: Table) -> Any:
    """`INSERT … ON CONFLICT` in the dialect's words (both speak it, differently)."""
    return (postgresql if dialect == "postgresql" else sqlite).insert(table)


class RecordStatements:
    """The record's statements for one dialect; execute each with its row as parameters."""

    def __init__(self, dialect: str) -> None:
        self._dialect = dialect
        self.session = insert_of(dialect, SESSIONS).on_conflict_do_nothing(index_elements=["key"])
        self.message = insert_of(dialect, MESSAGES).on_conflict_do_nothing(index_elements=["id"])
        grown = insert_of(dialect, MESSAGES)
        self.grown_message = grown.on_conflict_do_update(
            index_elements=["id"],
            set_={"content": grown.excluded.content, "text": grown.excluded.text},
        )
        self.run_totals = self._run_totals()
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
    def _run_totals() -> Executable:
        """The session's run count and sums, from its runs (parameter `session`)."""
        runs = RUNS.c
        return select(
            func.count(),
            *(func.coalesce(func.sum(runs[name]), 0) for name in TOKEN_COUNTS),
            func.sum(runs.cost_usd),
        ).where(runs.session_key == bindparam("session"))

    @staticmethod
    def _session_totals() -> Executable:
        """The session's row brought up to date: parameters `session`, `model`, `now`,
        `run_count` and each of `TOTALS` prefixed with `total_`."""
        messages = select(func.count()).where(MESSAGES.c.session_key == bindparam("session"))
        sums = {name: bindparam(f"total_{name}", type_=SESSIONS.c[name].type) for name in TOTALS}
        return (
            update(SESSIONS)
            .where(SESSIONS.c.key == bindparam("session"))
            .values(
                model=bindparam("new_model", type_=SESSIONS.c.model.type),
                run_count=bindparam("run_count_now", type_=SESSIONS.c.run_count.type),
                message_count=messages.scalar_subquery(),
                updated_at=bindparam("now", type_=SESSIONS.c.updated_at.type),
                **sums,
            )
        )


def totals_parameters(
    session: str, model: str, now: datetime, sums: tuple[Any, ...]
) -> dict[str, Any]:
    """`session_totals`' parameters from `run_totals`' row."""
    count, *totals = sums
    return {
        "session": session,
        "new_model": model,
        "run_count_now": count,
        "now": now,
        **{f"total_{name}": value for name, value in zip(TOTALS, totals, strict=True)},
    }
