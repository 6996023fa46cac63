"""Slack egress for the worker: a reply stream per turn, and expired prompts settled."""

from __future__ import annotations

from collections.abc import Sequence

from redis.asyncio import Redis

from adapters.replies import ReplyStore
from adapters.slack import confirm
from adapters.slack.client import SlackCalls, make_client
from adapters.slack.place import Place
from adapters.slack.stream import SlackReply
from bot.config import Settings
from bot.confirmations import Confirmation
from bot.envelope import Envelope
from bot.ratelimit import RateBudget


class SlackEgress:
    def __init__(self, calls: SlackCalls, store: ReplyStore) -> None:
        self.calls = calls
        self.store = store

    def open(self, envelopes: Sequence[Envelope]) -> SlackReply:
        head = envelopes[0]
        return SlackReply(self.calls, self.store, Place.from_reply_to(head.reply_to), head.id)

    async def settled(self, record: Confirmation) -> None:
        """An expired prompt says so and loses its buttons, so nobody presses it in vain."""
        found = await self.store.load_prompt(record.id)
        if found is None:
            return
        await self.calls.quietly(
            "chat.update",
            found["team"],
            channel=found["channel"],
            ts=found["ts"],
            text=confirm.outcome(record.status),
            blocks=confirm.settled(found["blocks"], record.status),
        )

    async def aclose(self) -> None:
        session = self.calls.client.session
        if session is not None and not session.closed:
            await session.close()


def build_egress(settings: Settings, redis: Redis) -> SlackEgress:
    """A worker's Slack egress; `adapters.egresses` imports this module only when
    SLACK_BOT_TOKEN is set."""
    calls = SlackCalls(make_client(settings), RateBudget(redis), settings)
    return SlackEgress(calls, ReplyStore(redis, "slack"))
