"""The fake Telegram refuses what Telegram refuses, driven by the real aiogram Bot."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest
from aiogram import Bot
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.exceptions import (
    TelegramBadRequest,
    TelegramConflictError,
    TelegramRetryAfter,
    TelegramUnauthorizedError,
)
from aiogram.methods import DeleteEphemeralMessage, EditEphemeralMessageText, SendMessage
from aiogram.types import (
    EphemeralMessageParameters,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    MessageEntity,
    ReactionTypeEmoji,
    ReactionTypeUnion,
)
from aiohttp import web

from tests.fakes.tg import TOKEN, FakeTelegram, FloodLimits, TgUser
from tests.support.redis_server import free_port

ANN = TgUser(id=1001, first_name="Ann")


def bot_of(fake: FakeTelegram) -> Bot:
    return Bot(TOKEN, session=AiohttpSession(api=TelegramAPIServer.from_base(fake.base_url)))


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    limits = FloodLimits(chat_rate=1, chat_burst=2, group_per_minute=60, group_burst=2)
    async with FakeTelegram(limits=limits, callback_ttl=0.5) as telegram:
        yield telegram


async def test_wrong_token_and_unknown_method(fake: FakeTelegram) -> None:
    session = AiohttpSession(api=TelegramAPIServer.from_base(fake.base_url))
    async with Bot("1:wrong", session=session) as stranger:
        with pytest.raises(TelegramUnauthorizedError):
            await stranger.get_me()
    async with httpx.AsyncClient() as client:
        answer = await client.post(f"{fake.base_url}/bot{TOKEN}/launchRockets")
    assert answer.status_code == 404
    assert answer.json() == {"ok": False, "error_code": 404, "description": "Not Found"}


async def test_text_limits_and_not_modified(fake: FakeTelegram, bot: Bot) -> None:
    chat = fake.private_chat(ANN)
    with pytest.raises(TelegramBadRequest, match="message is too long"):
        await bot.send_message(chat.id, "x" * 4097)
    with pytest.raises(TelegramBadRequest, match="message is too long"):
        await bot.send_message(chat.id, "🎉" * 2049)  # two UTF-16 units each
    with pytest.raises(TelegramBadRequest, match="message text is empty"):
        await bot.send_message(chat.id, "  ")
    sent = await bot.send_message(chat.id, "hello")
    with pytest.raises(TelegramBadRequest, match="message is not modified"):
        await bot.edit_message_text("hello", chat_id=chat.id, message_id=sent.message_id)
    with pytest.raises(TelegramBadRequest, match="message to edit not found"):
        await bot.edit_message_text("hi", chat_id=chat.id, message_id=999)


async def test_formatting_is_checked(fake: FakeTelegram, bot: Bot) -> None:
    chat = fake.private_chat(ANN)
    with pytest.raises(TelegramBadRequest, match=r"Character '\.' is reserved"):
        await bot.send_message(chat.id, "Done.", parse_mode="MarkdownV2")
    with pytest.raises(TelegramBadRequest, match="Can't find end of the entity"):
        await bot.send_message(chat.id, "*bold", parse_mode="MarkdownV2")
    with pytest.raises(TelegramBadRequest, match="can't parse entities"):
        await bot.send_message(chat.id, "<b>bold", parse_mode="HTML")
    with pytest.raises(TelegramBadRequest, match="beyond the end of the text"):
        await bot.send_message(
            chat.id, "short", entities=[MessageEntity(type="bold", offset=2, length=9)]
        )
    ok = await bot.send_message(chat.id, r"*bold* and \. fine", parse_mode="MarkdownV2")
    assert ok.text == "bold and . fine"
    assert fake.messages(chat)[-1].entities == [{"type": "bold", "offset": 0, "length": 4}]


async def test_callback_data_over_64_bytes_is_refused(fake: FakeTelegram, bot: Bot) -> None:
    chat = fake.private_chat(ANN)
    markup = InlineKeyboardMarkup(
        inline_keyboard=[[InlineKeyboardButton(text="Go", callback_data="x" * 65)]]
    )
    with pytest.raises(TelegramBadRequest, match="BUTTON_DATA_INVALID"):
        await bot.send_message(chat.id, "press", reply_markup=markup)


async def test_drafts_only_in_private_chats(fake: FakeTelegram, bot: Bot) -> None:
    group = fake.group("G")
    with pytest.raises(TelegramBadRequest, match="TEXTDRAFT_PEER_INVALID"):
        await bot.send_message_draft(chat_id=group.id, draft_id=1, text="hi")
    chat = fake.private_chat(ANN)
    assert await bot.send_message_draft(chat_id=chat.id, draft_id=7, text="hi", can_stop=True)
    assert fake.drafts[-1].draft_id == 7 and fake.drafts[-1].can_stop


async def test_flood_control_answers_429_and_penalises_early_calls(
    fake: FakeTelegram, bot: Bot
) -> None:
    group = fake.group("G")
    await bot.send_message(group.id, "1")
    await bot.send_message(group.id, "2")
    with pytest.raises(TelegramRetryAfter) as flood:
        await bot.send_message(group.id, "3")
    assert flood.value.retry_after >= 1
    with pytest.raises(TelegramRetryAfter):
        await bot.send_message(group.id, "early")
    assert (fake.floods, fake.flood_violations) == (2, 1)
    await asyncio.sleep(flood.value.retry_after)
    await bot.send_message(group.id, "after waiting")


async def test_an_old_callback_query_cannot_be_answered(fake: FakeTelegram, bot: Bot) -> None:
    chat = fake.private_chat(ANN)
    markup = InlineKeyboardMarkup(
        inline_keyboard=[[InlineKeyboardButton(text="Go", callback_data="go")]]
    )
    sent = await bot.send_message(chat.id, "press", reply_markup=markup)
    fresh = fake.press(chat, ANN, sent.message_id, "go")
    assert await bot.answer_callback_query(fresh, text="ok")
    with pytest.raises(TelegramBadRequest, match="query is too old"):
        await bot.answer_callback_query(fresh)  # twice
    old = fake.press(chat, ANN, sent.message_id, "go")
    await asyncio.sleep(0.6)
    with pytest.raises(TelegramBadRequest, match="query is too old"):
        await bot.answer_callback_query(old)


async def test_long_polling_confirms_by_offset_and_wakes_on_a_new_update(
    fake: FakeTelegram, bot: Bot
) -> None:
    chat = fake.private_chat(ANN)
    first = fake.send(chat, ANN, "/start")
    (update,) = await bot.get_updates(timeout=1)
    assert update.update_id == first["update_id"]
    assert update.message is not None and update.message.entities is not None
    waiting = asyncio.create_task(bot.get_updates(offset=update.update_id + 1, timeout=10))
    await asyncio.sleep(0.2)
    fake.send(chat, ANN, "second")
    (woken,) = await asyncio.wait_for(waiting, 5)
    assert woken.message is not None and woken.message.text == "second"


async def test_a_waiting_getupdates_is_ended_by_the_next_one_with_a_conflict(
    fake: FakeTelegram, bot: Bot
) -> None:
    """Telegram lets one getUpdates wait at a time: a second process polling the same bot
    ends the first one's with a 409 (and so on, each way, while both poll)."""
    chat = fake.private_chat(ANN)
    waiting = asyncio.create_task(bot.get_updates(timeout=10))
    await fake.wait_for(lambda: fake.polls == 1, what="the first getUpdates waiting")
    other = Bot(TOKEN, session=AiohttpSession(api=TelegramAPIServer.from_base(fake.base_url)))
    try:
        second = asyncio.create_task(other.get_updates(timeout=10))
        with pytest.raises(TelegramConflictError, match="terminated by other getUpdates"):
            await asyncio.wait_for(waiting, 5)
        sent = fake.send(chat, ANN, "for the second")
        (update,) = await asyncio.wait_for(second, 5)
    finally:
        await other.session.close()
    assert update.update_id == sent["update_id"]


async def test_webhook_delivery_carries_the_secret_and_retries(
    fake: FakeTelegram, bot: Bot
) -> None:
    seen: list[tuple[str, int]] = []

    async def receive(request: web.Request) -> web.Response:
        update = await request.json()
        seen.append(
            (request.headers.get("X-Telegram-Bot-Api-Secret-Token", ""), update["update_id"])
        )
        return web.Response(status=500 if len(seen) == 1 else 200)

    app = web.Application()
    app.router.add_post("/hook", receive)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        await bot.set_webhook(f"http://127.0.0.1:{port}/hook", secret_token="abc_1")
        with pytest.raises(TelegramConflictError):
            await bot.get_updates()  # 409 conflict while a webhook is set
        update = fake.send(fake.private_chat(ANN), ANN, "hi")
        await fake.wait_for(lambda: len(seen) == 2)
    finally:
        await runner.cleanup()
    assert seen == [("abc_1", update["update_id"])] * 2
    assert [status for _, status in fake.deliveries] == [500, 200]


async def test_forum_topics(fake: FakeTelegram, bot: Bot) -> None:
    forum = fake.supergroup("F", forum=True)
    topic = fake.topic(forum, "Ideas")
    sent = await bot.send_message(forum.id, "in topic", message_thread_id=topic)
    assert sent.message_thread_id == topic and sent.is_topic_message
    with pytest.raises(TelegramBadRequest, match="message thread not found"):
        await bot.send_message(forum.id, "nowhere", message_thread_id=topic + 100)


async def test_topics_in_a_private_chat_once_the_bot_has_them(fake: FakeTelegram, bot: Bot) -> None:
    chat = fake.private_chat(ANN)
    assert (await bot.get_me()).has_topics_enabled is None
    with pytest.raises(AssertionError):
        fake.private_topic(chat, "Trips")
    fake.private_topics = True
    assert (await bot.get_me()).has_topics_enabled is True
    trips = fake.private_topic(chat, "Trips")
    update = fake.send(chat, ANN, "hi", thread_id=trips)
    assert update["message"]["message_thread_id"] == trips
    assert update["message"]["is_topic_message"] is True
    sent = await bot.send_message(chat.id, "in the topic", message_thread_id=trips)
    assert sent.message_thread_id == trips and sent.is_topic_message
    await bot.send_message_draft(chat.id, 7, trips, "draft")
    assert fake.drafts[-1].thread_id == trips
    await bot.send_chat_action(chat.id, "typing", message_thread_id=trips)
    for call in (
        bot.send_message(chat.id, "x", message_thread_id=trips + 100),
        bot.send_message_draft(chat.id, 7, trips + 100, "x"),
        bot.send_chat_action(chat.id, "typing", message_thread_id=trips + 100),
    ):
        with pytest.raises(TelegramBadRequest, match="message thread not found"):
            await call


async def test_message_reactions(fake: FakeTelegram, bot: Bot) -> None:
    chat = fake.private_chat(ANN)
    asked = fake.send(chat, ANN, "hello")["message"]["message_id"]
    eyes: list[ReactionTypeUnion] = [ReactionTypeEmoji(emoji="👀")]
    assert await bot.set_message_reaction(chat.id, asked, eyes)
    assert await bot.set_message_reaction(chat.id, asked, [])
    assert [r.emoji for r in fake.reactions] == [("👀",), ()]
    refused: dict[str, list[ReactionTypeUnion]] = {
        "REACTION_INVALID": [ReactionTypeEmoji(emoji="🦖")],
        "REACTIONS_TOO_MANY": [ReactionTypeEmoji(emoji="👀"), ReactionTypeEmoji(emoji="👍")],
    }
    for error, reaction in refused.items():
        with pytest.raises(TelegramBadRequest, match=error):
            await bot.set_message_reaction(chat.id, asked, reaction)
    with pytest.raises(TelegramBadRequest, match="message to react not found"):
        await bot.set_message_reaction(chat.id, asked + 100, eyes)
    assert len(fake.reactions) == 2


async def test_ephemeral_messages_are_checked_as_the_bot_api_documents_them() -> None:
    """Only in groups, with a receiver; edited by its ephemeral id and receiver alone (the
    default flood limits: the fixture's leave a group two calls at once)."""
    async with FakeTelegram() as fake, bot_of(fake) as bot:
        group, private = fake.group("Ops"), fake.private_chat(ANN)
        alone = EphemeralMessageParameters(receiver_user_id=ANN.id)
        sent = await bot(
            SendMessage(chat_id=group.id, text="for Ann", ephemeral_message_parameters=alone)
        )
        assert sent.message_id == 0 and sent.ephemeral_message_id == 1
        assert fake.messages(group) == []
        assert [m.text for m in fake.ephemerals.seen_by(group, ANN.id)] == ["for Ann"]
        with pytest.raises(TelegramBadRequest, match="only to group"):
            await bot(SendMessage(chat_id=private.id, text="x", ephemeral_message_parameters=alone))
        edit = EditEphemeralMessageText(
            chat_id=group.id, receiver_user_id=ANN.id, ephemeral_message_id=1, text="edited"
        )
        assert await bot(edit) is True
        with pytest.raises(TelegramBadRequest, match="not modified"):
            await bot(edit)
        with pytest.raises(TelegramBadRequest, match="not found"):
            await bot(edit.model_copy(update={"receiver_user_id": 1002}))
        assert await bot(
            DeleteEphemeralMessage(
                chat_id=group.id, receiver_user_id=ANN.id, ephemeral_message_id=1
            )
        )
        assert fake.ephemerals.seen_by(group, ANN.id) == []
