"""`parley up` (what `make run` runs) brings up Redis, a worker, the scheduler and the web chat,
and stops them. The three are forked from it once it has imported what they share, rather than
started as new interpreters that import it all again (`worker.up`)."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

import httpx
from redis.asyncio import Redis

from bot.redis import keys
from tests.fakes.llm import FakeLLM, Reply
from tests.support.redis_server import free_port
from tests.support.stack import read_events, stack_env, texts
from tests.support.waiting import until


def children_of(pid: int) -> list[int]:
    """The processes whose parent is `pid`, from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
            except OSError:  # gone meanwhile
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def command_line(pid: int) -> list[str]:
    return (Path("/proc") / str(pid) / "cmdline").read_bytes().decode().split("\0")[:-1]


async def test_up_serves_a_chat_and_stops_cleanly(fake_llm: FakeLLM, tmp_path: Path) -> None:
    redis_port, http_port = free_port(), free_port()
    env = stack_env(f"redis://127.0.0.1:{redis_port}/0", fake_llm, PARLEY_HTTP_PORT=str(http_port))
    env["PARLEY_MAX_ITERATONS"] = "5"  # a typo: said once, not again by the processes up starts
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "worker",
        "up",
        env=env,
        cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    fake_llm.enqueue(Reply(text="Hello from the stack."))
    base = f"http://127.0.0.1:{http_port}"
    try:
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:

            async def healthy() -> bool:
                try:
                    return (await client.get("/healthz")).status_code == 200
                except httpx.TransportError:
                    return False

            # a busy machine starts three processes slowly
            await until(healthy, "`parley up` answering /healthz", within=90)
            processes = [
                command_line(child)
                for child in children_of(proc.pid)
                if "redis-server" not in command_line(child)[0]
            ]
            # forked from `parley up`, not started afresh as `python -m worker web` and so on
            assert processes == [command_line(proc.pid)] * 3
            page = await client.get("/")
            assert page.status_code == 200 and "<title>Parley</title>" in page.text
            session = (await client.post("/api/sessions")).json()["id"]
            async with client.stream(
                "POST", f"/api/sessions/{session}/messages", json={"text": "hi"}
            ) as response:
                events = await read_events(response)
        assert texts(events) == "Hello from the stack."
        assert (tmp_path / "data" / "redis" / "appendonlydir").is_dir()
        assert (tmp_path / "data" / "parley.db").is_file()  # the default record, migrated
        async with Redis(port=redis_port) as redis:

            async def led() -> bool:
                return await redis.get(keys.SCHEDULER_LEADER) is not None

            await until(led, "a scheduler leading under parley up")
    finally:
        proc.send_signal(signal.SIGTERM)
        output, _ = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, output.decode()
    assert f"open http://127.0.0.1:{http_port}/" in output.decode()
    assert output.decode().count("PARLEY_MAX_ITERATONS is not a setting (did you mean") == 1
