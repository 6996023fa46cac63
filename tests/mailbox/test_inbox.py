"""The mailbox's Lua scripts on a real Redis: dedup, arming, the lease fence, release."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from arq.connections import RedisSettings, create_pool
from arq.constants import default_queue_name, job_key_prefix
from redis.asyncio import Redis

from bot.mailbox.inbox import DEAD_LETTER_LIMIT, LeaseLost, Mailbox
from bot.mailbox.saved_state import StateWrite, TurnOptions
from bot.redis import keys
from bot.vocabulary.envelope import Envelope, Sender


class Jobs:
    def __init__(self) -> None:
        self.enqueued: list[tuple[Any, ...]] = []

    async def enqueue_job(self, function: str, *args: Any, **kwargs: Any) -> None:
        self.enqueued.append((function, *args, kwargs.get("_job_id")))


def envelope(n: int, session: str = "test:m") -> Envelope:
    return Envelope(id=f"e{n}", session=session, text=f"m{n}", sender=Sender(id="test:u"))


@pytest.fixture
async def box(redis_url: str) -> Any:
    redis = Redis.from_url(redis_url)
    jobs = Jobs()
    yield Mailbox(redis, jobs), jobs, redis
    await redis.aclose()


async def test_submit_dedups_arms_once_and_wakes(box: Any) -> None:
    mailbox, jobs, redis = box
    first = await mailbox.submit(envelope(1))
    again = await mailbox.submit(envelope(1))
    second = await mailbox.submit(envelope(2))
    assert first.accepted and again.duplicate and second.accepted
    assert first.generation == second.generation == 1  # armed once until released
    assert [e.id for e in await mailbox.peek("test:m", 10)] == ["e1", "e2"]
    assert jobs.enqueued == [("drain", "test:m", "drain:test:m:1")] * 2
    assert await redis.zscore(keys.ARMED_SET, "test:m") is not None


async def test_concurrent_duplicates_are_accepted_once(box: Any) -> None:
    mailbox, _, _ = box
    results = await asyncio.gather(*(mailbox.submit(envelope(7)) for _ in range(20)))
    assert sum(r.accepted for r in results) == 1
    assert await mailbox.pending("test:m") == 1


async def test_a_stale_holder_is_fenced_out(box: Any) -> None:
    mailbox, _, redis = box
    await mailbox.submit(envelope(1))
    stale = await mailbox.take_lease("test:m", ttl=0.2)
    assert stale is not None
    assert await mailbox.take_lease("test:m", ttl=5) is None  # held
    await asyncio.sleep(0.3)
    fresh = await mailbox.take_lease("test:m", ttl=5)
    assert fresh is not None and fresh != stale
    assert int(fresh.split(":")[0]) > int(stale.split(":")[0])  # fencing numbers grow
    await mailbox.save_state("test:m", fresh, StateWrite('{"messages": []}'))
    with pytest.raises(LeaseLost):
        await mailbox.save_state("test:m", stale, StateWrite('{"stale": true}'))
    with pytest.raises(LeaseLost):
        await mailbox.commit("test:m", stale, [envelope(1)], StateWrite('{"stale": true}'))
    assert not await mailbox.extend("test:m", stale, 5)
    assert await mailbox.release_if_empty("test:m", stale) is None
    assert await redis.get(keys.session("test:m", "state")) == b'{"messages": []}'
    assert await mailbox.pending("test:m") == 1


async def test_release_only_when_empty_and_then_rearm(box: Any) -> None:
    mailbox, jobs, redis = box
    await mailbox.submit(envelope(1))
    token = await mailbox.take_lease("test:m", ttl=5)
    await mailbox.submit(envelope(2))  # arrives while the turn runs
    await mailbox.commit("test:m", token, [envelope(1)], StateWrite("{}"))
    assert await mailbox.release_if_empty("test:m", token) is False  # e2 waits: keep going
    await mailbox.commit("test:m", token, [envelope(2)], StateWrite("{}"))
    assert await mailbox.release_if_empty("test:m", token) is True
    assert await redis.zscore(keys.ARMED_SET, "test:m") is None
    third = await mailbox.submit(envelope(3))
    assert third.generation == 2  # a new generation, so a new arq job id
    assert jobs.enqueued[-1] == ("drain", "test:m", "drain:test:m:2")


async def test_a_turn_is_taken_with_its_envelopes_and_committed_with_the_next(box: Any) -> None:
    """The lease comes with the head (its first envelope's try counted), and each commit
    brings the next turn's head, or lets the lease go when none waits, in the same step:
    a turn costs Redis one call to begin and one to end."""
    mailbox, jobs, redis = box
    await mailbox.submit(envelope(1))
    await mailbox.submit(envelope(2))
    taken = await mailbox.take_turn("test:m", ttl=5, count=1)
    assert taken is not None
    token, head = taken
    assert ([e.id for e in head.envelopes], head.tries) == (["e1"], 1)
    assert await mailbox.take_turn("test:m", ttl=5, count=1) is None  # held
    second = await mailbox.commit("test:m", token, head.envelopes, StateWrite("{}"), then=10)
    assert second is not None and ([e.id for e in second.envelopes], second.tries) == (["e2"], 1)
    assert await redis.get(keys.session("test:m", "lease")) == token.encode()
    await mailbox.submit(envelope(3))  # arrives while the second turn runs: no job, no wait
    third = await mailbox.commit("test:m", token, second.envelopes, StateWrite("{}"), then=10)
    assert third is not None and [e.id for e in third.envelopes] == ["e3"]
    assert await mailbox.commit("test:m", token, third.envelopes, then=10) is None  # let go
    assert await redis.get(keys.session("test:m", "lease")) is None
    assert await redis.zscore(keys.ARMED_SET, "test:m") is None
    assert await redis.exists(keys.session("test:m", "attempts:e3")) == 0
    assert (await mailbox.submit(envelope(4))).generation == 2  # armed anew, a new job
    assert jobs.enqueued[-1] == ("drain", "test:m", "drain:test:m:2")


async def test_a_head_counts_its_tries_across_takers(box: Any) -> None:
    """A worker that dies mid-turn leaves the head's count behind: the next taker sees it."""
    mailbox, _, redis = box
    await mailbox.submit(envelope(1))
    first = await mailbox.take_turn("test:m", ttl=5, count=1)
    assert first is not None and first[1].tries == 1
    await redis.delete(keys.session("test:m", "lease"))  # its worker died
    again = await mailbox.take_turn("test:m", ttl=5, count=1)
    assert again is not None and again[1].tries == 2 and again[0] != first[0]


async def test_nothing_is_taken_where_nothing_waits(box: Any) -> None:
    """A wake-up for a session whose messages were answered already: no lease is taken, and
    the session is left unarmed, as a lease released at once would leave it."""
    mailbox, _, redis = box
    await mailbox.submit(envelope(1))
    taken = await mailbox.take_turn("test:m", ttl=5, count=1)
    assert taken is not None
    await mailbox.commit("test:m", taken[0], taken[1].envelopes, StateWrite("{}"))  # no `then`
    assert await redis.get(keys.session("test:m", "lease")) is not None  # still held
    await redis.delete(keys.session("test:m", "lease"))
    assert await mailbox.take_turn("test:m", ttl=5, count=1) is None
    assert await redis.get(keys.session("test:m", "lease")) is None
    assert await redis.exists(keys.session("test:m", "armed")) == 0
    assert await redis.zscore(keys.ARMED_SET, "test:m") is None


async def test_commit_refuses_a_head_that_is_not_ours(box: Any) -> None:
    mailbox, _, _ = box
    await mailbox.submit(envelope(1))
    token = await mailbox.take_lease("test:m", ttl=5)
    with pytest.raises(RuntimeError, match="head"):
        await mailbox.commit("test:m", token, [envelope(9)], StateWrite("{}"))
    assert await mailbox.pending("test:m") == 1


async def test_sweep_wakes_armed_sessions_nobody_holds(box: Any) -> None:
    mailbox, jobs, _ = box
    await mailbox.submit(envelope(1, "test:a"))
    await mailbox.submit(envelope(1, "test:b"))
    await mailbox.take_lease("test:b", ttl=5)
    jobs.enqueued.clear()
    assert await mailbox.sweep(grace=60) == []  # too recent
    assert await mailbox.sweep(grace=0) == ["test:a"]
    assert jobs.enqueued == [("drain", "test:a", keys.wake_job_id("test:a", 1))]


async def test_the_sweep_adds_no_second_job_while_the_first_is_queued(redis_url: str) -> None:
    """A session whose drain job waits in arq's queue past the grace (busy workers) gets no
    duplicate: the sweep's job has the same id, which arq refuses while the first is there."""
    pool = await create_pool(RedisSettings.from_dsn(redis_url))
    try:
        mailbox = Mailbox(pool, pool)
        await mailbox.submit(envelope(1, "test:queued"))
        assert await mailbox.sweep(grace=0) == ["test:queued"]
        assert await pool.zcard(default_queue_name) == 1
        await pool.delete(job_key_prefix + keys.wake_job_id("test:queued", 1))
        await pool.zrem(default_queue_name, keys.wake_job_id("test:queued", 1))
        assert await mailbox.sweep(grace=0) == ["test:queued"]  # a lost job: woken again
        assert await pool.zcard(default_queue_name) == 1
    finally:
        await pool.aclose()


async def test_an_idle_session_is_forgotten_but_never_one_with_a_message_waiting(
    box: Any,
) -> None:
    """Retention forgets idle sessions: the check and the delete are one step, so a message
    submitted just before is kept (with its session), whatever was read before it."""
    mailbox, _, redis = box
    await mailbox.submit(envelope(1))
    token = await mailbox.take_lease("test:m", ttl=5)
    await mailbox.commit("test:m", token, [envelope(1)], StateWrite('{"messages": []}'))
    assert await mailbox.release_if_empty("test:m", token) is True
    await mailbox.set_option("test:m", "model", "m")
    assert not await mailbox.busy("test:m")  # what the caller saw before the next submit
    await mailbox.submit(envelope(2))
    assert await mailbox.forget_idle("test:m") is None
    assert [e.id for e in await mailbox.peek("test:m", 10)] == ["e2"]
    assert await redis.get(keys.session("test:m", "state")) == b'{"messages": []}'
    token = await mailbox.take_lease("test:m", ttl=5)
    assert await mailbox.forget_idle("test:m") is None  # a turn runs
    await mailbox.commit("test:m", token, [envelope(2)], StateWrite("{}"))
    assert await mailbox.release_if_empty("test:m", token) is True
    held = len(await redis.keys("parley:{test:m}:*"))  # state, options, fence, seen, …
    assert await mailbox.forget_idle("test:m") == held > 3
    assert await redis.keys("parley:{test:m}:*") == []
    assert await mailbox.forget_idle("test:other") == 0  # nothing there: nothing to do


async def test_an_idle_lease_is_taken_only_while_nothing_waits_or_runs(box: Any) -> None:
    """Retention's cut of a live context takes the lease only when no message waits and no
    turn runs, in the same step; then it fences the session as a turn's lease does."""
    mailbox, _, redis = box
    await mailbox.submit(envelope(1))
    assert await mailbox.take_idle_lease("test:m", ttl=5) is None  # a message waits
    token = await mailbox.take_lease("test:m", ttl=5)
    await mailbox.commit("test:m", token, [envelope(1)])
    assert await mailbox.take_idle_lease("test:m", ttl=5) is None  # a turn runs
    assert await mailbox.release_if_empty("test:m", token) is True
    idle = await mailbox.take_idle_lease("test:m", ttl=5, worker="ab12")
    assert idle is not None and idle.split(":")[1] == "ab12"
    assert await mailbox.take_lease("test:m", ttl=5) is None  # no turn begins meanwhile
    with pytest.raises(LeaseLost):
        await mailbox.save_state("test:m", token, StateWrite("{}"))  # nor writes a stale one
    await mailbox.save_state("test:m", idle, StateWrite('{"messages": []}'))
    assert await redis.get(keys.session("test:m", "state")) == b'{"messages": []}'


async def test_dead_letters_are_bounded_and_go_with_their_session(box: Any) -> None:
    mailbox, _, redis = box
    for n in range(DEAD_LETTER_LIMIT + 5):
        await mailbox.dead_letter(envelope(n, "test:noisy"), "failed 3 times")
    await mailbox.dead_letter(envelope(1, "test:kept"), "failed 3 times")
    await mailbox.dead_letter(envelope(2, "test:gone"), "failed 3 times")
    assert await redis.llen(keys.DEAD_LETTERS) == DEAD_LETTER_LIMIT
    await mailbox.forget("test:gone")
    await mailbox.forget_idle("test:noisy")
    left = [json.loads(raw)["envelope"] for raw in await redis.lrange(keys.DEAD_LETTERS, 0, -1)]
    assert [(e["session"], e["text"]) for e in left] == [("test:kept", "m1")]


@pytest.mark.parametrize("session", ["tg:-100", "tg:-100:7"])
async def test_a_turns_options_are_the_sessions_model_and_its_chats_mode(
    box: Any, session: str
) -> None:
    """A forum topic has a model of its own, and its chat's mode, reasoning, tools and
    output schema."""
    mailbox, _, _ = box
    assert await mailbox.load_for_turn(session) == (None, TurnOptions())
    await mailbox.set_option("tg:-100", "mode", "plan_execute")
    await mailbox.set_option("tg:-100", "reasoning", "on")
    await mailbox.set_option("tg:-100", "tools", '["calculator"]')
    await mailbox.set_option("tg:-100", "output_schema", '{"type": "object"}')
    await mailbox.set_option(session, "model", "claude-x")
    await mailbox.set_option("tg:-100:7", "mode", "react")  # not the topic's: its chat's
    chosen = TurnOptions("claude-x", "plan_execute", "on", '["calculator"]', '{"type": "object"}')
    assert await mailbox.load_for_turn(session) == (None, chosen)


async def test_a_turns_state_comes_with_its_options_in_one_call(
    box: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether the state is read, unchanged since the reader's copy, or not there at all."""
    mailbox, _, redis = box
    session = "tg:-100:7"
    await mailbox.set_option("tg:-100", "mode", "plan_execute")
    await mailbox.set_option(session, "model", "claude-x")
    chosen = TurnOptions("claude-x", "plan_execute", None)
    token = await mailbox.take_lease(session, ttl=5)
    await mailbox.save_state(session, token, StateWrite('{"turn": null}', version="v1"))
    await mailbox.load_for_turn(session)  # Redis learns the script
    sent: list[str] = []
    execute = redis.execute_command

    async def counted(*args: Any, **kwargs: Any) -> Any:
        sent.append(str(args[0]))
        return await execute(*args, **kwargs)

    monkeypatch.setattr(redis, "execute_command", counted)
    stored, options = await mailbox.load_for_turn(session)
    assert stored is not None and stored.head == b'{"turn": null}' and options == chosen
    unchanged, options = await mailbox.load_for_turn(session, "v1")
    assert unchanged is not None and unchanged.unchanged and options == chosen
    assert await mailbox.load_for_turn("tg:-200") == (None, TurnOptions())
    assert sent == ["EVALSHA"] * 3
