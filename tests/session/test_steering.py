"""Messages that join a running turn, in one process with a real mailbox in Redis and the agent
against the fake model: the person's messages sent while the first model call runs are taken
in after its tool batch, before the next call; another person's message, and everything behind
it, waits for turns of their own; a turn cut off after the join goes on with the joined message
and commits it once; `queue` keeps today's turn after turn."""

from __future__ import annotations

import asyncio

from bot.redis import keys
from bot.redis.results import done
from bot.store.history import RUNS
from bot.vocabulary.envelope import Envelope, Sender
from tests.fakes.llm import FakeLLM, Reply, ToolCallSpec
from tests.support.runner import Rig, runner_rig
from tests.support.waiting import until

SESSION = "http:steer"
SUM = ToolCallSpec("calculator", {"expression": "2+2"})


def said(n: int, text: str, person: str = "ann") -> Envelope:
    return Envelope(id=f"m{n}", session=SESSION, text=text, sender=Sender(id=f"http:{person}"))


async def held_first_call(rig: Rig, gate: asyncio.Event) -> asyncio.Task[None]:
    """The session's turn running, its first model call held at `gate`."""
    turn = asyncio.create_task(rig.runner.take_turns(SESSION))
    await until(lambda: len(rig.fake.requests) == 1, "the first model call")
    return turn


def user_texts(body: dict[str, object]) -> list[str]:
    messages = body["messages"]
    assert isinstance(messages, list)
    return [str(m["content"]) for m in messages if m["role"] == "user"]


async def runs(rig: Rig) -> list[list[str]]:
    async with rig.database.engine.connect() as db:
        found = await db.execute(RUNS.select().order_by(RUNS.c.started_at))
        return [list(row.envelope_ids) for row in found]


async def test_the_persons_messages_join_and_anyone_elses_wait(rig: Rig) -> None:
    gate = asyncio.Event()
    rig.fake.enqueue(
        Reply(tool_calls=[SUM], gate=gate), Reply(text="The other file, then."),
        Reply(text="Hello Bob."), Reply(text="Noted, Ann."),
    )  # fmt: skip
    await rig.mailbox.submit(said(1, "open the file"))
    turn = await held_first_call(rig, gate)
    for envelope in (said(2, "no, the other file"), said(3, "hi", "bob"), said(4, "and then?")):
        await rig.mailbox.submit(envelope)
    gate.set()
    await turn

    first, joined, bob, ann = (r.body for r in rig.fake.requests)
    assert "no, the other file" not in str(first)
    last = joined["messages"][-1]
    kinds = [block["type"] for block in last["content"]]
    assert kinds == ["tool_result", "text", "text"]  # the batch's result, the stamp, the text
    assert last["content"][-1]["text"] == "no, the other file"
    assert sum("no, the other file" in t for t in user_texts(joined)) == 1
    assert "hi" in user_texts(bob)[-1] and "and then?" in user_texts(ann)[-1]
    assert await runs(rig) == [["m1", "m2"], ["m3"], ["m4"]]
    assert await rig.mailbox.pending(SESSION) == 0


async def test_a_turn_cut_off_after_the_join_goes_on_with_it(rig: Rig) -> None:
    """The worker stops (its task cancelled, as a lost lease does) while the call after the
    join is held: the next take goes on with both messages and commits them once."""
    gate, never = asyncio.Event(), asyncio.Event()
    rig.fake.enqueue(Reply(tool_calls=[SUM], gate=gate), Reply(text="lost", gate=never))
    await rig.mailbox.submit(said(1, "open the file"))
    turn = await held_first_call(rig, gate)
    await rig.mailbox.submit(said(2, "no, the other file"))
    gate.set()
    await until(lambda: len(rig.fake.requests) == 2, "the call after the join")
    turn.cancel()
    await asyncio.gather(turn, return_exceptions=True)
    inbox = await done(rig.mailbox.redis.lrange(keys.session(SESSION, "inbox"), 0, -1))
    assert len(inbox) == 2  # nothing committed yet

    rig.fake.enqueue(Reply(text="The other file, then."))
    await rig.runner.take_turns(SESSION)
    resumed = rig.fake.requests[-1].body
    assert sum("no, the other file" in t for t in user_texts(resumed)) == 1
    assert len(rig.fake.requests) == 3  # no turn of its own for the joined message
    assert await runs(rig) == [["m1", "m2"]]
    assert await rig.mailbox.pending(SESSION) == 0


async def test_queue_leaves_a_message_for_its_own_turn(
    redis_url: str, database_url: str, fake_llm: FakeLLM
) -> None:
    async with runner_rig(redis_url, database_url, fake_llm, steer_mode="queue") as rig:
        gate = asyncio.Event()
        rig.fake.enqueue(
            Reply(tool_calls=[SUM], gate=gate), Reply(text="Opened."), Reply(text="Other one.")
        )
        await rig.mailbox.submit(said(1, "open the file"))
        turn = await held_first_call(rig, gate)
        await rig.mailbox.submit(said(2, "no, the other file"))
        gate.set()
        await turn
        assert "no, the other file" not in str(rig.fake.requests[1].body)
        assert "no, the other file" in user_texts(rig.fake.requests[2].body)[-1]
        assert await runs(rig) == [["m1"], ["m2"]]


async def test_a_group_grown_past_the_merge_limit_is_resumed_whole(
    redis_url: str, database_url: str, fake_llm: FakeLLM
) -> None:
    """Two messages merged (the limit), three more joined: the worker stops after the join,
    and the next one finds the whole group of five at the head, goes on with it and commits
    it once; none of the five is taken for a new turn."""
    async with runner_rig(redis_url, database_url, fake_llm, merge_messages=2) as rig:
        gate, never = asyncio.Event(), asyncio.Event()
        rig.fake.enqueue(Reply(tool_calls=[SUM], gate=gate), Reply(text="lost", gate=never))
        await rig.mailbox.submit(said(1, "open the file"))
        await rig.mailbox.submit(said(2, "the big one"))
        turn = await held_first_call(rig, gate)
        for n in (3, 4, 5):
            await rig.mailbox.submit(said(n, f"and part {n}"))
        gate.set()
        await until(lambda: len(rig.fake.requests) == 2, "the call after the join")
        turn.cancel()
        await asyncio.gather(turn, return_exceptions=True)

        rig.fake.enqueue(Reply(text="All five, then."))
        await rig.runner.take_turns(SESSION)
        resumed = user_texts(rig.fake.requests[-1].body)
        assert len(rig.fake.requests) == 3
        for text in ("open the file", "the big one", "and part 3", "and part 5"):
            assert sum(text in said_ for said_ in resumed) == 1, (text, resumed)
        assert await runs(rig) == [["m1", "m2", "m3", "m4", "m5"]]
        assert await rig.mailbox.pending(SESSION) == 0
