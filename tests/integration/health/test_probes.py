"""The probes, against real processes: `/readyz` names the check that fails (Redis stopped, a
schema left behind) while `/healthz` stays alive, and `parley health web|worker|scheduler`
exits 0 for a healthy process and 1, with one line, once it is gone. Default settings
throughout (only the addresses of Redis, the database and the fake model API are given)."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from bot.store import migrate, revision
from tests.fakes.tg import TOKEN as TG_TOKEN
from tests.support.parley import PIPE, STDOUT, start_parley
from tests.support.redis_server import RedisServer
from tests.support.schedulers import Schedulers
from tests.support.stack import ROOT, Stack
from tests.support.telegram import TelegramStack
from tests.support.waiting import until

TOKEN = "probe-test-token-" + "x" * 24


async def probe(env: dict[str, str], role: str, cwd: Path) -> tuple[int, str]:
    """`parley health ROLE`'s exit status and what it said."""
    proc = await start_parley("health", role, env=env, cwd=cwd, stdout=PIPE, stderr=STDOUT)
    out, _ = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode is not None
    return proc.returncode, out.decode()


def web_env(stack: Stack) -> dict[str, str]:
    return {**stack.env, "PARLEY_HTTP_PORT": str(urlsplit(stack.base_url).port)}


async def test_readyz_names_a_stopped_redis_while_healthz_stays_alive(
    own_stack: tuple[Stack, RedisServer],
) -> None:
    stack, server = own_stack
    async with stack.client() as client:
        ready = await client.get("/readyz")
        healthy_probe = await probe(web_env(stack), "web", stack.tmp)
        server.stop()
        unready = await client.get("/readyz")
        alive = await client.get("/healthz")
        failed_probe = await probe(web_env(stack), "web", stack.tmp)
        server.start()

        async def back() -> bool:
            return (await client.get("/readyz")).status_code == 200

        await until(back, "/readyz ready again once Redis is back", within=60)
    assert ready.status_code == 200, ready.text
    assert ready.json() == {
        "status": "ready",
        "checks": {"redis": "ok", "database": "ok", "storage": "ok"},
    }
    assert healthy_probe == (0, "web: healthy\n")
    assert unready.status_code == 503
    assert list(unready.json()["failed"]) == ["redis"]
    assert unready.json()["checks"]["database"] == "ok"
    assert stack.redis_url not in unready.text and str(server.port) not in unready.text
    assert alive.status_code == 200 and alive.json() == {"status": "ok"}
    code, said = failed_probe
    assert code == 1 and "redis" in said and said.count("\n") == 1, said


async def test_readyz_names_a_schema_behind_the_code(stack: Stack) -> None:
    url = stack.env["DATABASE_URL"]
    previous = f"{int(revision.HEAD) - 1:04d}"
    async with stack.client() as client:
        assert (await client.get("/readyz")).status_code == 200
        await migrate.downgrade(url, previous)
        behind = await client.get("/readyz")
        await migrate.upgrade(url, "head")
        current = await client.get("/readyz")
    assert behind.status_code == 503
    assert behind.json()["failed"] == {
        "database": f"the schema is at {previous}, not {revision.HEAD}: run `parley migrate`"
    }
    assert current.status_code == 200


async def test_health_worker_is_0_with_a_live_worker_and_1_once_it_is_killed(
    stack: Stack,
) -> None:
    stack.env["TMPDIR"] = str(stack.tmp)  # the worker's container: its own temporary folder
    before = await probe(stack.env, "worker", stack.tmp)
    proc = await stack.start_worker_process()
    live = await probe(stack.env, "worker", stack.tmp)
    stack.kill(proc, signal.SIGKILL)
    await proc.wait()
    killed = await probe(stack.env, "worker", stack.tmp)
    assert before[0] == 1 and "no worker process is running here" in before[1]
    assert live == (0, "worker: healthy\n")
    assert killed[0] == 1 and "no worker process is running here" in killed[1], killed


async def test_health_worker_is_1_for_a_stopped_worker_loop(stack: Stack) -> None:
    """SIGSTOP: the process is there but beats no more; the probe says so once its signal
    runs out."""
    stack.env["TMPDIR"] = str(stack.tmp)
    proc = await stack.start_worker_process()
    stack.kill(proc, signal.SIGSTOP)
    try:
        said: list[tuple[int, str]] = []

        async def reported() -> bool:
            said[:] = [await probe(stack.env, "worker", stack.tmp)]
            return said[0][0] == 1

        await until(reported, "the stopped worker reported", within=90)
    finally:
        stack.kill(proc, signal.SIGCONT)
    assert f"worker {proc.pid} is not beating" in said[0][1], said


async def test_health_scheduler_holds_for_the_leader_and_the_standby(
    stack: Stack, tmp_path: Path
) -> None:
    env = {**stack.env, "TMPDIR": str(tmp_path)}
    schedulers = Schedulers(stack.redis_url, env, tmp_path)
    signals = tmp_path / "parley-health"
    try:
        leader = await schedulers.start()
        await schedulers.wait_for_leader()
        standby = await schedulers.start()
        standby_signal = signals / f"scheduler-{standby.pid}.json"
        await until(standby_signal.exists, "the standby's signal")
        both = await probe(env, "scheduler", tmp_path)
        leader.kill()
        await leader.wait()
        standing_by = await probe(env, "scheduler", tmp_path)
        standby.kill()
        await standby.wait()
        none = await probe(env, "scheduler", tmp_path)
    finally:
        await schedulers.stop()
    assert both == (0, "scheduler: healthy\n")
    assert standing_by == (0, "scheduler: healthy\n")
    assert none[0] == 1 and "no scheduler process is running here" in none[1], none


async def test_health_answers_a_wrong_role_clearly(tmp_path: Path) -> None:
    code, said = await probe({"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT)}, "db", tmp_path)
    assert code == 2 and "web, worker or scheduler, not 'db'" in said


@pytest.mark.parametrize("stack", [{"PARLEY_API_TOKEN": TOKEN}], indirect=True)
async def test_readyz_is_public_behind_a_token_and_says_no_secret(stack: Stack) -> None:
    async with stack.client() as client:
        ready = await client.get("/readyz")
        api = await client.get("/api/sessions")
    assert ready.status_code == 200 and TOKEN not in ready.text
    assert api.status_code == 401


async def test_readyz_reports_telegram_once_it_accepted_the_token(tg_stack: TelegramStack) -> None:
    """The answer the web process got at start (getMe), not a call per probe."""
    async with tg_stack.client() as client:

        async def ready() -> bool:
            return (await client.get("/readyz")).status_code == 200

        await until(ready, "/readyz ready once Telegram answered", within=60)
        answer = await client.get("/readyz")
    assert answer.json()["checks"] == {
        "redis": "ok",
        "database": "ok",
        "storage": "ok",
        "telegram": "ok",
    }
    assert TG_TOKEN not in answer.text


@pytest.mark.parametrize(
    "stack", [{"TELEGRAM_BOT_TOKEN": TG_TOKEN, "TELEGRAM_API_URL": "http://127.0.0.1:9"}],
    indirect=True,
)  # fmt: skip
async def test_readyz_names_a_platform_not_reached_yet(stack: Stack) -> None:
    async with stack.client() as client:
        answer = await client.get("/readyz")
        alive = await client.get("/healthz")
    assert answer.status_code == 503
    assert answer.json()["failed"] == {"telegram": "its credentials have not been accepted yet"}
    assert TG_TOKEN not in answer.text
    assert alive.status_code == 200
