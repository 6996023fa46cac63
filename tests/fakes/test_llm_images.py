"""The fake model APIs take images and documents only in the shapes the real ones take, as the
real SDKs see it, and let a test read back the pictures a request carried."""

from __future__ import annotations

import base64
from typing import Any, Literal

import anthropic
import openai
import pytest

from tests.fakes.llm import ANTHROPIC_KEY, OPENAI_KEY, FakeLLM, RecordedRequest, Reply, validate

PNG = b"\x89PNG\r\n\x1a\n" + bytes(24)
PICTURES = {
    "image/png": PNG,
    "image/jpeg": b"\xff\xd8\xff\xe0" + bytes(24),
    "image/gif": b"GIF89a" + bytes(24),
    "image/webp": b"RIFF" + (24).to_bytes(4, "little") + b"WEBPVP8 " + bytes(16),
}
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n%%EOF\n"
FIVE_MB = 5 * 1024 * 1024


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def image(media_type: str = "image/png", data: str | None = None, **extra: Any) -> dict[str, Any]:
    """An Anthropic image block of `data` (a small PNG unless given)."""
    source = {
        "type": "base64",
        "media_type": media_type,
        "data": b64(PNG) if data is None else data,
    }
    return {"type": "image", "source": source, **extra}


def pdf(data: bytes = PDF, **extra: Any) -> dict[str, Any]:
    source = {"type": "base64", "media_type": "application/pdf", "data": b64(data)}
    return {"type": "document", "source": source, **extra}


def asks(*blocks: dict[str, Any]) -> list[Any]:
    """One user message of a question and `blocks`."""
    return [{"role": "user", "content": [{"type": "text", "text": "What is this?"}, *blocks]}]


def data_url(mime: str, raw: bytes) -> str:
    return f"data:{mime};base64,{b64(raw)}"


def picture(url: str, **extra: Any) -> dict[str, Any]:
    """An OpenAI image part."""
    return {"type": "image_url", "image_url": {"url": url, **extra}}


def shows(*parts: dict[str, Any]) -> list[Any]:
    return [{"role": "user", "content": [{"type": "text", "text": "What is this?"}, *parts]}]


async def to_claude(fake: FakeLLM, messages: list[Any]) -> None:
    fake.enqueue(Reply(text="A picture."))
    async with anthropic.AsyncAnthropic(
        api_key=ANTHROPIC_KEY, base_url=fake.anthropic_base_url, max_retries=0
    ) as client:
        await client.messages.create(model="claude-test", max_tokens=10, messages=messages)


async def to_gpt(fake: FakeLLM, messages: list[Any]) -> None:
    fake.enqueue(Reply(text="A picture."))
    async with openai.AsyncOpenAI(
        api_key=OPENAI_KEY, base_url=fake.openai_base_url, max_retries=0
    ) as client:
        await client.chat.completions.create(model="gpt-test", messages=messages)


@pytest.mark.parametrize("media_type", list(PICTURES))
async def test_anthropic_takes_each_image_type_and_records_its_bytes(
    fake_llm: FakeLLM, media_type: str
) -> None:
    marked = image(media_type, b64(PICTURES[media_type]), cache_control={"type": "ephemeral"})
    await to_claude(fake_llm, asks(marked))
    assert fake_llm.rejected == []
    assert fake_llm.requests[0].images() == [(media_type, PICTURES[media_type])]


async def test_anthropic_takes_image_urls_and_documents(fake_llm: FakeLLM) -> None:
    by_url = {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.png"}}
    cited = pdf(title="Menu", context="Lunch", citations={"enabled": True})
    text = {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "Hi"},
    }
    await to_claude(fake_llm, asks(by_url, cited, text))
    assert fake_llm.rejected == []
    assert fake_llm.requests[0].images() == []  # an address has no bytes; documents are no images


def wrong_alphabet() -> str:
    """PNG bytes in the URL-safe alphabet, which the API does not read."""
    raw = PNG + b"\xfb\xef\xff"
    assert b64(raw) != base64.urlsafe_b64encode(raw).decode()
    return base64.urlsafe_b64encode(raw).decode()


def unpadded() -> str:
    """PNG bytes in base64 without the padding the API requires."""
    assert b64(PNG).endswith("=")
    return b64(PNG).rstrip("=")


MISMATCH = (
    "The image was specified using the image/jpeg media type, "
    "but the image appears to be a image/png image"
)
BAD_IMAGES: list[tuple[list[Any], str]] = [
    (
        asks(image("image/bmp")),
        "messages.0.content.1.image.source.base64.media_type: Input should be 'image/jpeg', "
        "'image/png', 'image/gif' or 'image/webp'",
    ),
    (asks(image("image/jpeg")), "messages.0.content.1.image.source.base64: " + MISMATCH),
    (
        asks(image("image/png", b64(b"just some text, no picture"))),
        "messages.0.content.1.image.source.base64.data: Image does not match the provided "
        "media type image/png",
    ),
    (
        asks(image("image/webp", b64(b"RIFF" + (24).to_bytes(4, "little") + b"WAVEfmt " + PNG))),
        "messages.0.content.1.image.source.base64.data: Image does not match the provided "
        "media type image/webp",
    ),
    (asks(image(data="not base64!")), "messages.0.content.1.image.source.base64: invalid base64"),
    (asks(image(data=unpadded())), "image.source.base64: invalid base64 data"),
    (asks(image(data=data_url("image/png", PNG))), "image.source.base64: invalid base64 data"),
    (asks(image(data=base64.encodebytes(PNG * 3).decode())), "base64: invalid base64 data"),
    (asks(image(data=wrong_alphabet())), "image.source.base64: invalid base64 data"),
    (asks(image(data="")), "messages.0.content.1.image.source.base64: image cannot be empty"),
    (
        asks(image(data="A" * (FIVE_MB + 4))),
        "image.source.base64: image exceeds 5 MB maximum: 5242884 bytes > 5242880 bytes",
    ),
    (
        asks({"type": "image", "source": {"type": "file", "file_id": "file_1"}}),
        "messages.0.content.1.image.source: Input tag 'file' found using 'type' does not match "
        "any of the expected tags: 'base64', 'url'",
    ),
    (
        asks({"type": "image", "source": {"type": "url"}}),
        "messages.0.content.1.image.source.url.url: Field required",
    ),
    (
        asks({"type": "image", "source": {"type": "url", "url": "cat.png"}}),
        "image.source.url.url: Input should be a valid URL",
    ),
    (asks({"type": "image"}), "messages.0.content.1.image.source: Field required"),
    (asks(image(alt="a cat")), "messages.0.content.1.image.alt: Extra inputs are not permitted"),
    (
        asks({"type": "image", "source": {**image()["source"], "name": "cat.png"}}),
        "image.source.base64.name: Extra inputs are not permitted",
    ),
    (
        [*asks(), {"role": "assistant", "content": [image()]}, {"role": "user", "content": "?"}],
        "messages.1.content.0.image: image content blocks are only allowed in user messages",
    ),
    (
        [
            *asks(),
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "shot", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": [image("image/jpeg")]}
                ],
            },
        ],
        "messages.2.content.0.tool_result.content.0.image.source.base64: " + MISMATCH,
    ),
]


@pytest.mark.parametrize(("messages", "message"), BAD_IMAGES)
async def test_anthropic_refuses_images_the_api_refuses(
    fake_llm: FakeLLM, messages: list[Any], message: str
) -> None:
    with pytest.raises(anthropic.BadRequestError) as caught:
        await to_claude(fake_llm, messages)
    assert message in str(caught.value)
    assert len(fake_llm.rejected) == 1 and message in fake_llm.rejected[0][1]


BAD_DOCUMENTS: list[tuple[dict[str, Any], str]] = [
    (pdf(b"PK\x03\x04 a zip file"), "messages.0.content.1.pdf.source.base64.data: The PDF "),
    (
        {**pdf(), "source": {**pdf()["source"], "media_type": "application/msword"}},
        "messages.0.content.1.document.source.base64.media_type: Input should be 'application/pdf'",
    ),
    (
        {**pdf(), "source": {**pdf()["source"], "data": "%PDF-1.7 not encoded"}},
        "messages.0.content.1.document.source.base64: invalid base64 data",
    ),
    (
        {"type": "document", "source": {"type": "text", "media_type": "text/html", "data": "<p>"}},
        "messages.0.content.1.document.source.text.media_type: Input should be 'text/plain'",
    ),
    (
        {"type": "document", "source": {"type": "text", "media_type": "text/plain"}},
        "messages.0.content.1.document.source.text.data: Field required",
    ),
    (
        {"type": "document", "source": {"type": "url", "url": "https://example.com/a.pdf"}},
        "document.source: Input tag 'url' found using 'type' does not match any of the "
        "expected tags: 'base64', 'text'",
    ),
    (pdf(name="menu.pdf"), "messages.0.content.1.document.name: Extra inputs are not permitted"),
    (pdf(title=7), "messages.0.content.1.document.title: Input should be a valid string"),
    (pdf(citations={"enabled": "yes"}), "document.citations.enabled: Input should be a valid boo"),
]


@pytest.mark.parametrize(("block", "message"), BAD_DOCUMENTS)
async def test_anthropic_refuses_documents_the_api_refuses(
    fake_llm: FakeLLM, block: dict[str, Any], message: str
) -> None:
    with pytest.raises(anthropic.BadRequestError) as caught:
        await to_claude(fake_llm, asks(block))
    assert message in str(caught.value)
    assert len(fake_llm.rejected) == 1 and message in fake_llm.rejected[0][1]


def test_anthropic_counts_the_5_mb_on_the_base64_text() -> None:
    """5 MiB of base64 is taken; four characters more is not."""
    raw = PNG + bytes(FIVE_MB // 4 * 3 - len(PNG))
    body = {"model": "m", "max_tokens": 5, "messages": asks(image(data=b64(raw)))}
    assert len(b64(raw)) == FIVE_MB and validate.anthropic_request(body) is None
    body["messages"] = asks(image(data=b64(raw + b"abc")))
    assert "image exceeds 5 MB maximum: 5242884 bytes" in str(validate.anthropic_request(body))


@pytest.mark.parametrize(
    ("mime", "detail"),
    [("image/png", "auto"), ("image/jpeg", "low"), ("image/gif", "high"), ("image/webp", None)],
)
async def test_openai_takes_each_image_type_and_records_its_bytes(
    fake_llm: FakeLLM, mime: str, detail: str | None
) -> None:
    extra = {"detail": detail} if detail else {}
    web = picture("https://example.com/cat.png", detail="low")
    await to_gpt(fake_llm, shows(picture(data_url(mime, PICTURES[mime]), **extra), web))
    assert fake_llm.rejected == []
    assert fake_llm.requests[0].images() == [(mime, PICTURES[mime])]  # not the web address


def role_refused(i: int, role: str) -> str:
    return (
        f"Invalid 'messages[{i}]'. Image URLs are only allowed for messages with role 'user', "
        f"but this message with role '{role}' contains an image URL."
    )


EXPECTED = "Invalid 'messages[0].content[1].image_url.url'. Expected a base64-encoded data URL"
GPT_PNG = data_url("image/png", PNG)
BAD_PICTURES: list[tuple[list[Any], str]] = [
    (
        [*shows(), {"role": "assistant", "content": [picture(GPT_PNG)]}],
        role_refused(1, "assistant"),
    ),
    ([{"role": "system", "content": [picture(GPT_PNG)]}, *shows()], role_refused(0, "system")),
    (shows(picture(data_url("image/bmp", PNG))), "but got unsupported MIME type 'image/bmp'."),
    (shows(picture("ftp://example.com/cat.png")), EXPECTED),
    (shows(picture(f"data:image/png,{b64(PNG)}")), "but got an invalid base64-encoded value."),
    (shows(picture("data:image/png;base64,not base64!")), "but got an invalid base64-encoded"),
    (shows(picture("data:image/png;base64,")), "but got empty base64-encoded bytes."),
    (shows(picture(data_url("image/jpeg", PNG))), "You uploaded an unsupported image."),
    (shows(picture(data_url("image/gif", b"no picture here"))), "You uploaded an unsupported"),
    (
        shows(picture(GPT_PNG, detail="medium")),
        "Invalid value: 'medium'. Supported values are: 'auto', 'low', and 'high'.",
    ),
    (
        shows({"type": "image_url", "image_url": {}}),
        "Missing required parameter: 'messages[0].content[1].image_url.url'.",
    ),
    (shows(image()), "Invalid value: 'image'. Supported values are: 'text', 'image_url'"),
    ([{"role": "user", "content": []}], "Invalid 'messages[0].content': empty array."),
]


@pytest.mark.parametrize(("messages", "message"), BAD_PICTURES)
async def test_openai_refuses_images_the_api_refuses(
    fake_llm: FakeLLM, messages: list[Any], message: str
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await to_gpt(fake_llm, messages)
    assert caught.value.status_code == 400
    assert len(fake_llm.rejected) == 1 and message in fake_llm.rejected[0][1]


def test_openai_allows_20_mb_of_image() -> None:
    raw = PNG + bytes(20 * 1024 * 1024 - len(PNG))
    body = {"model": "m", "messages": shows(picture(data_url("image/png", raw)))}
    assert validate.openai_request(body) is None
    body["messages"] = shows(picture(data_url("image/png", raw + b"x")))
    assert "over the 20 MB limit" in str(validate.openai_request(body))


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_images_are_those_of_the_last_user_message(api: Literal["anthropic", "openai"]) -> None:
    """Pictures of earlier turns and the assistant's words are not the ones just sent."""
    gif, webp = PICTURES["image/gif"], PICTURES["image/webp"]
    if api == "anthropic":
        first, last = (
            asks(image()),
            asks(image("image/gif", b64(gif)), image("image/webp", b64(webp))),
        )
    else:
        first = shows(picture(GPT_PNG))
        last = shows(picture(data_url("image/gif", gif)), picture(data_url("image/webp", webp)))
    body = {"messages": [*first, {"role": "assistant", "content": "A PNG."}, *last]}
    recorded = RecordedRequest(api, "/", {}, body)
    assert recorded.images() == [("image/gif", gif), ("image/webp", webp)]
    assert RecordedRequest("openai", "/", {}, {"messages": shows()}).images() == []
