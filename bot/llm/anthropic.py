"""The Anthropic Messages API, streamed, with prompt-cache breakpoints.

Breakpoints sit on the last tool, the last stable system part and the last message, so tools,
system prompt and the conversation so far are read from the cache on the next call; the
volatile parts of the prompt come after them.

The body is encoded here and handed to the SDK as it is (`encode_body`): given the parameters,
the SDK copies and walks every value of the request in Python before encoding it, which grew
with the conversation; each message's JSON is kept with the message instead, so a call encodes
only the messages it adds (`ModelRequest.per_message`), and the last one, whose block carries
the moving breakpoint. The stream's events are read as the JSON they are (the SDK's stream of
`object`), not built into the SDK's models first: what each event says is a few keys.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any, cast

import anthropic
import httpx2

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
from bot.llm.media import GONE, FileReader, encode_off_loop, file_base64, file_text, unseen
from bot.vocabulary.messages import (
    DocumentBlock,
    ImageBlock,
    Message,
    PerMessage,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from bot.vocabulary.run_config import Effort
from bot.vocabulary.usage import Usage

CACHE = {"type": "ephemeral"}
# Tokens the model may think for at each effort (the API's least is 1,024), on top of the
# answer's; a budget for the models that take one, room to think for the others.
THINKING_BUDGET: dict[Effort, int] = {"low": 2048, "medium": 8192, "high": 24576}
THINKING_TOP_P = 0.95
# Models that think on a budget of tokens (`thinking.type: enabled`): those before adaptive
# thinking, Claude 3.7 to the 4.5 family; the later ones think adaptively.
BUDGETED = re.compile(r"^claude-(3-7-|(opus|sonnet)-4(-[015])?(-\d{8})?$|haiku-4-5)")
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
            api_key=api_key,
            base_url=base_url,
            max_retries=0,
            timeout=timeout,
            http_client=anthropic.DefaultAsyncHttpxClient(verify=tls.shared_context()),
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
                stream_cls=anthropic.AsyncStream[object],  # each event's JSON, as it is
            )
            async with stream:
                parser = _StreamParser()
                async for event in stream:
                    for out in parser.feed(cast(dict[str, Any], event)):
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
    thinks = request.reasoning is not None
    params["messages"] = [
        _message(m, files, thinks=thinks, sees=request.images)
        for m in request.messages
        if _has_content(m)
    ]
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
        thinks = request.reasoning is not None
        last = _message(request.messages[end], files, thinks=thinks, sees=request.images)
        last["content"][-1]["cache_control"] = CACHE
        parts.append(json.dumps(last))
    rest = json.dumps({**_head(request), "stream": True})
    return f'{{"messages":[{",".join(parts)}],{rest[1:]}'.encode()


def _kept(request: ModelRequest, files: FileReader | None) -> PerMessage[str]:
    """The messages' JSON this conversation keeps for this API (with their thinking blocks
    when the model thinks, without them when it does not)."""
    thinks, sees = request.reasoning is not None, request.images
    key = "anthropic" + ("-thinking" if thinks else "") + ("" if sees else "-unseeing")
    return request.per_message.setdefault(
        key, PerMessage(lambda m: _encoded(m, files, thinks=thinks, sees=sees))
    )


def _encoded(message: Message, files: FileReader | None, *, thinks: bool, sees: bool) -> str:
    """The message's JSON, or "" for one with nothing to send."""
    if not _has_content(message):
        return ""
    return json.dumps(_message(message, files, thinks=thinks, sees=sees))


def _head(request: ModelRequest) -> dict[str, Any]:
    """The body but its messages. A model that thinks takes no temperature and a top_p of
    0.95 or more; its budget for thinking comes on top of the answer's tokens."""
    params: dict[str, Any] = {"model": request.model, "max_tokens": request.max_tokens}
    top_p = request.top_p
    if request.reasoning is not None:
        params.update(_thinking(request.model, request.reasoning, request.show_thinking))
        params["max_tokens"] += THINKING_BUDGET[request.reasoning]
        top_p = None if top_p is None else max(top_p, THINKING_TOP_P)
    elif request.temperature is not None:  # the API takes 0 to 1: a deployment's 1.5 is 1
        params["temperature"] = min(request.temperature, 1.0)
    if top_p is not None:
        params["top_p"] = top_p
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


def _thinking(model: str, effort: Effort, shown: bool) -> dict[str, Any]:
    """How `model` is asked to think: the models before adaptive thinking take a budget of
    tokens; the others decide themselves how much, at an effort, and return their thinking
    summarised only when it is to be `shown` (else only its signature: less to wait for)."""
    if BUDGETED.match(model):
        return {"thinking": {"type": "enabled", "budget_tokens": THINKING_BUDGET[effort]}}
    display = "summarized" if shown else "omitted"
    return {
        "thinking": {"type": "adaptive", "display": display},
        "output_config": {"effort": effort},
    }


def _has_content(message: Message) -> bool:
    return any(not isinstance(b, TextBlock) or b.text for b in message.content)


def _message(
    message: Message, files: FileReader | None, *, thinks: bool, sees: bool = True
) -> dict[str, Any]:
    """A message as the API takes it; its thinking only to a model that thinks now (the API
    checks it within a turn of tool calls, and has no use for it otherwise), its images
    only to one that `sees` them."""
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ThinkingBlock | RedactedThinkingBlock):
            if thinks and _signed(block):
                blocks.append(block.model_dump())
        elif isinstance(block, TextBlock):
            if block.text:
                blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            blocks.append(_image(block, files) if sees else unseen(block))
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


def _signed(block: ThinkingBlock | RedactedThinkingBlock) -> bool:
    """Whether the API made the block: thinking from another API (unsigned) is not sent."""
    return isinstance(block, RedactedThinkingBlock) or bool(block.signature)


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
    """Turns raw stream events (their JSON) into Parley events; tool calls only once their
    JSON is whole.

    The usage is said as soon as `message_start` gives it (the prompt read, cached or not)
    and again, whole, at the end: a call stopped mid-answer has used its prompt all the same,
    and the turn that stops it is charged for it (`bot.agent.model_call` keeps the latest).
    """

    def __init__(self) -> None:
        self.usage = Usage()
        self.stop_reason = "end_turn"
        self.finished = False
        self._tools: dict[int, tuple[str, str, list[str]]] = {}
        self._thoughts = _Thoughts()

    def feed(self, event: dict[str, Any]) -> list[ProviderEvent]:
        kind = event.get("type")
        if kind == "content_block_delta":
            return self._delta(event["index"], event["delta"])
        if kind == "message_start":
            self.usage = _usage(event["message"].get("usage") or {})
            return [self.usage]
        if kind == "content_block_start":
            block = event["content_block"]
            if block.get("type") == "tool_use":
                self._tools[event["index"]] = (block["id"], block["name"], [])
            else:
                self._thoughts.start(event["index"], block)
        elif kind == "content_block_stop":
            if event["index"] in self._tools:
                call_id, name, parts = self._tools.pop(event["index"])
                return [ToolCall.from_json(call_id, name, "".join(parts))]
            return self._thoughts.stop(event["index"])
        elif kind == "message_delta":
            self.stop_reason = (event.get("delta") or {}).get("stop_reason") or self.stop_reason
            out = (event.get("usage") or {}).get("output_tokens")
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

    def _delta(self, index: int, delta: dict[str, Any]) -> list[ProviderEvent]:
        kind = delta.get("type")
        if kind == "text_delta":
            return [TextDelta(delta["text"])] if delta.get("text") else []
        if kind == "input_json_delta" and index in self._tools:
            self._tools[index][2].append(delta.get("partial_json") or "")
            return []
        return self._thoughts.delta(index, delta)


class _Thoughts:
    """The thinking blocks of one streamed answer: their text shown as it comes, and each
    kept whole with its signature (or, redacted, its data) once it ends."""

    def __init__(self) -> None:
        self._open: dict[int, tuple[list[str], list[str]]] = {}
        self._redacted: dict[int, str] = {}

    def start(self, index: int, block: dict[str, Any]) -> None:
        if block.get("type") == "thinking":
            self._open[index] = ([block.get("thinking") or ""], [block.get("signature") or ""])
        elif block.get("type") == "redacted_thinking":
            self._redacted[index] = block["data"]

    def delta(self, index: int, delta: dict[str, Any]) -> list[ProviderEvent]:
        parts = self._open.get(index)
        if parts is None:
            return []
        if delta.get("type") == "thinking_delta" and delta.get("thinking"):
            parts[0].append(delta["thinking"])
            return [ThinkingDelta(delta["thinking"])]
        if delta.get("type") == "signature_delta":
            parts[1].append(delta.get("signature") or "")
        return []

    def stop(self, index: int) -> list[ProviderEvent]:
        if index in self._redacted:
            return [ThoughtDone(RedactedThinkingBlock(data=self._redacted.pop(index)))]
        if index not in self._open:
            return []
        text, signature = self._open.pop(index)
        return [ThoughtDone(ThinkingBlock(thinking="".join(text), signature="".join(signature)))]


def _usage(raw: dict[str, Any]) -> Usage:
    return Usage(
        input_tokens=raw.get("input_tokens") or 0,
        output_tokens=raw.get("output_tokens") or 0,
        cache_read_tokens=raw.get("cache_read_input_tokens") or 0,
        cache_write_tokens=raw.get("cache_creation_input_tokens") or 0,
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
