"""Slack's Socket Mode connection, which can stop taking envelopes and finish those it took.

Each envelope is handled in a task of its own and acknowledged only once its listener
returned, that is once its event was queued (bolt's `process_before_response`). On SIGTERM
`drain` stops handling new ones (left unacknowledged, Slack delivers them again, with
`retry_attempt` raised, to the next connection), waits within the shutdown's deadline for
those being handled to be acknowledged, and closes the websocket with a normal closure. An
event Slack delivers again is recognised: its envelope id is its channel and ts
(`adapters.slack.place`), which the mailbox keeps for a day.
"""

from __future__ import annotations

import asyncio
import logging

from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.socket_mode.async_client import AsyncBaseSocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest

from adapters.web.shutdown import Deadline

log = logging.getLogger(__name__)


class Socket(AsyncSocketModeHandler):
    """bolt's Socket Mode handler, counting the envelopes it is handling."""

    def __init__(self, app: AsyncApp, app_token: str, logger: logging.Logger) -> None:
        super().__init__(app, app_token, logger=logger)
        self.taking = True
        self._handling = 0
        self._idle = asyncio.Event()
        self._idle.set()

    async def handle(self, client: AsyncBaseSocketModeClient, req: SocketModeRequest) -> None:
        if not self.taking:  # not acknowledged: Slack delivers it again after the restart
            log.info("Slack: envelope %s left for the next connection", req.envelope_id)
            return
        self._handling += 1
        self._idle.clear()
        try:
            await super().handle(client, req)  # type: ignore[arg-type]  # its own client
        finally:
            self._handling -= 1
            if not self._handling:
                self._idle.set()

    async def drain(self, deadline: Deadline) -> None:
        """Take no more envelopes, finish those taken, close the connection."""
        self.taking = False
        log.info("Slack: Socket Mode takes no more events")
        if not self._handling or await deadline.within(self._idle.wait()):
            log.info("Slack: every event taken is queued and acknowledged")
        else:
            log.warning("Slack: not queued in time, so delivered again: %d events", self._handling)
        await self.close_async()  # type: ignore[no-untyped-call]
        log.info("Slack: Socket Mode connection closed")
