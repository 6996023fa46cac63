"""Files the agent sends over the HTTP API: a `file` event on the message's stream, after the
call's result, with the file's reference and its address; the address serves the bytes; the
session's history keeps the file with the call's result, for the web chat to show again; a
one-off run's JSON answer lists them (a chart `run_python` drew in the real sandbox)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from adapters.http.place import session_key
from bot.telemetry import metrics
from bot.tools.workspace_paths import workspace_of
from tests.fakes.llm import Reply, ToolCallSpec
from tests.support.programs import PLOT
from tests.support.stack import Stack, read_events, recorded, texts

pytestmark = pytest.mark.e2e

TABLE = b"city,people\nLisbon,545000\nPorto,232000\n"


async def test_a_sent_file_is_an_event_with_its_address_and_stays_in_the_history(
    stack: Stack,
) -> None:
    """With the defaults."""
    await stack.start_worker()
    sent = metrics.FILES_SENT.labels("http", "document")
    before = sent._value.get()
    call = ToolCallSpec("send_file", {"path": "cities.csv", "caption": "Both cities"}, id="c1")
    stack.fake.enqueue(Reply(tool_calls=[call]), Reply(text="There you go."))
    async with stack.client() as client:
        session = await stack.session(client)
        folder = workspace_of(Path(stack.env["PARLEY_WORKSPACE_DIR"]), session_key(session))
        folder.mkdir(parents=True, mode=0o700)
        (folder / "cities.csv").write_bytes(TABLE)
        async with client.stream(
            "POST", f"/api/sessions/{session}/messages", json={"text": "the table"}
        ) as response:
            assert response.status_code == 200
            events = await read_events(response)
        [file] = [event for event in events if event["type"] == "file"]
        served = await client.get(file["url"])
    history = await recorded(stack, session, 4)  # the question, the call, its result, the answer
    digest = hashlib.sha256(TABLE).hexdigest()
    assert file == {
        "type": "file",
        "call_id": "c1",
        "file": {"sha256": digest, "media_type": "text/csv", "name": "cities.csv",
                 "size": len(TABLE), "extract": None},
        "caption": "Both cities",
        "url": f"/api/files/{digest}",
    }  # fmt: skip
    kinds = [event["type"] for event in events]
    assert kinds.index("file") == kinds.index("tool_call_result") + 1
    assert texts(events) == "There you go."
    assert (served.status_code, served.content) == (200, TABLE)
    assert served.headers["content-disposition"] == "attachment"
    results = [
        block
        for message in history["recent"]
        for block in message["content"] or []
        if block["type"] == "tool_result"
    ]
    assert [ref["sha256"] for ref in results[0]["files"]] == [digest]
    assert sent._value.get() == before + 1


@pytest.mark.parametrize(
    "stack", [{"PARLEY_POLICY": '[{"action": "allow", "tool": "run_python"}]'}], indirect=True
)
async def test_a_one_off_run_answers_with_the_files_it_sent(stack: Stack) -> None:
    await stack.start_worker()
    plot = ToolCallSpec("run_python", {"code": PLOT})
    stack.fake.enqueue(Reply(tool_calls=[plot]), Reply(text="Drawn."))
    async with stack.client() as client:
        answer = await client.post("/api/agent/run", json={"task": "plot it"}, timeout=120)
        assert answer.status_code == 200, answer.text
        [chart] = answer.json()["files"]
        served = await client.get(chart["url"])
    assert (chart["name"], chart["media_type"], chart["caption"]) == ("chart.png", "image/png", "")
    assert served.headers["content-type"] == "image/png"
    assert hashlib.sha256(served.content).hexdigest() == chart["sha256"]
