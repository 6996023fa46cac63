"""The Anthropic Messages API, as the fake serves it."""

from __future__ import annotations

import uuid
from typing import Any

from aiohttp import web

from tests.fakes.llm import thinking
from tests.fakes.llm.cache import Usage
from tests.fakes.llm.script import Fail, Reply
from tests.fakes.llm.sse import EventWriter, open_stream


def error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def error_response(
    status: int, kind: str, message: str, retry_after: float | None = None
) -> web.Response:
    headers = {"request-id": "req_" + uuid.uuid4().hex[:24]}
    if retry_after is not None:
        headers["retry-after"] = f"{retry_after:g}"
    return web.json_response(error_body(kind, message), status=status, headers=headers)


def _usage(usage: Usage, output: int) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": output,
        "cache_creation_input_tokens": usage.cache_write,
        "cache_read_input_tokens": usage.cache_read,
        "cache_creation": {
            "ephemeral_5m_input_tokens": usage.cache_write - usage.cache_write_1h,
            "ephemeral_1h_input_tokens": usage.cache_write_1h,
        },
    }


def _message(model: str, usage: Usage) -> dict[str, Any]:
    return {
        "id": "msg_" + uuid.uuid4().hex[:24],
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": _usage(usage, 1),
    }


def _tool_id(given: str | None) -> str:
    return given or "toolu_" + uuid.uuid4().hex[:24]


def complete(model: str, reply: Reply, usage: Usage) -> web.Response:
    """A non-streamed Message."""
    message = _message(model, usage)
    if reply.text:
        message["content"].append({"type": "text", "text": reply.text})
    for call in reply.tool_calls:
        message["content"].append(
            {
                "type": "tool_use",
                "id": _tool_id(call.id),
                "name": call.name,
                "input": call.arguments,
            }
        )
    message["stop_reason"] = reply.stop_reason or ("tool_use" if reply.tool_calls else "end_turn")
    message["usage"] = _usage(usage, reply.estimated_output())
    return web.json_response(message)


async def stream(
    request: web.Request, body: dict[str, Any], script: Reply | Fail, usage: Usage
) -> web.StreamResponse:
    model = str(body["model"])
    response = await open_stream(request)
    out = EventWriter(response, request, script if isinstance(script, Reply) else None)
    await out.send({"type": "message_start", "message": _message(model, usage)}, "message_start")
    if isinstance(script, Fail):
        await _text_block(out, 0, ["Partial ", "text "])
        await out.send(error_body(script.error_type, script.message), "error")
        return response
    index = 0
    if thinking.enabled(body):
        index = await _thinking_blocks(out, script, thinking.shown(body))
    if script.text:
        await _text_block(out, index, script.chunks())
        index += 1
    for call in script.tool_calls:
        block = {"type": "tool_use", "id": _tool_id(call.id), "name": call.name, "input": {}}
        await out.send(
            {"type": "content_block_start", "index": index, "content_block": block},
            "content_block_start",
        )
        raw = call.arguments_json
        step = max(1, len(raw) // 3)
        for start in range(0, len(raw), step):
            delta = {"type": "input_json_delta", "partial_json": raw[start : start + step]}
            await out.send(
                {"type": "content_block_delta", "index": index, "delta": delta},
                "content_block_delta",
            )
        await out.send({"type": "content_block_stop", "index": index}, "content_block_stop")
        index += 1
    stop = script.stop_reason or ("tool_use" if script.tool_calls else "end_turn")
    await out.send(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": _usage(usage, script.estimated_output()),
        },
        "message_delta",
    )
    await out.send({"type": "message_stop"}, "message_stop")
    return response


async def _thinking_blocks(out: EventWriter, script: Reply, shown: bool) -> int:
    """The reply's thinking (in chunks unless omitted, then its signature) and a redacted
    block if scripted; the index of the next block."""
    index = 0
    said = script.thinking if shown else ""
    if script.thinking:
        start = {"type": "thinking", "thinking": "", "signature": ""}
        await out.send(
            {"type": "content_block_start", "index": index, "content_block": start},
            "content_block_start",
        )
        size = max(1, script.chunk_size)
        pieces = [said[i : i + size] for i in range(0, len(said), size)]
        deltas = [{"type": "thinking_delta", "thinking": piece} for piece in pieces]
        deltas.append({"type": "signature_delta", "signature": thinking.sign(said)})
        for delta in deltas:
            await out.send(
                {"type": "content_block_delta", "index": index, "delta": delta},
                "content_block_delta",
            )
        await out.send({"type": "content_block_stop", "index": index}, "content_block_stop")
        index += 1
    if script.redacted:
        block = {"type": "redacted_thinking", "data": thinking.redacted_data()}
        await out.send(
            {"type": "content_block_start", "index": index, "content_block": block},
            "content_block_start",
        )
        await out.send({"type": "content_block_stop", "index": index}, "content_block_stop")
        index += 1
    return index


async def _text_block(out: EventWriter, index: int, chunks: list[str]) -> None:
    await out.send(
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "text", "text": ""},
        },
        "content_block_start",
    )
    await out.send({"type": "ping"}, "ping")
    for chunk in chunks:
        await out.send(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "text_delta", "text": chunk},
            },
            "content_block_delta",
        )
    await out.send({"type": "content_block_stop", "index": index}, "content_block_stop")
