"""A window of many runs, as the dashboard reads it: the charts' numbers equal those worked
out from the runs themselves, on SQLite and PostgreSQL, with and without filters; on SQLite
every query of a window reads indexes only, never the runs' rows (each with its trace); and
the migration that made those indexes fills the tool usage of runs recorded before it."""

from __future__ import annotations

import random
import sqlite3
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, inspect, select

from bot.config.settings import Settings
from bot.store import migrate
from bot.store.database import Database, open_database
from bot.store.engine import make_engine
from bot.store.outcome import NOT_ENDED, UNANSWERED, RunStatus
from bot.store.series import LATENCY_BINS_MS, RunSeries, Series, Slice
from bot.store.traces import RUNS, SESSIONS, Match, Traces
from bot.vocabulary.state import SessionState
from tests.support.runs import Seed, record, record_of

NOON = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
START, END = NOON, NOON + timedelta(hours=6)
TOOLS = ("calculator", "web_search", "web_fetch", "remember")
ENDS = ("end_turn",) * 5 + ("error", "max_iterations", "cancelled", "awaiting_confirmation")
PLATFORMS = (("tg:{}", "telegram"), ("slack:T1:C{}", "slack"), ("http:{}", "http"))
BEFORE_INDEXES = "0009"  # the revision before migration 0010 made them


def seeds(count: int) -> list[Seed]:
    """Runs of several kinds over seven hours around the window (some fall outside it)."""
    rng = random.Random(11)
    made = []
    for n in range(count):
        key, platform = PLATFORMS[n % 3]
        finish = rng.choice(ENDS)
        made.append(
            Seed(
                session=key.format(n % 7), platform=platform, title=f"chat {n % 7}",
                envelope=f"e{n}", model=rng.choice(("claude-test", "gpt-test")),
                finish=finish, error=f"failure {n % 3}" if finish == "error" else None,
                started_at=(START - timedelta(minutes=30)).timestamp() + n * 25_200 / count,
                latency_s=rng.choice((0.1, 0.4, 0.9, 3.0, 12.0, 45.0, 200.0)),
                tools=rng.choices(TOOLS, k=rng.randint(0, 3)),
            )
        )  # fmt: skip
    return made


async def reference(db: Database, bucket_s: int, platform: str | None = None) -> Series:
    """The series worked out in Python from every run's row and trace, one run at a time."""
    query = select(RUNS, SESSIONS.c.platform).join(SESSIONS, RUNS.c.session_key == SESSIONS.c.key)
    async with db.engine.connect() as connection:
        rows = [
            row
            for row in await connection.execute(query)
            if START <= row.started_at < END and platform in (None, row.platform)
        ]
    by_slice: dict[int, list[Any]] = {}
    latency = [0] * (len(LATENCY_BINS_MS) + 1)
    tools: Counter[str] = Counter()
    errors: Counter[tuple[str, str | None]] = Counter()
    for row in rows:
        by_slice.setdefault(int(row.started_at.timestamp()) // bucket_s, []).append(row)
        latency[sum(row.latency_ms >= bound for bound in LATENCY_BINS_MS)] += 1
        tools.update(row.trace["metrics"]["tool_usage"] if row.trace else {})
        if row.status in UNANSWERED:
            errors[(row.finish_reason, row.error)] += 1
    first = int(START.timestamp()) // bucket_s
    slices = [
        slice_of(n * bucket_s, by_slice.get(n, []))
        for n in range(first, -(-int(END.timestamp()) // bucket_s))
    ]
    top = sorted(errors.items(), key=lambda item: (-item[1], item[0][0], item[0][1] or ""))
    return Series(
        bucket_s,
        slices,
        latency,
        sorted(tools.items(), key=lambda item: (-item[1], item[0])),
        [(reason, message, runs) for (reason, message), runs in top],
    )


def slice_of(start: int, rows: list[Any]) -> Slice:
    scores = [row.reliability for row in rows if row.reliability is not None]
    return Slice(
        start=datetime.fromtimestamp(start, UTC),
        runs=len(rows),
        ended=sum(row.status not in NOT_ENDED for row in rows),
        succeeded=sum(row.status == RunStatus.COMPLETED for row in rows),
        average_latency_ms=sum(row.latency_ms for row in rows) / len(rows) if rows else None,
        average_reliability=sum(scores) / len(scores) if scores else None,
    )


def same(found: Series, expected: Series) -> None:
    assert [(s.start, s.runs, s.ended, s.succeeded) for s in found.slices] == [
        (s.start, s.runs, s.ended, s.succeeded) for s in expected.slices
    ]
    for got, want in zip(found.slices, expected.slices, strict=True):
        assert got.average_latency_ms == pytest.approx(want.average_latency_ms)
        assert got.average_reliability == pytest.approx(want.average_reliability)
    assert found.latency == expected.latency
    assert found.tools == expected.tools
    assert sorted(found.errors) == sorted(expected.errors)  # ties may come in any order


async def test_the_series_equals_the_runs_added_up_one_by_one(db: Database) -> None:
    await record(db.history, *seeds(240))
    untraced = record_of(Seed("http:old", envelope="old", started_at=NOON.timestamp()))
    await db.history.record(SessionState(), replace(untraced, trace=None))  # as before traces
    series = RunSeries(db.engine)
    for bucket_s in (900, 3600):
        same(await series.series(START, END, bucket_s), await reference(db, bucket_s))
    slack = await series.series(START, END, 1800, Match(platform="slack"))
    same(slack, await reference(db, 1800, platform="slack"))
    assert sum(s.runs for s in slack.slices) > 0


def plans(path: Path, statements: list[tuple[str, Any]]) -> list[str]:
    """SQLite's plan of each statement: one line per table or index it reads."""
    with sqlite3.connect(path) as connection:
        return [
            detail
            for sql, parameters in statements
            for *_, detail in connection.execute(f"EXPLAIN QUERY PLAN {sql}", parameters)
        ]


async def test_a_window_is_read_from_indexes_alone_on_sqlite(tmp_path: Path) -> None:
    """Every step of the plans that reads `runs` reads one of its covering indexes: the
    series (filtered or not), the window's totals and the filters' values. The page of
    runs shown (25 rows, by the same index) is the one read of rows and is left out."""
    path = tmp_path / "plans.db"
    db = await open_database(Settings(_env_file=None, database_url=f"sqlite+aiosqlite:///{path}"))
    statements: list[tuple[str, Any]] = []

    def seen(_conn: Any, _cursor: Any, sql: str, parameters: Any, *_: Any) -> None:
        if sql.lstrip().startswith("SELECT") and "ORDER BY runs.started_at DESC" not in sql:
            statements.append((sql, parameters))

    try:
        await record(db.history, *seeds(60))
        event.listen(db.engine.sync_engine, "before_cursor_execute", seen)
        await RunSeries(db.engine).series(START, END, 3600)
        await RunSeries(db.engine).series(START, END, 3600, Match(status="failed"))
        await Traces(db.engine).window(START, END, 0, 25)
        await Traces(db.engine).facets(START, END)
    finally:
        await db.aclose()
    read = plans(path, statements)
    of_runs = [line for line in read if f"{line} ".startswith(("SEARCH runs ", "SCAN runs "))]
    assert len(of_runs) == 2 * 3 + 1 + 7, read  # the facets: seven values
    assert all("USING COVERING INDEX" in line for line in of_runs), of_runs


async def test_the_migration_fills_the_tool_usage_of_runs_recorded_before_it(
    database_url: str,
) -> None:
    settings = Settings(_env_file=None, database_url=database_url)
    db = await open_database(settings)
    try:
        await record(db.history, *seeds(30))
        async with db.engine.connect() as connection:
            written = {row.id: row.tool_usage for row in await connection.execute(select(RUNS))}
    finally:
        await db.aclose()
    assert any(written.values())  # the record writes it
    await migrate.downgrade(database_url, BEFORE_INDEXES)
    assert "tool_usage" not in await columns(database_url)
    await migrate.upgrade(database_url)
    db = await open_database(settings)
    try:
        async with db.engine.connect() as connection:
            rows = list(await connection.execute(select(RUNS)))
            indexes = await connection.run_sync(
                lambda c: {index["name"] for index in inspect(c).get_indexes("runs")}
            )
    finally:
        await db.aclose()
    assert {row.id: row.tool_usage for row in rows} == written
    assert all(row.tool_usage == row.trace["metrics"]["tool_usage"] for row in rows)
    assert "ix_runs_window" in indexes and "ix_runs_started" not in indexes


async def columns(database_url: str) -> set[str]:
    """The runs' columns as the database has them (opened without migrating it)."""
    engine = make_engine(database_url)
    try:
        async with engine.connect() as connection:
            found = await connection.run_sync(lambda c: inspect(c).get_columns("runs"))
    finally:
        await engine.dispose()
    return {column["name"] for column in found}
