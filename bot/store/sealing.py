"""Runs' traces sealed at rest with the operator's keys (`PARLEY_TRACE_KEY`), off unless set.

A trace holds the start of what tools returned, of the answers checked against a schema and of
every error, so a database copied off its machine tells whoever holds it what people asked
and were told. With a key, the trace a run's row keeps is `{"sealed": token}`: the trace's JSON
as a Fernet token (AES-128 in CBC mode with an HMAC-SHA256 over it, from `cryptography`), which
the key alone opens and which cannot be altered unseen. The numbers the runs list and charts
add up (status, latency, score, tokens, tool usage, time per state) stay in their own columns,
so aggregates need no key; what the runs said is in the trace.

`PARLEY_TRACE_KEY` is one key or several, separated by commas: the first seals, each of them
opens, so a key is rotated by putting a new one first and dropping the old one once no trace
it sealed is kept (retention, or the runs deleted). Traces written before a key was set stay
as they were and are read as they are.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from pydantic import SecretStr

from bot.config.values import trace_keys

SEALED = "sealed"  # the one key of a sealed trace's JSON


class Unsealable(Exception):
    """A sealed trace this process has no key to open."""


def is_sealed(stored: dict[str, Any]) -> bool:
    return set(stored) == {SEALED}


class TraceSeal:
    def __init__(self, keys: Sequence[str]) -> None:
        self._fernet = MultiFernet([Fernet(key) for key in keys])

    @classmethod
    def of(cls, setting: SecretStr | None) -> TraceSeal | None:
        """The seal `PARLEY_TRACE_KEY` sets up, None without it (traces kept as they are)."""
        return None if setting is None else cls(trace_keys(setting.get_secret_value()))

    def seal(self, trace: dict[str, Any]) -> dict[str, Any]:
        token = self._fernet.encrypt(json.dumps(trace, separators=(",", ":")).encode())
        return {SEALED: token.decode()}

    def open(self, stored: dict[str, Any]) -> dict[str, Any]:
        try:
            opened: dict[str, Any] = json.loads(self._fernet.decrypt(stored[SEALED]))
        except InvalidToken:
            raise Unsealable("none of the keys in PARLEY_TRACE_KEY opens it") from None
        return opened


def opened(stored: dict[str, Any] | None, seal: TraceSeal | None) -> dict[str, Any] | None:
    """A trace as a run's row keeps it, opened if it was sealed."""
    if stored is None or not is_sealed(stored):
        return stored
    if seal is None:
        raise Unsealable("it was sealed with PARLEY_TRACE_KEY, which this process is not given")
    return seal.open(stored)


def sealed(trace: dict[str, Any] | None, seal: TraceSeal | None) -> dict[str, Any] | None:
    """A trace as a run's row is to keep it: sealed when a key is set."""
    return trace if trace is None or seal is None else seal.seal(trace)
