"""A session's state in Redis (`bot.session.states`): a turn's save sends what the turn added,
whatever the conversation's length, and what is loaded is what was saved, after any change
the loop makes to the context; a state saved whole by an older version still loads."""

from __future__ import annotations

import statistics
from typing import Any

from redis.asyncio import Redis

from bot.agent import failed_turn
from bot.mailbox.inbox import Mailbox
from bot.redis import keys
from bot.redis.results import done
from bot.session.states import StateStore
from bot.vocabulary.envelope import Envelope, Sender
from bot.vocabulary.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from bot.vocabulary.state import SessionState, TurnProgress
from tests.fakes.llm import Reply
from tests.support.runner import Rig

SESSION = "http:store"


class _NoJobs:
    async def enqueue_job(self, function: str, *args: Any, **kwargs: Any) -> None:
        return None


def said(text: str, n: int) -> Envelope:
    return Envelope(id=f"m{n}", session=SESSION, text=text, sender=Sender(id="http:ann"))


async def received(redis: Redis) -> int:
    return int((await redis.info("stats"))["total_net_input_bytes"])


async def test_what_a_turn_sends_to_redis_does_not_grow_with_the_conversation(rig: Rig) -> None:
    """Default settings, the real runner: the state is saved after every step of a turn, and
    each save must send what changed, not the context so far."""
    redis = rig.mailbox.redis
    sent: list[int] = []
    for n in range(40):
        rig.fake.enqueue(Reply(text=f"Answer number {n:03d}."))
        before = await received(redis)
        await rig.mailbox.submit(said(f"Question number {n:03d}", n))
        await rig.runner.take_turns(SESSION)
        sent.append(await received(redis) - before)
    assert len(rig.fake.requests) == 40
    early, late = statistics.median(sent[2:7]), statistics.median(sent[-5:])
    # 35 turns later the context holds 70 more messages, each some 250 bytes as JSON: sent
    # again at each of a turn's saves they would add tens of kilobytes
    assert late < early + 2048, (early, late)


async def test_a_state_saved_whole_by_an_older_version_loads_and_is_saved_anew(rig: Rig) -> None:
    old = SessionState(
        messages=[
            Message(role="user", content=[TextBlock(text="I am Ann")]),
            Message(role="assistant", content=[TextBlock(text="Noted.")]),
        ],
        finished=["m0"],
    )
    redis = rig.mailbox.redis
    await redis.set(keys.session(SESSION, "state"), old.model_dump_json())
    rig.fake.enqueue(Reply(text="You are Ann."))
    await rig.mailbox.submit(said("who am I?", 1))
    await rig.runner.take_turns(SESSION)
    sent = rig.fake.requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert "I am Ann" in str(sent[0]) and "Noted." in str(sent[1])
    head = await redis.get(keys.session(SESSION, "state"))
    assert b'"messages"' not in head
    items = await done(redis.lrange(keys.session(SESSION, "context"), 0, -1))
    assert [Message.model_validate_json(i).text for i in items][:2] == ["I am Ann", "Noted."]
    loaded = await StateStore(rig.mailbox).load(SESSION)
    assert loaded is not None and loaded.messages[-1].text == "You are Ann."
    assert [m.id for m in loaded.messages[:2]] == [m.id for m in old.messages]


def text(words: str, role: str = "user") -> Message:
    return Message(role="user" if role == "user" else "assistant", content=[TextBlock(text=words)])


async def test_what_is_loaded_is_what_was_saved_after_every_kind_of_change(
    redis_client: Redis,
) -> None:
    """Appends, a user message taking more blocks, a failed turn taken out, a context
    replaced by compaction, a context Redis lost: each save is read back as the state."""
    mailbox = Mailbox(redis_client, _NoJobs())
    store, session = StateStore(mailbox), "test:store"
    token = await mailbox.take_lease(session, ttl=30)
    assert token is not None
    state = SessionState()

    async def saved() -> None:
        await store.save(session, token, state)
        loaded = await StateStore(mailbox).load(session)
        assert loaded is not None
        assert loaded.model_dump() == state.model_dump()

    for n in range(5):
        state.messages += [text(f"q{n}"), text(f"a{n}", "assistant")]
        await saved()
    state.add_user(TextBlock(text="and more"))  # a new user message
    await saved()
    state.add_user(TextBlock(text="still more"))  # merged into it, in place
    await saved()
    start = failed_turn.mark_after(state.messages, 1)
    state.turn = TurnProgress(start=start)
    call = ToolUseBlock(id="c1", name="calculator", input={"expression": "1+1"})
    state.messages.append(Message(role="assistant", content=[call]))
    state.add_user(ToolResultBlock(tool_use_id="c1", content="2"))
    await saved()
    assert failed_turn.forget(state.messages, start)  # taken out, in place
    await saved()
    assert state.messages[-1].text == "and more"
    summary = Message(role="user", summary=True, content=[TextBlock(text="earlier: q0..q4")])
    state.messages = [summary, *(m.model_copy(deep=True) for m in state.messages[-3:])]
    await saved()  # compacted: a new list of new messages
    await done(redis_client.delete(keys.session(session, "context")))  # lost by Redis
    state.messages.append(text("after the loss", "assistant"))
    await saved()
    state.messages.clear()
    await saved()


async def test_a_commit_writes_the_change_with_the_inbox(redis_client: Redis) -> None:
    mailbox = Mailbox(redis_client, _NoJobs())
    store, session = StateStore(mailbox), "test:commit"
    envelope = Envelope(id="e1", session=session, text="hi", sender=Sender(id="u"))
    await mailbox.submit(envelope)
    token = await mailbox.take_lease(session, ttl=30)
    assert token is not None
    state = SessionState(messages=[text("hi"), text("hello", "assistant")])
    await store.save(session, token, state)
    state.messages.append(text("bye"))
    state.finished = ["e1"]
    await store.commit(session, token, [envelope], state)
    assert await mailbox.pending(session) == 0
    loaded = await store.load(session)
    assert loaded is not None and loaded.model_dump() == state.model_dump()


async def test_a_worker_reuses_its_committed_state_only_while_nobody_wrote_since(
    redis_client: Redis,
) -> None:
    """The state a commit wrote serves the session's next turn in that worker; a state
    another worker wrote since, or a copy a failed turn changed, is never used."""
    mailbox = Mailbox(redis_client, _NoJobs())
    one, two, session = StateStore(mailbox), StateStore(mailbox), "test:kept"

    async def commit(store: StateStore, state: SessionState, n: int) -> None:
        envelope = Envelope(id=f"e{n}", session=session, text="hi", sender=Sender(id="u"))
        await mailbox.submit(envelope)
        token = await mailbox.take_lease(session, ttl=30)
        assert token is not None
        await store.commit(session, token, [envelope], state)
        assert await mailbox.release_if_empty(session, token)

    state = SessionState(messages=[text("hi"), text("hello", "assistant")])
    await commit(one, state, 1)
    assert await one.load(session) is state  # nobody wrote since: the copy, nothing parsed
    state.messages.append(text("changed by a turn that then failed"))
    loaded = await one.load(session)  # the copy was handed out once: read from Redis
    assert loaded is not None and loaded is not state and len(loaded.messages) == 2
    await commit(one, loaded, 2)
    other = await two.load(session)
    assert other is not None
    other.messages.append(text("written by another worker", "assistant"))
    await commit(two, other, 3)
    mine = await one.load(session)
    assert mine is not None and mine is not loaded
    assert mine.messages[-1].text == "written by another worker"
