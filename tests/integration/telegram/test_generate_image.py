"""`generate_image` on Telegram, end to end: a person sends a photo asking for a change, the fake
model calls the tool with `edit`, the photo as the bot downloaded and stored it goes to the fake
images endpoint through the real `openai` SDK, and the picture that comes back is posted once,
as a photo (`sendPhoto`), in the same chat, before the text that follows."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from bot.telemetry import metrics
from bot.vocabulary.files import size
from tests.fakes.llm import Reply, ToolCallSpec
from tests.fakes.llm.images import picture
from tests.integration.telegram.test_replies import ANN, replies
from tests.support.images import image_bytes
from tests.support.telegram import TelegramStack

PROMPT = "The same street as a watercolour painting"


@pytest.mark.parametrize("tg_stack", [{"images": "1"}], indirect=True)
async def test_an_edited_photo_is_posted_once_as_a_photo(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    posted = metrics.PLATFORM_CALLS.labels("telegram", "sendPhoto", "ok")
    before = posted._value.get()
    chat = tg_stack.tg.private_chat(ANN)
    edit = ToolCallSpec("generate_image", {"prompt": PROMPT, "edit": True})
    tg_stack.fake.enqueue(Reply(tool_calls=[edit]), Reply(text="Painted."))
    tg_stack.tg.send_photo(chat, ANN, image_bytes((800, 600), "JPEG"), caption="paint this")
    await replies(tg_stack, chat, 1)
    [asked] = tg_stack.fake.images.requests
    [(field, name, kind, sent)] = asked.files
    assert (asked.endpoint, field, name, kind) == ("edits", "image", "image.jpg", "image/jpeg")
    with Image.open(io.BytesIO(sent)) as photo:
        assert photo.format == "JPEG"  # the photo the person sent, as the bot kept it
    [upload] = tg_stack.tg.uploads(chat)
    assert upload.upload is not None
    assert upload.upload.kind == "photo"
    drawn = picture({"prompt": PROMPT}, "1024x1024")
    assert upload.upload.data == drawn
    assert [m.text for m in tg_stack.tg.messages(chat)] == ["Painted."]
    assert posted._value.get() == before + 1
    [(_, told)] = tg_stack.fake.requests[1].tool_results()
    assert told.startswith("Changed the person's image with gpt-image-1: 1024x1024 PNG.\n")
    assert told.endswith(
        f"image.png ({size(len(drawn))}) was sent to the person; do not send it again."
    )
