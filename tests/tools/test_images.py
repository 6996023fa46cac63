"""`generate_image` against the fake images endpoint, through the real `openai` SDK and the real
executor: a picture is made and handed back as a file with the tokens it cost; an edit sends
the last image the person sent in the turn, as the file store keeps it; whatever the endpoint
does wrong (an error status, a link instead of the picture, bytes that are no picture, a
picture too large, no answer at all) is an error result in one sentence with no file, and the
key is never in what the model reads."""

from __future__ import annotations

import io
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from bot.assembly.agent import tool_executor
from bot.assembly.catalog import standard_tools
from bot.config.settings import Settings
from bot.files.store import FileStore
from bot.tools.base import FileRoom, ToolContext, ToolRegistry
from bot.tools.executor import ToolExecutor, ToolOutcome
from bot.tools.image_api import answer_bytes
from bot.vocabulary.envelope import Sender
from bot.vocabulary.files import MB, FileRef, size
from bot.vocabulary.messages import ToolUseBlock
from bot.vocabulary.usage import Usage
from tests.fakes.llm import OPENAI_KEY, FakeLLM
from tests.support.images import image_bytes
from tests.support.redis_server import free_port

CTX = ToolContext("tg:42", Sender(id="tg:42"))


def settings(fake: FakeLLM, tmp_path: Path, **extra: Any) -> Settings:
    given: dict[str, Any] = {
        "image_model": "gpt-image-1",
        "image_base_url": fake.openai_base_url,
        "image_api_key": OPENAI_KEY,
        "files_dir": tmp_path / "files",
    }
    return Settings(_env_file=None, **(given | extra))


def executor(configured: Settings) -> ToolExecutor:
    """The executor over Parley's own tools, as a worker builds them from `configured`."""
    return tool_executor(configured, ToolRegistry(standard_tools(configured)))


async def draw(configured: Settings, ctx: ToolContext = CTX, **arguments: Any) -> ToolOutcome:
    call = ToolUseBlock(id="c1", name="generate_image", input=arguments)
    return await executor(configured).run_one(call, ctx, {})


def pixels(data: bytes) -> tuple[str | None, tuple[int, int]]:
    with Image.open(io.BytesIO(data)) as image:
        image.load()
        return image.format, image.size


async def test_a_picture_is_made_and_handed_back_with_its_tokens(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    out = await draw(settings(fake_llm, tmp_path), prompt="A red fox", size="1536x1024")
    assert (out.is_error, out.content) == (False, "Made a picture with gpt-image-1: 1536x1024 PNG.")
    [file] = out.files
    assert file.name == "image.png" and pixels(file.data) == ("PNG", (1536, 1024))
    [asked] = fake_llm.images.requests
    assert (asked.endpoint, asked.fields) == (
        "generations",
        {"model": "gpt-image-1", "prompt": "A red fox", "n": 1, "size": "1536x1024"},
    )  # no response_format: GPT image models refuse it
    assert out.usage == Usage(input_tokens=2, output_tokens=1584)
    assert fake_llm.images.rejected == []


async def test_another_model_is_asked_for_base64_and_may_say_no_tokens(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    out = await draw(settings(fake_llm, tmp_path, image_model="dall-e-2"), prompt="A fox")
    assert not out.is_error and pixels(out.files[0].data) == ("PNG", (1024, 1024))
    assert fake_llm.images.requests[0].fields["response_format"] == "b64_json"
    assert out.usage is None


async def test_an_edit_sends_the_last_image_the_person_sent(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    configured = settings(fake_llm, tmp_path)
    store = FileStore(configured.files_dir)
    first = store.put(image_bytes((40, 30)), "image/png", "first.png")
    photo = image_bytes((64, 48), "JPEG")
    last = store.put(photo, "image/jpeg", "holiday.jpg")
    ctx = replace(CTX, images=(first, last))
    out = await draw(configured, ctx, prompt="Make the sky purple", edit=True)
    assert (out.is_error, out.content) == (
        False,
        "Changed the person's image with gpt-image-1: 1024x1024 PNG.",
    )
    [asked] = fake_llm.images.requests
    assert asked.endpoint == "edits"
    assert asked.fields == {"model": "gpt-image-1", "prompt": "Make the sky purple", "n": 1,
                            "size": "1024x1024"}  # fmt: skip
    assert asked.files == (("image", "image.jpg", "image/jpeg", photo),)
    assert out.usage == Usage(input_tokens=4 + 323, output_tokens=1056)


@pytest.mark.parametrize(
    ("images", "told"),
    [
        ((), "Not made: edit changes an image the person sent with this message, and none came"),
        ((FileRef(sha256="a" * 64, media_type="image/gif", size=9),),
         "Not made: the person's image is image/gif; an edit takes PNG, JPEG or WebP."),
        ((FileRef(sha256="b" * 64, media_type="image/png", size=9),),
         "Not made: the person's image is no longer kept here; ask them to send it again."),
    ],
)  # fmt: skip
async def test_an_edit_without_an_image_to_change_asks_nothing_of_the_endpoint(
    fake_llm: FakeLLM, tmp_path: Path, images: tuple[FileRef, ...], told: str
) -> None:
    ctx = replace(CTX, images=images)
    out = await draw(settings(fake_llm, tmp_path), ctx, prompt="Bluer", edit=True)
    assert out.is_error and out.content.startswith(told) and out.files == ()
    assert fake_llm.images.requests == []


@pytest.mark.parametrize(
    ("status", "message", "code", "told"),
    [
        (400, f"Your request was rejected by the safety system (key {OPENAI_KEY}).",
         "moderation_blocked",
         "Not made: the image endpoint refused the request (400, moderation_blocked): Your "
         "request was rejected by the safety system (key [redacted])."),
        (401, f"Incorrect API key provided: {OPENAI_KEY}.", None,
         "Not made: the image endpoint refused Parley's key (401); the operator should check "
         "PARLEY_IMAGE_API_KEY."),
        (429, "You exceeded your current quota.", "insufficient_quota",
         "Not made: the image endpoint is busy or out of quota (429); try again later."),
        (500, "The server had an error", None,
         "Not made: the image endpoint failed (500); try again later."),
    ],
)  # fmt: skip
async def test_an_endpoint_error_is_one_sentence_without_the_key_and_gives_the_room_back(
    fake_llm: FakeLLM, tmp_path: Path, status: int, message: str, code: str | None, told: str
) -> None:
    for _ in range(2):  # the SDK tries a 429 or a 5xx once more
        fake_llm.images.fail_next(status, message, code)
    room = FileRoom(files=1, out_bytes=0)
    out = await draw(settings(fake_llm, tmp_path), replace(CTX, files=room), prompt="A fox")
    assert (out.is_error, out.content, out.files) == (True, told, ())
    assert OPENAI_KEY not in out.content
    assert room.files == 1  # no file was made: the turn may still send one


async def test_a_link_instead_of_the_picture_is_refused_and_never_fetched(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    fake_llm.images.links = True
    out = await draw(settings(fake_llm, tmp_path, image_model="dall-e-2"), prompt="A fox")
    assert out.is_error and out.files == ()
    assert out.content.startswith(
        "Not made: the image endpoint answered with a link instead of the picture"
    )
    assert len(fake_llm.images.requests) == 1  # the link's host was never asked


@pytest.mark.parametrize(
    ("answer", "told"),
    [
        (b"<html><body>Sorry</body></html>",
         "Not made: the image endpoint's answer is not a PNG, JPEG or WebP picture."),
        (b"GIF89a" + b"\0" * 20,
         "Not made: the image endpoint's answer is not a PNG, JPEG or WebP picture."),
    ],
)  # fmt: skip
async def test_an_answer_that_is_no_picture_is_refused_and_its_tokens_still_count(
    fake_llm: FakeLLM, tmp_path: Path, answer: bytes, told: str
) -> None:
    fake_llm.images.script(answer)
    out = await draw(settings(fake_llm, tmp_path), prompt="A fox")
    assert (out.is_error, out.content, out.files) == (True, told, ())
    assert out.usage == Usage(input_tokens=1, output_tokens=1056)  # the endpoint spent them


async def test_a_picture_larger_than_a_file_sent_may_be_is_refused_before_it_is_decoded(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    configured = settings(fake_llm, tmp_path, send_file_mb=0.001)  # 1048 bytes
    out = await draw(configured, prompt="A fox")
    assert out.is_error and out.files == ()
    assert out.content == "Not made: the picture is larger than the 1 KB a file sent may be."


async def test_an_answer_past_its_bound_is_refused_as_it_streams_in(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    """The answer's JSON is not held whole: past the base64 of the largest picture and a
    little room, reading stops."""
    configured = settings(fake_llm, tmp_path, send_file_mb=0.001)
    fake_llm.images.script(os.urandom(200_000))  # about 267 KB of base64 in the answer
    out = await draw(configured, prompt="A fox")
    most = answer_bytes(int(0.001 * MB))
    assert most < 267_000
    assert (out.is_error, out.files) == (True, ())
    assert out.content == (
        f"Not made: the image endpoint's answer is larger than the {size(most)} a picture "
        "that may be sent takes."
    )


async def test_a_turn_that_sent_its_files_asks_nothing_of_the_endpoint(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    ctx = replace(CTX, files=FileRoom(files=0, out_bytes=0))
    out = await draw(settings(fake_llm, tmp_path), ctx, prompt="A fox")
    assert out.is_error and out.content.startswith("Not made: this turn may send no more files")
    assert fake_llm.images.requests == []


async def test_an_endpoint_out_of_reach_is_one_sentence(fake_llm: FakeLLM, tmp_path: Path) -> None:
    away = f"http://127.0.0.1:{free_port()}/v1"
    out = await draw(settings(fake_llm, tmp_path, image_base_url=away), prompt="A fox")
    assert (out.is_error, out.content) == (
        True,
        "Not made: the image endpoint could not be reached; try again later.",
    )


@pytest.mark.parametrize(
    ("arguments", "told"),
    [
        ({"prompt": ""}, "prompt: String should have at least 1 character"),
        ({"prompt": "x" * 4001}, "prompt: String should have at most 4000 characters"),
        ({"prompt": "A fox", "size": "4096x4096"}, "size: Input should be '1024x1024', "),
        ({"prompt": "A fox", "url": "http://x"}, "url: Extra inputs are not permitted"),
    ],
)
async def test_arguments_are_bounded_before_the_endpoint_is_asked(
    fake_llm: FakeLLM, tmp_path: Path, arguments: dict[str, Any], told: str
) -> None:
    out = await draw(settings(fake_llm, tmp_path), **arguments)
    assert out.is_error and out.content.startswith(f"Invalid arguments for generate_image: {told}")
    assert fake_llm.images.requests == []
