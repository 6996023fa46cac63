"""Telegram's updates in lanes, end to end: an album is one turn with all its photos, a slow
download holds up only its own chat, and within a chat nothing overtakes what came before."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.fakes.llm import RecordedRequest, Reply
from tests.fakes.tg import TgUser
from tests.integration.telegram.test_replies import ANN, replies, said
from tests.support.images import image_bytes
from tests.support.telegram import TelegramStack

BEN = TgUser(id=1002, first_name="Ben")


async def test_an_album_is_one_turn_with_every_photo(tg_stack: TelegramStack) -> None:
    """With the defaults: three photos sent together, the caption on the first."""
    await tg_stack.start_worker()
    tg_stack.fake.responder = lambda request: Reply(text=f"{len(request.images())} photos")
    chat = tg_stack.tg.private_chat(ANN)
    photos = [image_bytes((400 + 10 * i, 300), "JPEG") for i in range(3)]
    updates = tg_stack.tg.send_album(chat, ANN, photos, caption="Which is best?")
    assert await replies(tg_stack, chat) == ["3 photos"]
    [request] = tg_stack.fake.requests
    assert said(request) == "Which is best?"
    taken = [max(u["message"]["photo"], key=lambda s: s["width"]) for u in updates]
    shelf = tg_stack.tg.shelf
    assert [data for _, data in request.images()] == [shelf.files[t["file_id"]].data for t in taken]


async def test_a_slow_download_holds_up_its_own_chat_only(tg_stack: TelegramStack) -> None:
    """Ann's photo waits on a slow file server; Ben's text, sent after it, is answered
    meanwhile, while Ann's own text waits for her photo and comes after it."""
    await tg_stack.start_worker()
    tg_stack.fake.responder = lambda request: Reply(text=f"re: {said(request)}")
    held = tg_stack.tg.shelf.held = asyncio.Event()
    ann, ben = tg_stack.tg.private_chat(ANN), tg_stack.tg.private_chat(BEN)
    tg_stack.tg.send_photo(ann, ANN, image_bytes((400, 300), "JPEG"), caption="this one")
    tg_stack.tg.send(ann, ANN, "and then this")
    tg_stack.tg.send(ben, BEN, "hello")
    assert await replies(tg_stack, ben) == ["re: hello"]
    assert tg_stack.tg.messages(ann) == [] and len(tg_stack.fake.requests) == 1
    held.set()
    await tg_stack.tg.wait_for(lambda: "and then this" in _answered(tg_stack, ann))
    last = tg_stack.fake.requests[-1]
    assert _conversation(last).index("image") < _conversation(last).index("and then this")


def _answered(stack: TelegramStack, chat: Any) -> str:
    return " ".join(m.text for m in stack.tg.messages(chat))


def _conversation(request: RecordedRequest) -> list[str]:
    """The person's side of the conversation in order: each image, and each line of text."""
    out: list[str] = []
    for message in request.body["messages"]:
        if message["role"] != "user" or not isinstance(message["content"], list):
            continue
        for block in message["content"]:
            if block["type"] == "image":
                out.append("image")
            elif block["type"] == "text":
                out += block["text"].splitlines()
    return out
