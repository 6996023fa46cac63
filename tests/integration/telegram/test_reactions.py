"""👀 on a person's message while it waits for its answer (PARLEY_TELEGRAM_REACTIONS), end
to end: set by the web process once the message is queued, taken away by the worker once
the answer landed, even when the answer is quicker than the reaction; a failed reaction
costs the reply nothing; and with the defaults no reaction at all."""

from __future__ import annotations

import asyncio

import pytest

from tests.fakes.llm import Reply, ToolCallSpec
from tests.fakes.tg import FakeTelegram, TgChat
from tests.integration.telegram.test_replies import ANN, replies
from tests.support.telegram import TelegramStack

REACTIONS = {"PARLEY_TELEGRAM_REACTIONS": "true"}


def reactions_on(tg: FakeTelegram, chat: TgChat, message_id: int) -> list[tuple[str, ...]]:
    return [r.emoji for r in tg.reactions if (r.chat_id, r.message_id) == (chat.id, message_id)]


@pytest.mark.parametrize("tg_stack", [REACTIONS], indirect=True)
async def test_eyes_while_queued_then_cleared_once_the_answer_landed(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    tg = tg_stack.tg
    gate = asyncio.Event()
    tg_stack.fake.enqueue(Reply(text="Forty-two, " + "indeed " * 30, gate=gate, gate_after=2))
    chat = tg.private_chat(ANN)
    asked = tg.send(chat, ANN, "the answer?")["message"]["message_id"]
    await tg.wait_for(lambda: reactions_on(tg, chat, asked) == [("👀",)], what="👀 set")
    assert tg.messages(chat) == []  # set while the answer was still to come
    gate.set()
    (answer,) = await replies(tg_stack, chat)
    await tg.wait_for(lambda: reactions_on(tg, chat, asked) == [("👀",), ()], what="cleared")
    names = [c.method for c in tg.calls if c.method in ("sendMessage", "setMessageReaction")]
    assert names == ["setMessageReaction", "sendMessage", "setMessageReaction"]
    assert answer.startswith("Forty-two")


@pytest.mark.parametrize("tg_stack", [REACTIONS], indirect=True)
async def test_an_answer_quicker_than_its_reaction_leaves_none(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    tg = tg_stack.tg
    slow = tg.hold("setMessageReaction")
    tg_stack.fake.enqueue(Reply(text="Quick."))
    chat = tg.private_chat(ANN)
    asked = tg.send(chat, ANN, "quick one")["message"]["message_id"]
    assert await replies(tg_stack, chat) == ["Quick."]  # answered while 👀 was on its way
    slow.set()
    await tg.wait_for(lambda: reactions_on(tg, chat, asked) == [("👀",), ()], what="cleared")


@pytest.mark.parametrize("tg_stack", [REACTIONS], indirect=True)
async def test_a_refused_reaction_costs_the_reply_nothing(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    tg = tg_stack.tg
    tg.fail_next("setMessageReaction", 400, "Bad Request: REACTION_INVALID")
    tg_stack.fake.enqueue(Reply(text="Still here."))
    chat = tg.private_chat(ANN)
    asked = tg.send(chat, ANN, "hi")["message"]["message_id"]
    assert await replies(tg_stack, chat) == ["Still here."]  # the worker is done: nothing cleared
    assert reactions_on(tg, chat, asked) == []


async def test_no_reaction_with_the_defaults(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    tg = tg_stack.tg
    tg_stack.fake.enqueue(Reply(text="Hello."))
    chat = tg.private_chat(ANN)
    tg.send(chat, ANN, "hi")
    assert await replies(tg_stack, chat) == ["Hello."]
    assert not [c for c in tg.calls if c.method == "setMessageReaction"]


@pytest.mark.parametrize("tg_stack", [REACTIONS], indirect=True)
async def test_a_message_that_joins_the_running_turn_shows_it_then_is_cleared_with_it(
    tg_stack: TelegramStack,
) -> None:
    """Steering (the default): a second message sent while the first one's turn runs gets
    👀, then ✍ once it joins the turn at its next step; one answer takes both away."""
    await tg_stack.start_worker()
    tg = tg_stack.tg
    gate = asyncio.Event()
    tool = ToolCallSpec("calculator", {"expression": "6*7"})
    tg_stack.fake.enqueue(Reply(tool_calls=[tool], gate=gate), Reply(text="The other one: 42."))
    chat = tg.private_chat(ANN)
    first = tg.send(chat, ANN, "compute it")["message"]["message_id"]
    await tg.wait_for(lambda: len(tg_stack.fake.requests) == 1, what="the first call")
    second = tg.send(chat, ANN, "no, the other one")["message"]["message_id"]
    await tg.wait_for(lambda: reactions_on(tg, chat, second) == [("👀",)], what="👀 set")
    gate.set()
    assert await replies(tg_stack, chat) == ["The other one: 42."]
    await tg.wait_for(
        lambda: reactions_on(tg, chat, second) == [("👀",), ("✍",), ()], what="✍, then cleared"
    )
    assert reactions_on(tg, chat, first) == [("👀",), ()]
    assert len(tg_stack.fake.requests) == 2  # one turn answered both
    assert "no, the other one" in str(tg_stack.fake.requests[1].body["messages"][-1])
