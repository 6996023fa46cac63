"""Slack egress for the worker: a reply stream per turn, and expired prompts updated."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis

from adapters.chat.egress import ChatEgress
from adapters.chat.replies import ReplyStore
from adapters.chat.reply_stream import StreamedReply
from adapters.chat.transcript import heard_in
from adapters.slack import ask, confirm
from adapters.slack.client import SlackCalls, make_client
from adapters.slack.place import Place, user_of
from adapters.slack.stream import slack_reply
from bot.config.settings import Settings
from bot.files.store import FileStore
from bot.redis.confirmations import Confirmation, Status
from bot.redis.ratelimit import RateBudget
from bot.vocabulary.envelope import Envelope


class SlackEgress(ChatEgress[SlackCalls]):
    stop_after: float | None = None  # a reply's Stop button shows after so many seconds

    def open(self, envelopes: Sequence[Envelope], *, fresh: bool = False) -> StreamedReply:
        head = envelopes[0]
        place = Place.from_reply_to(head.reply_to)
        heard = heard_in(envelopes)
        return slack_reply(
            self.calls, self.store, self.files, place, head.id, heard, self.stop_after,
            fresh=fresh,
        )  # fmt: skip

    async def show_outcome(self, prompt: dict[str, Any], status: Status) -> None:
        await self.calls.quietly(
            "chat.update",
            prompt["team"],
            channel=prompt["channel"],
            ts=prompt["ts"],
            text=confirm.outcome(status),
            blocks=confirm.with_outcome(prompt["blocks"], status),
        )

    async def post_reminder(
        self, prompt: dict[str, Any], confirmation: Confirmation, text: str
    ) -> None:
        """A note in the prompt's thread that mentions its person."""
        user = user_of(confirmation.requester)
        who = f"<@{user}>" if user is not None else "You"
        thread = Place.from_reply_to(confirmation.reply_to).thread_ts
        await self.calls.call(
            "chat.postMessage",
            prompt["team"],
            must_land=True,
            channel=prompt["channel"],
            thread_ts=thread or prompt["ts"],
            text=f"{who}, {text}",
        )

    async def show_answers(self, prompt: dict[str, Any], confirmation: Confirmation) -> None:
        user = user_of(confirmation.decided_by or "")
        await self.calls.quietly(
            "chat.update",
            prompt["team"],
            channel=prompt["channel"],
            ts=prompt["ts"],
            text=ask.summary(confirmation),
            blocks=ask.blocks(confirmation, f"<@{user}>" if user else ""),
        )

    async def aclose(self) -> None:
        session = self.calls.client.session
        if session is not None and not session.closed:
            await session.close()


def build_egress(settings: Settings, redis: Redis) -> SlackEgress:
    """A worker's Slack egress; `adapters.platforms.egresses` imports this module only when
    SLACK_BOT_TOKEN is set."""
    calls = SlackCalls(make_client(settings), RateBudget(redis), settings)
    egress = SlackEgress(calls, ReplyStore(redis, "slack"), FileStore(settings.files_dir))
    egress.stop_after = settings.slack_stop_after
    return egress
