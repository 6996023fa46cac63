"""Pairing on a real Redis and real databases: codes given to strangers, approved once by an
admin, refused when wrong, expired or replayed, and the guesses limited."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest
from redis.asyncio import Redis

from bot.people import pairing as p
from bot.people.pairing import Pairing, PrivateChat, read_code, read_person
from bot.store.database import Database
from bot.store.engine import make_engine
from bot.store.pairings import PairedPeople
from bot.vocabulary.envelope import Envelope
from tests.support.waiting import until

TG = PrivateChat("tg:bot7", "telegram", "tg:5", {"chat_id": 5, "chat_type": "private"})


def chat(person: int, account: str = "tg:bot7") -> PrivateChat:
    return PrivateChat(account, "telegram", f"tg:{person}", {"chat_id": person})


@pytest.fixture
def told() -> list[Envelope]:
    return []


@pytest.fixture
async def pairing(db: Database, redis_client: Redis, told: list[Envelope]) -> Pairing:
    async def submit(envelope: Envelope) -> None:
        told.append(envelope)

    return Pairing.of(redis_client, db.engine, submit, lifetime=3600)


def code_in(text: str | None) -> str:
    assert text is not None and text.startswith("I only talk with people an admin let in"), text
    code = text.split("/pair ")[1].split(".")[0]
    assert read_code(code) == code
    return code


def test_codes_are_random_of_an_unambiguous_alphabet_and_read_strictly() -> None:
    codes = {p.new_code() for _ in range(200)}
    assert len(codes) == 200
    assert all(len(c) == 8 and set(c) <= set(p.ALPHABET) for c in codes)
    assert not set("01OI") & set(p.ALPHABET) and len(p.ALPHABET) == 32
    assert read_code(" k7qx-2mpa ") == "K7QX2MPA" == read_code("K7QX 2MPA")
    unicode = ("K7QX2MP٣", "K7QX2MPＡ", "ß" * 4)  # an Arabic-Indic digit, a fullwidth letter
    for bad in ("K7QX2MP", "K7QX2MPAA", "K7QX2MP0", "K7QX2MPI", "", *unicode):
        assert read_code(bad) is None, bad
    assert read_person(" tg:123 ") == "tg:123" and read_person("slack:U01AB") == "slack:U01AB"
    for bad in ("123", "tg:", "tg:1 2", "tg:١٢", "TG:1"):
        assert read_person(bad) is None, bad
    assert p.duration(3600) == "1 hour" == p.duration(3599.2) and p.duration(90) == "2 minutes"
    assert p.duration(5400) == "1 hour 30 minutes" and p.duration(7200) == "2 hours"
    assert p.duration(1) == "1 second"


async def test_a_stranger_gets_one_code_an_admin_approves_once(
    pairing: Pairing, redis_client: Redis, told: list[Envelope]
) -> None:
    code = code_in(await pairing.ask("tg:5", TG))
    assert code_in(await pairing.ask("tg:5", TG)) == code  # asked again: the same code
    assert "1 hour" in (await pairing.ask("tg:5", TG) or "")
    stored = [k.decode() for k in await redis_client.keys("*")]
    strings = [k for k in stored if await redis_client.type(k) == b"string"]
    holding = [k for k in strings if code in (await redis_client.get(k) or b"").decode()]
    assert [k for k in stored if code in k] == []  # kept by its hash
    assert holding == ["parley:{pair}:asked:tg:bot7:tg:5"]  # the stranger's own copy alone
    assert not await pairing.is_paired("tg:5")

    assert await pairing.approve(code.lower(), "tg:9") == p.APPROVED.format(person="tg:5")
    assert await pairing.is_paired("tg:5")
    (paired,) = await pairing.paired.all()
    assert (paired.person, paired.platform, paired.approved_by) == ("tg:5", "telegram", "tg:9")
    (welcome,) = told
    assert (welcome.kind, welcome.text, welcome.session) == ("command", "paired", "tg:5")
    assert welcome.reply_to == TG.reply_to and welcome.sender.id == "tg:5"
    assert welcome.sender.paired and welcome.platform == "telegram"

    replayed = await pairing.approve(code, "tg:9")  # single use
    assert replayed.startswith("No pairing code") and len(told) == 1
    assert await redis_client.keys("parley:{pair}:code:*") == []


async def test_an_account_has_three_codes_waiting_at_most(pairing: Pairing) -> None:
    codes = [code_in(await pairing.ask(f"tg:{n}", chat(n))) for n in (1, 2, 3)]
    assert len(set(codes)) == 3
    assert await pairing.ask("tg:4", chat(4)) == p.FULL
    assert code_in(await pairing.ask("tg:2", chat(2))) == codes[1]  # still theirs
    code_in(await pairing.ask("tg:4", chat(4, account="slack:T1")))  # another account
    await pairing.approve(codes[0], "tg:9")
    code_in(await pairing.ask("tg:4", chat(4)))  # room again
    waiting = await pairing.codes.waiting()
    assert sorted(w.person for w in waiting) == ["tg:2", "tg:3", "tg:4", "tg:4"]
    assert all(time.time() + 3500 < w.expires_at <= time.time() + 3600 for w in waiting)


async def test_a_stranger_asking_again_and_again_is_answered_five_times(pairing: Pairing) -> None:
    answers = [await pairing.ask("tg:5", TG) for _ in range(7)]
    assert all(a is not None for a in answers[:5])
    assert answers[5:] == [None, None]


async def test_wrong_codes_are_refused_then_limited_per_admin_and_overall(
    pairing: Pairing,
) -> None:
    code = code_in(await pairing.ask("tg:5", TG))
    assert await pairing.approve("not a code", "tg:9") == p.NOT_A_CODE.format(
        n=8, example=p.EXAMPLE
    )
    wrong = "ABCDEFGH" if code != "ABCDEFGH" else "HGFEDCBA"
    for _ in range(p.WRONG_PER_ADMIN):
        assert (await pairing.approve(wrong, "tg:9")).startswith("No pairing code ABCDEFGH"[:16])
    limited = await pairing.approve(code, "tg:9")  # even the right one, for now
    assert limited.startswith("Too many wrong codes; try again in 15 minutes"), limited
    assert not await pairing.is_paired("tg:5")
    for n in range(p.WRONG_OVERALL - p.WRONG_PER_ADMIN):  # other admins, up to the total
        await pairing.approve(wrong, f"tg:{100 + n // 4}")
    assert (await pairing.approve(code, "tg:8")).startswith("Too many wrong codes")
    assert (await pairing.approve(code, p.CLI)).startswith("Too many wrong codes")


async def test_a_right_code_costs_no_guess(pairing: Pairing) -> None:
    for n in range(1, 4):
        code = code_in(await pairing.ask(f"tg:{n}", chat(n)))
        assert (await pairing.approve(code, "tg:9")).startswith("Paired")
    for n in range(4, 7):
        code = code_in(await pairing.ask(f"tg:{n}", chat(n)))
        assert (await pairing.approve(code, "tg:9")).startswith("Paired")
    assert len(await pairing.paired.all()) == 6


async def test_a_code_expires_with_its_lifetime(
    db: Database, redis_client: Redis, told: list[Envelope]
) -> None:
    async def submit(envelope: Envelope) -> None:
        told.append(envelope)

    short = Pairing.of(redis_client, db.engine, submit, lifetime=1)
    code = code_in(await short.ask("tg:5", TG))
    assert "1 second" in (await short.ask("tg:5", TG) or "")

    async def expired() -> bool:
        return not await redis_client.keys("parley:{pair}:code:*")

    await until(expired, "the code to expire")
    refused = await short.approve(code, "tg:9")
    assert refused.startswith(f"No pairing code {code} is waiting") and "1 second" in refused
    assert not await short.is_paired("tg:5") and told == []
    assert code_in(await short.ask("tg:5", TG)) != code  # a new one


async def test_unpairing_makes_a_stranger_again(pairing: Pairing) -> None:
    code = code_in(await pairing.ask("tg:5", TG))
    await pairing.approve(code, "tg:9")
    assert await pairing.revoke("tg:7", "tg:9") == p.NOT_PAIRED.format(person="tg:7")
    assert await pairing.revoke("five", "tg:9") == p.NOT_A_PERSON
    assert await pairing.revoke(" tg:5 ", "tg:9") == p.UNPAIRED.format(person="tg:5")
    assert not await pairing.is_paired("tg:5")


async def test_a_database_that_does_not_answer_is_said_and_the_code_is_spent(
    pairing: Pairing, told: list[Envelope]
) -> None:
    code = code_in(await pairing.ask("tg:5", TG))
    away = make_engine("postgresql+asyncpg://parley:parley@127.0.0.1:1/parley")
    try:
        broken = replace(pairing, paired=PairedPeople(away))
        answer = await broken.approve(code, "tg:9")
    finally:
        await away.dispose()
    assert answer == p.NOT_RECORDED.format(person="tg:5") and told == []
    assert (await pairing.approve(code, "tg:9")).startswith("No pairing code")
