"""What a tool is told about its call, and what it is not: the settings' secrets never reach
a `ToolContext`, however it is made, shown or sent to a helper process; a tool's own
settings reach that tool alone."""

from __future__ import annotations

import logging
import pickle
from dataclasses import replace
from pathlib import Path
from typing import cast

import pytest

from adapters.console import ConsoleChat
from bot.agent.loop import Agent
from bot.assembly.agent import tool_executor
from bot.assembly.catalog import standard_tools
from bot.assembly.offered import OfferedTools
from bot.assembly.tool_settings import tool_config
from bot.config.settings import Settings
from bot.session.turn import tool_context
from bot.telemetry.logs import secrets_of
from bot.tools import FileRoom, Sender, ToolContext, tool
from bot.tools.base import ToolRegistry
from bot.tools.config import ToolConfig
from bot.tools.workspace_paths import workspace_of
from bot.vocabulary.envelope import Envelope
from bot.vocabulary.messages import ToolUseBlock
from bot.vocabulary.preferences import Preferences

SEEN: list[ToolContext] = []


@tool(isolation="loop")
async def peek(ctx: ToolContext) -> str:
    """Keep the context this call was given."""
    SEEN.append(ctx)
    return "seen"


def distinctive_settings(tmp_path: Path) -> Settings:
    """Settings with every secret set, each one unlike anything else in a context."""
    return Settings(
        _env_file=None,
        anthropic_api_key="sk-ant-DISTINCT-anthropic-0001",
        openai_api_key="sk-DISTINCT-openai-0002",
        api_token="DISTINCT-api-token-0003",
        telegram_bot_token="123456:DISTINCT-telegram-0004",
        telegram_webhook_secret="DISTINCT-webhook-0005",
        slack_bot_token="xoxb-DISTINCT-slack-0006",
        slack_app_token="xapp-DISTINCT-slack-0007",
        slack_signing_secret="DISTINCT-signing-0008",
        search_backend="brave",
        search_api_key="DISTINCT-brave-0009",
        redis_url="redis://:DISTINCT-redis-0010@127.0.0.1:6379/0",
        database_url="postgresql+asyncpg://parley:DISTINCT-db-0011@127.0.0.1/parley",
        workspace_dir=tmp_path / "workspaces",
    )


def made_contexts(settings: Settings) -> dict[str, ToolContext]:
    """A context as each of Parley's processes makes one."""
    head = Envelope(id="e1", session="tg:-100:7", text="hi", sender=Sender(id="tg:1"))
    executor = tool_executor(settings, ToolRegistry([peek]))
    offered = OfferedTools(executor, settings)
    console = ConsoleChat(cast(Agent, None), settings)  # only its context is looked at
    return {
        "turn": tool_context(head, settings, Preferences(timezone="Europe/Lisbon")),
        "mcp": offered.context("mcp:stdio"),
        "console": console.ctx,
    }


async def test_no_secret_of_the_settings_is_in_a_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = distinctive_settings(tmp_path)
    secrets = secrets_of(settings)
    assert len(secrets) == 11  # every one of them, found as the logs' scrubber finds them
    monkeypatch.setenv("PARLEY_TOOL_PEEK_TOKEN", "the peek tool's own")
    contexts = made_contexts(settings)
    executor = tool_executor(settings, ToolRegistry([peek, *standard_tools(settings)]))
    SEEN.clear()
    try:
        call = ToolUseBlock(id="c1", name="peek", input={})
        (outcome,) = await executor.run_all([call], contexts["turn"], {})
    finally:
        await executor.aclose()
    assert (outcome.is_error, outcome.content) == (False, "seen")
    (given,) = SEEN
    assert given.config == {"token": "the peek tool's own"}
    for name, ctx in {**contexts, "given to a tool": given}.items():
        shown, sent = repr(ctx), pickle.dumps(ctx)
        for secret in secrets:
            assert secret not in shown, (name, secret)
            assert secret.encode() not in sent, (name, secret)
        assert pickle.loads(sent) == ctx  # as a helper process receives it
    assert "the peek tool's own" not in repr(given)  # its own key is not shown either


@tool(isolation="loop")
async def careless(ctx: ToolContext, fail: bool) -> str:
    """Shows its own key, in its result or in its error."""
    if fail:
        raise RuntimeError(f"the service refused key {ctx.config['api_key']}")
    return f"used key {ctx.config['api_key']} for {ctx.config['region']}"


@pytest.mark.parametrize("fail", [False, True])
async def test_a_tool_s_own_key_is_taken_out_of_what_it_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail: bool
) -> None:
    monkeypatch.setenv("PARLEY_TOOL_CARELESS_API_KEY", "careless-key-0123")
    monkeypatch.setenv("PARLEY_TOOL_CARELESS_REGION", "eu-west-3")  # no secret: shown
    settings = distinctive_settings(tmp_path)
    executor = tool_executor(settings, ToolRegistry([careless]))
    try:
        call = ToolUseBlock(id="c1", name="careless", input={"fail": fail})
        (outcome,) = await executor.run_all([call], made_contexts(settings)["turn"], {})
    finally:
        await executor.aclose()
    assert outcome.is_error is fail
    assert "careless-key-0123" not in outcome.content
    assert "key [redacted]" in outcome.content, outcome.content
    assert fail or "eu-west-3" in outcome.content


def test_each_process_gives_the_chat_the_zone_and_the_workspace(tmp_path: Path) -> None:
    settings = distinctive_settings(tmp_path)
    contexts = made_contexts(settings)
    turn = contexts["turn"]
    assert (turn.chat, turn.timezone.key) == ("tg:-100", "Europe/Lisbon")
    assert turn.workspace == workspace_of(settings.workspace_dir, "tg:-100:7")
    assert contexts["mcp"].workspace == workspace_of(settings.workspace_dir, "mcp:stdio")
    assert contexts["console"].workspace == workspace_of(settings.workspace_dir, "console:local")
    assert {c.default_timezone for c in contexts.values()} == {settings.timezone}
    assert contexts["mcp"].timezone.key == settings.timezone


def test_a_tool_s_settings_are_its_own() -> None:
    config = ToolConfig.read(
        {"PARLEY_TOOL_SAVE_NOTE_FILE": "from .env", "PARLEY_TOOL_SAVE_NOTE_MODE": "a"},
        {
            "PARLEY_TOOL_SAVE_NOTE_FILE": "/srv/notes.txt",  # the environment wins
            "parley_tool_save_tone": "dry",  # names are not case-sensitive
            "PARLEY_TOOL_MY_TOOL_URL": "https://example.org",
            "PARLEY_TOOL_TIMEOUT": "30",  # a setting of Parley's, no tool's
            "ANTHROPIC_API_KEY": "sk-ant-never",
        },
    ).among(["save_note", "save", "my-tool", "timeout"])
    assert config.of("save_note") == {"file": "/srv/notes.txt", "mode": "a"}
    assert config.of("save") == {"tone": "dry"}  # save_note's variables are not save's
    assert config.of("my-tool") == {"url": "https://example.org"}  # `-` is written `_`
    assert config.of("timeout") == {}
    assert config.of("days_until") == {}
    mine = config.of("save_note")
    mine["file"] = "changed by a call"
    assert config.of("save_note")["file"] == "/srv/notes.txt"  # each call gets its own copy


def test_the_tools_settings_are_read_from_env_and_the_environment(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("PARLEY_TOOL_SAVE_NOTE_FILE=/from/env/file\nPARLEY_TOOL_SAVE_NOTE_X=1\n")
    environ = {"PARLEY_TOOL_SAVE_NOTE_FILE": "/from/environment", "HOME": "/root"}
    config = tool_config(environ, env_file)
    assert config.of("save_note") == {"file": "/from/environment", "x": "1"}
    assert tool_config(environ, tmp_path / "absent").of("save_note") == {
        "file": "/from/environment"
    }


def test_a_tool_s_setting_no_tool_claims_is_said_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("PARLEY_TOOL_PEEK_TOKEN", "claimed")
    monkeypatch.setenv("PARLEY_TOOL_NOBODY_HERE", "unclaimed")
    settings = Settings(_env_file=None)
    with caplog.at_level(logging.WARNING):
        for _ in range(2):  # a worker builds an executor at start, and again after a restart
            tool_executor(settings, ToolRegistry([peek]))
    said = [r.getMessage() for r in caplog.records if "PARLEY_TOOL_" in r.getMessage()]
    assert said == ["PARLEY_TOOL_NOBODY_HERE is not a setting nor a tool's; it is ignored"]
    assert "unclaimed" not in caplog.text


def test_the_room_for_files_is_shared_by_a_batchs_calls_and_never_grows() -> None:
    """Calls that run at once take their share before they read: what one took, another
    cannot; a call gives back what it did not use, never more than it took; a helper
    process gets a copy that gives nothing back to the turn."""
    room = FileRoom(files=3, out_bytes=100)
    first = room.take(10, 80)
    second = room.take(10, 80)
    assert (first, second, room.files, room.out_bytes) == ((3, 80), (0, 20), 0, 0)
    room.settle(first, files=1, out_bytes=30)
    assert (room.files, room.out_bytes, room.out_read) == (2, 50, 30)
    room.settle((1_000, 1_000_000), files=0)  # more than was taken: only what is held is back
    assert (room.files, room.out_bytes) == (2, 70)
    copy = pickle.loads(pickle.dumps(replace(ToolContext("t", Sender(id="t"), files=room))))
    assert copy.files is not None and (copy.files.files, copy.files.out_bytes) == (2, 70)
    copy.files.settle(copy.files.take(2, 70), files=0)
    assert (room.files, room.out_bytes, room.out_read) == (2, 70, 30)
