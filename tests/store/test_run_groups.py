"""The runs of a window grouped by model, mode, prompt and tool set, on SQLite and PostgreSQL:
each group's figures equal those worked out from the runs' rows one by one, with and without
filters; the groups with most runs come first, the runs recorded without a configuration
last, and a limit keeps the count of them all. And the span of chosen runs."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select

from bot.store.database import Database
from bot.store.outcome import NOT_ENDED, RunStatus
from bot.store.run_groups import GROUPINGS, Group, RunGroups
from bot.store.traces import RUNS, Match, Traces
from tests.support.runs import Seed, ran_with, record

NOON = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
START, END = NOON, NOON + timedelta(hours=4)
CONFIGS = (
    ran_with("claude-test", "react", ("calculator",)),
    ran_with("claude-test", "plan_execute", ("calculator", "web_search"), "Answer briefly."),
    None,  # recorded before runs kept what they ran with
)
COLUMNS = {"model": "model", "mode": "mode", "prompt": "prompt_hash", "tools": "tools_hash"}
ENDS = ("end_turn",) * 4 + ("error", "cancelled", "awaiting_confirmation")


def seeds(count: int) -> list[Seed]:
    """Runs over five hours around the window, of three configurations, two models and
    several ends; some fall outside the window."""
    rng = random.Random(5)
    made = []
    for n in range(count):
        finish = rng.choice(ENDS)
        made.append(
            Seed(
                session=f"tg:{n % 5}", platform="telegram", title=f"chat {n % 5}",
                envelope=f"e{n}", model=rng.choice(("claude-test", "gpt-test")), finish=finish,
                error="it failed" if finish == "error" else None,
                started_at=(START - timedelta(minutes=30)).timestamp() + n * 18_000 / count,
                latency_s=rng.choice((0.2, 1.0, 4.0, 30.0)), retries=rng.choice((0, 0, 1)),
                config=CONFIGS[n % 3 if n % 7 else 0],
            )
        )  # fmt: skip
    return made


async def rows_in_window(db: Database) -> list[Any]:
    async with db.engine.connect() as connection:
        return [r for r in await connection.execute(select(RUNS)) if START <= r.started_at < END]


def reference(rows: list[Any], by: str) -> list[Group]:
    """The groups worked out one run at a time, most runs first, the unrecorded last."""
    column = COLUMNS[by]
    keys = {getattr(row, column) for row in rows}
    groups = []
    for key in keys:
        mine = [row for row in rows if getattr(row, column) == key]
        scores = [row.reliability for row in mine if row.reliability is not None]
        costs = [row.cost_usd for row in mine if row.cost_usd is not None]
        groups.append(
            Group(
                key=key,
                runs=len(mine),
                ended=sum(row.status not in NOT_ENDED for row in mine),
                succeeded=sum(row.status == RunStatus.COMPLETED for row in mine),
                average_latency_ms=sum(row.latency_ms for row in mine) / len(mine),
                average_reliability=sum(scores) / len(scores) if scores else None,
                input_tokens=sum(row.input_tokens for row in mine),
                output_tokens=sum(row.output_tokens for row in mine),
                cost_usd=sum(costs) if costs else None,
            )
        )
    return sorted(groups, key=lambda g: (-g.runs, g.key is None, g.key or ""))


def same(found: list[Group], expected: list[Group]) -> None:
    assert [(g.key, g.runs, g.ended, g.succeeded) for g in found] == [
        (g.key, g.runs, g.ended, g.succeeded) for g in expected
    ]
    for got, want in zip(found, expected, strict=True):
        assert (got.input_tokens, got.output_tokens) == (want.input_tokens, want.output_tokens)
        assert got.average_latency_ms == pytest.approx(want.average_latency_ms)
        assert got.average_reliability == pytest.approx(want.average_reliability)
        assert got.cost_usd == pytest.approx(want.cost_usd)


async def test_each_grouping_equals_the_runs_added_up_one_by_one(db: Database) -> None:
    await record(db.history, *seeds(120))
    rows = await rows_in_window(db)
    groups = RunGroups(db.engine)
    assert set(GROUPINGS) == set(COLUMNS)
    for by in GROUPINGS:
        found = await groups.groups(START, END, by)
        expected = reference(rows, by)
        same(found.groups, expected)
        assert (found.by, found.total) == (by, len(expected))
    by_mode = await groups.groups(START, END, "mode")
    assert [g.key for g in by_mode.groups][-1] is None  # the unrecorded runs' group, last
    by_model = {g.key: g for g in (await groups.groups(START, END, "model")).groups}
    assert set(by_model) == {"claude-test", "gpt-test"}
    priced = by_model["claude-test"].cost_usd  # the only model with a price here
    assert priced is not None and priced > 0 and by_model["gpt-test"].cost_usd is None


async def test_groups_follow_the_filters_and_the_limit(db: Database) -> None:
    ids = await record(db.history, *seeds(90))
    rows = await rows_in_window(db)
    groups = RunGroups(db.engine)
    failed = await groups.groups(START, END, "prompt", Match(status="failed"))
    same(failed.groups, reference([r for r in rows if r.status == "failed"], "prompt"))
    assert failed.groups and sum(g.runs for g in failed.groups) < len(rows)

    chosen = tuple(ids[20:40:3])
    picked = await groups.groups(START, END, "tools", Match(runs=chosen))
    same(picked.groups, reference([r for r in rows if r.id in chosen], "tools"))
    assert sum(g.runs for g in picked.groups) == len([r for r in rows if r.id in chosen]) > 0

    everything = await groups.groups(START, END, "tools")
    first = await groups.groups(START, END, "tools", limit=1)
    assert first.total == everything.total == 3
    assert first.groups == everything.groups[:1]
    nothing = await groups.groups(START, END, "model", Match(model="no-such-model"))
    assert (nothing.total, nothing.groups) == (0, [])


async def test_the_span_of_chosen_runs(db: Database) -> None:
    made = seeds(10)
    ids = await record(db.history, *made)
    traces = Traces(db.engine)
    span = await traces.span((ids[7], ids[2], "0" * 32))
    assert span is not None
    first, last = span
    assert first == datetime.fromtimestamp(made[2].started_at, UTC)
    assert last == datetime.fromtimestamp(made[7].started_at, UTC)
    assert await traces.span(("0" * 32,)) is None
    same_run = await traces.span((ids[4],))
    assert same_run is not None and same_run[0] == same_run[1]
