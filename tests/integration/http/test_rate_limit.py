"""The HTTP API's rate limit, through the real web app and Redis: a caller past its burst
gets a 429 with Retry-After and is let in again once its bucket refills; the pages and the
health check are never counted."""

from __future__ import annotations

import asyncio

import pytest

from adapters.http.rate_limit import CLIENTS, Buckets
from tests.support.stack import Stack


@pytest.mark.parametrize(
    "stack", [{"PARLEY_API_RATE": "2", "PARLEY_API_BURST": "3"}], indirect=True
)
async def test_a_caller_past_its_burst_waits_and_the_pages_never_do(stack: Stack) -> None:
    async with stack.client() as client:
        answers = [await client.get("/api/stats") for _ in range(4)]
        pages = [await client.get(path) for path in ("/healthz", "/", "/admin") * 3]
        await asyncio.sleep(1.1)  # two tokens back
        again = await client.get("/api/stats")
    assert [answer.status_code for answer in answers] == [200, 200, 200, 429]
    refused = answers[-1]
    assert refused.json()["error"].startswith("too many requests: at most 2 a second")
    assert int(refused.headers["Retry-After"]) >= 1
    assert {page.status_code for page in pages} == {200}
    assert again.status_code == 200


def test_a_bucket_refills_at_its_rate_and_keeps_a_bounded_number_of_clients() -> None:
    now = [0.0]
    buckets = Buckets(rate=2, burst=3, clock=lambda: now[0])
    assert [buckets.take("a") for _ in range(3)] == [0, 0, 0]
    assert buckets.take("a") == pytest.approx(0.5)
    assert buckets.take("b") == 0  # another caller has a bucket of its own
    now[0] = 0.5
    assert buckets.take("a") == 0 and buckets.take("a") == pytest.approx(0.5)
    for n in range(CLIENTS + 5):
        buckets.take(f"scan-{n}")
    assert len(buckets._kept) == CLIENTS and "a" not in buckets._kept
