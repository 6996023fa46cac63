"""The access gate on a real Redis: strangers are told once, the allowed and admins pass."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from adapters.chat.access import ONCE, REFUSAL_MEMORY, Gate, dm_policy, too_long
from bot.config.settings import Settings
from bot.people.pairing import Pairing, PrivateChat
from bot.redis import keys
from bot.store.database import open_database
from bot.vocabulary.envelope import MAX_TEXT, Envelope

PRIVATE = PrivateChat("tg:bot7", "telegram", "tg:666", {"chat_id": 666})


@pytest.fixture
async def gate(redis_url: str) -> AsyncIterator[Gate]:
    redis = Redis.from_url(redis_url)
    settings = Settings(_env_file=None, allowed_users=["tg:1", "slack:U1"], admins=["tg:9"])
    yield Gate(settings, redis)
    await redis.aclose()


async def test_the_allowed_and_admins_pass_and_leave_nothing_behind(gate: Gate) -> None:
    for person in ("tg:1", "tg:9", "slack:U1"):
        admission = await gate.admit(person, "a chat")
        assert admission.admitted and admission.tell is None
    assert await gate.redis.keys("*refused*") == []
    assert gate.is_admin("tg:9") and not gate.is_admin("tg:1")


async def test_a_stranger_is_told_once_with_their_id_and_remembered_for_30_days(
    gate: Gate,
) -> None:
    first = await gate.admit("tg:666", "chat 5")
    again = await gate.admit("tg:666", "chat 6")
    assert not first.admitted and first.tell is not None
    assert "tg:666" in first.tell and first.tell.endswith(ONCE)
    assert not again.admitted and again.tell is None
    ttl = await gate.redis.ttl("parley:tg:refused:666")
    assert REFUSAL_MEMORY - 60 < ttl <= REFUSAL_MEMORY == 30 * 86_400


async def test_slack_refusals_are_remembered_per_workspace(gate: Gate) -> None:
    assert (await gate.admit("slack:U2", "C1", scope="T1")).tell is not None
    assert (await gate.admit("slack:U2", "C1", scope="T1")).tell is None
    assert (await gate.admit("slack:U2", "C1", scope="T2")).tell is not None
    assert await gate.redis.exists("parley:slack:refused:T1:U2", "parley:slack:refused:T2:U2") == 2


def test_refusals_keep_the_keys_each_platform_always_used() -> None:
    assert keys.refused("tg:42") == "parley:tg:refused:42"
    assert keys.refused("slack:U7", "T3") == "parley:slack:refused:T3:U7"


def test_too_long_answers_only_past_the_limit() -> None:
    assert too_long("x" * MAX_TEXT) is None
    answer = too_long("x" * (MAX_TEXT + 1))
    assert answer is not None and f"{MAX_TEXT + 1} characters" in answer


def gate_of(redis: Redis, **settings: object) -> Gate:
    return Gate(Settings(_env_file=None, **settings), redis)  # type: ignore[arg-type]


async def test_by_default_private_chats_follow_the_allowlist_as_before(redis_client: Redis) -> None:
    """Unset PARLEY_DM_POLICY: everyone without PARLEY_ALLOWED_USERS, only the listed (and
    admins, and guests when allowed) with it, in private chats as in groups."""
    assert dm_policy(Settings(_env_file=None)) == "open"
    anyone = gate_of(redis_client)
    for private in (True, False):
        assert await anyone.lets_in("tg:666", private)
    listed = gate_of(redis_client, allowed_users=["tg:1"], admins=["tg:9"])
    assert dm_policy(listed.settings) == "allowlist"
    for private in (True, False):
        assert await listed.lets_in("tg:1", private) and await listed.lets_in("tg:9", private)
        assert not await listed.lets_in("tg:666", private)
    guests = gate_of(redis_client, allowed_users=["tg:1"], allow_guests=True)
    assert await guests.lets_in("tg:666", True) and await guests.lets_in("tg:666", False)
    refused = await listed.admit("tg:666", "chat 1", private=PRIVATE)  # no pairing: refused
    assert not refused.admitted and refused.tell is not None and "tg:666" in refused.tell


async def test_the_dm_policy_decides_private_chats_and_leaves_groups_be(
    redis_client: Redis,
) -> None:
    opened = gate_of(redis_client, allowed_users=["tg:1"], dm_policy="open")
    assert await opened.lets_in("tg:666", private=True)
    assert not await opened.lets_in("tg:666", private=False)  # the group rule stays
    closed = gate_of(redis_client, dm_policy="allowlist", admins=["tg:9"])
    assert not await closed.lets_in("tg:666", private=True)  # no list: admins alone
    assert await closed.lets_in("tg:9", private=True)
    assert await closed.lets_in("tg:666", private=False)  # groups: everyone, as before
    pairing = gate_of(redis_client, dm_policy="pairing")
    assert not await pairing.lets_in("tg:666", private=True)
    assert (await pairing.admit("tg:666", "chat 1", private=PRIVATE)).tell is not None


async def test_a_paired_guest_is_stamped_a_user_and_a_stranger_gets_a_code(
    redis_client: Redis, tmp_path: Path
) -> None:
    """With guests let in, a paired person is still told apart (a user, for rules on
    `role`); under `pairing` a stranger in private gets a code, in a group the refusal."""
    database = await open_database(
        Settings(_env_file=None, database_url=f"sqlite+aiosqlite:///{tmp_path / 'p.db'}")
    )
    try:
        pairing = Pairing.of(redis_client, database.engine, _ignore, lifetime=60)
        await pairing.paired.add("tg:5", "telegram", "tg:9")
        guests = Settings(_env_file=None, allowed_users=["tg:1"], allow_guests=True)
        gate = Gate(guests, redis_client, pairing)
        assert (await gate.admit("tg:5", "chat 5", private=PRIVATE)).paired
        assert (await gate.admit("tg:5", "group 1")).paired
        stranger = await gate.admit("tg:6", "chat 6", private=PRIVATE)
        assert stranger.admitted and not stranger.paired
        assert not (await gate.admit("tg:1", "chat 1", private=PRIVATE)).paired  # listed
        strict = Gate(Settings(_env_file=None, dm_policy="pairing"), redis_client, pairing)
        coded = await strict.admit("tg:6", "chat 6", private=PRIVATE)
        assert not coded.admitted and coded.tell is not None and "/pair " in coded.tell
        assert (await strict.admit("tg:6", "group 1")).admitted  # groups: no list, anyone
        assert (await strict.admit("tg:5", "chat 5", private=PRIVATE)).paired
    finally:
        await database.aclose()


async def _ignore(envelope: Envelope) -> None:
    """Where a welcome would be submitted: not needed here."""
