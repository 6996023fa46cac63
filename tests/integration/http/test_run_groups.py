"""The runs grouped by model, mode, prompt and tool set (`GET /api/metrics/groups`), and the
runs list, series and groups restricted to chosen runs (`runs=`), through the real web app on
SQLite and on PostgreSQL; every bad query a 400 that names its parameter."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from bot.config.settings import Settings
from bot.store.database import open_database
from tests.support.runs import Seed, ran_with, record
from tests.support.stack import Stack

NOON = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
AT = NOON.timestamp()
WINDOW = {"start": "2026-11-24T12:00:00Z", "end": "2026-11-24T14:00:00Z"}
PLAIN = ran_with("claude-test", "react", ("calculator",))
PLANNED = ran_with("gpt-5", "plan_execute", ("calculator", "web_search"), "Answer briefly.")
SEEDS = (
    Seed("tg:1", "telegram", "Tea", "a", started_at=AT + 60, latency_s=0.5, config=PLAIN),
    Seed("tg:1", "telegram", "Tea", "b", started_at=AT + 120, latency_s=1.5, finish="error",
         error="provider failed", config=PLAIN),
    Seed("tg:2", "telegram", "Plans", "c", started_at=AT + 600, latency_s=3, model="gpt-5",
         config=PLANNED),
    Seed("tg:2", "telegram", "Plans", "d", started_at=AT + 4000, latency_s=5, model="gpt-5",
         retries=1, config=PLANNED),
    Seed("tg:3", "telegram", "Old", "e", started_at=AT + 5000, latency_s=2),  # no config kept
)  # fmt: skip


async def seeded(database_url: str) -> list[str]:
    database = await open_database(Settings(_env_file=None, database_url=database_url))
    try:
        return await record(database.history, *SEEDS)
    finally:
        await database.aclose()


async def get(client: httpx.AsyncClient, path: str, **params: str) -> dict[str, Any]:
    response = await client.get(path, params=params)
    assert response.status_code == 200, response.text
    return dict(response.json())


def figures(answer: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (g["key"], g["runs"], g["ended"], g["succeeded"], g["tokens"]["input"])
        for g in answer["groups"]
    ]


@pytest.mark.parametrize("database_url", ["sqlite", "postgresql"], indirect=True)
async def test_runs_are_grouped_by_what_they_ran_on_and_with(
    stack: Stack, database_url: str
) -> None:
    await seeded(database_url)
    async with stack.client() as client:
        by_model = await get(client, "/api/metrics/groups", **WINDOW)
        by_mode = await get(client, "/api/metrics/groups", **WINDOW, by="mode")
        by_prompt = await get(client, "/api/metrics/groups", **WINDOW, by="prompt")
        by_tools = await get(client, "/api/metrics/groups", **WINDOW, by="tools", limit="1")
        failed = await get(client, "/api/metrics/groups", **WINDOW, by="tools", outcome="failed")
        planned = await get(client, "/api/metrics/groups", **WINDOW, mode="plan_execute")
    assert (by_model["by"], by_model["total"], by_model["limit"]) == ("model", 2, 50)
    assert figures(by_model) == [("claude-test", 3, 3, 2, 300), ("gpt-5", 2, 2, 2, 200)]
    claude, gpt = by_model["groups"]
    assert claude["success_rate"] == pytest.approx(2 / 3)
    assert claude["average_latency_ms"] == pytest.approx((500 + 1500 + 2000) / 3)
    assert claude["cost_usd"] is None  # no price for it
    assert gpt["cost_usd"] == pytest.approx(2 * (100 * 1.25 + 20 * 10.0) / 1e6)
    assert gpt["average_reliability"] == pytest.approx((100 + 95) / 2)  # one retry
    assert gpt["tokens"] == {"input": 200, "output": 40}
    assert figures(by_mode) == [
        ("plan_execute", 2, 2, 2, 200),
        ("react", 2, 2, 1, 200),
        (None, 1, 1, 1, 100),
    ]
    hashes = sorted([PLANNED.prompt.hash, PLAIN.prompt.hash])
    assert [g["key"] for g in by_prompt["groups"]] == [*hashes, None]  # the unrecorded last
    assert (by_tools["total"], len(by_tools["groups"])) == (3, 1)
    assert by_tools["groups"][0]["key"] in (PLAIN.tools_hash, PLANNED.tools_hash)
    assert figures(failed) == [(PLAIN.tools_hash, 1, 1, 0, 100)]
    assert figures(planned) == [("gpt-5", 2, 2, 2, 200)]
    window = ("2026-11-24T12:00:00+00:00", "2026-11-24T14:00:00+00:00")
    assert (by_model["start"], by_model["end"]) == window


@pytest.mark.parametrize("database_url", ["sqlite", "postgresql"], indirect=True)
async def test_the_runs_series_and_groups_restricted_to_chosen_runs(
    stack: Stack, database_url: str
) -> None:
    a, b, c, d, e = await seeded(database_url)
    chosen = ",".join((d, b, b, "0" * 32))  # one twice, one not recorded
    async with stack.client() as client:
        listed = await get(client, "/api/metrics/runs", runs=chosen)
        series = await get(client, "/api/metrics/series", runs=chosen)
        groups = await get(client, "/api/metrics/groups", runs=chosen, by="prompt")
        windowed = await get(client, "/api/metrics/runs", runs=chosen, **WINDOW)
        narrowed = await get(client, "/api/metrics/runs", runs=f"{a},{b},{c}", outcome="ok")
        last_day = await get(client, "/api/metrics/runs", runs=a, end="2026-11-30T00:00:00Z")
        unknown = await get(client, "/api/metrics/runs", runs="0" * 32)
        drawn, old = [await get(client, f"/api/traces/{run}/graph") for run in (d, e)]
    assert [r["id"] for r in listed["items"]] == [d, b]
    assert (listed["total"], listed["succeeded"]) == (2, 1)
    # no window given: the one from the first chosen run's second to just after the last's
    window = ("2026-11-24T12:02:00+00:00", "2026-11-24T13:06:41+00:00")
    assert (listed["start"], listed["end"]) == window
    assert (series["start"], series["end"]) == (listed["start"], listed["end"])
    assert sum(s["runs"] for s in series["buckets"]) == 2
    assert series["tools"] == [] and len(series["errors"]) == 1
    assert figures(groups) == sorted(
        [(PLANNED.prompt.hash, 1, 1, 1, 100), (PLAIN.prompt.hash, 1, 1, 0, 100)]
    )  # one run each: by hash
    assert [r["id"] for r in windowed["items"]] == [d, b]
    assert [r["id"] for r in narrowed["items"]] == [c, a]
    assert last_day["total"] == 0  # a window given is kept: the last day before its end
    assert unknown["total"] == 0 and unknown["end"] != listed["end"]
    assert e not in {r["id"] for r in listed["items"]}
    assert drawn["config"] == PLANNED.model_dump(mode="json") and old["config"] is None


ID = "a" * 32
BAD = [
    ("/api/metrics/groups", {"by": "colour"}, "by must be one of model, mode, prompt, tools"),
    ("/api/metrics/groups", {"by": ""}, "by must be one of"),
    ("/api/metrics/groups", {"limit": "0"}, "limit must be a whole number"),
    ("/api/metrics/groups", {"limit": "201"}, "limit must be a whole number"),
    ("/api/metrics/groups", {"bucket": "1h"}, "unknown query parameter 'bucket'"),
    ("/api/metrics/groups", {"offset": "1"}, "unknown query parameter 'offset'"),
    ("/api/metrics/groups", {"mode": "fast"}, "mode must be one of react, plan_execute"),
    ("/api/metrics/groups", {"prompt": "ABC"}, "prompt must be a hash of 12"),
    ("/api/metrics/groups", {"start": "soon"}, "start must be an ISO 8601 time"),
    ("/api/metrics/runs", {"runs": ""}, "runs must be 1 to 200 run ids"),
    ("/api/metrics/runs", {"runs": "abc"}, "runs must be 1 to 200 run ids"),
    ("/api/metrics/runs", {"runs": ID.upper()}, "runs must be 1 to 200 run ids"),
    ("/api/metrics/runs", {"runs": f"{ID},"}, "runs must be 1 to 200 run ids"),
    ("/api/metrics/runs", {"runs": f"{ID}, {ID}"}, "runs must be 1 to 200 run ids"),
    ("/api/metrics/series", {"runs": ",".join([ID] * 201)}, "runs must be 1 to 200 run ids"),
    ("/api/metrics/groups", {"runs": "x" * 32}, "runs must be 1 to 200 run ids"),
    ("/api/metrics/facets", {"runs": ID}, "unknown query parameter 'runs'"),
]


async def test_every_bad_query_of_groups_and_chosen_runs_is_a_400(stack: Stack) -> None:
    async with stack.client() as client:
        answers = [await client.get(path, params=params) for path, params, _ in BAD]
        twice = await client.get("/api/metrics/groups?by=model&by=mode")
        runs_twice = await client.get(f"/api/metrics/runs?runs={ID}&runs={ID}")
        most = await client.get("/api/metrics/groups", params={"runs": ",".join([ID] * 200)})
    for (path, params, words), answer in zip(BAD, answers, strict=True):
        assert answer.status_code == 400, (path, params, answer.text)
        assert words in answer.json()["error"], (path, params, answer.json())
    assert twice.status_code == 400 and twice.json()["error"] == "by is given more than once"
    assert runs_twice.status_code == 400 and "runs is given more than once" in runs_twice.text
    assert most.status_code == 200 and most.json()["total"] == 0
