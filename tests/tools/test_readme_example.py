"""The "Writing a tool" example of docs/TOOLS.md, run exactly as it is written there.

Its one python block is saved as `mytools.py` in a folder of its own and loaded the way the
page says: by Parley's own loader, and by a worker process given that folder on PYTHONPATH
and the module in PARLEY_TOOL_MODULES. If the example stops working, or stops matching what
it says about itself (loop or thread, sensitive or not), these tests fail.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import Iterator
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from bot.assembly.agent import load_tool_modules, tool_executor
from bot.config.settings import Settings
from bot.tools import Sender, Tool, ToolContext
from bot.tools.base import ToolRegistry
from bot.vocabulary.messages import ToolUseBlock
from tests.fakes.llm import Reply, ToolCallSpec
from tests.support.stack import Stack, read_events, send, texts

TOOLS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "TOOLS.md"
MODULE = "mytools"
# A day apart at every hour: UTC+14 and UTC-11, so a tool that ignored the user's zone shows.
EAST, WEST = "Pacific/Kiritimati", "Pacific/Pago_Pago"


def writing_a_tool() -> str:
    """The "Writing a tool" section of docs/TOOLS.md, up to the next section."""
    parts = TOOLS_PAGE.read_text(encoding="utf-8").split("\n## Writing a tool\n", 1)
    assert len(parts) == 2, f"{TOOLS_PAGE} has a section '## Writing a tool'"
    return parts[1].split("\n## ", 1)[0]


def example_source() -> str:
    """The one python block of the "Writing a tool" section."""
    section = writing_a_tool()
    blocks = re.findall(r"^```python\n(.*?)^```$", section, flags=re.DOTALL | re.MULTILINE)
    assert len(blocks) == 1, "the section shows one complete python example"
    return str(blocks[0])


@pytest.fixture
def example_dir(tmp_path: Path) -> Iterator[Path]:
    """A folder holding the example as `mytools.py`; nothing else there is importable."""
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / f"{MODULE}.py").write_text(example_source(), encoding="utf-8")
    yield folder
    sys.modules.pop(MODULE, None)


def test_the_page_loads_the_module_it_shows() -> None:
    text = writing_a_tool()
    assert f"{MODULE}.py" in text
    assert f"PYTHONPATH=/srv/parley-tools PARLEY_TOOL_MODULES='[\"{MODULE}\"]'" in text


def load_example(example_dir: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Tool]:
    monkeypatch.syspath_prepend(str(example_dir))
    return {item.name: item for item in load_tool_modules([MODULE])}


def context(zone: str) -> ToolContext:
    return ToolContext(
        session_key="http:s1", user=Sender(id="http:local", name="web"), default_timezone=zone
    )


def countdown(target: date, zone: str, *todays: date) -> set[str]:
    """What `days_until` may answer: "today" in `zone` is read before and after the call."""
    return {f"{(target - today).days} days from {today} to {target}" for today in todays}


def today_in(zone: str) -> date:
    return datetime.now(ZoneInfo(zone)).date()


async def test_the_example_runs_through_the_executor(
    example_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes = tmp_path / "team-notes.txt"
    monkeypatch.chdir(tmp_path)  # where the default notes.txt would go, with no .env
    monkeypatch.setenv("PARLEY_TOOL_SAVE_NOTE_FILE", str(notes))
    tools = load_example(example_dir, monkeypatch)
    assert sorted(tools) == ["days_until", "save_note"]
    assert tools["days_until"].isolation == "loop" and tools["days_until"].read_only
    assert tools["save_note"].isolation == "thread" and tools["save_note"].sensitive
    # built as a worker builds its executor, which reads the tools' settings as it is built
    executor = tool_executor(Settings(_env_file=None), ToolRegistry(tools.values()))
    monkeypatch.delenv("PARLEY_TOOL_SAVE_NOTE_FILE")
    target = today_in(EAST) + timedelta(days=10)
    ask = {"day": target.isoformat()}
    before = {zone: today_in(zone) for zone in (EAST, WEST)}
    try:
        east = await executor.run_all(
            [
                ToolUseBlock(id="1", name="days_until", input=ask),
                ToolUseBlock(id="2", name="days_until", input={"day": "next friday"}),
                ToolUseBlock(id="3", name="save_note", input={"text": "buy milk"}),
            ],
            context(EAST),
            {},
        )
        (west,) = await executor.run_all(
            [ToolUseBlock(id="4", name="days_until", input=ask)], context(WEST), {}
        )
    finally:
        await executor.aclose()
    counted, refused, saved = east
    assert not counted.is_error
    assert counted.content in countdown(target, EAST, before[EAST], today_in(EAST))
    assert west.content in countdown(target, WEST, before[WEST], today_in(WEST))
    assert west.content != counted.content
    assert refused.is_error and "is not a date" in refused.content
    assert (saved.is_error, saved.content) == (False, "Saved.")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d http:local: buy milk\n", notes.read_text())
    assert not (tmp_path / "notes.txt").exists()  # the file its setting names, not the default


async def count_days(stack: Stack, client: httpx.AsyncClient) -> None:
    target = today_in(EAST) + timedelta(days=10)
    before = today_in(EAST)
    stack.fake.enqueue(
        Reply(
            tool_calls=[
                ToolCallSpec("days_until", {"day": target.isoformat()}),
                ToolCallSpec("days_until", {"day": "next friday"}),
            ]
        ),
        Reply(text="Ten days."),
    )
    events = await send(client, await stack.session(client), "how long until then?")
    results = [e for e in events if e["type"] == "tool_call_result"]
    counted, refused = sorted(results, key=lambda e: bool(e["is_error"]))
    assert counted["content"] in countdown(target, EAST, before, today_in(EAST))
    assert refused["is_error"] and "is not a date" in refused["content"]
    assert texts(events) == "Ten days."


async def save_a_note(stack: Stack, client: httpx.AsyncClient, notes: Path) -> None:
    stack.fake.enqueue(Reply(tool_calls=[ToolCallSpec("save_note", {"text": "buy milk"})]))
    events = await send(client, await stack.session(client), "note that I must buy milk")
    (asked,) = [e for e in events if e["type"] == "confirmation_required"]
    assert not await asyncio.to_thread(notes.exists), "ran before a person approved it"
    stack.fake.enqueue(Reply(text="Saved it."))
    async with client.stream(
        "POST",
        f"/api/confirmations/{asked['confirmation_id']}",
        json={"decision": "approve"},
        headers={"Accept": "text/event-stream"},
    ) as response:
        assert response.status_code == 200, await response.aread()
        decided = await read_events(response)
    assert [e["content"] for e in decided if e["type"] == "tool_call_result"] == ["Saved."]
    assert texts(decided) == "Saved it."
    assert (await asyncio.to_thread(notes.read_text)).endswith(" http:local: buy milk\n")


@pytest.mark.parametrize("stack", [{"PARLEY_TIMEZONE": EAST}], indirect=True)
async def test_the_example_runs_in_a_worker_as_the_page_loads_it(
    stack: Stack, example_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes = tmp_path / "notes.txt"
    # A worker reads its environment when it starts: set up as the page says, before it does.
    stack.env |= {
        "PYTHONPATH": os.pathsep.join([str(example_dir), stack.env["PYTHONPATH"]]),
        "PARLEY_TOOL_MODULES": f'["{MODULE}"]',
        "PARLEY_TOOL_SAVE_NOTE_FILE": str(notes),
    }
    await (
        stack.start_worker_process()
    )  # a process, as the page starts it: PYTHONPATH finds the module
    async with stack.client() as client:
        await count_days(stack, client)
        await save_a_note(stack, client, notes)
    offered: dict[str, Any] = {t["name"]: t for t in stack.fake.requests[0].body["tools"]}
    for item in load_example(example_dir, monkeypatch).values():
        assert offered[item.name]["description"] == item.description
        assert offered[item.name]["input_schema"] == item.spec.input_schema
