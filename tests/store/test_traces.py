"""Runs read back for operators, on SQLite and on PostgreSQL: a window narrowed by outcome,
platform, model, trigger and title with aggregates that agree with it, the values to filter
by, and the charts' series added up by the database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.store.database import Database
from bot.store.series import LATENCY_BINS_MS, RunSeries
from bot.store.traces import RUNS, Match, Traces
from bot.trace.metrics import TIMED
from tests.support.runs import Seed, record

# A fixed hour, so the slices of the series fall where the test says.
NOON = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
AT = NOON.timestamp()
SEEDS = (
    Seed("tg:1", "telegram", "Tea recipes", "a", started_at=AT + 60, latency_s=0.2,
         tools=("calculator", "web_search", "calculator")),
    Seed("tg:1", "telegram", "Tea recipes", "b", started_at=AT + 120, latency_s=1.5,
         finish="error", error="Anthropic API error 400: bad request"),
    Seed("slack:T:C:1", "slack", "Deploy_plan 100%", "c", started_at=AT + 3600 + 10,
         latency_s=3, model="gpt-test", trigger="scheduled", tools=("calculator",), retries=2),
    Seed("http:x", "http", "Weather", "d", started_at=AT + 3600 + 20, latency_s=40,
         finish="max_iterations"),
    Seed("http:y", "http", "Old one", "e", started_at=AT - 7200),  # outside the window
)  # fmt: skip
START, END = NOON, NOON + timedelta(hours=2)


@pytest.fixture
async def seeded(db: Database) -> list[str]:
    return await record(db.history, *SEEDS)


async def test_a_window_is_narrowed_and_its_aggregates_follow(
    db: Database, seeded: list[str]
) -> None:
    traces = Traces(db.engine)

    async def ids(**match: Any) -> list[str]:
        window = await traces.window(START, END, 0, 50, Match(**match))
        return [run["id"] for run in window.runs]

    a, b, c, d, _ = seeded
    assert await ids() == [d, c, b, a]
    assert await ids(status="failed") == [b]
    assert await ids(status="completed") == [c, a]
    assert await ids(status="step_limit") == [d]  # out of steps is no success
    assert await ids(platform="telegram") == [b, a]
    assert await ids(model="gpt-test") == [c]
    assert await ids(trigger="scheduled") == [c]
    assert await ids(text="TEA") == [b, a]  # any case
    assert await ids(text="tg:1") == [b, a]  # the session's key too
    assert await ids(text="_plan 100%") == [c]  # LIKE's wildcards are plain characters
    assert await ids(text="%") == [c]
    assert await ids(text="deploy%plan") == []
    assert await ids(platform="telegram", status="completed") == [a]

    failed = await traces.window(START, END, 0, 50, Match(status="failed"))
    assert (failed.total, failed.success_rate, failed.average_latency_ms) == (1, 0.0, 1500)
    telegram = await traces.window(START, END, 0, 1, Match(platform="telegram"))
    assert telegram.total == 2 and telegram.success_rate == 0.5 and len(telegram.runs) == 1
    shown = telegram.runs[0]
    assert (shown["title"], shown["platform"], shown["session"]) == (
        "Tea recipes",
        "telegram",
        "tg:1",
    )


async def test_the_values_to_filter_by_are_those_of_the_window(
    db: Database, seeded: list[str]
) -> None:
    facets = await Traces(db.engine).facets(START, END)
    assert facets.platforms == ["http", "slack", "telegram"]
    assert facets.models == ["claude-test", "gpt-test"]
    assert facets.triggers == ["message", "scheduled"]
    assert facets.statuses == ["completed", "failed", "step_limit"]


async def test_the_series_is_sliced_and_summed_by_the_database(
    db: Database, seeded: list[str]
) -> None:
    series = await RunSeries(db.engine).series(START, END, 3600)
    assert [s.start for s in series.slices] == [NOON, NOON + timedelta(hours=1)]
    first, second = series.slices
    assert (first.runs, first.succeeded, first.success_rate) == (2, 1, 0.5)
    assert first.average_latency_ms == pytest.approx((200 + 1500) / 2)
    assert (second.runs, second.succeeded, second.success_rate) == (2, 1, 0.5)
    assert second.average_reliability is not None and second.average_reliability < 100
    assert len(series.latency) == len(LATENCY_BINS_MS) + 1
    assert series.latency[0] == 1  # 200 ms
    assert series.latency[LATENCY_BINS_MS.index(2_000)] == 1  # 1.5 s
    assert series.latency[LATENCY_BINS_MS.index(5_000)] == 1  # 3 s
    assert series.latency[LATENCY_BINS_MS.index(60_000)] == 1  # 40 s
    assert sum(series.latency) == 4
    assert series.tools == [("calculator", 3), ("web_search", 1)]
    assert series.errors == [
        ("error", "Anthropic API error 400: bad request", 1),
        ("max_iterations", None, 1),
    ]


async def test_a_series_follows_the_filters_and_slices_an_empty_window(
    db: Database, seeded: list[str]
) -> None:
    runs = RunSeries(db.engine)
    slack = await runs.series(START, END, 1800, Match(platform="slack"))
    assert [s.runs for s in slack.slices] == [0, 0, 1, 0]
    assert slack.tools == [("calculator", 1)] and slack.errors == []
    later = NOON + timedelta(days=3)
    empty = await runs.series(later + timedelta(minutes=5), later + timedelta(hours=1), 3600)
    assert [(s.start, s.runs, s.success_rate) for s in empty.slices] == [(later, 0, None)]
    assert sum(empty.latency) == 0 and empty.tools == [] and empty.errors == []


async def test_only_a_run_that_answered_is_a_success_and_only_ended_runs_are_counted(
    db: Database,
) -> None:
    """A loop, a timeout, a stop, a step cap and a message given up on all ended without an
    answer; a run waiting for a decision has not ended, and one with nothing to do did nothing."""
    finishes = ("end_turn", "doom_loop", "timed_out", "cancelled", "max_iterations", "poisoned",
                "awaiting_confirmation", "nothing_pending", "max_tokens")  # fmt: skip
    seeds = [
        Seed(f"http:{n}", envelope=f"m{n}", finish=finish, started_at=AT + n)
        for n, finish in enumerate(finishes)
    ]
    ids = dict(zip(finishes, await record(db.history, *seeds), strict=True))
    window = await Traces(db.engine).window(START, END, 0, 50)
    status = {run["finish_reason"]: run["status"] for run in window.runs}
    assert status == {
        "end_turn": "completed", "doom_loop": "looped", "timed_out": "timed_out",
        "cancelled": "stopped", "max_iterations": "step_limit", "poisoned": "given_up",
        "awaiting_confirmation": "waiting", "nothing_pending": "skipped",
        "max_tokens": "completed",
    }  # fmt: skip
    assert (window.total, window.ended, window.succeeded) == (9, 7, 2)
    assert window.success_rate == pytest.approx(2 / 7)
    series = await RunSeries(db.engine).series(START, START + timedelta(hours=1), 3600)
    (slice_,) = series.slices
    assert (slice_.runs, slice_.ended, slice_.succeeded) == (9, 7, 2)
    # the chart of runs that did not answer: neither the answer cut at max_tokens, nor the
    # run waiting for a decision, nor the one with nothing to do
    assert sorted(reason for reason, _, _ in series.errors) == [
        "cancelled", "doom_loop", "max_iterations", "poisoned", "timed_out",
    ]  # fmt: skip
    score = {run["finish_reason"]: run["reliability"] for run in window.runs}
    assert score["end_turn"] == score["awaiting_confirmation"] == 100
    for unanswered in ("doom_loop", "timed_out", "cancelled", "max_iterations", "poisoned"):
        assert score[unanswered] == 50, unanswered  # every step went well; the run did not
    found = await Traces(db.engine).of_run(ids["doom_loop"])
    assert found is not None and found.trace is not None
    assert found.trace["metrics"]["reliability"] == 50


async def test_a_window_averages_its_iterations_and_where_its_time_went(db: Database) -> None:
    """Averaged by the database over the runs that counted their time (`other` is the rest of
    each one's latency); a run recorded before it was counted is left out of them."""
    spent = ({"calling": 300, "streaming": 500, "tools": 100}, {"calling": 700, "person": 9000})
    seeds = (
        Seed(envelope="a", started_at=AT + 10, latency_s=1.0, iterations=1, states=spent[0]),
        Seed(envelope="b", started_at=AT + 20, latency_s=2.0, iterations=5, states=spent[1]),
        Seed(envelope="c", started_at=AT + 30, latency_s=4.0, iterations=3),
    )
    _, b, c = await record(db.history, *seeds)
    async with db.engine.begin() as conn:  # as a run recorded before the time was counted
        await conn.execute(
            RUNS.update().where(RUNS.c.id == c).values({f"{s}_ms": None for s in TIMED})
        )
    window = await Traces(db.engine).window(START, END, 0, 50)
    assert (window.average_iterations, window.max_iterations) == (3.0, 5)
    assert window.average_states_ms == {
        "calling": 500.0, "streaming": 250.0, "tools": 50.0, "person": 4500.0,
        "other": (100 + 1300) / 2,
    }  # fmt: skip
    only_b = await Traces(db.engine).window(START, END, 0, 50, Match(runs=(b,)))
    assert only_b.average_states_ms["other"] == 1300 and only_b.max_iterations == 5
