"""Topics in a private chat (Bot API 9.3), end to end: once the bot has topics enabled there,
each topic of a person's private chat is a conversation of its own, whose replies, drafts and
command answers go to that topic."""

from __future__ import annotations

from tests.fakes.llm import Reply
from tests.integration.telegram.test_replies import ANN, replies
from tests.support.telegram import TelegramStack


async def test_two_topics_of_one_private_chat_are_two_sessions(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    tg = tg_stack.tg
    tg.private_topics = True
    tg_stack.fake.responder = lambda request: Reply(
        text=f"seen {len(request.body['messages'])} " + "and so on " * 20, chunk_size=6
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
    assert [c for c in tg.calls if not c.ok] == []
