"""Runs in the real sandbox; every test here starts real processes."""

from __future__ import annotations

import pytest

from bot.config.settings import Settings
from bot.sandbox.limits import SandboxLimits
from bot.sandbox.probe import unavailable


@pytest.fixture(scope="session", autouse=True)
def sandbox_works() -> None:
    """These tests are about the sandbox: a machine without one fails them, loudly."""
    reason = unavailable()
    assert reason is None, f"the sandbox does not work here: {reason}"


@pytest.fixture
def limits() -> SandboxLimits:
    """Default limits, but a wall clock generous for a busy machine."""
    return SandboxLimits.from_settings(Settings(sandbox_timeout=120))
