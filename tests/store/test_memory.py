"""Memories on SQLite and PostgreSQL: kept per scope, searched by the database's full-text
index whatever the query holds, capped, deduplicated, and forgotten by number or words."""

from __future__ import annotations

import asyncio

import pytest

from bot.store.database import Database
from bot.store.engine import make_engine
from bot.store.memory import MAX_FORGET, Memories, Memory, MemoryRefused

ANN, BOB, GROUP = "tg:1", "tg:2", "chat:tg:-100"


@pytest.fixture
def memories(db: Database) -> Memories:
    return Memories(db.engine)


def texts(found: list[Memory]) -> list[str]:
    return [memory.text for memory in found]


async def test_search_ranks_matches_and_never_mixes_scopes(memories: Memories) -> None:
    await memories.add(ANN, "I like green tea")
    await memories.add(ANN, "My sister is called Eve")
    await memories.add(ANN, "Green is my favourite colour, and tea my favourite drink: green tea")
    await memories.add(BOB, "I like green tea too")
    await memories.add(GROUP, "The team drinks green tea on Fridays")
    found = await memories.search(ANN, "what tea do I like?", limit=5)
    assert set(texts(found)) == {
        "I like green tea",
        "Green is my favourite colour, and tea my favourite drink: green tea",
    }
    assert texts(found)[0] == "I like green tea"  # more of the query's words
    assert texts(await memories.search(BOB, "tea")) == ["I like green tea too"]
    assert texts(await memories.search(GROUP, "tea")) == ["The team drinks green tea on Fridays"]
    assert texts(await memories.search(ANN, "si")) == []  # prefixes of three letters or more
    assert texts(await memories.search(ANN, "sis")) == ["My sister is called Eve"]


@pytest.mark.parametrize(
    "query",
    [
        'tea"',
        '"green',
        "tea OR",
        "OR",
        "NOT tea",
        "green AND",
        "te*",
        "*",
        "tea -green",
        "(tea",
        "tea)",
        "green:tea",
        "'tea'",
        "tea & | ! <-> :*",
        "NEAR(tea green)",
        "^tea",
        "{text}: tea",
        "\\",
        "",
        "   ",
        "?!.,",
        "tea\x00green",
    ],
)
async def test_any_query_text_is_words_never_syntax(memories: Memories, query: str) -> None:
    await memories.add(ANN, "I like green tea")
    found = await memories.search(ANN, query)
    assert texts(found) in ([], ["I like green tea"])
    if "tea" in query.lower():
        assert texts(found) == ["I like green tea"]


async def test_repeats_are_kept_once_and_the_cap_refuses_more(db: Database) -> None:
    memories = Memories(db.engine, max_per_scope=3)
    first, new = await memories.add(ANN, "I like green tea")
    again, new_again = await memories.add(ANN, "  I like   green tea ")
    assert new and not new_again and again.id == first.id
    await memories.add(ANN, "second")
    await memories.add(ANN, "third")
    with pytest.raises(MemoryRefused, match=r"^Memory is full \(3 memories here\); forget"):
        await memories.add(ANN, "fourth")
    assert (await memories.add(ANN, "third"))[1] is False  # a repeat is no new memory
    await memories.add(BOB, "Bob's own")  # the cap is per scope
    assert texts(await memories.all(ANN)) == ["I like green tea", "second", "third"]
    assert texts(await memories.recent(ANN, 2)) == ["third", "second"]


async def test_bad_facts_are_refused_in_a_sentence(memories: Memories) -> None:
    with pytest.raises(MemoryRefused, match="nothing to remember"):
        await memories.add(ANN, " \n ")
    with pytest.raises(MemoryRefused, match="at most 500 characters"):
        await memories.add(ANN, "x" * 501)
    assert (await memories.add(ANN, "x" * 500))[1]


async def test_forget_by_number_or_by_all_its_words_within_the_scope(
    memories: Memories,
) -> None:
    tea, _ = await memories.add(ANN, "I like green tea")
    await memories.add(ANN, "I like black coffee")
    bobs, _ = await memories.add(BOB, "I like green tea")
    assert await memories.forget(ANN, bobs.id) == []  # another scope's number
    assert texts(await memories.forget(ANN, "green coffee")) == []  # all the words must match
    assert texts(await memories.forget(ANN, "GREEN tea!")) == ["I like green tea"]
    assert texts(await memories.all(ANN)) == ["I like black coffee"]
    assert texts(await memories.all(BOB)) == ["I like green tea"]
    assert await memories.forget(ANN, tea.id) == []  # gone already
    assert texts(await memories.search(ANN, "tea")) == []  # and gone from the index
    with pytest.raises(MemoryRefused, match="its number, or its words"):
        await memories.forget(ANN, '" * - ()')
    assert await memories.forget_all(BOB) == 1
    assert await memories.all(BOB) == []


async def test_count_and_recent_see_only_their_scope(memories: Memories) -> None:
    assert await memories.count(ANN) == 0
    first, _ = await memories.add(ANN, "Ann takes her coffee black")
    second, _ = await memories.add(ANN, "Ann's sister is Eve")
    await memories.add(BOB, "Bob cycles to work")
    await memories.add(GROUP, "The team deploys on Thursdays")
    assert await memories.count(ANN) == 2 and await memories.count(GROUP) == 1
    assert [m.id for m in await memories.recent(ANN, 5)] == [second.id, first.id]
    assert await memories.forget(ANN, first.id) == [first]
    assert await memories.count(ANN) == 1 and await memories.count(BOB) == 1


async def test_words_matching_too_many_memories_forget_none(memories: Memories) -> None:
    for n in range(MAX_FORGET + 1):
        await memories.add(ANN, f"note {n} about the garden")
    with pytest.raises(MemoryRefused, match=f"More than {MAX_FORGET} memories match 'garden'"):
        await memories.forget(ANN, "garden")
    assert len(await memories.all(ANN)) == MAX_FORGET + 1
    assert texts(await memories.forget(ANN, "note 3 garden")) == ["note 3 about the garden"]


async def test_words_beyond_ascii_are_found_in_any_case_and_without_accents(
    memories: Memories,
) -> None:
    await memories.add(ANN, "Ann trinkt gern GRÜNTEE aus Österreich")
    await memories.add(ANN, "Анна любит Зелёный чай")
    assert texts(await memories.search(ANN, "grüntee")) == [
        "Ann trinkt gern GRÜNTEE aus Österreich"
    ]
    assert texts(await memories.search(ANN, "OSTERREICH")) == [
        "Ann trinkt gern GRÜNTEE aus Österreich"
    ]
    assert texts(await memories.search(ANN, "ЗЕЛЁНЫЙ")) == ["Анна любит Зелёный чай"]
    assert texts(await memories.forget(ANN, "зелёный ЧАЙ")) == ["Анна любит Зелёный чай"]


async def test_memories_added_at_once_from_several_processes_stop_at_the_cap(
    database_url: str, db: Database
) -> None:
    """Four connection pools (as four workers have) add 60 memories at once to one scope
    capped at 20: exactly 20 are kept, and every other add is told that memory is full."""
    engines = [db.engine, *(make_engine(database_url) for _ in range(3))]
    try:
        stores = [Memories(engine, max_per_scope=20) for engine in engines]
        outcomes = await asyncio.gather(
            *(stores[i % 4].add(ANN, f"fact number {i}") for i in range(60)),
            return_exceptions=True,
        )
    finally:
        for engine in engines[1:]:
            await engine.dispose()
    refused = [o for o in outcomes if isinstance(o, MemoryRefused)]
    assert len(refused) == 40 and all("Memory is full (20" in str(o) for o in refused)
    assert len(await Memories(db.engine).all(ANN)) == 20
