"""The fake Telegram's files, driven by the real aiogram Bot: a photo in Telegram's sizes,
getFile and the download, and the refusals Telegram makes (an unknown file, one past the
20 MB a bot may download, a wrong token)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from aiogram import Bot
from aiogram.exceptions import TelegramBadRequest
from aiogram.types import Message

from tests.fakes.tg import TOKEN, FakeTelegram, TgUser
from tests.fakes.tg.files import DOWNLOAD_CAP
from tests.support.images import image_bytes

ANN = TgUser(id=1001, first_name="Ann")


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as telegram:
        yield telegram


async def test_a_photo_comes_in_telegram_s_sizes_and_downloads(
    fake: FakeTelegram, bot: Bot
) -> None:
    update = fake.send_photo(fake.private_chat(ANN), ANN, image_bytes((1000, 500)), caption="hi")
    sizes = update["message"]["photo"]
    assert [max(s["width"], s["height"]) for s in sizes] == [90, 320, 800, 1000]
    assert update["message"]["caption"] == "hi"
    file = await bot.get_file(sizes[-1]["file_id"])
    assert file.file_path is not None and file.file_size == sizes[-1]["file_size"]
    downloaded = await bot.download(file)
    assert downloaded is not None and len(downloaded.read()) == file.file_size
    assert fake.shelf.downloads == [file.file_path]


async def test_unknown_and_too_big_files_are_refused(fake: FakeTelegram, bot: Bot) -> None:
    with pytest.raises(TelegramBadRequest, match="invalid file_id"):
        await bot.get_file("AgACnope")
    big = fake.send_document(
        fake.private_chat(ANN), ANN, b"x" * (DOWNLOAD_CAP + 1), "big.bin", "application/zip"
    )
    with pytest.raises(TelegramBadRequest, match="file is too big"):
        await bot.get_file(big["message"]["document"]["file_id"])
    [stored] = fake.shelf.files.values()
    async with httpx.AsyncClient(base_url=fake.base_url) as client:
        wrong = await client.get(f"/file/bot1:wrong/{stored.path}")
        over = await client.get(f"/file/bot{TOKEN}/{stored.path}")
        missing = await client.get(f"/file/bot{TOKEN}/documents/nothing.bin")
    assert [wrong.status_code, over.status_code, missing.status_code] == [401, 404, 404]


@pytest.mark.parametrize("kind", ["voice", "audio", "video_note"])
async def test_a_recording_comes_as_the_bot_api_describes_it_and_downloads(
    fake: FakeTelegram, bot: Bot, kind: str
) -> None:
    update = fake.send_recording(fake.private_chat(ANN), ANN, kind, b"OggS" + bytes(500),
                                 duration=7, mime_type="audio/ogg", caption="listen")  # fmt: skip
    message = Message.model_validate(update["message"])  # as aiogram reads it
    recording = getattr(message, kind)
    assert (recording.duration, recording.file_size) == (7, 504)
    assert (message.caption or "") == "listen"
    file = await bot.get_file(recording.file_id)
    downloaded = await bot.download(file)
    assert downloaded is not None and downloaded.read() == b"OggS" + bytes(500)
