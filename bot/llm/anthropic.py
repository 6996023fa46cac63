"""The Anthropic Messages API, streamed, with prompt-cache breakpoints.

Breakpoints sit on the last tool, the last stable system part and the last message, so tools,
system prompt and the conversation so far are read from the cache on the next call; the
volatile parts of the prompt come after them.

The body is encoded here and handed to the SDK as it is (`encode_body`): given the parameters,
the SDK copies and walks every value of the request in Python before encoding it, which grew
with the conversation; each message's JSON is kept with the message instead, so a call encodes
only the messages it adds (`ModelRequest.per_message`), and the last one, whose block carries
the moving breakpoint.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anthropic
import httpx2

from bot.llm.base import ModelRequest
from bot.llm.errors import RETRYABLE_STATUS, ProviderError, network_error, parse_retry_after
from bot.llm.events import Finished, ProviderEvent, TextDelta, ToolCall
from bot.llm.media import GONE, FileReader, encode_off_loop, file_base64, file_text
from bot.vocabulary.messages import (
    DocumentBlock,
    ImageBlock,
    Message,
    PerMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from bot.vocabulary.usage import Usage

CACHE = {"type": "ephemeral"}
STOP_REASONS = {"end_turn": "end_turn", "tool_use": "tool_use", "max_tokens": "max_tokens"}
# A mid-stream `error` event arrives on an HTTP 200 response; its type says what happened.
STREAM_ERROR_STATUS = {"overloaded_error": 529, "rate_limit_error": 429, "api_error": 500}


class AnthropicProvider:
    name = "anthropic"

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None,
        timeout: float,
        files: FileReader | None = None,
    ) -> None:
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout
        )
        self._files = files

    async def aclose(self) -> None:
        await self._client.close()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        kept = _kept(request, self._files)
        body = await encode_off_loop(lambda: encode_body(request, self._files), request, kept)
        try:
            stream = await self._client.post(
                "/v1/messages",
                cast_to=anthropic.types.Message,
                content=body,
                options={"headers": {"Content-Type": "application/json"}},
                stream=True,
                stream_cls=anthropic.AsyncStream[anthropic.types.RawMessageStreamEvent],
            )
            async with stream:
                parser = _StreamParser()
                async for event in stream:
                    for out in parser.feed(event):
                        yield out
                if not parser.finished:
                    raise ProviderError("Anthropic stream ended early", retryable=True)
        except anthropic.APIStatusError as exc:
            raise _status_error(exc) from None
        except (anthropic.APIConnectionError, httpx2.RequestError) as exc:
            raise network_error("Anthropic", exc) from None


def build_params(request: ModelRequest, files: FileReader | None = None) -> dict[str, Any]:
    """The request body, with cache breakpoints on tools, system and conversation."""
    params = _head(request)
    params["messages"] = [_message(m, files) for m in request.messages if _has_content(m)]
    if params["messages"]:
        params["messages"][-1]["content"][-1]["cache_control"] = CACHE
    return params


def encode_body(request: ModelRequest, files: FileReader | None = None) -> bytes:
    """`build_params` with `stream`, as JSON, from each message's kept encoding."""
    kept = _kept(request, files)
    encoded = kept.values(request.messages)
    end = next((i for i in range(len(encoded) - 1, -1, -1) if encoded[i]), None)
    parts = [each for each in encoded[:end] if each] if end is not None else []
    if end is not None:  # the last message sent carries the conversation's breakpoint
        last = _message(request.messages[end], files)
        last["content"][-1]["cache_control"] = CACHE
        parts.append(json.dumps(last))
    rest = json.dumps({**_head(request), "stream": True})
    return f'{{"messages":[{",".join(parts)}],{rest[1:]}'.encode()


def _kept(request: ModelRequest, files: FileReader | None) -> PerMessage[str]:
    """The messages' JSON this conversation keeps for this API."""
    return request.per_message.setdefault("anthropic", PerMessage(lambda m: _encoded(m, files)))


def _encoded(message: Message, files: FileReader | None) -> str:
    """The message's JSON, or "" for one with nothing to send."""
    return json.dumps(_message(message, files)) if _has_content(message) else ""


def _head(request: ModelRequest) -> dict[str, Any]:
    """The body but its messages."""
    params: dict[str, Any] = {"model": request.model, "max_tokens": request.max_tokens}
    if request.temperature is not None:  # the API takes 0 to 1: a deployment's 1.5 is 1 here
        params["temperature"] = min(request.temperature, 1.0)
    if request.top_p is not None:
        params["top_p"] = request.top_p
    system: list[dict[str, Any]] = [{"type": "text", "text": p.text} for p in request.system]
    stable = [i for i, part in enumerate(request.system) if part.stable]
    if stable:
        system[stable[-1]]["cache_control"] = CACHE
    if system:
        params["system"] = system
    if request.tools:
        tools = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in request.tools
        ]
        tools[-1]["cache_control"] = CACHE
        params["tools"] = tools
    return params


def _has_content(message: Message) -> bool:
    return any(not isinstance(b, TextBlock) or b.text for b in message.content)


def _message(message: Message, files: FileReader | None) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            if block.text:
                blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            blocks.append(_image(block, files))
        elif isinstance(block, DocumentBlock):
            blocks.append(_document(block, files))
        elif isinstance(block, ToolUseBlock):
            blocks.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
            )
        elif isinstance(block, ToolResultBlock):
            blocks.append(
                {
                    "type": "tool_result",
                    "tool_use_id": block.tool_use_id,
                    "content": block.content,
                    "is_error": block.is_error,
                }
            )
    # The API wants tool results before any other block of a user message.
    blocks.sort(key=lambda b: b["type"] != "tool_result")
    return {"role": message.role, "content": blocks}


def _image(block: ImageBlock, files: FileReader | None) -> dict[str, Any]:
    data = file_base64(block, files)
    if data is None:
        return {"type": "text", "text": GONE}
    source = {"type": "base64", "media_type": block.file.media_type, "data": data}
    return {"type": "image", "source": source}


def _document(block: DocumentBlock, files: FileReader | None) -> dict[str, Any]:
    """A PDF as the API reads PDFs (its pages seen, not only its text); a text file as a
    document of plain text, whatever kind of text it is (the API takes only text/plain)."""
    if block.file.is_pdf:
        data = file_base64(block, files)
        source = {"type": "base64", "media_type": block.file.media_type, "data": data}
    else:
        data = file_text(block, files)
        source = {"type": "text", "media_type": "text/plain", "data": data}
    if data is None:
        return {"type": "text", "text": GONE}
    return {"type": "document", "source": source, "title": block.file.name or "unnamed"}


class _StreamParser:
    """Turns raw stream events into Parley events; tool calls only once their JSON is whole."""

    def __init__(self) -> None:
        self.usage = Usage()
        self.stop_reason = "end_turn"
        self.finished = False
        self._tools: dict[int, tuple[str, str, list[str]]] = {}

    def feed(self, event: Any) -> list[ProviderEvent]:
        kind = event.type
        if kind == "message_start":
            self.usage = _usage(event.message.usage)
        elif kind == "content_block_start" and event.content_block.type == "tool_use":
            block = event.content_block
            self._tools[event.index] = (block.id, block.name, [])
        elif kind == "content_block_delta":
            delta = event.delta
            if delta.type == "text_delta" and delta.text:
                return [TextDelta(delta.text)]
            if delta.type == "input_json_delta" and event.index in self._tools:
                self._tools[event.index][2].append(delta.partial_json)
        elif kind == "content_block_stop" and event.index in self._tools:
            call_id, name, parts = self._tools.pop(event.index)
            return [ToolCall.from_json(call_id, name, "".join(parts))]
        elif kind == "message_delta":
            self.stop_reason = event.delta.stop_reason or self.stop_reason
            out = getattr(event.usage, "output_tokens", None)
            if out is not None:
                self.usage = Usage(
                    self.usage.input_tokens,
                    out,
                    self.usage.cache_read_tokens,
                    self.usage.cache_write_tokens,
                )
        elif kind == "message_stop":
            self.finished = True
            return [self.usage, Finished(STOP_REASONS.get(self.stop_reason, self.stop_reason))]
        return []


def _usage(raw: Any) -> Usage:
    return Usage(
        input_tokens=raw.input_tokens or 0,
        output_tokens=raw.output_tokens or 0,
        cache_read_tokens=getattr(raw, "cache_read_input_tokens", None) or 0,
        cache_write_tokens=getattr(raw, "cache_creation_input_tokens", None) or 0,
    )


def _status_error(exc: anthropic.APIStatusError) -> ProviderError:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else {}
    kind = str(error.get("type", "")) if error else ""
    message = str(error.get("message", "")) if error else ""
    status = exc.status_code
    if status < 400:
        status = STREAM_ERROR_STATUS.get(kind, 400)
    return ProviderError(
        f"Anthropic API error {status} {kind}: {message}".rstrip(": "),
        status=status,
        retryable=status in RETRYABLE_STATUS,
        retry_after=parse_retry_after(exc.response.headers),
    )
