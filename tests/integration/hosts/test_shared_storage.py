"""The files people send and the sessions' workspaces on several hosts: with a directory of
its own on each "host" the processes say so (the web process's `/readyz` fails naming the
variable, a worker logs an ERROR); with one shared directory a file the web process stored
reaches the model through a worker on another host, and every check passes."""

from __future__ import annotations

import base64
import logging
from pathlib import Path
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from bot.redis import keys
from tests.fakes.llm import FakeLLM, Reply
from tests.support.hosts import start_worker_on
from tests.support.images import image_bytes
from tests.support.redis_server import free_port
from tests.support.stack import Stack, read_events, serving, stack_env, texts, web_settings
from tests.support.waiting import until

NOT_SHARED = "is not the directory the other processes use"
WHY = "on several hosts it must be one shared directory (docs/OPERATIONS.md, Many hosts)"
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.parametrize("database_url", ["postgresql"], indirect=True),
]


def dirs(root: Path) -> dict[str, str]:
    """A host's files and workspaces, made now (a directory that exists is marked)."""
    (root / "files").mkdir(parents=True)
    (root / "workspaces").mkdir()
    return {
        "PARLEY_FILES_DIR": str(root / "files"),
        "PARLEY_WORKSPACE_DIR": str(root / "workspaces"),
    }


async def marked(redis_url: str) -> None:
    """Once a process has set the deployment's marks in Redis."""
    redis = Redis.from_url(redis_url)
    names = [keys.shared_dir("files"), keys.shared_dir("workspaces")]
    try:
        await until(lambda: redis.exists(*names), "the shared directories' marks in Redis")
    finally:
        await redis.aclose()


def logged(path: Path) -> str:
    return path.read_text() if path.exists() else ""


async def test_separate_directories_are_named_by_readyz_and_the_workers_log(
    redis_url: str,
    fake_llm: FakeLLM,
    database_url: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    host_a = stack_env(redis_url, fake_llm, database_url, **dirs(tmp_path / "host-a"))
    host_b = stack_env(redis_url, fake_llm, database_url, **dirs(tmp_path / "host-b"))
    stack = Stack(redis_url, fake_llm, tmp_path, env=host_a)
    await start_worker_on(stack, "host-a")  # the first: its directories are the deployment's
    await marked(redis_url)
    b_log = tmp_path / "worker-host-b.log"
    with caplog.at_level(logging.ERROR):
        async with serving(stack, web_settings(host_b), free_port()):
            async with stack.client() as client:
                answer = await client.get("/readyz")
            stack.env = host_b
            await start_worker_on(stack, "host-b")
            await until(lambda: NOT_SHARED in logged(b_log), "host-b's worker to say so")
    files_b, workspaces_b = f"{tmp_path}/host-b/files", f"{tmp_path}/host-b/workspaces"
    said = (
        f"PARLEY_FILES_DIR ({files_b}) {NOT_SHARED}: {WHY}; "
        f"PARLEY_WORKSPACE_DIR ({workspaces_b}) {NOT_SHARED}: {WHY}"
    )
    assert answer.status_code == 503
    assert answer.json()["failed"] == {"storage": said}
    assert said in caplog.text  # the web process said it at start too
    [line] = [line for line in logged(b_log).splitlines() if NOT_SHARED in line]
    assert " ERROR " in line and line.endswith(said)
    assert NOT_SHARED not in logged(tmp_path / "worker-host-a.log")


async def test_one_shared_directory_carries_a_file_from_the_web_to_another_host(
    redis_url: str,
    fake_llm: FakeLLM,
    database_url: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    env = stack_env(redis_url, fake_llm, database_url, **dirs(tmp_path / "nfs"))
    stack = Stack(redis_url, fake_llm, tmp_path, env=env)
    await start_worker_on(stack, "host-a")
    picture = image_bytes((64, 48), "PNG")
    fake_llm.enqueue(Reply(text="A small picture."))
    with caplog.at_level(logging.ERROR):
        async with serving(stack, web_settings(env), free_port()):
            await start_worker_on(stack, "host-b")
            await marked(redis_url)
            async with stack.client() as client:
                ready = await client.get("/readyz")
                session = await stack.session(client)
                events = await posted_with(client, session, picture)
    assert ready.status_code == 200, ready.text
    assert ready.json()["checks"]["storage"] == "ok"
    assert texts(events) == "A small picture."
    assert fake_llm.requests[-1].images() == [("image/png", picture)]
    assert NOT_SHARED not in caplog.text
    for host in ("host-a", "host-b"):
        assert NOT_SHARED not in logged(tmp_path / f"worker-{host}.log")
    nfs = tmp_path / "nfs"
    marks = {(nfs / name / ".parley-volume").read_text() for name in ("files", "workspaces")}
    assert len(marks) == 2  # one mark per directory, written once


async def posted_with(
    client: httpx.AsyncClient, session: str, picture: bytes
) -> list[dict[str, Any]]:
    attachment = {"name": "p.png", "media_type": "image/png",
                  "data": base64.b64encode(picture).decode()}  # fmt: skip
    async with client.stream(
        "POST", f"/api/sessions/{session}/messages",
        json={"text": "what is it?", "attachments": [attachment]},
    ) as response:  # fmt: skip
        assert response.status_code == 200, await response.aread()
        return await read_events(response)
