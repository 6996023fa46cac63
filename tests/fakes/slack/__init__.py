"""A fake of Slack's Web API and of its event delivery for tests; see `server.FakeSlack`."""

from tests.fakes.slack.model import (
    APP_ID,
    APP_TOKEN,
    BOT_ID,
    BOT_TOKEN,
    BOT_USER_ID,
    SIGNING_SECRET,
    TEAM_ID,
    Call,
    Delivery,
    Posted,
    SlackChannel,
    SlackUser,
)
from tests.fakes.slack.server import FakeSlack

__all__ = [
    "APP_ID",
    "APP_TOKEN",
    "BOT_ID",
    "BOT_TOKEN",
    "BOT_USER_ID",
    "SIGNING_SECRET",
    "TEAM_ID",
    "Call",
    "Delivery",
    "FakeSlack",
    "Posted",
    "SlackChannel",
    "SlackUser",
]
