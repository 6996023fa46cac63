"""A Stop button under a reply that takes a while, removed once the reply ends.

Slack's chat streams take no blocks while they stream (only `chat.stopStream` does, when it
is too late) and an edited reply is markdown, which cannot share a message with blocks; so
the button is a small message of its own in the reply's thread (or DM). It is posted only
once the reply has run for `PARLEY_SLACK_STOP_AFTER` seconds, so a quick answer costs no call
for it, and it is deleted when the reply's turn is over, finished or stopped.

Which reply a button stops is kept in Redis while it shows (`parley:slack:stop:{session}`:
the reply's first envelope, the person it answers, the button's ts): a press is taken only
while that very reply runs, so a button left over from an earlier turn, pressed late, stops
nothing; and a worker that carries a turn on after a crash finds the button to delete. The
button's value names the session and the reply, and a press is checked against the thread
it was pressed in.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from adapters.slack.client import SlackCalls
from adapters.slack.place import Place
from bot.redis import keys

log = logging.getLogger(__name__)
ACTION = "parley_stop"
BLOCK = "parley_stop"
SHOWN = "⏳ Still answering…"
KEEP = 86_400  # at most a day: a button whose worker vanished is forgotten by then


@dataclass(frozen=True)
class Pressed:
    """What a Stop button's value says: the session and the reply it stops."""

    session: str
    reply: str

    def value(self) -> str:
        return json.dumps({"session": self.session, "reply": self.reply}, separators=(",", ":"))

    @classmethod
    def parse(cls, value: str) -> Pressed | None:
        """The button's value read strictly; None for anything else."""
        try:
            data = json.loads(value)
        except ValueError:
            return None
        if not isinstance(data, dict) or set(data) != {"session", "reply"}:
            return None
        session, reply = data["session"], data["reply"]
        if not isinstance(session, str) or not isinstance(reply, str) or not session or not reply:
            return None
        return cls(session, reply)


def blocks(pressed: Pressed) -> list[dict[str, Any]]:
    return [
        {
            "type": "actions",
            "block_id": BLOCK,
            "elements": [
                {
                    "type": "button",
                    "action_id": ACTION,
                    "text": {"type": "plain_text", "text": "⏹ Stop"},
                    "style": "danger",
                    "value": pressed.value(),
                }
            ],
        }
    ]


@dataclass(frozen=True)
class Showing:
    """The reply whose Stop button shows in a session, and the Slack user it answers."""

    reply: str
    user: str


async def showing(redis: Redis, session: str) -> Showing | None:
    """The reply whose Stop button shows in `session` while its turn runs, if one does."""
    raw = await redis.get(keys.slack_stop(session))
    if not raw:
        return None
    record = json.loads(raw)
    return Showing(str(record.get("reply") or ""), str(record.get("user") or ""))


class StopButton:
    """The Stop button of one reply: posted after a delay, beside the turn; removed at its end."""

    def __init__(
        self, calls: SlackCalls, redis: Redis, place: Place, reply: str, after: float
    ) -> None:
        self.calls = calls
        self.redis = redis
        self.place = place
        self.reply = reply
        self.after = after
        self._posting: asyncio.Task[None] | None = None

    async def beside(self) -> None:
        """Wait `after` seconds of the turn, then post the button (the pump cancels this at
        the reply's close; a post on its way finishes, so `remove` knows what to delete)."""
        await asyncio.sleep(self.after)
        self._posting = asyncio.create_task(self._post())
        await asyncio.shield(self._posting)

    async def _post(self) -> None:
        try:
            await self._show()
        except Exception:  # a Stop button that cannot show must cost the reply nothing
            log.exception("the Stop button in %s could not be posted", self.place.session)

    async def _show(self) -> None:
        pressed = Pressed(self.place.session, self.reply)
        name = keys.slack_stop(self.place.session)
        raw = await self.redis.get(name)
        found = json.loads(raw) if raw else {}
        if found.get("reply") == self.reply and found.get("ts"):
            return  # posted before a crash, for this same reply: it still shows
        record: dict[str, str | None] = {"reply": self.reply, "user": self.place.user, "ts": None}
        # Marked first, so a press that comes the moment it shows is taken.
        await self.redis.set(name, json.dumps(record), ex=KEEP)
        posted = await self.calls.quietly(
            "chat.postMessage",
            self.place.team,
            channel=self.place.channel,
            thread_ts=self.place.thread_ts,
            text=SHOWN,
            blocks=blocks(pressed),
        )
        if posted is not None:
            record["ts"] = str(posted["ts"])
            await self.redis.set(name, json.dumps(record), ex=KEEP)

    async def remove(self) -> None:
        """The reply's turn is over: the button goes, and a press from now on stops nothing.
        A button an earlier worker posted for this same reply goes too."""
        if self._posting is not None:
            with contextlib.suppress(Exception):
                await self._posting
        name = keys.slack_stop(self.place.session)
        raw = await self.redis.get(name)
        if not raw:
            return
        record = json.loads(raw)
        if record.get("reply") != self.reply:
            return  # another reply's (this one never showed a button)
        await self.redis.delete(name)
        if record.get("ts"):
            await self.calls.quietly(
                "chat.delete", self.place.team, channel=self.place.channel, ts=record["ts"]
            )
