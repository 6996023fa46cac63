"""Every Redis key is named in `bot/redis/keys.py`: no other module spells out a `parley:` key or
builds one from the prefix, so the list in its docstring is the whole list."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("bot", "adapters", "worker")
OWNER = Path("bot/redis/keys.py")
PREFIXES = {"PREFIX", "SESSION_PREFIX", "WORKER_PREFIX"}
KEY = re.compile(r"^parley:\S")  # "parley: configuration error" is a message, not a key
# Not a key: the sender id that marked an expired approval before envelopes had a kind.
NOT_KEYS = {"parley:timeout"}


def _names_prefix(node: ast.expr) -> bool:
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return name in PREFIXES


def key_spellings(source: str) -> list[str]:
    """The places in `source` that write a `parley:` key or build one from a prefix."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if KEY.match(node.value) and node.value not in NOT_KEYS:
                found.append(f"line {node.lineno}: {node.value!r}")
        elif isinstance(node, ast.ImportFrom) and node.module in {
            "bot.redis.keys",
            "bot.mailbox.inbox",
        }:
            found += [
                f"line {node.lineno}: imports {a.name}" for a in node.names if a.name in PREFIXES
            ]
        elif isinstance(node, ast.FormattedValue) and _names_prefix(node.value):
            found.append(f"line {node.lineno}: formats a prefix")
        elif isinstance(node, ast.BinOp) and _names_prefix(node.left):
            found.append(f"line {node.lineno}: adds to a prefix")
    return found


def test_only_bot_keys_names_redis_keys() -> None:
    offenders = {
        str(path.relative_to(ROOT)): spellings
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if path.relative_to(ROOT) != OWNER
        and (spellings := key_spellings(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}


def test_the_scan_sees_each_way_of_spelling_a_key() -> None:
    source = """
from bot.redis.keys import PREFIX
from bot.redis import keys
a = "parley:armed"
b = f"parley:{{{session}}}:inbox"
c = f"{keys.PREFIX}:rate:{name}"
d = "parley: configuration error"
e = keys.session(session, "inbox")
f = keys.WORKER_PREFIX + worker
g = script(args=[keys.SESSION_PREFIX])
"""
    lines = sorted(
        int(found.split(":")[0].removeprefix("line ")) for found in key_spellings(source)
    )
    assert lines == [2, 4, 5, 6, 9]
