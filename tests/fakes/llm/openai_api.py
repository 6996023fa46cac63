"""OpenAI Chat Completions, as the fake serves it."""

from __future__ import annotations

import time
import uuid
from typing import Any

from aiohttp import web

from tests.fakes.llm.cache import Usage
from tests.fakes.llm.script import Fail, Reply
from tests.fakes.llm.sse import EventWriter, open_stream


def error_response(
    status: int,
    kind: str,
    message: str,
    retry_after: float | None = None,
    *,
    code: str | None = None,
) -> web.Response:
    headers = {"x-request-id": "req_" + uuid.uuid4().hex[:24]}
    if retry_after is not None:
        headers["retry-after"] = f"{retry_after:g}"
    code = "invalid_api_key" if status == 401 else code
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return web.json_response(body, status=status, headers=headers)


def _usage(usage: Usage, output: int) -> dict[str, Any]:
    prompt = usage.input_tokens + usage.cache_read
    return {
        "prompt_tokens": prompt,
        "completion_tokens": output,
        "total_tokens": prompt + output,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read},
    }


def _calls(reply: Reply) -> list[dict[str, Any]]:
    return [
        {
            "id": c.id or "call_" + uuid.uuid4().hex[:24],
            "type": "function",
            "function": {"name": c.name, "arguments": c.arguments_json},
        }
        for c in reply.tool_calls
    ]


def _finish(reply: Reply) -> str:
    return reply.stop_reason or ("tool_calls" if reply.tool_calls else "stop")


def complete(model: str, reply: Reply, usage: Usage) -> web.Response:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = _calls(reply)
    return web.json_response(
        {
            "id": "chatcmpl-" + uuid.uuid4().hex[:24],
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": _finish(reply), "logprobs": None}
            ],
            "usage": _usage(usage, reply.estimated_output()),
        }
    )


async def stream(
    request: web.Request, body: dict[str, Any], script: Reply | Fail, usage: Usage
) -> web.StreamResponse:
    response = await open_stream(request)
    out = EventWriter(response, request, script if isinstance(script, Reply) else None)
    base = {
        "id": "chatcmpl-" + uuid.uuid4().hex[:24],
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body["model"],
        "system_fingerprint": None,
    }

    async def chunk(delta: dict[str, Any], finish: str | None = None) -> None:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        await out.send({**base, "choices": [choice]})

    await chunk({"role": "assistant", "content": ""})
    if isinstance(script, Fail):
        await chunk({"content": "Partial text "})
        await out.send(
            {
                "error": {
                    "message": script.message,
                    "type": script.error_type,
                    "param": None,
                    "code": None,
                }
            }
        )
        return response
    for start in range(0, len(script.thinking), max(1, script.chunk_size)):
        # as servers that show their reasoning send it (vLLM, DeepSeek); OpenAI's never do
        await chunk({"reasoning_content": script.thinking[start : start + script.chunk_size]})
    for piece in script.chunks():
        await chunk({"content": piece})
    for index, call in enumerate(_calls(script)):
        raw = call["function"]["arguments"]
        await chunk(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": call["function"]["name"], "arguments": ""},
                    }
                ]
            }
        )
        step = max(1, len(raw) // 3)
        for start in range(0, len(raw), step):
            await chunk(
                {
                    "tool_calls": [
                        {"index": index, "function": {"arguments": raw[start : start + step]}}
                    ]
                }
            )
    await chunk({}, _finish(script))
    if (body.get("stream_options") or {}).get("include_usage"):
        await out.send({**base, "choices": [], "usage": _usage(usage, script.estimated_output())})
    await out.send("[DONE]")
    return response
