"""The system prompt: bootstrap files (overridable), platform, chat kind and date."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from bot.agent.prompt import PromptBuilder, load_bootstrap
from bot.config import Settings
from bot.envelope import Sender
from bot.tools.base import ToolContext


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
        Settings(timezone="Asia/Tokyo"),
        platform="telegram",
        chat_kind="group",
    )
    builder = PromptBuilder("BOOT")
    now = datetime(2026, 11, 22, 20, 30, tzinfo=UTC)  # already Monday in Tokyo
    stable, context = builder.system(ctx, now)
    assert stable.text.startswith("BOOT\n\n") and stable.stable and not context.stable
    assert "<untrusted-data>" in stable.text  # what outside text looks like, and what it is
    assert "Platform: telegram; chat: group; you are talking with Ann." in context.text
    assert "Today is Monday, 23 November 2026; time zone Asia/Tokyo." in context.text
    assert builder.stamp(ctx, now) == "[Mon 2026-11-23 05:30 JST]"
