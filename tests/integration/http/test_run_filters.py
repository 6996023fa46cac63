"""The runs' list narrowed by filters, the charts' series and the filters' choices through the
real web app, on SQLite and on PostgreSQL; every bad query a 400 that names its parameter;
and the dashboard's page and files served without the token while the API still needs it."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from bot.config.settings import Settings
from bot.store.database import open_database
from tests.support.runs import Seed, record
from tests.support.stack import Stack

NOON = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
AT = NOON.timestamp()
WINDOW = {"start": "2026-11-24T12:00:00Z", "end": "2026-11-24T14:00:00Z"}
SEEDS = (
    Seed("tg:1", "telegram", "Tea recipes", "a", started_at=AT + 60, latency_s=0.2,
         tools=("calculator", "calculator")),
    Seed("tg:1", "telegram", "Tea recipes", "b", started_at=AT + 120, latency_s=1.5,
         finish="error", error="Anthropic API error 400: bad request"),
    Seed("slack:T:C:1", "slack", "Deploy plan", "c", started_at=AT + 3610, latency_s=3,
         model="gpt-test", trigger="scheduled", tools=("web_search",), retries=1),
)  # fmt: skip


async def seeded(database_url: str) -> list[str]:
    database = await open_database(Settings(_env_file=None, database_url=database_url))
    try:
        return await record(database.history, *SEEDS)
    finally:
        await database.aclose()


async def runs(client: httpx.AsyncClient, **params: str) -> dict[str, Any]:
    response = await client.get("/api/metrics/runs", params={**WINDOW, **params})
    assert response.status_code == 200, response.text
    return dict(response.json())


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_runs_of_every_trigger_can_be_listed(stack: Stack, database_url: str) -> None:
    """Every trigger a run is recorded with is one the list takes: API runs, too."""
    seeds = [
        Seed("http:" + "a" * 32, "http", "From the API", f"e{n}", started_at=AT + 60 * n,
             trigger=trigger)
        for n, trigger in enumerate(("api", "message", "decision", "expiry", "resume", "skipped"))
    ]  # fmt: skip
    database = await open_database(Settings(_env_file=None, database_url=database_url))
    try:
        ids = await record(database.history, *seeds)
    finally:
        await database.aclose()
    async with stack.client() as client:
        for run_id, seed in zip(ids, seeds, strict=True):
            listed = await runs(client, trigger=seed.trigger)
            assert [r["id"] for r in listed["items"]] == [run_id], seed.trigger


@pytest.mark.parametrize("database_url", ["sqlite", "postgresql"], indirect=True)
async def test_runs_are_filtered_and_their_aggregates_follow(
    stack: Stack, database_url: str
) -> None:
    a, b, c = await seeded(database_url)
    async with stack.client() as client:
        everything = await runs(client)
        failed = await runs(client, outcome="failed")
        ok = await runs(client, outcome="ok")
        telegram = await runs(client, platform="telegram", limit="1")
        model = await runs(client, model="gpt-test")
        scheduled = await runs(client, trigger="scheduled")
        titled = await runs(client, q="TEA rec")
        nothing = await runs(client, outcome="waiting")
    assert [r["id"] for r in everything["items"]] == [c, b, a]
    assert everything["total"] == 3 and everything["success_rate"] == pytest.approx(2 / 3)
    assert [r["id"] for r in failed["items"]] == [b]
    assert (failed["total"], failed["success_rate"], failed["average_latency_ms"]) == (1, 0, 1500)
    assert [r["id"] for r in ok["items"]] == [c, a] and ok["success_rate"] == 1
    assert telegram["total"] == 2 and [r["id"] for r in telegram["items"]] == [b]
    assert telegram["success_rate"] == 0.5
    assert [r["id"] for r in model["items"]] == [c] == [r["id"] for r in scheduled["items"]]
    assert [r["id"] for r in titled["items"]] == [b, a]
    assert nothing == {**nothing, "total": 0, "items": [], "success_rate": None}
    first = everything["items"][-1]
    assert (first["title"], first["platform"], first["session"]) == (
        "Tea recipes",
        "telegram",
        "tg:1",
    )


@pytest.mark.parametrize("database_url", ["sqlite", "postgresql"], indirect=True)
async def test_the_charts_series_and_the_filters_choices(stack: Stack, database_url: str) -> None:
    a, _, _ = await seeded(database_url)
    async with stack.client() as client:
        series = (await client.get("/api/metrics/series", params={**WINDOW, "bucket": "1h"})).json()
        auto = (await client.get("/api/metrics/series", params=WINDOW)).json()
        slack = await client.get("/api/metrics/series", params={**WINDOW, "platform": "slack"})
        facets = (await client.get("/api/metrics/facets", params=WINDOW)).json()
        graph = (await client.get(f"/api/traces/{a}/graph")).json()
    assert (series["bucket"], series["bucket_s"]) == ("1h", 3600)
    assert [(s["start"], s["runs"], s["succeeded"]) for s in series["buckets"]] == [
        ("2026-11-24T12:00:00+00:00", 2, 1),
        ("2026-11-24T13:00:00+00:00", 1, 1),
    ]
    assert series["buckets"][0]["success_rate"] == 0.5
    assert series["buckets"][0]["average_latency_ms"] == pytest.approx(850)
    assert series["buckets"][1]["average_reliability"] == 95  # one retry
    assert sum(b["runs"] for b in series["latency"]) == 3
    assert series["latency"][0] == {"below_ms": 250, "runs": 1}
    assert series["latency"][-1]["below_ms"] is None
    assert series["tools"] == [
        {"name": "calculator", "calls": 2},
        {"name": "web_search", "calls": 1},
    ]
    assert series["errors"] == [
        {"finish_reason": "error", "error": "Anthropic API error 400: bad request", "runs": 1}
    ]
    assert auto["bucket"] == "5m" and len(auto["buckets"]) == 24  # two hours in at most 60
    assert slack.json()["tools"] == [{"name": "web_search", "calls": 1}]
    assert [s["runs"] for s in slack.json()["buckets"] if s["runs"]] == [1]
    assert facets == {
        **WINDOW | {"start": facets["start"], "end": facets["end"]},
        "platforms": ["slack", "telegram"],
        "models": ["claude-test", "gpt-test"],
        "triggers": ["message", "scheduled"],
        "statuses": ["completed", "failed"],
        "modes": [],
        "prompts": [],
        "tools": [],  # seeded without what they ran with
    }
    assert graph["metrics"]["tool_usage"] == {"calculator": 2}
    assert len(graph["nodes"]) == 4 and graph["run"]["title"] == "Tea recipes"


BAD = [
    ("/api/metrics/runs", {"colour": "red"}, "unknown query parameter 'colour'"),
    ("/api/metrics/runs", {"bucket": "1h"}, "unknown query parameter 'bucket'"),
    ("/api/metrics/runs", {"outcome": "great"}, "outcome must be one of ok, failed"),
    ("/api/metrics/runs", {"outcome": ""}, "outcome must be one of"),
    ("/api/metrics/runs", {"platform": "irc"}, "platform must be one of telegram"),
    ("/api/metrics/runs", {"trigger": "cron"}, "trigger must be one of message"),
    ("/api/metrics/runs", {"model": "x" * 201}, "model must be 1 to 200 characters"),
    ("/api/metrics/runs", {"model": "a\nb"}, "model must be 1 to 200 characters"),
    ("/api/metrics/runs", {"q": ""}, "q must be 1 to 200 characters"),
    ("/api/metrics/runs", {"limit": "500"}, "limit must be a whole number"),
    ("/api/metrics/runs", {"start": "tomorrow"}, "start must be an ISO 8601 time"),
    ("/api/metrics/series", {"bucket": "2h"}, "bucket must be auto or one of"),
    ("/api/metrics/series", {"bucket": "1m", "start": "2026-01-01"}, "more than 1000 slices"),
    ("/api/metrics/series", {"offset": "1"}, "unknown query parameter 'offset'"),
    ("/api/metrics/series", {"end": "2026-11-24", "start": "2026-11-25"}, "start must be before"),
    ("/api/metrics/facets", {"outcome": "ok"}, "unknown query parameter 'outcome'"),
]


async def test_every_bad_query_is_a_400_that_names_its_parameter(stack: Stack) -> None:
    async with stack.client() as client:
        answers = [await client.get(path, params=params) for path, params, _ in BAD]
        twice = await client.get("/api/metrics/runs?outcome=ok&outcome=failed")
    for (path, params, words), answer in zip(BAD, answers, strict=True):
        assert answer.status_code == 400, (path, params, answer.text)
        assert words in answer.json()["error"], (path, params, answer.json())
    assert twice.status_code == 400 and twice.json()["error"] == "outcome is given more than once"


TOKEN = "a-token-for-the-dashboard-test"


async def raw_get(base_url: str, target: str, token: str | None = None) -> tuple[int, bytes]:
    """The status and body of a GET of `target` sent byte for byte as written (a client
    library would tidy `..` away before sending)."""
    host, port = base_url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    writer.write(
        f"GET {target} HTTP/1.1\r\nHost: {host}\r\n{auth}Connection: close\r\n\r\n".encode()
    )
    await writer.drain()
    answer = await reader.read()
    writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


@pytest.mark.parametrize("stack", [{"PARLEY_API_TOKEN": TOKEN}], indirect=True)
async def test_the_dashboard_is_public_and_its_data_is_not(stack: Stack) -> None:
    async with stack.client() as client:
        page = await client.get("/admin")
        script = await client.get("/static/admin.js")
        style = await client.get("/static/admin.css")
        chart = await client.get("/static/vendor/chart.umd.min.js")
        refused = [
            await client.get(path)
            for path in ("/api/metrics/runs", "/api/metrics/series", "/api/metrics/facets")
        ]
        allowed = await client.get(
            "/api/metrics/series", headers={"Authorization": f"Bearer {TOKEN}"}
        )
    climbing = [
        await raw_get(stack.base_url, target)
        for target in (
            "/static/../api/sessions",
            "/static/%2e%2e/api/sessions",
            "/static/..%2fapi/sessions",
            "/admin/../api/metrics/runs",
        )
    ]
    assert page.status_code == 200 and 'id="runs"' in page.text
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert script.status_code == 200 and "javascript" in script.headers["Content-Type"]
    assert style.status_code == 200 and chart.status_code == 200
    assert [r.status_code for r in refused] == [401, 401, 401]
    assert allowed.status_code == 200
    for status, body in climbing:
        assert status in (401, 403, 404), (status, body)
        assert b'"items"' not in body and b"buckets" not in body
