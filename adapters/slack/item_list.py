"""What the Slack lists (`/tasks`, `/memory`, `/permissions`) share: a section per line, and
a press of one of their buttons read from its interaction payload."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from adapters.chat.access import refusal
from adapters.slack.deps import IngressDeps
from adapters.slack.place import in_dm, person


@dataclass(frozen=True)
class ListPress:
    """Who pressed which list's button, where: the team and channel come from the payload's
    container (the channel of an ephemeral message too), never from the button."""

    team: str
    channel: str
    user: str
    value: str | None
    block_id: str
    thread_ts: str | None

    @classmethod
    def of(cls, body: dict[str, Any]) -> ListPress:
        action = (body.get("actions") or [{}])[0]
        user = body.get("user") or {}
        container = body.get("container") or {}
        channel = container.get("channel_id") or (body.get("channel") or {}).get("id") or ""
        value = action.get("value")
        return cls(
            team=str((body.get("team") or {}).get("id") or user.get("team_id") or ""),
            channel=str(channel),
            user=str(user.get("id", "")),
            value=None if value is None else str(value),
            block_id=str(action.get("block_id") or ""),
            thread_ts=container.get("thread_ts"),
        )


def section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


@dataclass(frozen=True)
class Asker:
    """Who typed a list's slash command, where, and what followed the command."""

    user: str
    team: str
    channel: str
    text: str


async def let_in(ack: Any, command: dict[str, Any], deps: IngressDeps) -> Asker | None:
    """The asker of `command`, or None once a stranger was told why not (every time)."""
    user = str(command.get("user_id", ""))
    who = person(user)
    if not await deps.gate.lets_in(who, in_dm(command)):
        await ack(refusal(who))
        return None
    team, channel = str(command.get("team_id", "")), str(command.get("channel_id", ""))
    return Asker(user, team, channel, str(command.get("text", "")))
