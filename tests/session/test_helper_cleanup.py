"""A helper's hot state dropped once its answer was read (`bot.session.helper_cleanup`),
against a real Redis and the real mailbox: only while nobody runs it and nothing waits in
its inbox, keeping what a resumed parent needs."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from redis.asyncio import Redis

from bot.mailbox.inbox import Mailbox
from bot.redis import keys
from bot.session import helper_cleanup
from bot.session.helper_cleanup import drop_answered_helper
from bot.session.states import StateStore
from bot.vocabulary.envelope import Envelope, Sender
from bot.vocabulary.messages import Message, TextBlock
from bot.vocabulary.state import SessionState
from tests.support.waiting import until

HELPER = "http:s1:helper-toolu_1"
ENVELOPE = "helper:toolu_1"


class _NoJobs:
    async def enqueue_job(self, function: str, *args: Any, **kwargs: Any) -> None:
        return None


async def names(redis: Redis) -> set[str]:
    """The helper's keys, named as in `keys` (`state`, `seen:…`)."""
    prefix = keys.session(HELPER, "")
    return {k.decode().removeprefix(prefix) async for k in redis.scan_iter(match=f"{prefix}*")}


async def scripts_run(redis: Redis, more_than: int | None = None) -> Any:
    """How many Lua calls Redis has run (or whether more than `more_than`)."""
    stats = await redis.info("commandstats")
    calls = sum(
        int(stats.get(f"cmdstat_{name}", {}).get("calls", 0)) for name in ("eval", "evalsha")
    )
    return calls if more_than is None else calls > more_than


async def answered(mailbox: Mailbox, store: StateStore) -> str:
    """The helper's one turn, taken and committed with its state, as a worker runs it; the
    lease is still held (its token returned): the caller releases it."""
    task = Envelope(id=ENVELOPE, session=HELPER, text="do job 1", sender=Sender(id="http:ann"))
    assert (await mailbox.submit(task)).accepted
    taken = await mailbox.take_turn(HELPER, ttl=30, count=1)
    assert taken is not None
    token = taken[0]
    state = SessionState()
    state.messages += [
        Message(role="user", content=[TextBlock(text="do job 1")]),
        Message(role="assistant", content=[TextBlock(text="result 1")]),
    ]
    await store.commit(HELPER, token, [task], state)
    await mailbox.redis.xadd(keys.events(HELPER), {"event": "{}", "envelopes": ENVELOPE})
    return token


async def test_the_state_goes_once_the_helper_is_released(redis_client: Redis) -> None:
    """Read while the helper's worker still holds its lease (it streams its answer before it
    commits): the drop waits for the release, then deletes the state, and only it."""
    mailbox = Mailbox(redis_client, _NoJobs())
    store = StateStore(mailbox)
    token = await answered(mailbox, store)
    before = await names(redis_client)
    assert {"state", "context", "saved", "lease"} <= before
    looked = await scripts_run(redis_client)
    dropping = asyncio.create_task(drop_answered_helper(mailbox, store, HELPER, ENVELOPE))
    await until(lambda: scripts_run(redis_client, more_than=looked + 1), "the drop looking twice")
    assert not dropping.done() and "state" in await names(redis_client)
    assert await mailbox.release_if_empty(HELPER, token)
    gone = await asyncio.wait_for(dropping, 10)
    assert await names(redis_client) == {"events", f"seen:{ENVELOPE}", "gen", "fence"}
    assert gone == 3  # the state, its context and its version
    assert await store.load(HELPER) is None  # nor kept in this process
    again = Envelope(id=ENVELOPE, session=HELPER, text="again", sender=Sender(id="http:ann"))
    assert not (await mailbox.submit(again)).accepted  # a resumed parent's: a duplicate


async def test_a_helper_still_busy_keeps_its_state(
    redis_client: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A helper whose worker never lets go (or whose inbox is not empty) keeps its state:
    the drop gives up after `SETTLE_S`, and retention takes it later."""
    monkeypatch.setattr(helper_cleanup, "SETTLE_S", 0.3)
    mailbox = Mailbox(redis_client, _NoJobs())
    store = StateStore(mailbox)
    await answered(mailbox, store)
    assert await drop_answered_helper(mailbox, store, HELPER, ENVELOPE) is None
    assert {"state", "context", "saved"} <= await names(redis_client)
