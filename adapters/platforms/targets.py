"""Where the runs of a task an operator sets up are answered, from the session key alone.

A person's task is answered where it was made: the adapter's `reply_to` of that message is
kept with it. A task from the configuration (PARLEY_TASKS) or the API names only a session, so
its `reply_to` is built here, as each platform's ingress would have built it:

- `tg:CHAT` or `tg:CHAT:TOPIC`: the Telegram chat (positive ids are private chats), or the
  forum topic in it;
- `slack:TEAM:CHANNEL` (a new message in the channel, or the DM for `D…` channels) or
  `slack:TEAM:CHANNEL:THREAD_TS` (inside that thread);
- `http:ID`: the HTTP session's event stream.
"""

from __future__ import annotations

import re

from adapters.http import place as http
from adapters.places import telegram
from adapters.platforms.egresses import PLATFORMS
from adapters.slack import place as slack
from bot.config.settings import Settings
from bot.tasks.model import Target

_TG = re.compile(r"tg:(-?[0-9]{1,20})(?::([0-9]{1,12}))?")
_SLACK = re.compile(r"slack:([A-Z0-9]{1,32}):([A-Z0-9]{1,32})(?::([0-9]{1,12}\.[0-9]{1,8}))?")


class UnknownSession(ValueError):
    """A session key no platform would make; the message shows the forms that work."""


def target_of(session: str) -> Target:
    if match := _TG.fullmatch(session):
        chat, topic = int(match[1]), int(match[2]) if match[2] else None
        place = telegram.Place(
            chat_id=chat, thread_id=topic, chat_type="private" if chat > 0 else "supergroup"
        )
        return Target(
            session=place.session,
            platform=telegram.PLATFORM,
            chat_kind=place.kind,
            reply_to=place.model_dump(),
        )
    if match := _SLACK.fullmatch(session):
        team, channel, thread = match[1], match[2], match[3]
        slack_place = slack.Place(
            team=team, channel=channel, thread_ts=thread, is_im=channel.startswith("D")
        )
        return Target(
            session=slack_place.session,
            platform=slack.PLATFORM,
            chat_kind=slack_place.kind,
            reply_to=slack_place.model_dump(),
        )
    if http.is_session_key(session):
        return Target(session=session, platform=http.PLATFORM, chat_kind="private")
    raise UnknownSession(
        f"Unknown session {session[:80]!r}: use tg:CHAT_ID, tg:CHAT_ID:TOPIC_ID, "
        "slack:TEAM:CHANNEL, slack:TEAM:CHANNEL:THREAD_TS or http:SESSION_ID."
    )


def answered_target(session: str, settings: Settings) -> Target:
    """Where the runs of a task for `session` are answered, if this deployment answers
    there: a ValueError whose text says why not (`UnknownSession`, or the platform has no
    bot token here). The HTTP API is given this function rather than importing the
    platforms' modules (`adapters.web.services.Services.target_of`)."""
    target = target_of(session)
    platform = next((p for p in PLATFORMS if p.name == target.platform), None)
    if platform is not None and not platform.configured(settings):
        raise ValueError(
            f"{target.platform} is not configured in this Parley (no bot token), "
            "so nothing could answer the task's runs"
        )
    return target
