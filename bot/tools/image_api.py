"""The request `generate_image` makes, through the `openai` SDK, and what its answer must be
before the picture is kept.

The client is made per call, on the call's own event loop (`bot.tools.isolation`), with the
endpoint's timeout for each attempt; a 429, a 5xx or a dropped connection is tried once more
with the SDK's backoff, no more: each try of a slow endpoint takes up to the timeout, and the
tool's own timeout is one attempt's and a little more.

GPT image models answer in base64 always and refuse `response_format`; other models (DALL·E's,
other servers') answer with a link unless they are asked for base64, so they are asked. A link
that comes anyway is refused, never fetched: Parley reaches no address an endpoint's answer
hands it. The answer is read as it streams in and refused past the base64 of the largest file
a tool may send and a little JSON, before the SDK would hold it all; the base64 is bounded by
that file's size before it is decoded, and the bytes must say they are PNG, JPEG or WebP
(`bot.files.images.media_type`, from their signature); the reader process decodes the
picture whole before it is stored (`bot.agent.attachments`), so a damaged one is not sent and
the model is told.

Whatever fails is one sentence for the model that names the kind of failure and never the
key; an endpoint's own message is quoted only where it says what to change (a prompt its
safety system refused, a size the model does not make), with the key taken out. The log line
names the status and the error's class alone, as voice notes' do (`bot.files.voice`).
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import AsyncIterator
from typing import Literal

import openai
from openai import AsyncOpenAI, Omit, omit
from openai.types import ImagesResponse

from bot.files import images
from bot.tools.base import Attachment, ToolError, ToolResult
from bot.tools.images import ImageService, Size, Source
from bot.vocabulary.files import size as file_size
from bot.vocabulary.usage import Usage

log = logging.getLogger(__name__)
RETRIES = 1  # the SDK's tries after the first, for a passing failure
IN_BASE64 = ("gpt-image", "chatgpt-image")  # model names that answer in base64 and only so
KEPT = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp"}
QUOTED = 300  # characters of an endpoint's message the model reads, at most
ANSWER_SLACK = 64 * 1024  # bytes of an answer's JSON besides its picture's base64
REDACTED = "[redacted]"


class NotMade(ToolError):
    """A request that gave no picture to keep; the tokens the endpoint spent on it, if it says
    so, are the turn's all the same (the executor reads `usage` off a tool's error)."""

    def __init__(self, message: str, usage: Usage | None = None) -> None:
        super().__init__(message)
        self.usage = usage


async def made(service: ImageService, prompt: str, size: Size, source: Source | None) -> ToolResult:
    """The picture `prompt` describes (or `source` changed as it says), for the person, with
    the tokens it cost; NotMade says why there is none."""
    key = service.key.get_secret_value() if service.key is not None else "unused"
    async with AsyncOpenAI(
        api_key=key, base_url=service.base_url, timeout=service.timeout, max_retries=RETRIES
    ) as client:
        answer = await _asked(client, service, prompt, size, source)
    usage = _usage(answer)
    data, kind = picture(answer, service.max_bytes, usage)
    what = "Changed the person's image" if source is not None else "Made a picture"
    shown = answer.size or (size if size != "auto" else "")
    text = f"{what} with {service.model}: {' '.join(filter(None, (shown, KEPT[kind].upper())))}."
    return ToolResult(text, (Attachment(f"image.{KEPT[kind]}", data),), usage)


async def _asked(
    client: AsyncOpenAI, service: ImageService, prompt: str, size: Size, source: Source | None
) -> ImagesResponse:
    """The endpoint's answer; NotMade, in a sentence without the key, when it gave none."""
    asked: Literal["b64_json"] | Omit = omit if service.model.startswith(IN_BASE64) else "b64_json"
    images = client.images.with_streaming_response
    try:
        if source is None:
            request = images.generate(
                model=service.model, prompt=prompt, size=size, n=1, response_format=asked
            )
        else:
            request = images.edit(
                image=(source.name, source.data, source.media_type), model=service.model,
                prompt=prompt, size=size, n=1, response_format=asked,
            )  # fmt: skip
        async with request as response:
            body = await _bounded(response.iter_bytes(), answer_bytes(service.max_bytes))
    except openai.APIStatusError as exc:  # its message may quote the key: not logged
        log.warning("image request refused: %s %s", exc.status_code, type(exc).__name__)
        raise NotMade(refusal(exc, service)) from None
    except openai.APITimeoutError:
        log.warning("image request timed out after %g s", service.timeout)
        raise NotMade(
            f"Not made: the image endpoint did not answer within {service.timeout:g} s; try "
            "again later."
        ) from None
    except openai.APIError as exc:
        log.warning("image request failed: %s", type(exc).__name__)
        unreached = "Not made: the image endpoint could not be reached; try again later."
        raise NotMade(unreached) from None
    try:
        return ImagesResponse.model_validate_json(body)
    except ValueError:
        log.warning("image answer of %d bytes is not an images response", len(body))
        raise NotMade("Not made: the image endpoint's answer is not an images response.") from None


def answer_bytes(max_bytes: int) -> int:
    """The most of an answer read: the base64 of the largest picture kept, and room for the
    JSON around it."""
    return 4 * -(-max_bytes // 3) + ANSWER_SLACK


async def _bounded(chunks: AsyncIterator[bytes], most: int) -> bytes:
    """The answer's bytes as they stream in; NotMade as soon as they pass `most`, before
    the rest is read."""
    body = bytearray()
    async for chunk in chunks:
        body += chunk
        if len(body) > most:
            raise NotMade(
                f"Not made: the image endpoint's answer is larger than the {file_size(most)} "
                "a picture that may be sent takes."
            )
    return bytes(body)


def refusal(exc: openai.APIStatusError, service: ImageService) -> str:
    """The sentence for an endpoint's error answer: what the model can do about it."""
    status = exc.status_code
    if status in (401, 403):
        return (
            f"Not made: the image endpoint refused Parley's key ({status}); the operator "
            "should check PARLEY_IMAGE_API_KEY."
        )
    if status == 429:
        return "Not made: the image endpoint is busy or out of quota (429); try again later."
    if status >= 500:
        return f"Not made: the image endpoint failed ({status}); try again later."
    body = exc.body if isinstance(exc.body, dict) else {}
    code = body.get("code")
    said = str(body.get("message") or "no reason given")
    if service.key is not None and (secret := service.key.get_secret_value()):
        said = said.replace(secret, REDACTED)
    said = said if len(said) <= QUOTED else said[: QUOTED - 1] + "…"
    why = f"{status}, {code}" if isinstance(code, str) and code else str(status)
    return f"Not made: the image endpoint refused the request ({why}): {said}"


def picture(answer: ImagesResponse, max_bytes: int, usage: Usage | None) -> tuple[bytes, str]:
    """The answer's picture and its type, once it is one to keep; NotMade says why not."""
    first = answer.data[0] if answer.data else None
    encoded = first.b64_json if first is not None else None
    if not encoded:
        if first is not None and first.url:
            raise NotMade(
                "Not made: the image endpoint answered with a link instead of the picture, and "
                "Parley fetches no address an endpoint hands it; the operator can name a model "
                "that answers in base64 (PARLEY_IMAGE_MODEL).",
                usage,
            )
        raise NotMade("Not made: the image endpoint answered without a picture.", usage)
    if len(encoded) > 4 * -(-max_bytes // 3):  # base64 of `max_bytes`, rounded up
        raise NotMade(
            f"Not made: the picture is larger than the {file_size(max_bytes)} a file sent may be.",
            usage,
        )
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):  # ValueError: characters outside ASCII
        raise NotMade("Not made: the image endpoint's answer is not base64.", usage) from None
    kind = images.media_type(data)
    if kind not in KEPT:
        raise NotMade(
            "Not made: the image endpoint's answer is not a PNG, JPEG or WebP picture.", usage
        )
    return data, kind


def _usage(answer: ImagesResponse) -> Usage | None:
    """The tokens the endpoint says the picture took (GPT image models say so; others may
    not, or may say it in a shape of their own, which counts as nothing)."""
    used = answer.usage
    if used is None:
        return None
    counts = [getattr(used, name, 0) for name in ("input_tokens", "output_tokens")]
    tokens_in, tokens_out = (n if type(n) is int and n > 0 else 0 for n in counts)
    return Usage(input_tokens=tokens_in, output_tokens=tokens_out)
