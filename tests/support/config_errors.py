"""The one line a bad setting stops a process with, as the tests of settings read it."""

from __future__ import annotations

import pytest

from bot.config.settings import ConfigError, load_settings


def refusal(monkeypatch: pytest.MonkeyPatch, **env: str) -> str:
    """The ConfigError the settings raise with `env` set (no `.env` read), checked to be
    one line."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as caught:
        load_settings(_env_file=None)
    message = str(caught.value)
    assert "\n" not in message
    return message
