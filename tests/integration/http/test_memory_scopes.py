"""Whose memories there are, and the days' digests, through the HTTP API on the real web app,
on SQLite and PostgreSQL: operators list the scopes holding memories (their memories and
digests counted apart, newest first, paged), see which memory is a digest of which day,
switch a scope's digests off and on, and forget a scope whole, digests, vectors and the
digests' sources with it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import date, datetime

import httpx
import pytest
from sqlalchemy import func, select

from bot.store.database import Database
from bot.store.digests import OFF, Digests
from bot.store.memory import SOURCES, Memories
from bot.store.memory_vectors import MemoryVectors, packed
from tests.support.chat_stores import database_of
from tests.support.stack import Stack

TOKEN = "s3cret-token"
BOTH = pytest.mark.parametrize("database_url", ["sqlite", "postgresql"], indirect=True)
WITH_TOKEN = pytest.mark.parametrize("stack", [{"PARLEY_API_TOKEN": TOKEN}], indirect=True)
ANN, BOB, TEAM, SLACKER = "tg:1", "tg:2", "chat:tg:-100", "slack:T1:U1"
DAY = date(2026, 12, 6)
MODEL = "e5-small"


@dataclass
class Stores:
    database: Database
    memories: Memories
    digests: Digests
    vectors: MemoryVectors


@asynccontextmanager
async def stores(stack: Stack) -> AsyncIterator[Stores]:
    async with database_of(stack) as database:
        engine = database.engine
        yield Stores(database, Memories(engine), Digests(engine), MemoryVectors(engine))


@asynccontextmanager
async def operator(stack: Stack) -> AsyncIterator[httpx.AsyncClient]:
    async with stack.client(headers={"Authorization": f"Bearer {TOKEN}"}) as client:
        yield client


async def seeded(kept: Stores) -> None:
    """Ann: two memories and a digest; the team: a memory, digests off; a Slack person: a
    digest alone; Bob: a memory, written last."""
    await kept.memories.add(ANN, "Ann likes green tea")
    await kept.memories.add(TEAM, "The team deploys on Thursdays")
    await kept.digests.switch(TEAM, on=False, by="tg:9")
    await kept.memories.add(ANN, "Ann's sister is Eve")
    await kept.digests.keep(SLACKER, DAY, f"{DAY}: Sam planned the release.", ["slack:T1:D1"])
    await kept.digests.keep(ANN, DAY, f"{DAY}: Ann asked about tea.", [ANN])
    await kept.memories.add(BOB, "Bob likes coffee")


async def scopes(client: httpx.AsyncClient, **params: str) -> httpx.Response:
    return await client.get("/api/memory/scopes", params=params)


@BOTH
@WITH_TOKEN
async def test_operators_find_whose_memories_there_are(stack: Stack) -> None:
    async with stores(stack) as kept:
        await seeded(kept)
    async with stack.client() as client:
        refused = await scopes(client)
    async with operator(stack) as client:
        listed = (await scopes(client)).json()
        first = (await scopes(client, limit="2")).json()
        second = (await scopes(client, limit="2", offset="2")).json()
        beyond = (await scopes(client, offset="10")).json()
    assert refused.status_code == 401
    assert listed["total"] == 4 and (listed["offset"], listed["limit"]) == (0, 50)
    held = {
        item["scope"]: (item["kind"], item["memories"], item["digests"], item["digests_on"])
        for item in listed["items"]
    }
    assert [item["scope"] for item in listed["items"]] == [BOB, ANN, SLACKER, TEAM]
    assert held == {
        BOB: ("person", 1, 0, True),
        ANN: ("person", 2, 1, True),
        SLACKER: ("person", 0, 1, True),
        TEAM: ("chat", 1, 0, False),
    }
    times = [datetime.fromisoformat(item["newest_at"]) for item in listed["items"]]
    assert times == sorted(times, reverse=True) and times[0].utcoffset() is not None
    assert listed["digests_kept"] is True  # PARLEY_DIGEST_MODEL unset: the default model's
    assert [item["scope"] for item in first["items"]] == [BOB, ANN] and first["total"] == 4
    assert [item["scope"] for item in second["items"]] == [SLACKER, TEAM]
    assert beyond == {**beyond, "total": 4, "items": []}


@pytest.mark.parametrize(
    "params",
    [
        {"limit": "0"},
        {"limit": "201"},
        {"limit": "ten"},
        {"offset": "-1"},
        {"offset": "٣"},
        {"page": "2"},
        {"q": "tea"},
    ],
)
async def test_a_bad_scopes_query_is_refused_in_one_line(
    stack: Stack, params: dict[str, str]
) -> None:
    async with stack.client() as client:
        answer = await scopes(client, **params)
        twice = await client.get("/api/memory/scopes?limit=1&limit=2")
    assert answer.status_code == 400, answer.text
    name = next(iter(params))
    assert name in answer.json()["error"]
    assert twice.status_code == 400 and twice.json()["error"] == "limit is given more than once"


@pytest.mark.parametrize("stack", [{"PARLEY_DIGEST_MODEL": "off"}], indirect=True)
async def test_the_scopes_say_when_this_deployment_writes_no_digests(stack: Stack) -> None:
    async with stack.client() as client:
        listed = (await scopes(client)).json()
    assert listed == {"total": 0, "offset": 0, "limit": 50, "items": [], "digests_kept": False}


@BOTH
async def test_a_digest_says_which_day_it_tells_of(stack: Stack) -> None:
    async with stores(stack) as kept:
        tea, _ = await kept.memories.add(ANN, "Ann likes green tea")
        digest = await kept.digests.keep(ANN, DAY, f"{DAY}: Ann asked about tea.", [ANN])
    assert digest is not None
    async with stack.client() as client:
        listed = (await client.get(f"/api/people/{ANN}/memory")).json()
        forgotten = (await client.delete(f"/api/people/{ANN}/memory/{digest.id}")).json()
    assert [(item["id"], item["day"]) for item in listed["items"]] == [
        (tea.id, None),
        (digest.id, "2026-12-06"),
    ]
    assert forgotten == {**forgotten, "id": digest.id, "day": "2026-12-06"}


@BOTH
@WITH_TOKEN
async def test_operators_switch_a_scopes_digests_off_and_on(stack: Stack) -> None:
    path = f"/api/people/{TEAM}/digests"
    async with stack.client() as client:
        refused = await client.put(path, json={"on": False})
    async with operator(stack) as client, stores(stack) as kept:
        before = (await client.get(path)).json()
        off = await client.put(path, json={"on": False})
        again = await client.put(path, json={"on": False})
        said_off = await kept.digests.off([TEAM, ANN])
        async with kept.database.engine.connect() as db:
            by = (await db.execute(select(OFF.c.by).where(OFF.c.scope == TEAM))).scalar()
        shown_off = (await client.get(path)).json()
        on = await client.put(path, json={"on": True})
        said_on = await kept.digests.off([TEAM])
        shown_on = (await client.get(path)).json()
    assert refused.status_code == 401
    assert before == {"person": TEAM, "on": True}
    assert off.status_code == again.status_code == 200
    assert off.json() == {"person": TEAM, "on": False}
    assert said_off == {TEAM} and by == "http:token"
    assert shown_off == {"person": TEAM, "on": False}
    assert on.status_code == 200 and on.json() == {"person": TEAM, "on": True}
    assert said_on == set() and shown_on == {"person": TEAM, "on": True}


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (b"", 400),
        (b"on", 400),
        (b'{"on": tru', 400),
        (b"{}", 422),
        (b"[]", 422),
        (b"null", 422),
        (b"true", 422),
        (b'{"on": "yes"}', 422),
        (b'{"on": 1}', 422),
        (b'{"on": null}', 422),
        (b'{"on": true, "by": "me"}', 422),
    ],
)
async def test_a_bad_digest_switch_changes_nothing(stack: Stack, body: bytes, status: int) -> None:
    async with stack.client() as client:
        answer = await client.put(
            f"/api/people/{ANN}/digests", content=body, headers={"Content-Type": "application/json"}
        )
        state = (await client.get(f"/api/people/{ANN}/digests")).json()
    assert answer.status_code == status, answer.text
    assert answer.json()["error"]
    assert state == {"person": ANN, "on": True}


async def test_a_digest_switch_names_a_well_formed_scope(stack: Stack) -> None:
    async with stack.client() as client:
        malformed = await client.put("/api/people/TG:1/digests", json={"on": False})
        unknown = await client.put(f"/api/people/{ANN}/digests?by=me", json={"on": False})
        shown = await client.get("/api/people/tg:/digests")
    assert malformed.status_code == shown.status_code == 422
    assert malformed.json()["error"].startswith("a person id is platform:id in ASCII")
    assert unknown.status_code == 400 and "unknown query parameter 'by'" in unknown.text


async def digest_sources(database: Database) -> int:
    async with database.engine.connect() as db:
        return int((await db.execute(select(func.count()).select_from(SOURCES))).scalar_one())


@BOTH
async def test_forgetting_a_scope_takes_its_digests_vectors_and_sources(stack: Stack) -> None:
    async with stores(stack) as kept:
        tea, _ = await kept.memories.add(ANN, "Ann likes green tea")
        digest = await kept.digests.keep(ANN, DAY, f"{DAY}: Ann asked about tea.", [ANN, "tg:5"])
        bobs, _ = await kept.memories.add(BOB, "Bob likes coffee")
        assert digest is not None
        for memory_id in (tea.id, digest.id, bobs.id):
            assert await kept.vectors.put(memory_id, MODEL, [1.0, 0.0])
        assert await digest_sources(kept.database) == 2
        async with stack.client() as client:
            gone = (await client.delete(f"/api/people/{ANN}/memory")).json()
            listed = (await scopes(client)).json()
        assert gone == {"person": ANN, "deleted": 2}
        assert await kept.memories.all(ANN) == []
        assert await kept.vectors.of_scope(ANN, MODEL) == []
        assert await digest_sources(kept.database) == 0
        assert await kept.vectors.of_scope(BOB, MODEL) == [(bobs.id, packed([1.0, 0.0]))]
    assert [item["scope"] for item in listed["items"]] == [BOB]
