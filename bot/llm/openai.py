"""OpenAI Chat Completions, streamed; also serves vLLM, Ollama, llama.cpp and OpenRouter.

Parley's Anthropic-shaped messages are translated here: tool results become `tool` messages
that directly follow the assistant message that asked for them, as the API demands.

The body is encoded here and handed to the SDK as it is (`encode_body`): given the parameters,
the SDK walks every value of the request in Python before encoding it, which grew with the
conversation; each message's JSON is kept instead, so a call encodes only the messages it adds
(`ModelRequest.per_message`).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import openai

from bot import tls
from bot.llm.base import ModelRequest
from bot.llm.errors import RETRYABLE_STATUS, ProviderError, network_error, parse_retry_after
from bot.llm.events import (
    Finished,
    ProviderEvent,
    TextDelta,
    ThinkingDelta,
    ThoughtDone,
    ToolCall,
)
from bot.llm.media import (
    GONE,
    FileReader,
    encode_off_loop,
    file_base64,
    file_text,
    titled,
    unseen,
)
from bot.vocabulary.messages import (
    DocumentBlock,
    ImageBlock,
    Message,
    PerMessage,
    TextBlock,
    ThinkingBlock,
)
from bot.vocabulary.usage import Usage

FINISH_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}
# Reasoning models refuse `max_tokens` and want `max_completion_tokens` instead.
REASONING_MODEL = re.compile(r"^(o\d|gpt-5)")


class OpenAIProvider:
    name = "openai"

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None,
        timeout: float,
        files: FileReader | None = None,
    ) -> None:
        self._client = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            max_retries=0,
            timeout=timeout,
            http_client=openai.DefaultAsyncHttpxClient(verify=tls.shared_context()),
        )
        self._files = files

    async def aclose(self) -> None:
        await self._client.close()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        kept = _kept(request, self._files)
        body = await encode_off_loop(lambda: encode_body(request, self._files), request, kept)
        try:
            stream = await self._client.post(
                "/chat/completions",
                cast_to=openai.types.chat.ChatCompletion,
                content=body,
                options={"headers": {"Content-Type": "application/json"}},
                stream=True,
                stream_cls=openai.AsyncStream[openai.types.chat.ChatCompletionChunk],
            )
            parser = _StreamParser()
            async with stream:
                async for chunk in stream:
                    for event in parser.feed(chunk):
                        yield event
            for event in parser.finish():
                yield event
        except openai.APIStatusError as exc:
            raise _status_error(exc) from None
        except (openai.APIConnectionError, httpx2.RequestError) as exc:
            raise network_error("OpenAI", exc) from None
        except openai.APIError as exc:  # an error object sent inside the stream
            raise ProviderError(
                f"OpenAI API error in stream: {exc.message}", retryable=True
            ) from None


def build_params(request: ModelRequest, files: FileReader | None = None) -> dict[str, Any]:
    messages = _system(request)
    for message in request.messages:
        messages.extend(_messages(message, files, sees=request.images))
    return {"messages": messages, **_head(request)}


def encode_body(request: ModelRequest, files: FileReader | None = None) -> bytes:
    """`build_params` with `stream` and the usage asked for, as JSON, from each message's
    kept encoding."""
    parts = [json.dumps(m) for m in _system(request)]
    parts += _kept(request, files).values(request.messages)
    rest = json.dumps({**_head(request), "stream": True, "stream_options": {"include_usage": True}})
    return f'{{"messages":[{",".join(p for p in parts if p)}],{rest[1:]}'.encode()


def _kept(request: ModelRequest, files: FileReader | None) -> PerMessage[str]:
    """The messages' JSON this conversation keeps for this API (its images as sentences, for
    a model without vision)."""
    sees = request.images
    return request.per_message.setdefault(
        "openai" if sees else "openai-unseeing", PerMessage(lambda m: _encoded(m, files, sees))
    )


def _encoded(message: Message, files: FileReader | None, sees: bool) -> str:
    """The API messages that `message` becomes, as JSON items of the list ("" for none)."""
    return ",".join(json.dumps(each) for each in _messages(message, files, sees=sees))


def _system(request: ModelRequest) -> list[dict[str, Any]]:
    system = "\n\n".join(part.text for part in request.system if part.text)
    return [{"role": "system", "content": system}] if system else []


def _head(request: ModelRequest) -> dict[str, Any]:
    """The body but its messages. OpenAI's reasoning models take an effort, and neither a
    temperature nor a top_p; other models (and servers) are sent no effort: what they
    think, if they do, comes back all the same (`_StreamParser`)."""
    reasons = REASONING_MODEL.match(request.model) is not None
    limit = "max_completion_tokens" if reasons else "max_tokens"
    params: dict[str, Any] = {"model": request.model, limit: request.max_tokens}
    if reasons:
        if request.reasoning is not None:
            params["reasoning_effort"] = request.reasoning
    else:
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if request.top_p is not None:
            params["top_p"] = request.top_p
    if request.tools:
        params["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.input_schema,
                },
            }
            for t in request.tools
        ]
    return params


def _messages(
    message: Message, files: FileReader | None, *, sees: bool = True
) -> list[dict[str, Any]]:
    if message.role == "assistant":
        out: dict[str, Any] = {"role": "assistant", "content": message.text or None}
        calls = [
            {
                "id": use.id,
                "type": "function",
                "function": {
                    "name": use.name,
                    "arguments": use.raw_input
                    if use.raw_input is not None
                    else json.dumps(use.input),
                },
            }
            for use in message.tool_uses
        ]
        if calls:
            out["tool_calls"] = calls
        return [out] if calls or message.text else []
    results = [
        {"role": "tool", "tool_call_id": r.tool_use_id, "content": r.content}
        for r in message.tool_results
    ]
    if message.attached:
        return [*results, {"role": "user", "content": _parts(message, files, sees)}]
    text = message.text
    return results + ([{"role": "user", "content": text}] if text else [])


def _parts(message: Message, files: FileReader | None, sees: bool) -> list[dict[str, Any]]:
    """A user message with files as content parts, in the order of its blocks: images as
    data URLs, documents as their text (a PDF's as taken out when it arrived), which every
    OpenAI-compatible server reads."""
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock) and block.text:
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock) and not sees:
            parts.append(unseen(block))
        elif isinstance(block, ImageBlock):
            data = file_base64(block, files)
            if data is None:
                parts.append({"type": "text", "text": GONE})
            else:
                url = f"data:{block.file.media_type};base64,{data}"
                parts.append({"type": "image_url", "image_url": {"url": url}})
        elif isinstance(block, DocumentBlock):
            text = file_text(block, files)
            parts.append({"type": "text", "text": GONE if text is None else titled(block, text)})
    return parts


class _StreamParser:
    """Collects tool-call fragments by index; everything is emitted once the stream is whole.

    OpenAI's own models keep their reasoning to themselves; servers that show it (vLLM,
    DeepSeek: `reasoning_content`; OpenRouter: `reasoning`) send it before the answer, and it
    is shown as it comes and kept, unsigned: no API wants it back."""

    def __init__(self) -> None:
        self.finish_reason: str | None = None
        self.usage = Usage()
        self._calls: dict[int, dict[str, Any]] = {}
        self._thinking: list[str] = []

    def feed(self, chunk: Any) -> list[ProviderEvent]:
        if chunk.usage is not None:
            details = getattr(chunk.usage, "prompt_tokens_details", None)
            cached = getattr(details, "cached_tokens", None) or 0
            self.usage = Usage(
                input_tokens=(chunk.usage.prompt_tokens or 0) - cached,
                output_tokens=chunk.usage.completion_tokens or 0,
                cache_read_tokens=cached,
            )
        out: list[ProviderEvent] = []
        for choice in chunk.choices or []:
            delta = choice.delta
            thought = _reasoning(delta)
            if thought:
                self._thinking.append(thought)
                out.append(ThinkingDelta(thought))
            if delta is not None and delta.content:
                out.append(TextDelta(delta.content))
            for piece in (delta.tool_calls if delta is not None else None) or []:
                call = self._calls.setdefault(piece.index, {"id": "", "name": "", "args": []})
                call["id"] = piece.id or call["id"]
                if piece.function is not None:
                    call["name"] = piece.function.name or call["name"]
                    call["args"].append(piece.function.arguments or "")
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
        return out

    def finish(self) -> list[ProviderEvent]:
        if self.finish_reason is None:
            raise ProviderError("OpenAI stream ended early", retryable=True)
        calls: list[ProviderEvent] = [
            ToolCall.from_json(c["id"] or f"call_{i}", c["name"], "".join(c["args"]))
            for i, c in sorted(self._calls.items())
        ]
        reason = FINISH_REASONS.get(self.finish_reason, self.finish_reason)
        if self._thinking:
            calls.insert(0, ThoughtDone(ThinkingBlock(thinking="".join(self._thinking))))
        return [*calls, self.usage, Finished(reason)]


def _reasoning(delta: Any) -> str:
    """The reasoning a server that shows it sent in `delta` (a field the SDK does not name)."""
    for name in ("reasoning_content", "reasoning"):
        value = getattr(delta, name, None)
        if isinstance(value, str) and value:
            return value
    return ""


def _status_error(exc: openai.APIStatusError) -> ProviderError:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error", body)
    message = error.get("message", "") if isinstance(error, dict) else ""
    status = exc.status_code
    return ProviderError(
        f"OpenAI API error {status}: {message}".rstrip(": "),
        status=status,
        retryable=status in RETRYABLE_STATUS,
        retry_after=parse_retry_after(exc.response.headers),
    )
