"""Seeing when an async read is asked for and when it answers, to show reads made together.

A turn's reads (preferences, grants, memories, the chat's options) should all be asked for
before the first of them answers; one after the other, each costs a busy worker another round
of its event loop. `watch` wraps one coroutine method so that it notes `<name> asked` and
`<name> answered` in a shared list, and still returns what the real method returns.
"""

from __future__ import annotations

from typing import Any

import pytest


def watch(monkeypatch: pytest.MonkeyPatch, seen: list[str], owner: object, name: str) -> None:
    """Note in `seen` when `owner.name` is called and when its coroutine has finished."""
    read = getattr(owner, name)

    async def reading(*args: Any) -> Any:
        seen.append(f"{name} asked")
        try:
            return await read(*args)
        finally:
            seen.append(f"{name} answered")

    monkeypatch.setattr(owner, name, reading)
