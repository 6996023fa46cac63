"""Writing a server-sent event stream with the faults a test asks for."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import web

from tests.fakes.llm.script import Reply


class StreamCut(Exception):
    """The connection was dropped on purpose, mid-stream."""


class EventWriter:
    def __init__(
        self, response: web.StreamResponse, request: web.Request, reply: Reply | None
    ) -> None:
        self.response = response
        self.request = request
        self.reply = reply
        self.sent = 0

    async def send(self, data: dict[str, Any] | str, event: str | None = None) -> None:
        reply = self.reply
        if reply is not None:
            if reply.gate is not None and self.sent == reply.gate_after:
                await reply.gate.wait()
            if reply.delay:
                await asyncio.sleep(reply.delay)
        payload = data if isinstance(data, str) else json.dumps(data)
        head = f"event: {event}\n" if event else ""
        await self.response.write(f"{head}data: {payload}\n\n".encode())
        self.sent += 1
        if reply is not None and reply.cut_after is not None and self.sent >= reply.cut_after:
            transport = self.request.transport
            if transport is not None:
                transport.close()
            raise StreamCut


async def open_stream(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(
        status=200,
        headers={"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache"},
    )
    await response.prepare(request)
    return response
