"""The fake Telegram's sendPhoto and sendDocument, driven by the real aiogram Bot with the
multipart uploads it makes: what is kept (the bytes, the name, the caption, where it went),
and the refusals Telegram makes (no image, sides out of proportion, a caption too long, a
topic or a reply that does not exist, a document past 50 MB)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiogram import Bot
from aiogram.exceptions import TelegramBadRequest, TelegramEntityTooLarge, TelegramRetryAfter
from aiogram.types import BufferedInputFile, ReplyParameters

from tests.fakes.tg import FakeTelegram, TgUser
from tests.fakes.tg.uploads import DOCUMENT_BYTES
from tests.support.images import image_bytes

ANN = TgUser(id=1001, first_name="Ann")


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as telegram:
        yield telegram


async def test_a_photo_and_a_document_are_kept_as_sent(fake: FakeTelegram, bot: Bot) -> None:
    group = fake.group("Charts")
    update = fake.send(group, ANN, "plot it")
    asked = update["message"]["message_id"]
    png = image_bytes((640, 480))
    photo = await bot.send_photo(
        group.id,
        BufferedInputFile(png, "chart.png"),
        caption="The chart",
        reply_parameters=ReplyParameters(message_id=asked),
    )
    assert photo.caption == "The chart" and photo.photo is not None
    assert max(photo.photo[-1].width, photo.photo[-1].height) == 640
    table = b"city,people\nLisbon,545000\n"
    document = await bot.send_document(group.id, BufferedInputFile(table, "cities.csv"))
    assert document.document is not None and document.document.file_name == "cities.csv"
    sent = fake.uploads(group)
    assert [(m.upload.kind, m.upload.name, m.upload.data) for m in sent if m.upload] == [
        ("photo", "chart.png", png),
        ("document", "cities.csv", table),
    ]
    assert (sent[0].text, sent[0].reply_to) == ("The chart", asked)
    assert fake.messages(group) == []  # files are not text messages


async def test_what_telegram_refuses_is_refused(fake: FakeTelegram, bot: Bot) -> None:
    chat = fake.private_chat(ANN)
    with pytest.raises(TelegramBadRequest, match="IMAGE_PROCESS_FAILED"):
        await bot.send_photo(chat.id, BufferedInputFile(b"not a picture", "a.png"))
    with pytest.raises(TelegramBadRequest, match="PHOTO_INVALID_DIMENSIONS"):
        await bot.send_photo(chat.id, BufferedInputFile(image_bytes((2100, 100)), "long.png"))
    with pytest.raises(TelegramBadRequest, match="message caption is too long"):
        await bot.send_document(chat.id, BufferedInputFile(b"x", "x.txt"), caption="c" * 1025)
    with pytest.raises(TelegramBadRequest, match="message thread not found"):
        await bot.send_document(chat.id, BufferedInputFile(b"x", "x.txt"), message_thread_id=9)
    with pytest.raises(TelegramBadRequest, match="message to be replied not found"):
        await bot.send_document(
            chat.id,
            BufferedInputFile(b"x", "x.txt"),
            reply_parameters=ReplyParameters(message_id=777),
        )
    with pytest.raises(TelegramBadRequest, match="file must be non-empty"):
        await bot.send_document(chat.id, BufferedInputFile(b"", "empty.txt"))
    big = BufferedInputFile(b"x" * (DOCUMENT_BYTES + 1), "big.bin")
    with pytest.raises(TelegramEntityTooLarge):
        await bot.send_document(chat.id, big)
    assert fake.uploads(chat) == []


async def test_uploads_count_against_the_chat_s_flood_limits(fake: FakeTelegram, bot: Bot) -> None:
    chat = fake.private_chat(ANN)
    for number in range(3):  # the chat's burst
        await bot.send_document(chat.id, BufferedInputFile(b"x", f"{number}.txt"))
    with pytest.raises(TelegramRetryAfter):
        await bot.send_document(chat.id, BufferedInputFile(b"x", "3.txt"))
    assert len(fake.uploads(chat)) == 3 and fake.floods == 1
