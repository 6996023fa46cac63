"""Topics in a private chat (Bot API 9.3), end to end: once the bot has topics enabled there,
each topic of a person's private chat is a conversation of its own, whose replies, drafts and
command answers go to that topic."""

from __future__ import annotations

import asyncio

from tests.fakes.llm import RecordedRequest, Reply
from tests.fakes.tg import Draft, TgChat
from tests.integration.telegram.test_approvals import buttons, prompt_in
from tests.integration.telegram.test_replies import ANN, replies
from tests.support.telegram import TelegramStack


async def test_two_topics_of_one_private_chat_are_two_sessions(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    tg = tg_stack.tg
    tg.private_topics = True
    tg_stack.fake.responder = lambda request: Reply(
        text=f"seen {len(request.body['messages'])} " + "and so on " * 20,
        chunk_size=6,
        delay=0.01,  # streamed, not whole before its first update (then it is one message)
    )
    chat = tg.private_chat(ANN)
    trips, work = tg.private_topic(chat, "Trips"), tg.private_topic(chat, "Work")
    tg.send(chat, ANN, "one", thread_id=trips)
    assert [t.split(" and")[0] for t in await replies(tg_stack, chat, thread_id=trips)] == [
        "seen 1"
    ]
    tg.send(chat, ANN, "two", thread_id=trips)
    tg.send(chat, ANN, "three", thread_id=work)
    in_trips = await replies(tg_stack, chat, 2, thread_id=trips)
    in_work = await replies(tg_stack, chat, thread_id=work)
    assert [t.split(" and")[0] for t in in_trips] == ["seen 1", "seen 3"]
    assert [t.split(" and")[0] for t in in_work] == ["seen 1"]  # a conversation of its own
    assert all(m.thread_id in (trips, work) for m in tg.messages(chat))
    drafts = [d for d in tg.drafts if d.chat_id == chat.id]
    assert {d.thread_id for d in drafts} == {trips, work}  # streamed in its topic
    tg.send(chat, ANN, "/help", thread_id=work)
    helped = await replies(tg_stack, chat, 2, thread_id=work)
    assert "/new" in helped[-1] and len(tg.messages(chat, thread_id=trips)) == 2
    assert tg.flood_violations == 0  # two topics of one chat share its budget
    assert not [c for c in tg.calls if not c.ok and "retry after" not in (c.error or "")]


async def test_a_drafts_stop_button_stops_its_topics_turn_alone(tg_stack: TelegramStack) -> None:
    """Telegram's stop button on a draft in one topic: that topic's turn ends with the text
    so far, while the other topic's reply, streaming at the same time, lands whole."""
    await tg_stack.start_worker()
    tg = tg_stack.tg
    tg.private_topics = True
    gates = {"trips": asyncio.Event(), "work": asyncio.Event()}
    long = "word " * 60

    def reply(request: RecordedRequest) -> Reply:
        which = "trips" if "trips" in request.last_user_text() else "work"
        return Reply(text=f"{which}: {long}", chunk_size=5, gate=gates[which], gate_after=6)

    tg_stack.fake.responder = reply
    chat = tg.private_chat(ANN)
    trips, work = tg.private_topic(chat, "Trips"), tg.private_topic(chat, "Work")
    tg.send(chat, ANN, "trips please", thread_id=trips)
    tg.send(chat, ANN, "work please", thread_id=work)

    def drafting(topic: int) -> list[Draft]:
        return [d for d in tg.drafts if d.thread_id == topic and d.text]

    await tg.wait_for(lambda: bool(drafting(trips)) and bool(drafting(work)), what="drafts")
    tg.stop_generation(chat, drafting(trips)[-1].draft_id, trips)
    (stopped,) = await shown_in(tg_stack, chat, trips)
    gates["work"].set()
    gates["trips"].set()
    assert stopped.startswith("trips: word") and stopped.endswith("⏹ Stopped.")
    assert await replies(tg_stack, chat, thread_id=work) == [f"work: {long}".strip()]


async def shown_in(stack: TelegramStack, chat: TgChat, topic: int) -> list[str]:
    """The texts of the bot's messages in `topic` once there is one (no wait for idle: the
    other topic's turn still runs)."""
    await stack.tg.wait_for(lambda: bool(stack.tg.messages(chat, thread_id=topic)))
    return [m.text for m in stack.tg.messages(chat, thread_id=topic)]


async def test_an_approval_asked_in_a_topic_is_prompted_and_answered_there(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    tg = tg_stack.tg
    tg.private_topics = True
    chat = tg.private_chat(ANN)
    trips, work = tg.private_topic(chat, "Trips"), tg.private_topic(chat, "Work")
    prompt = await prompt_in(tg_stack, chat, thread_id=work)
    assert prompt.thread_id == work
    tg_stack.fake.enqueue(Reply(text="Launched!"))
    tg.press(chat, ANN, prompt.message_id, buttons(prompt)["✅ Approve"])
    shown = await replies(tg_stack, chat, 3, thread_id=work)
    assert shown[-1] == "Launched!"
    assert tg.messages(chat, thread_id=trips) == []
