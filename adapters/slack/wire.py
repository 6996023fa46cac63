"""The Web API calls on a streamed reply's messages in one channel (or thread): post, edit
and delete, each through the shared budget."""

from __future__ import annotations

from typing import Any

from slack_sdk.errors import SlackApiError

from adapters.chat.pacing import Slot
from adapters.chat.reply_messages import Edit
from adapters.slack.client import SlackCalls, error_of
from adapters.slack.place import Place


class SlackWire:
    """The Web API calls on a reply's messages in one channel (or thread)."""

    def __init__(self, calls: SlackCalls, place: Place) -> None:
        self.calls = calls
        self.place = place

    def message_id(self, stored: Any) -> str:
        return str(stored)

    async def edit(
        self, message_id: str, content: str, *, must_land: bool, slot: Slot | None
    ) -> Edit:
        try:
            done = await self.calls.call(
                "chat.update",
                self.place.team,
                must_land=must_land,
                slot=slot,
                channel=self.place.channel,
                ts=message_id,
                markdown_text=content,
            )
        except SlackApiError as exc:
            if error_of(exc) != "message_not_found":
                raise
            return Edit.GONE
        return Edit.SKIPPED if done is None else Edit.LANDED

    async def post(
        self, index: int, content: str, *, must_land: bool, slot: Slot | None
    ) -> str | None:
        posted = await self.calls.call(
            "chat.postMessage",
            self.place.team,
            must_land=must_land,
            slot=slot,
            channel=self.place.channel,
            thread_ts=self.place.thread_ts,
            markdown_text=content,
        )
        return str(posted["ts"]) if posted is not None else None

    async def delete(self, message_id: str) -> None:
        await self.calls.quietly(
            "chat.delete", self.place.team, channel=self.place.channel, ts=message_id
        )
