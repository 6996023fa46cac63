"""Telegram under stress: a worker killed mid-reply, refused formatting, many replies at once."""

from __future__ import annotations

import asyncio
import time

import pytest
from redis.asyncio import Redis

from bot.redis import keys
from tests.fakes.llm import Reply, ToolCallSpec
from tests.fakes.tg import TOKEN, TgUser
from tests.integration.telegram.test_replies import ANN, replies
from tests.support.stack import idle, lease_tokens
from tests.support.telegram import TelegramStack
from tests.support.waiting import until

CUT = "This first attempt is cut off " * 4
ANSWER = " ".join(f"Part {n} of the complete answer." for n in range(12))


async def reply_ids_kept(redis_url: str) -> None:
    """Once a worker has kept a reply's message ids in Redis (`ReplyStore`)."""
    redis = Redis.from_url(redis_url)

    async def kept() -> bool:
        return bool([key async for key in redis.scan_iter(keys.reply("tg", "*"))])

    try:
        await until(kept, "a reply's message ids kept in Redis", every=0.02)
    finally:
        await redis.aclose()


async def test_a_reply_resumed_after_a_crash_edits_the_same_message(
    tg_stack: TelegramStack,
) -> None:
    first = await tg_stack.start_worker_process()
    gate = asyncio.Event()
    tg_stack.fake.enqueue(
        Reply(text="This first attempt is cut off " * 4, chunk_size=6, gate=gate, gate_after=12),
        Reply(text="The complete answer, once."),
    )
    group = tg_stack.tg.group("Crash")
    tg_stack.tg.send(group, ANN, "@parley_test_bot tell me")
    await tg_stack.tg.wait_for(lambda: bool(tg_stack.tg.messages(group)))
    await reply_ids_kept(tg_stack.redis_url)  # past the moment the worker keeps the id
    tg_stack.kill(first)
    await tg_stack.start_worker_process()
    shown = await replies(tg_stack, group)
    gate.set()
    assert shown == ["The complete answer, once."]
    assert len(tg_stack.tg.sent[group.id]) == 1, "the reply was posted a second time"
    assert tg_stack.tg.messages(group)[0].edits >= 1
    logs = "".join(p.read_text() for p in tg_stack.tmp.glob("worker-*.log"))
    assert TOKEN.split(":")[1] not in logs


async def test_a_killed_worker_is_replaced_within_seconds_by_a_running_one(
    tg_stack: TelegramStack,
) -> None:
    """The default lease and sweep settings: the worker holding the turn is SIGKILLed mid-reply
    and the other one, already running and idle, takes the session over within seconds, not
    after the lease's 30 s; the answer then completes at the model's pace, once, in order."""
    assert not {"PARLEY_LEASE_TTL", "PARLEY_SWEEP_INTERVAL"} & set(tg_stack.env)
    first = await tg_stack.start_worker_process()
    tg, gate = tg_stack.tg, asyncio.Event()
    tg_stack.fake.enqueue(
        Reply(text=CUT, chunk_size=6, gate=gate, gate_after=12),
        Reply(text=ANSWER, chunk_size=10, delay=0.05),  # about two seconds of streaming
    )
    group = tg.group("Takeover")
    tg.send(group, ANN, "@parley_test_bot tell me")
    await tg.wait_for(lambda: bool(tg.messages(group)))
    standby = await tg_stack.start_worker_process()  # running and idle before the kill
    await asyncio.sleep(0.3)  # past the moment the worker learns the message's id
    ((session, token),) = (await lease_tokens(tg_stack.redis_url)).items()
    tg_stack.kill(first)
    killed = time.monotonic()

    async def taken_over() -> bool:
        return (await lease_tokens(tg_stack.redis_url)).get(session, token) != token

    takeover = await until(taken_over, "a running worker taking the session over")
    taker = (await lease_tokens(tg_stack.redis_url))[session]
    await tg.wait_for(lambda: [m.text for m in tg.messages(group)] == [ANSWER])
    complete = time.monotonic() - killed
    await idle(tg_stack.redis_url)
    gate.set()
    print(
        f"\nkill -> takeover {takeover:.1f} s, kill -> complete answer {complete:.1f} s "
        "(default lease and sweep settings)"
    )
    assert takeover < 10
    assert tg_stack.worker_named(taker.split(":")[1]) is standby
    assert len(tg.sent[group.id]) == 1, "the reply was posted a second time"
    (message,) = tg.messages(group)
    shown = [*message.history, message.text]
    resumed = shown[next(i for i, text in enumerate(shown) if not CUT.startswith(text)) :]
    assert all(ANSWER.startswith(t) for t in resumed)  # no text twice, nothing out of order
    assert resumed == sorted(resumed, key=len)
    assert len(tg_stack.fake.requests) == 2
    async with tg_stack.client() as client:
        recorded = (await client.get(f"/api/sessions/{session}")).json()
    assert (recorded["messages"], recorded["runs"]) == (2, 1)  # and recorded once


async def test_refused_formatting_falls_back_to_plain_text(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker_process()
    tg_stack.tg.fail_next(
        "sendMessage", 400, "Bad Request: can't parse entities: unsupported entity", count=1
    )
    tg_stack.fake.enqueue(Reply(text="Some **bold** words."))
    group = tg_stack.tg.group("Plain")
    tg_stack.tg.send(group, ANN, "@parley_test_bot hi")
    shown = await replies(tg_stack, group)
    assert shown == ["Some bold words."]
    refused = [c for c in tg_stack.tg.calls if c.method == "sendMessage" and not c.ok]
    assert len(refused) == 1
    log = (tg_stack.tmp / "worker-0.log").read_text()
    assert "sending plain text" in log and TOKEN.split(":")[1] not in log


@pytest.mark.parametrize("tg_stack", [{"PARLEY_TELEGRAM_GROUP_TRIGGER": "all"}], indirect=True)
async def test_many_replies_at_once_stay_inside_the_flood_limits(tg_stack: TelegramStack) -> None:
    """Two workers, eight private chats and one busy group, all streaming at the same time:
    the shared budget paces them so no call is made during a penalty and every reply lands."""
    await tg_stack.start_worker()
    await tg_stack.start_worker()
    text = " ".join(f"w{i}" for i in range(120))
    tg_stack.fake.responder = lambda _: Reply(text=text, chunk_size=6, delay=0.01)
    users = [TgUser(id=2000 + i, first_name=f"U{i}") for i in range(8)]
    chats = [tg_stack.tg.private_chat(user) for user in users]
    group = tg_stack.tg.group("Busy")
    for user, chat in zip(users, chats, strict=True):
        tg_stack.tg.send(chat, user, "go")
        tg_stack.tg.send(group, user, "and here")
    for chat in chats:
        assert await replies(tg_stack, chat) == [text]
    shown = await replies(tg_stack, group)
    assert all(t == text for t in shown) and 1 <= len(shown) <= 8
    assert tg_stack.tg.flood_violations == 0
    print(
        f"\n{len(tg_stack.tg.calls)} Bot API calls, {tg_stack.tg.floods} answered 429, "
        f"{len(shown)} group turns (merged messages)"
    )


async def test_refused_drafts_fall_back_to_a_message_edited_in_place(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    tg_stack.tg.fail_next("sendMessageDraft", 400, "Bad Request: TEXTDRAFT_PEER_INVALID")
    text = " ".join(f"w{i}" for i in range(200))
    tg_stack.fake.enqueue(Reply(text=text, chunk_size=8, delay=0.01))
    chat = tg_stack.tg.private_chat(ANN)
    tg_stack.tg.send(chat, ANN, "hi")
    assert await replies(tg_stack, chat) == [text]
    assert [d for d in tg_stack.tg.drafts if d.chat_id == chat.id] == []
    assert tg_stack.tg.messages(chat)[0].edits >= 1


async def test_a_running_tool_shows_compactly_and_leaves_no_trace(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    tg_stack.fake.enqueue(
        Reply(
            text="Let me wait.",
            tool_calls=[ToolCallSpec("slow_write", {"path": "/dev/null", "seconds": 1.5})],
        ),
        Reply(text="Done waiting."),
    )
    group = tg_stack.tg.group("Tools")
    tg_stack.tg.send(group, ANN, "@parley_test_bot wait a bit")
    shown = await replies(tg_stack, group)
    message = tg_stack.tg.messages(group)[0]
    assert shown == ["Let me wait.\n\nDone waiting."]
    assert any("🔧 slow_write…" in old for old in message.history)
    assert any(
        chat_id == group.id and action == "typing" for chat_id, action, _ in tg_stack.tg.actions
    )
