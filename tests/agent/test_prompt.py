"""The system prompt: bootstrap files (overridable), platform, chat kind and date."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.agent.prompt import Bootstrap, PromptBuilder, load_bootstrap
from bot.tools.base import ToolContext
from bot.vocabulary.envelope import Sender


def test_defaults_ship_and_override_replaces_by_name(tmp_path: Path) -> None:
    default = load_bootstrap(None)
    assert "# Who you are" in default and "# How you work" in default
    (tmp_path / "SOUL.md").write_text("You are Marvin, a gloomy robot.")
    custom = load_bootstrap(tmp_path)
    assert custom.startswith("You are Marvin, a gloomy robot.")
    assert "# Who you are" not in custom and "# How you work" in custom


def test_system_prompt_names_platform_chat_and_date() -> None:
    ctx = ToolContext(
        "tg:1",
        Sender(id="tg:1", name="Ann"),
        platform="telegram",
        chat_kind="group",
        default_timezone="Asia/Tokyo",
    )
    builder = PromptBuilder(Bootstrap.fixed("BOOT"))
    now = datetime(2026, 11, 22, 20, 30, tzinfo=UTC)  # already Monday in Tokyo
    stable, context = builder.system(ctx, now)
    assert stable.text.startswith("BOOT\n\n") and stable.stable and not context.stable
    assert "<untrusted-data>" in stable.text  # what outside text looks like, and what it is
    assert "Platform: telegram; chat: group; you are talking with Ann." in context.text
    assert "Today is Monday, 23 November 2026; time zone Asia/Tokyo." in context.text
    assert builder.stamp(ctx, now) == "[Mon 2026-11-23 05:30 JST]"


def test_the_shipped_defaults_load_without_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        text = load_bootstrap(None)
    for heading in ("# Who you are", "# The people you talk with", "# How you work"):
        assert heading in text
    assert caplog.records == []


def test_a_file_found_nowhere_is_logged_once_with_the_setting(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    (shipped / "SOUL.md").write_text("# Who you are\nA helper.")
    (shipped / "AGENTS.md").write_text("# How you work\nCarefully.")
    custom = tmp_path / "custom"
    custom.mkdir()
    (custom / "AGENTS.md").write_text("# How you work\nQuickly.")
    with caplog.at_level(logging.WARNING):
        text = load_bootstrap(custom, shipped)
    assert text == "# Who you are\nA helper.\n\n# How you work\nQuickly."
    [line] = [record.getMessage() for record in caplog.records]
    assert "USER.md" in line and f"PARLEY_BOOTSTRAP_DIR ({custom})" in line
    assert "SOUL.md" not in line and "AGENTS.md" not in line


def test_an_override_folder_without_any_bootstrap_file_is_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "soul.md").write_text("a name the loader does not read")
    with caplog.at_level(logging.WARNING):
        assert load_bootstrap(tmp_path) == load_bootstrap(None)
    [line] = [record.getMessage() for record in caplog.records]
    assert f"PARLEY_BOOTSTRAP_DIR ({tmp_path}) holds none of SOUL.md, USER.md, AGENTS.md" in line


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_an_edited_persona_is_read_after_the_interval_and_not_before(
    tmp_path: Path,
) -> None:
    clock = Clock()
    (tmp_path / "SOUL.md").write_text("You are Marvin.")
    bootstrap = Bootstrap(tmp_path, interval=2.0, clock=clock)
    assert (await bootstrap.current()).startswith("You are Marvin.")
    (tmp_path / "SOUL.md").write_text("You are Marvin, a gloomy robot.")
    clock.now += 1.0
    assert "gloomy" not in await bootstrap.current()  # looked at a second ago: not again yet
    clock.now += 1.5
    assert (await bootstrap.current()).startswith("You are Marvin, a gloomy robot.")
    (tmp_path / "SOUL.md").unlink()  # gone: the shipped default takes its place again
    (tmp_path / "USER.md").write_text("The people here are sailors.")
    clock.now += 2.5
    text = await bootstrap.current()
    assert "# Who you are" in text and "The people here are sailors." in text


async def test_unchanged_files_are_not_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    (tmp_path / "AGENTS.md").write_text("# How you work\nQuickly.")
    bootstrap = Bootstrap(tmp_path, interval=2.0, clock=clock)
    bootstrap.load()
    reads: list[Path | None] = []

    def read(override: Path | None, default: object) -> str:
        reads.append(override)
        return ""

    monkeypatch.setattr("bot.agent.prompt.load_bootstrap", read)
    clock.now += 10
    assert "Quickly." in await bootstrap.current()
    assert reads == []  # the same sizes and times: the files were not read
