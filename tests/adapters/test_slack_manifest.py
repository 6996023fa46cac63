"""The Slack app manifest declares every slash command and event the ingress answers: a
command or event Slack was never told about is never sent to Parley."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from slack_bolt.async_app import AsyncApp

from adapters.slack import ingress

MANIFEST = Path(ingress.__file__).with_name("manifest.yaml")


class Recorder(AsyncApp):
    """A bolt app that only remembers which commands were registered on it."""

    def __init__(self) -> None:
        super().__init__(token="xoxb-test", signing_secret="secret")
        self.commands: list[str] = []
        self.events: list[str] = []

    def event(self, event: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(event, str):
            self.events.append(event)
        return super().event(event, *args, **kwargs)

    def command(self, command: Any, *args: Any, **kwargs: Any) -> Any:
        self.commands.append(str(command))
        return super().command(command, *args, **kwargs)


def test_every_registered_command_is_in_the_manifest() -> None:
    declared = re.findall(r"^\s*- command: (/[a-z-]+)\s*$", MANIFEST.read_text(), re.MULTILINE)
    app = Recorder()
    ingress.register(app, deps=None)  # type: ignore[arg-type]
    assert "/tasks" in app.commands and "/usage" in app.commands
    assert sorted(app.commands) == sorted(declared)


def test_every_event_listened_to_is_subscribed_in_the_manifest() -> None:
    text = MANIFEST.read_text()
    subscribed = set(re.findall(r"^\s*- ([a-z_]+(?:\.[a-z]+)?)\s*$", text, re.MULTILINE))
    app = Recorder()
    ingress.register(app, deps=None)  # type: ignore[arg-type]
    assert "assistant_thread_context_changed" in app.events
    for event in app.events:
        wanted = "message.im" if event == "message" else event
        assert wanted in subscribed, f"{event} is not in the manifest's bot_events"
