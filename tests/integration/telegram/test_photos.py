"""Photos and files sent to the bot on Telegram, end to end through the fake Bot API
(getFile and the file download) to the fake model: the photo size that is enough, the
caption as the turn's text, an image document as it was, a PDF and a CSV as documents, and a
clear sentence, with nothing downloaded or queued, where it is not to be read."""

from __future__ import annotations

import base64
import io
from typing import Any

import pytest
from PIL import Image

from bot.files.documents import DOCX
from bot.files.reader import UNREAD
from tests.fakes.llm import Reply
from tests.fakes.tg import TgUser
from tests.integration.telegram.test_replies import ANN, replies, said
from tests.support.documents import docx_bytes, pdf_bytes
from tests.support.images import image_bytes
from tests.support.telegram import TelegramStack

EVE = TgUser(id=666, first_name="Eve", username="eve")


async def test_a_photo_with_its_caption_reaches_the_model(tg_stack: TelegramStack) -> None:
    """With the defaults. Telegram keeps the photo at 90 to 2560 px; the 1280 px one is the
    largest within the 1568 px a model is sent, and goes to the model as Telegram made it."""
    await tg_stack.start_worker()
    tg_stack.fake.responder = lambda request: Reply(text=f"seen: {said(request)}")
    chat = tg_stack.tg.private_chat(ANN)
    update = tg_stack.tg.send_photo(
        chat, ANN, image_bytes((3000, 2000), "JPEG"), caption="What's this?"
    )
    assert await replies(tg_stack, chat) == ["seen: What's this?"]
    [request] = tg_stack.fake.requests
    [(kind, sent)] = request.images()
    with Image.open(io.BytesIO(sent)) as seen:
        assert (kind, seen.size) == ("image/jpeg", (1280, 853))
    sizes = update["message"]["photo"]
    [taken] = [s for s in sizes if s["width"] == 1280]
    assert tg_stack.tg.shelf.downloads == [tg_stack.tg.shelf.files[taken["file_id"]].path]
    assert sent == tg_stack.tg.shelf.files[taken["file_id"]].data


async def test_a_photo_alone_and_an_image_file_are_turns_of_their_own(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    tg_stack.fake.enqueue(Reply(text="A photo."), Reply(text="A screenshot."))
    chat = tg_stack.tg.private_chat(ANN)
    tg_stack.tg.send_photo(chat, ANN, image_bytes((400, 300), "JPEG"))
    assert await replies(tg_stack, chat) == ["A photo."]
    screenshot = image_bytes((500, 300), "PNG")
    tg_stack.tg.send_document(chat, ANN, screenshot, "screen.png", "image/png")
    assert (await replies(tg_stack, chat, 2))[1] == "A screenshot."
    assert [r.images()[0][0] for r in tg_stack.fake.requests] == ["image/jpeg", "image/png"]
    assert tg_stack.fake.requests[1].images() == [("image/png", screenshot)]  # as it was


async def test_a_pdf_and_a_csv_reach_the_model_as_documents(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    tg_stack.fake.enqueue(Reply(text="42 EUR is due."), Reply(text="Two rows."))
    chat = tg_stack.tg.private_chat(ANN)
    invoice = pdf_bytes(["Invoice 7", "Total due: 42 EUR"])
    tg_stack.tg.send_document(
        chat, ANN, invoice, "invoice.pdf", "application/pdf", caption="What is due?"
    )
    assert await replies(tg_stack, chat) == ["42 EUR is due."]
    table = b"city,people\nLisbon,545000\nPorto,232000\n"
    tg_stack.tg.send_document(chat, ANN, table, "cities.csv", "text/csv")
    assert (await replies(tg_stack, chat, 2))[1] == "Two rows."
    first, second = tg_stack.fake.requests
    [pdf] = documents(first.body)
    assert pdf["source"] == {
        "type": "base64", "media_type": "application/pdf",
        "data": base64.b64encode(invoice).decode(),
    }  # fmt: skip
    assert pdf["title"] == "invoice.pdf" and said(first) == "What is due?"
    [csv] = documents(second.body)
    assert csv["source"] == {"type": "text", "media_type": "text/plain", "data": table.decode()}


def documents(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The document blocks of the last user message of an Anthropic request."""
    last = [m for m in body["messages"] if m["role"] == "user"][-1]
    return [block for block in last["content"] if block["type"] == "document"]


@pytest.mark.parametrize("tg_stack", [{"PARLEY_ALLOWED_USERS": "tg:1001"}], indirect=True)
async def test_what_is_not_read_is_said_and_nothing_is_queued(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    chat = tg_stack.tg.private_chat(ANN)
    archive = b"PK\x03\x04" + bytes(range(256))
    tg_stack.tg.send_document(chat, ANN, archive, "data.zip", "application/zip")
    [told] = await replies(tg_stack, chat)
    assert told == f"“data.zip”: {UNREAD}"
    stranger = tg_stack.tg.private_chat(EVE)
    tg_stack.tg.send_photo(stranger, EVE, image_bytes((400, 300), "JPEG"), caption="hi")
    [refused] = await replies(tg_stack, stranger)
    assert "tg:666" in refused
    group = tg_stack.tg.group("Photos")
    tg_stack.tg.send_photo(group, ANN, image_bytes((400, 300), "JPEG"))  # not for the bot
    tg_stack.tg.send(group, ANN, "/help")  # taken after the photo: updates go in order
    [helped] = await replies(tg_stack, group)
    assert "/new" in helped
    assert tg_stack.tg.shelf.downloads == ["documents/file_1.zip"]
    assert tg_stack.fake.requests == []


async def test_a_download_that_fails_is_told_and_the_photo_taken_when_sent_again(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    tg_stack.fake.enqueue(Reply(text="Got it."))
    chat = tg_stack.tg.private_chat(ANN)
    tg_stack.tg.shelf.failing = 1
    tg_stack.tg.send_photo(chat, ANN, image_bytes((400, 300), "JPEG"), caption="this?")
    [told] = await replies(tg_stack, chat)
    assert told == "“photo.jpg”: Telegram did not hand it over in time; send it again"
    tg_stack.tg.send_photo(chat, ANN, image_bytes((400, 300), "JPEG"), caption="this?")
    assert (await replies(tg_stack, chat, 2))[1] == "Got it."
    assert len(tg_stack.fake.requests) == 1


async def test_a_word_document_reaches_the_model_as_its_text(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    tg_stack.fake.enqueue(Reply(text="Porto sold 42."))
    chat = tg_stack.tg.private_chat(ANN)
    report = docx_bytes(["Quarterly report"], [["city", "sales"], ["Porto", "42"]])
    tg_stack.tg.send_document(chat, ANN, report, "report.docx", DOCX, caption="Who sold most?")
    assert await replies(tg_stack, chat) == ["Porto sold 42."]
    [sent] = documents(tg_stack.fake.requests[0].body)
    text = "Quarterly report\ncity\tsales\nPorto\t42"
    assert sent["title"] == "report.docx"
    assert sent["source"] == {"type": "text", "media_type": "text/plain", "data": text}
