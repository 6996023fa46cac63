"""Parley's own tools as each process builds them: those built on the database's stores only
where there are stores, `delegate` only where there are helpers (or their listing), their
names kept from tool modules everywhere."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bot.assembly.agent import configured_tools
from bot.assembly.catalog import DATABASE_TOOLS, standard_tools, worker_tools
from bot.assembly.delegate import HelperLink
from bot.assembly.stores import ToolStores
from bot.config.settings import ConfigError, Settings
from bot.store.engine import make_engine
from bot.tools.base import ToolRegistry

SETTINGS = Settings(_env_file=None)


@pytest.fixture
def stores() -> ToolStores:
    """Stores as a worker opens them; building tools on them connects to nothing."""
    return ToolStores.open(
        make_engine("sqlite+aiosqlite://"), Redis.from_url("redis://127.0.0.1:1")
    )


def test_the_database_s_tools_come_with_the_stores_and_only_with_them(stores: ToolStores) -> None:
    without = [t.name for t in standard_tools(SETTINGS)]
    built = [t.name for t in standard_tools(SETTINGS, stores)]
    assert [name for name in built if name not in without] == list(DATABASE_TOOLS)
    assert not set(DATABASE_TOOLS) & set(without)


def test_delegate_comes_with_helpers_and_is_listed_as_a_worker_offers_it(
    stores: ToolStores,
) -> None:
    assert "delegate" not in [t.name for t in standard_tools(SETTINGS, stores)]
    offered = ToolRegistry(standard_tools(SETTINGS, stores, HelperLink())).specs
    assert ToolRegistry(worker_tools(SETTINGS, stores)).specs == offered
    assert "delegate" in [spec.name for spec in offered]
    shallow = SETTINGS.model_copy(update={"delegate_depth": 0})
    assert "delegate" not in [t.name for t in worker_tools(shallow, stores)]


@pytest.mark.parametrize("name", ["remember", "delegate"])
def test_a_tool_module_may_not_take_their_names_where_they_are_absent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """The same modules load in a worker, which has those tools (`delegate` too), and in
    `parley mcp`, which has not: a name taken there would be refused only in the worker."""
    (tmp_path / "clashing_tools.py").write_text(
        "from bot.tools import ToolContext, tool\n\n\n"
        f"@tool(name={name!r})\n"
        "def clash(ctx: ToolContext, fact: str) -> str:\n"
        '    """Keep a fact somewhere else."""\n'
        "    return fact\n\n\n"
        "TOOLS = [clash]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    settings = Settings(_env_file=None, tool_modules=["clashing_tools"])
    try:
        with pytest.raises(ConfigError, match=f"PARLEY_TOOL_MODULES: tool '{name}' is regist"):
            configured_tools(settings)
    finally:
        sys.modules.pop("clashing_tools", None)
