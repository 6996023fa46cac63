"""Socket Mode: the app opens a websocket (with its app-level token) and Slack pushes envelopes.

apps.connections.open hands out a one-time `ws://` URL; on connecting the app gets `hello`,
then each event or interaction arrives as an envelope that the app must acknowledge with its
`envelope_id` within `ack_timeout`, or Slack sends it again with `retry_attempt` raised. The
aiohttp server answers the client's pings itself, as the slack_sdk client expects. How each
connection ended is kept (`closes`): an app that closes its socket cleanly sends 1000.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
import uuid
from typing import TYPE_CHECKING, Any

from aiohttp import WSMsgType, web

from tests.fakes.slack.delivery import MAX_RETRIES
from tests.fakes.slack.events import INTERACTIVE
from tests.fakes.slack.model import APP_ID, Delivery

if TYPE_CHECKING:
    from tests.fakes.slack.server import FakeSlack


class SocketMode:
    def __init__(self, fake: FakeSlack) -> None:
        self.fake = fake
        self.connections: list[web.WebSocketResponse] = []
        self.closes: list[int | None] = []  # how each connection ended: 1000 is a clean close
        self._tickets: set[str] = set()
        self._acks: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.pushed: list[tuple[str, dict[str, Any]]] = []  # (envelope id, body), as sent
        self.handlers = {"apps.connections.open": self.open}

    @property
    def connected(self) -> bool:
        return any(not ws.closed for ws in self.connections)

    def open(self, params: dict[str, Any]) -> dict[str, Any]:
        ticket = secrets.token_urlsafe(16)
        self._tickets.add(ticket)
        return {"url": f"ws://127.0.0.1:{self.fake.port}/socket?ticket={ticket}"}

    async def serve(self, request: web.Request) -> web.StreamResponse:
        ticket = request.query.get("ticket", "")
        if ticket not in self._tickets:
            raise web.HTTPUnauthorized(text="invalid or used ticket")
        self._tickets.discard(ticket)
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self.connections.append(ws)
        await ws.send_json(
            {
                "type": "hello",
                "num_connections": sum(1 for c in self.connections if not c.closed),
                "connection_info": {"app_id": APP_ID},
                "debug_info": {
                    "host": "applink-fake",
                    "build_number": 1,
                    "approximate_connection_time": 3600,
                },
            }
        )
        try:
            async for message in ws:
                if message.type == WSMsgType.TEXT:
                    self._acknowledged(message.data)
        finally:
            self.connections.remove(ws)
            self.closes.append(ws.close_code)
        return ws

    def _acknowledged(self, data: str) -> None:
        with contextlib.suppress(ValueError):
            ack = json.loads(data)
            waiting = self._acks.get(str(ack.get("envelope_id", "")))
            if waiting is not None and not waiting.done():
                waiting.set_result(ack)

    async def close(self) -> None:
        for ws in list(self.connections):
            await ws.close()

    async def disconnect(self, reason: str = "refresh_requested") -> None:
        """Slack asks the app to reconnect (it does so every few hours)."""
        for ws in list(self.connections):
            await ws.send_json({"type": "disconnect", "reason": reason})

    async def send(
        self,
        body: dict[str, Any],
        *,
        retry_num: int = 0,
        retry: bool = True,
        reason: str = "timeout",
    ) -> tuple[int, str]:
        """Push an envelope until acked (or three retries); (200, the ack) or (0, "")."""
        await self.fake.wait_for(lambda: self.connected, what="the app connected")
        attempt = 0
        while True:
            status, answer = await self._attempt(body, retry_num, reason if retry_num else "")
            if status == 200 or not retry or attempt >= MAX_RETRIES:
                return status, answer
            delays = self.fake.retry_delays
            await asyncio.sleep(delays[min(attempt, len(delays) - 1)] if delays else 0)
            attempt += 1
            retry_num += 1

    async def _attempt(self, body: dict[str, Any], retry_num: int, reason: str) -> tuple[int, str]:
        envelope_id = str(uuid.uuid4())
        envelope = {
            "envelope_id": envelope_id,
            "type": _envelope_type(body),
            "payload": body,
            "accepts_response_payload": False,
            "retry_attempt": retry_num,
            "retry_reason": reason,
        }
        acked: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._acks[envelope_id] = acked
        started = time.monotonic()
        status, answer = 0, ""
        try:
            live = [ws for ws in self.connections if not ws.closed]
            if live:
                self.pushed.append((envelope_id, body))
                await live[-1].send_json(envelope)
                async with asyncio.timeout(self.fake.ack_timeout):
                    answer = json.dumps(await acked)
                    status = 200
        except (TimeoutError, ConnectionError):
            pass
        finally:
            del self._acks[envelope_id]
        elapsed = time.monotonic() - started
        headers = {"envelope_id": envelope_id, "retry_reason": reason}
        self.fake.deliveries.append(Delivery(body, headers, status, elapsed, retry_num, answer))
        return status, answer


def _envelope_type(body: dict[str, Any]) -> str:
    if "command" in body:
        return "slash_commands"
    return "interactive" if body.get("type") in INTERACTIVE else "events_api"
