"""Parley with Slack for end-to-end tests: the web app and workers (see tests.support.workers), the
fake Slack Web API and the fake model API, everything over real HTTP and a real Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from adapters.slack.service import EVENTS_PATH
from tests.fakes.llm import FakeLLM
from tests.fakes.slack import (
    APP_TOKEN,
    BOT_TOKEN,
    SIGNING_SECRET,
    FakeSlack,
    Posted,
    SlackChannel,
    SlackUser,
)
from tests.support.audio import speech_env, voice_env
from tests.support.redis_server import free_port
from tests.support.stack import Stack, serving, stack_env, web_settings


@dataclass
class SlackStack(Stack):
    slack: FakeSlack | None = None

    @property
    def fake_slack(self) -> FakeSlack:
        assert self.slack is not None
        return self.slack

    async def begin(self) -> tuple[FakeSlack, SlackUser, SlackChannel]:
        """Where most tests start: a worker running, and Ann in a workspace with #general."""
        await self.start_worker()
        fake = self.fake_slack
        return fake, fake.user("U0ANN", "ann"), fake.channel("C0GENERAL", "general")


def slack_env(slack: FakeSlack, *, socket: bool = False, **extra: str) -> dict[str, str]:
    env = {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_API_URL": slack.base_url, **extra}
    if socket:
        env["SLACK_APP_TOKEN"] = APP_TOKEN
    else:
        env["SLACK_SIGNING_SECRET"] = SIGNING_SECRET
    return env


@pytest.fixture
async def slack_stack(
    redis_url: str,
    fake_llm: FakeLLM,
    fake_slack: FakeSlack,
    database_url: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> AsyncIterator[SlackStack]:
    """Parametrise indirectly with extra environment; `socket=1` uses Socket Mode, `voice=1`
    transcribes voice notes at the fake model API's endpoint, `speech=1` says replies aloud
    at its speech endpoint."""
    extra: dict[str, str] = {
        "PARLEY_FILES_DIR": str(tmp_path / "files"),
        "PARLEY_WORKSPACE_DIR": str(tmp_path / "workspaces"),
    }
    extra |= dict(getattr(request, "param", {}) or {})
    socket = bool(extra.pop("socket", ""))
    if extra.pop("voice", ""):
        extra |= voice_env(fake_llm)
    if extra.pop("speech", ""):
        extra |= speech_env(fake_llm)
    port = free_port()
    env = stack_env(
        redis_url, fake_llm, database_url, **slack_env(fake_slack, socket=socket, **extra)
    )
    built = SlackStack(redis_url, fake_llm, tmp_path, env=env, slack=fake_slack)
    if socket:
        fake_slack.mode = "socket"
    else:
        fake_slack.events_url = f"http://127.0.0.1:{port}{EVENTS_PATH}"
    async with serving(built, web_settings(env), port) as running:
        yield running


def block_text(message: Posted) -> str:
    """The text of each of a message's blocks, a line each."""
    return "\n".join(str(block.get("text", {}).get("text", "")) for block in message.blocks or [])


def buttons_by_value(message: Posted, action_id: str) -> dict[str, dict[str, Any]]:
    """A message's buttons with `action_id` (one per listed item), by the value each carries."""
    found = {}
    for block in message.blocks or []:
        accessory = block.get("accessory") or {}
        if accessory.get("action_id") == action_id:
            found[str(accessory["value"])] = accessory
    return found
