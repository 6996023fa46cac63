"""Presses of the approval buttons: acknowledged at once, decided atomically, shown to all.

The first decision wins in Redis (see `bot.confirmations`); only the person who asked or an
admin may decide, anyone else gets an ephemeral note and changes nothing. The decision goes
into the session's mailbox before Slack gets its answer; the prompt is then updated in the
background to say what was decided and by whom.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from adapters.approvals import FORBIDDEN, already, decision
from adapters.slack import confirm
from adapters.slack.place import PLATFORM, sender_of
from bot.confirmations import Status

if TYPE_CHECKING:
    from adapters.slack.ingress import IngressDeps


class Presses:
    def __init__(self, deps: IngressDeps) -> None:
        self.deps = deps

    async def on_press(self, ack: Any, body: dict[str, Any]) -> None:
        await ack()
        action = body["actions"][0]
        choice = confirm.ACTIONS[action["action_id"]]
        confirmation_id = str(action.get("value", ""))
        user = str(body["user"]["id"])
        deps = self.deps
        who = sender_of(user, body["user"].get("name", ""), deps.settings)
        status: Status = "denied" if choice == "deny" else "approved"
        record = await deps.confirmations.get(confirmation_id)
        outcome = "unknown"
        if record is not None:
            outcome = await deps.confirmations.decide(
                confirmation_id, status, who.id, is_admin=who.is_admin
            )
        if outcome == "forbidden":
            self._note(body, FORBIDDEN)
            return
        if outcome != "ok" or record is None:
            current = await deps.confirmations.get(confirmation_id)
            status_now = current.status if current is not None else "unknown"
            self._note(body, already(status_now, outcome))
            if current is not None and current.status in ("approved", "denied"):
                # Decided, but perhaps never queued (Redis failed after the decision and this
                # is Slack's retry): queueing again is safe, the envelope id is the dedup key.
                await deps.mailbox.submit(decision(current, who, choice, current.status, PLATFORM))
            if current is not None and current.status != "pending":
                self._settle(body, current.status, _mention(current.decided_by or ""))
            return
        await deps.mailbox.submit(decision(record, who, choice, status, PLATFORM))
        self._settle(body, "remembered" if choice == "remember" else status, f"<@{user}>")

    def _note(self, body: dict[str, Any], text: str) -> None:
        container = body.get("container", {})
        self.deps.later(
            self.deps.calls.quietly(
                "chat.postEphemeral",
                _team(body),
                channel=container.get("channel_id"),
                user=body["user"]["id"],
                text=text,
                thread_ts=container.get("thread_ts"),
            )
        )

    def _settle(self, body: dict[str, Any], status: str, by: str) -> None:
        message = body.get("message") or {}
        container = body.get("container", {})
        self.deps.later(
            self.deps.calls.quietly(
                "chat.update",
                _team(body),
                channel=container.get("channel_id"),
                ts=container.get("message_ts"),
                text=confirm.outcome(status, by),
                blocks=confirm.settled(message.get("blocks", []), status, by),
            )
        )


def _team(body: dict[str, Any]) -> str:
    return str((body.get("team") or {}).get("id") or body["user"].get("team_id", ""))


def _mention(decided_by: str) -> str:
    """`slack:U1` as Slack shows a person; other platforms' ids as they are."""
    return (
        f"<@{decided_by.removeprefix('slack:')}>" if decided_by.startswith("slack:") else decided_by
    )
