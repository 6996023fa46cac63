"""What a test scripts the fake model to do, and what the fake recorded of each request."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from tests.fakes.llm import media
from tests.fakes.llm.cache import Usage

ANTHROPIC_KEY = "test-anthropic-key"
OPENAI_KEY = "test-openai-key"


@dataclass
class ToolCallSpec:
    """A tool call the fake model makes; a str `arguments` is sent verbatim (even if not JSON)."""

    name: str
    arguments: dict[str, Any] | str
    id: str | None = None

    @property
    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


@dataclass
class Reply:
    """One successful streamed answer."""

    text: str = ""
    tool_calls: list[ToolCallSpec] = field(default_factory=list)
    stop_reason: str | None = None
    chunk_size: int = 8
    delay: float = 0.0
    cut_after: int | None = None
    gate: asyncio.Event | None = None
    gate_after: int = 0
    output_tokens: int | None = None
    # What the model thinks first, streamed only to a request that enables thinking (with a
    # signature on Anthropic's API, as `reasoning_content` on OpenAI's); `redacted` adds a
    # redacted thinking block after it (Anthropic).
    thinking: str = ""
    redacted: bool = False

    def chunks(self) -> list[str]:
        size = max(1, self.chunk_size)
        return [self.text[i : i + size] for i in range(0, len(self.text), size)]

    def estimated_output(self) -> int:
        if self.output_tokens is not None:
            return self.output_tokens
        size = len(self.thinking + self.text) + sum(len(c.arguments_json) for c in self.tool_calls)
        return max(1, size // 4)


@dataclass
class Fail:
    """An error answer, before the stream (an HTTP status) or inside it (`mid_stream`)."""

    status: int
    error_type: str = "api_error"
    message: str = "fake failure"
    retry_after: float | None = None
    mid_stream: bool = False


@dataclass
class RecordedRequest:
    api: Literal["anthropic", "openai"]
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    usage: Usage | None = None  # what the answer's usage said, once it was answered

    def estimated_tokens(self) -> int:
        return len(json.dumps(self.body)) // 4

    def system_text(self) -> str:
        if self.api == "openai":
            return "\n".join(
                _text(m.get("content"))
                for m in self.body.get("messages", [])
                if m.get("role") in ("system", "developer")
            )
        return _text(self.body.get("system"))

    def last_user_text(self) -> str:
        users = [m for m in self.body.get("messages", []) if m.get("role") == "user"]
        return _text(users[-1].get("content")) if users else ""

    def images(self) -> list[tuple[str, bytes]]:
        """(media type, decoded bytes) of each image the last user message carries, in order,
        for either API, so a test can check the picture Parley sent, not its encoding.
        Images given by web address have no bytes here and are left out."""
        users = [m for m in self.body.get("messages", []) if m.get("role") == "user"]
        content = users[-1].get("content") if users else None
        out: list[tuple[str, bytes]] = []
        for part in content if isinstance(content, list) else []:
            if self.api == "anthropic" and part.get("type") == "image":
                source = part.get("source") or {}
                raw = media.decode(str(source.get("data", "")))
                if source.get("type") == "base64" and raw is not None:
                    out.append((str(source.get("media_type")), raw))
            elif self.api == "openai" and part.get("type") == "image_url":
                url = media.data_url(str((part.get("image_url") or {}).get("url", "")))
                raw = media.decode(url.data) if url is not None else None
                if url is not None and raw is not None:
                    out.append((url.mime, raw))
        return out

    def tool_results(self) -> list[tuple[str, str]]:
        """(call id, content) of the tool results after the last assistant message."""
        messages = self.body.get("messages", [])
        last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
        out: list[tuple[str, str]] = []
        for message in messages[last + 1 :]:
            if self.api == "openai" and message.get("role") == "tool":
                out.append((message["tool_call_id"], _text(message.get("content"))))
            elif self.api == "anthropic" and isinstance(message.get("content"), list):
                out += [
                    (b["tool_use_id"], _text(b.get("content")))
                    for b in message["content"]
                    if b.get("type") == "tool_result"
                ]
        return out


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return str(content)


Scripted = Reply | Fail | Callable[[RecordedRequest], Reply | Fail]
