"""A thread's status under a reply ("is thinking…", "is running search…"), kept beside the
turn and never in its way.

Slack shows an assistant thread's status while the app works on an answer. It is cosmetic,
and each change is a Web API call, a round trip to Slack (often 100 ms or more): made inline,
the turn's first event would wait for it before the model is even asked, and each tool call
before it runs. So changes go out from a task of their own, one at a time and in the order
they were asked for, and only the newest one wanted (a change overtaken by the next before it
was sent is never sent). The last change, clearing the status once the reply is shown, is
waited for, after every change asked before it, so the thread never keeps an old status.
"""

from __future__ import annotations

import asyncio

from adapters.slack.client import SlackCalls
from adapters.slack.place import Place


class ThreadStatus:
    """The status of one reply's thread; nothing at all outside threads."""

    def __init__(self, calls: SlackCalls, place: Place) -> None:
        self.calls = calls
        self.place = place
        self._wanted: str | None = None  # the newest status asked for and not yet sent
        self._sender: asyncio.Task[None] | None = None

    def show(self, status: str) -> None:
        """Ask for `status`; it is sent in the background, after any change on its way."""
        if self.place.thread_ts is None:
            return
        self._wanted = status
        if self._sender is None or self._sender.done():
            self._sender = asyncio.create_task(self._send())

    async def settle(self, status: str) -> None:
        """Show `status` after every change asked before it, and wait until it was sent."""
        self.show(status)
        if self._sender is not None:
            await self._sender

    def cancel(self) -> None:
        """Stop sending: the turn was stopped from outside, another worker carries it on."""
        if self._sender is not None:
            self._sender.cancel()

    async def _send(self) -> None:
        """Send the wanted status until none is left; failures are only logged (`optional`)."""
        assert self.place.thread_ts is not None
        while self._wanted is not None:
            status, self._wanted = self._wanted, None
            await self.calls.optional(
                "assistant.threads.setStatus",
                self.place.team,
                channel_id=self.place.channel,
                thread_ts=self.place.thread_ts,
                status=status,
            )
