"""Telegram replies end to end: fake Bot API ← web app → Redis → a worker process → fake Bot API.

The real aiogram Bot talks HTTP to the fake, which is as strict as Telegram (4096 limit,
"message is not modified", entity checks, drafts only in private chats, flood control).
"""

from __future__ import annotations

import asyncio
import itertools
import json

import pytest

from tests.fakes.llm import RecordedRequest, Reply
from tests.fakes.tg import Call, TgChat, TgUser
from tests.support.stack import idle
from tests.support.telegram import TelegramStack

ANN = TgUser(id=1001, first_name="Ann", username="ann")
BOB = TgUser(id=1002, first_name="Bob", username="bob")


def said(request: RecordedRequest) -> str:
    """What the person wrote last (the model also sees a time stamp before it)."""
    return request.last_user_text().splitlines()[-1]


async def replies(stack: TelegramStack, chat: object, count: int = 1, **kw: object) -> list[str]:
    """The texts of the bot's messages in `chat`, once there are `count` of them and the
    worker has finished the turn."""
    tg = stack.tg

    def ready() -> bool:
        return len(tg.messages(chat, **kw)) >= count  # type: ignore[arg-type]

    await tg.wait_for(ready)
    await idle(stack.redis_url)
    return [m.text for m in tg.messages(chat, **kw)]  # type: ignore[arg-type]


async def test_private_reply_streams_as_a_draft_and_lands_as_one_message(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    text = "Here is **the answer**: " + " ".join(f"word{i}" for i in range(150))
    tg_stack.fake.enqueue(Reply(text=text, chunk_size=12, delay=0.02))
    chat = tg_stack.tg.private_chat(ANN)
    tg_stack.tg.send(chat, ANN, "tell me something")
    (shown,) = await replies(tg_stack, chat)
    assert shown.startswith("Here is the answer: word0")
    assert shown.endswith("word149")
    drafts = [d for d in tg_stack.tg.drafts if d.chat_id == chat.id]
    assert len(drafts) >= 2, "the reply was not streamed as drafts"
    assert all(d.can_stop for d in drafts)
    assert len({d.draft_id for d in drafts}) == 1
    bold = tg_stack.tg.messages(chat)[0].entities
    assert any(e["type"] == "bold" for e in bold)
    assert tg_stack.tg.flood_violations == 0
    assert [c for c in tg_stack.tg.calls if not c.ok] == []


@pytest.mark.parametrize("tg_stack", [{"PARLEY_TELEGRAM_STREAM": "edit"}], indirect=True)
async def test_a_private_reply_may_stream_as_a_message_edited_in_place(
    tg_stack: TelegramStack,
) -> None:
    """For clients that keep a stale draft painted: no draft at all, one message edited."""
    await tg_stack.start_worker()
    text = "Here is **the answer**: " + " ".join(f"word{i}" for i in range(150))
    tg_stack.fake.enqueue(Reply(text=text, chunk_size=12, delay=0.02))
    chat = tg_stack.tg.private_chat(ANN)
    tg_stack.tg.send(chat, ANN, "tell me something")
    (shown,) = await replies(tg_stack, chat)
    assert shown.startswith("Here is the answer: word0") and shown.endswith("word149")
    assert [d for d in tg_stack.tg.drafts if d.chat_id == chat.id] == []
    [message] = tg_stack.tg.messages(chat)
    assert message.edits >= 1, "the reply was not streamed as edits"
    assert tg_stack.tg.flood_violations == 0


UPDATES = ("sendMessage", "sendMessageDraft", "editMessageText")


def calls_in(stack: TelegramStack, chat: TgChat, *methods: str) -> list[Call]:
    """The bot's successful calls of `methods` in `chat`, in order."""
    return [
        c
        for c in stack.tg.calls
        if c.ok and c.method in methods and str(c.params.get("chat_id")) == str(chat.id)
    ]


@pytest.mark.parametrize("kind", ["private", "group"])
async def test_a_short_reply_is_one_message(tg_stack: TelegramStack, kind: str) -> None:
    """Its first words may show at once (a draft in a private chat, the message itself in a
    group), and the reply is still one message: a private chat's draft becomes the message,
    a group's message is edited in place, never posted twice."""
    await tg_stack.start_worker()
    tg = tg_stack.tg
    chat = tg.private_chat(ANN) if kind == "private" else tg.group("Short")
    for n in range(2):  # the second turn reuses what the first one set up
        tg_stack.fake.enqueue(Reply(text=f"Sure: **{n}** <angle> & ampersand.", chunk_size=4))
        tg.send(chat, ANN, f"@parley_test_bot quick {n}")
        await replies(tg_stack, chat, n + 1)
    shown = [m.text for m in tg.messages(chat)]
    assert shown == [f"Sure: {n} <angle> & ampersand." for n in range(2)]
    updates = [c.method for c in calls_in(tg_stack, chat, *UPDATES)]
    assert updates.count("sendMessage") == 2, updates
    assert ("editMessageText" if kind == "private" else "sendMessageDraft") not in updates


async def test_a_quick_reply_shows_no_typing(tg_stack: TelegramStack) -> None:
    """A reply whose words show at once needs no "typing" before them: no sendChatAction
    spends the chat's budget (the second turn, on a worker that has answered before)."""
    await tg_stack.start_worker()
    tg = tg_stack.tg
    chat = tg.private_chat(ANN)
    for n in range(2):
        tg_stack.fake.enqueue(Reply(text=f"Hello {n}."))
        tg.send(chat, ANN, f"hi {n}")
        await replies(tg_stack, chat, n + 1)
    assert calls_in(tg_stack, chat, "sendChatAction") == []


async def test_a_slow_reply_shows_typing_until_its_words_come(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    tg = tg_stack.tg
    gate = asyncio.Event()
    tg_stack.fake.enqueue(Reply(text="At last.", gate=gate))  # nothing until the gate opens
    chat = tg.private_chat(ANN)
    tg.send(chat, ANN, "take your time")
    await tg.wait_for(lambda: bool(calls_in(tg_stack, chat, "sendChatAction")), what="typing")
    gate.set()
    assert await replies(tg_stack, chat) == ["At last."]
    calls = calls_in(tg_stack, chat, "sendChatAction", *UPDATES)
    first_text = next(i for i, c in enumerate(calls) if c.method != "sendChatAction")
    typing = [i for i, c in enumerate(calls) if c.method == "sendChatAction"]
    assert all(calls[i].params["action"] == "typing" for i in typing)
    assert max(typing) < first_text, "typing was shown over the reply's words"


async def test_an_edit_refused_by_flood_control_is_made_by_the_last_update(
    tg_stack: TelegramStack,
) -> None:
    """An intermediate edit that met a 429 was not shown: when no text follows it, the last
    update must still make it, or the message keeps its older text for good."""
    await tg_stack.start_worker()
    tg = tg_stack.tg
    first, rest = "Part one of the answer.", " Part two, later."
    gate = asyncio.Event()
    # The model's events come 1.5 s apart and wait at the gate after the first text: the
    # rest then comes alone, an intermediate edit shows it (refused), and the turn ends
    # seconds later with nothing new.
    tg_stack.fake.enqueue(
        Reply(text=first + rest, chunk_size=len(first), delay=1.5, gate=gate, gate_after=4)
    )
    group = tg.group("Flooded")
    tg.send(group, ANN, "@parley_test_bot go")
    await tg.wait_for(lambda: [m.text for m in tg.messages(group)] == [first])
    tg.fail_next("editMessageText", 429, "Too Many Requests: retry after 1", retry_after=1)
    gate.set()
    await tg.wait_for(lambda: [m.text for m in tg.messages(group)] == [first + rest])
    refused = [c for c in tg.calls if c.method == "editMessageText" and not c.ok]
    assert [c.params["text"] for c in refused] == [first + rest]
    assert tg.flood_violations == 0


async def test_drafts_are_paced_evenly_from_the_first_one(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    pace = 1 / 2  # drafts: two a second per chat (adapters.telegram.client)
    text = " ".join(f"word{i}" for i in range(400))
    tg_stack.fake.enqueue(Reply(text=text, chunk_size=8, delay=0.01))  # about 3.5 s
    chat = tg_stack.tg.private_chat(BOB)
    tg_stack.tg.send(chat, BOB, "a long one please")
    assert await replies(tg_stack, chat) == [text]
    drafts = [d for d in tg_stack.tg.drafts if d.chat_id == chat.id]
    gaps = [later.at - earlier.at for earlier, later in itertools.pairwise(drafts)]
    print(f"{len(drafts)} drafts, gaps (s): {', '.join(f'{g:.3f}' for g in gaps)}")
    assert len(drafts) >= 3, "the reply was not streamed"
    assert min(gaps) >= pace - 0.03, gaps
    assert [c.method for c in calls_in(tg_stack, chat, "sendMessage")] == ["sendMessage"]


async def test_group_answers_only_when_mentioned_replied_to_or_commanded(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    tg_stack.fake.responder = lambda request: Reply(text=f"re: {said(request)}")
    group = tg_stack.tg.group("Team")
    tg_stack.tg.send(group, ANN, "just chatting among ourselves")
    tg_stack.tg.send(group, ANN, "@parley_test_bot what is 2+2?")
    first = await replies(tg_stack, group)
    assert first == ["re: what is 2+2?"]
    bot_message = tg_stack.tg.messages(group)[0]
    tg_stack.tg.send(group, BOB, "and 3+3?", reply_to=bot_message.message_id)
    second = await replies(tg_stack, group, 2)
    assert second[1] == "re: and 3+3?"
    assert len(tg_stack.fake.requests) == 2
    assert "just chatting" not in json.dumps(tg_stack.fake.requests[-1].body)
    sent = [c for c in tg_stack.tg.calls if c.method == "sendMessage"]
    assert all("reply_parameters" in c.params for c in sent)
    assert not [d for d in tg_stack.tg.drafts if d.chat_id == group.id]


async def test_each_forum_topic_is_its_own_session(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    tg_stack.fake.responder = lambda request: Reply(text=f"seen {len(request.body['messages'])}")
    forum = tg_stack.tg.supergroup("Forum", forum=True)
    ideas, bugs = tg_stack.tg.topic(forum, "Ideas"), tg_stack.tg.topic(forum, "Bugs")
    tg_stack.tg.send(forum, ANN, "@parley_test_bot one", thread_id=ideas)
    assert await replies(tg_stack, forum, thread_id=ideas) == ["seen 1"]
    tg_stack.tg.send(forum, ANN, "@parley_test_bot two", thread_id=ideas)
    tg_stack.tg.send(forum, ANN, "@parley_test_bot three", thread_id=bugs)
    assert await replies(tg_stack, forum, 2, thread_id=ideas) == ["seen 1", "seen 3"]
    assert await replies(tg_stack, forum, thread_id=bugs) == ["seen 1"]


async def test_a_reply_over_8000_characters_continues_in_new_messages(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    code = "\n".join(f"    print('line {i}')  # {'x' * 20}" for i in range(40))
    paragraphs = [f"Paragraph {i}: " + "lorem ipsum dolor sit amet " * 12 for i in range(24)]
    paragraphs.insert(12, f"```python\ndef main():\n{code}\n```")
    text = "\n\n".join(paragraphs)
    assert len(text) > 8000
    tg_stack.fake.enqueue(Reply(text=text, chunk_size=200, delay=0.01))
    group = tg_stack.tg.group("Long")
    tg_stack.tg.send(group, ANN, "@parley_test_bot write a lot")
    shown = await replies(tg_stack, group, 3)
    assert all(len(t) <= 4096 for t in shown)
    joined = "".join(shown).replace("\n", "").replace(" ", "")
    assert joined == text.replace("```python", "").replace("```", "").replace("\n", "").replace(
        " ", ""
    )
    holder = [m for m in tg_stack.tg.messages(group) if "def main():" in m.text]
    assert len(holder) == 1 and "print('line 39')" in holder[0].text
    assert any(e["type"] == "pre" for e in holder[0].entities)


async def test_markdown_with_code_and_special_characters_renders_as_entities(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    text = (
        "# Result\n\nUse `a_b*c` and _emphasis_ with [a link](https://example.com).\n\n"
        "Special: 1.5 + (2) = [3]! #tag {x} |y| ~z~ > q\n\n"
        "```bash\necho 'hi' && ls -la *.py\n```\n\nDone 🎉."
    )
    tg_stack.fake.enqueue(Reply(text=text, chunk_size=5))
    chat = tg_stack.tg.private_chat(BOB)
    tg_stack.tg.send(chat, BOB, "format something")
    (shown,) = await replies(tg_stack, chat)
    message = tg_stack.tg.messages(chat)[0]
    kinds = {e["type"] for e in message.entities}
    assert {"bold", "code", "italic", "text_link", "pre"} <= kinds
    assert "Special: 1.5 + (2) = [3]! #tag {x} |y|" in shown
    assert "echo 'hi' && ls -la *.py" in shown
    assert "```" not in shown and "**" not in shown


@pytest.mark.parametrize("tg_stack", [{"PARLEY_TELEGRAM_CHAT_RATE": "5"}], indirect=True)
async def test_flood_answers_mid_stream_keep_the_final_text_intact(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    tg_stack.tg.fail_next(
        "editMessageText", 429, "Too Many Requests: retry after 2", retry_after=2, count=2
    )
    text = " ".join(f"token{i}" for i in range(300))
    tg_stack.fake.enqueue(Reply(text=text, chunk_size=10, delay=0.01))
    group = tg_stack.tg.group("Busy")
    tg_stack.tg.send(group, ANN, "@parley_test_bot go")
    await tg_stack.tg.wait_for(
        lambda: (
            bool(tg_stack.tg.messages(group))
            and tg_stack.tg.messages(group)[-1].text.endswith("token299")
        )
    )
    assert [m.text for m in tg_stack.tg.messages(group)] == [text]
    assert tg_stack.tg.floods >= 1
    assert tg_stack.tg.flood_violations == 0
