"""The one line a setting's bad value is refused with, as a process starting would say it."""

from __future__ import annotations

import pytest

from bot.config.settings import ConfigError, load_settings


def refusal(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> str:
    """Why the settings are refused with `env` set (and no OPENAI_API_KEY to borrow)."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as caught:
        load_settings(_env_file=None)
    return str(caught.value)
