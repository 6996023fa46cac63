"""The bodies Slack sends to an app: event_callback envelopes and block_actions payloads.

Shapes follow what Slack sends for an app subscribed to app_mention, message.channels,
message.im and assistant events, and with interactivity on; each event_callback carries its
own event_id, which is what an app deduplicates on.
"""

from __future__ import annotations

import itertools
import secrets
import time
from typing import Any

from tests.fakes.slack.model import (
    APP_ID,
    BOT_ID,
    BOT_USER_ID,
    TEAM_DOMAIN,
    TEAM_ID,
    VERIFICATION_TOKEN,
    Posted,
    SlackChannel,
    SlackUser,
)

INTERACTIVE = {
    "block_actions",
    "block_suggestion",
    "interactive_message",
    "message_action",
    "shortcut",
    "view_closed",
    "view_submission",
}
_event_numbers = itertools.count(1)


def event_id() -> str:
    return f"Ev0{next(_event_numbers):08d}{secrets.token_hex(2).upper()}"


def event_callback(event: dict[str, Any]) -> dict[str, Any]:
    return {
        "token": VERIFICATION_TOKEN,
        "team_id": TEAM_ID,
        "context_team_id": TEAM_ID,
        "context_enterprise_id": None,
        "api_app_id": APP_ID,
        "event": event,
        "type": "event_callback",
        "event_id": event_id(),
        "event_time": int(time.time()),
        "authorizations": [
            {
                "enterprise_id": None,
                "team_id": TEAM_ID,
                "user_id": BOT_USER_ID,
                "is_bot": True,
                "is_enterprise_install": False,
            }
        ],
        "is_ext_shared_channel": False,
        "event_context": "4-" + secrets.token_urlsafe(24),
    }


def rich_text(text: str) -> list[dict[str, Any]]:
    """The rich_text block Slack's clients attach to what a person types (plain text only)."""
    return [
        {
            "type": "rich_text",
            "block_id": secrets.token_urlsafe(4),
            "elements": [
                {"type": "rich_text_section", "elements": [{"type": "text", "text": text}]}
            ],
        }
    ]


def message_event(
    message: Posted, channel: SlackChannel, parent_user: str | None = None
) -> dict[str, Any]:
    """A `message` event: from a person, from this app's bot (bot_id set, no subtype) or from
    another bot (subtype bot_message)."""
    event: dict[str, Any] = {
        "type": "message",
        "channel": channel.id,
        "text": message.shown,
        "ts": message.ts,
        "event_ts": message.ts,
        "channel_type": channel.channel_type,
        "team": TEAM_ID,
    }
    if message.user is not None:
        event["user"] = message.user
    if message.subtype is not None:
        event["subtype"] = message.subtype
    if message.bot_id is not None:
        event["bot_id"] = message.bot_id
        if message.bot_id == BOT_ID:
            event["app_id"] = APP_ID
            event["bot_profile"] = {"id": BOT_ID, "app_id": APP_ID, "name": "Parley"}
        if message.blocks is not None:
            event["blocks"] = message.blocks
    else:
        event["client_msg_id"] = secrets.token_hex(16)
        event["blocks"] = rich_text(message.text)
    if message.files:
        event["files"] = message.files
        event["subtype"] = "file_share"
        event["upload"] = False
    if message.thread_ts is not None:
        event["thread_ts"] = message.thread_ts
        if parent_user is not None:
            event["parent_user_id"] = parent_user
    return event


def app_mention_event(message: Posted, channel: SlackChannel) -> dict[str, Any]:
    event: dict[str, Any] = {
        "type": "app_mention",
        "text": message.text,
        "ts": message.ts,
        "channel": channel.id,
        "event_ts": message.ts,
        "team": TEAM_ID,
        "client_msg_id": secrets.token_hex(16),
        "blocks": rich_text(message.text),
    }
    if message.user is not None:
        event["user"] = message.user
    if message.files:
        event["files"] = message.files
    if message.thread_ts is not None:
        event["thread_ts"] = message.thread_ts
    return event


def assistant_thread_started(
    user: SlackUser, dm: SlackChannel, thread_ts: str, viewing: SlackChannel | None = None
) -> dict[str, Any]:
    """A new assistant thread; `viewing` is the channel the person had open, if any (Slack
    sends the context without a channel_id then)."""
    return assistant_thread_event("assistant_thread_started", user, dm, thread_ts, viewing)


def assistant_thread_event(
    kind: str, user: SlackUser, dm: SlackChannel, thread_ts: str, viewing: SlackChannel | None
) -> dict[str, Any]:
    """assistant_thread_started, or assistant_thread_context_changed when the person opens
    another channel beside the thread."""
    context: dict[str, Any] = {"team_id": TEAM_ID, "enterprise_id": None}
    if viewing is not None:
        context["channel_id"] = viewing.id
    return {
        "type": kind,
        "assistant_thread": {
            "user_id": user.id,
            "context": context,
            "channel_id": dm.id,
            "thread_ts": thread_ts,
        },
        "event_ts": f"{time.time():.6f}",
    }


def block_actions(
    user: SlackUser,
    channel: SlackChannel,
    message: Posted,
    action: dict[str, Any],
    response_url: str,
) -> dict[str, Any]:
    """A press of a button of `message`; Slack leaves an ephemeral message out (only its ts
    is in the container), so an app cannot read the list it is updating from the press."""
    container: dict[str, Any] = {
        "type": "message",
        "message_ts": message.ts,
        "channel_id": channel.id,
        "is_ephemeral": message.ephemeral_to is not None,
    }
    if message.thread_ts is not None:
        container["thread_ts"] = message.thread_ts
    payload: dict[str, Any] = {
        "type": "block_actions",
        "user": {"id": user.id, "username": user.name, "name": user.name, "team_id": TEAM_ID},
        "api_app_id": APP_ID,
        "token": VERIFICATION_TOKEN,
        "container": container,
        "trigger_id": f"{int(time.time())}.{secrets.randbelow(10**9)}.{secrets.token_hex(16)}",
        "team": {"id": TEAM_ID, "domain": TEAM_DOMAIN},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": channel.id, "name": channel.name},
        "message": message.wire(),
        "state": {"values": {}},
        "response_url": response_url,
        "actions": [{**action, "action_ts": f"{time.time():.6f}"}],
    }
    if message.ephemeral_to is not None:
        del payload["message"]
    return payload


def find_button(
    message: Posted, action_id: str, value: str | None = None
) -> tuple[str, dict[str, Any]] | None:
    """The block_id and the button with this action_id among the message's blocks: the one
    carrying `value` if there is one (of a list with a button per line), else the first."""
    found = _buttons(message, action_id)
    chosen = [pair for pair in found if value is not None and pair[1].get("value") == value]
    return (chosen or found)[0] if found else None


def _buttons(message: Posted, action_id: str) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for block in message.blocks or []:
        elements = list(block.get("elements") or []) if block.get("type") == "actions" else []
        accessory = block.get("accessory")
        if isinstance(accessory, dict):
            elements.append(accessory)
        for element in elements:
            if element.get("type") == "button" and element.get("action_id") == action_id:
                found.append((str(block.get("block_id", "")), element))
    return found


def slash_command(
    user: SlackUser, channel: SlackChannel, command: str, text: str
) -> dict[str, Any]:
    """A slash command as Slack posts it: flat form fields, no `type`."""
    return {
        "token": VERIFICATION_TOKEN,
        "team_id": TEAM_ID,
        "team_domain": TEAM_DOMAIN,
        "channel_id": channel.id,
        "channel_name": channel.name,
        "user_id": user.id,
        "user_name": user.name,
        "command": command,
        "text": text,
        "api_app_id": APP_ID,
        "is_enterprise_install": "false",
        "response_url": f"https://hooks.slack.test/commands/{TEAM_ID}/{secrets.token_hex(8)}",
        "trigger_id": f"{int(time.time())}.{secrets.randbelow(10**9)}.{secrets.token_hex(16)}",
    }
