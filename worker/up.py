"""`parley up`: everything on one machine for a newcomer: Redis, a worker, the scheduler and
the web app.

Starts redis-server in ./data/redis when REDIS_URL points at this machine and nothing answers
there, then runs `parley worker`, `parley scheduler` and `parley web` as child processes until
Ctrl-C.

The three are forked from this process once it has imported what they share, not started
afresh: three new interpreters each imported the settings, the database's, Redis's and
arq's libraries and aiogram again, all at once on what is often a machine of two cores, and
the first reply waited for the worker's share of that. The shared part is the scheduler's
modules, nearly all of which the web app and the worker import too; after the forks the web
app and the worker import only what is their own (the web server, the model's SDK), side by
side. The collector is off while the shared modules are imported and what they made is
frozen before the forks (`gc.freeze`, as its documentation advises for processes that fork
without exec), so the children leave it shared instead of copying it in their first passes.
"""

from __future__ import annotations

import gc
import importlib
import multiprocessing
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from multiprocessing.process import BaseProcess
from pathlib import Path
from urllib.parse import urlparse

import redis

from bot.config.settings import Settings
from worker.redis_pool import shown_url

LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1"}
ROLES = ("worker", "scheduler", "web")
SHARED = "worker.scheduler"  # what every process imports (see the module docstring)
STOP_WITHIN_S = 30.0  # a process still running this long after SIGTERM is killed


def _redis_answers(url: str) -> bool:
    try:
        with redis.Redis.from_url(url, socket_connect_timeout=1) as client:
            return bool(client.ping())  # closed here: the forked processes inherit nothing
    except redis.RedisError:
        return False


def _start_redis(url: str) -> subprocess.Popen[bytes] | None:
    if _redis_answers(url):
        return None
    parsed = urlparse(url)
    binary = shutil.which("redis-server")
    if parsed.hostname not in LOCAL_HOSTS or binary is None:
        sys.exit(f"parley: Redis does not answer at {shown_url(url)}; start it or set REDIS_URL")
    directory = Path("data/redis")
    directory.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(
        [
            binary,
            "--port",
            str(parsed.port or 6379),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(directory),
            "--appendonly",
            "yes",
        ],
        stdout=subprocess.DEVNULL,
    )
    for _ in range(100):
        if _redis_answers(url):
            return process
        time.sleep(0.1)
    process.terminate()
    sys.exit(f"parley: redis-server did not start at {shown_url(url)}")


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def up(settings: Settings, command: Callable[[list[str]], object]) -> int:
    """Redis if needed, and `command([role])` (the `parley` command) in a forked child for
    each role, until one ends or a signal comes."""
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, _interrupt)
    # A plain redis:// may be started here; a Redis over TLS or behind sentinels is the
    # operator's, and the processes wait for it themselves.
    plain = settings.redis_sentinel is None and urlparse(settings.redis_url).scheme == "redis"
    redis_process = _start_redis(settings.redis_url) if plain else None
    children = start_processes(ROLES, command)
    print(
        f"Parley: open http://{settings.http_host}:{settings.http_port}/ (Ctrl-C stops)", flush=True
    )
    try:
        while all(child.exitcode is None for child in children):
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        for child in children:
            if child.exitcode is None:
                child.terminate()  # SIGTERM: each stops as cleanly as it can
        for child in children:
            child.join(STOP_WITHIN_S)
            if child.exitcode is None:
                child.kill()
                child.join()
        if redis_process is not None:
            redis_process.terminate()
            redis_process.wait(10)
    return max(child.exitcode or 0 for child in children)


def start_processes(
    roles: tuple[str, ...], command: Callable[[list[str]], object]
) -> list[BaseProcess]:
    """`command([role])` for each role, forked once the modules they share are imported."""
    context = multiprocessing.get_context("fork")
    children: list[BaseProcess] = [
        context.Process(target=_run, args=(role, command), name=role) for role in roles
    ]
    gc.disable()
    try:
        importlib.import_module(SHARED)
        gc.freeze()
        for child in children:
            child.start()
    finally:
        gc.enable()
    return children


def _run(role: str, command: Callable[[list[str]], object]) -> None:
    """In a forked child: `parley ROLE`, as if it had been started on its own. Its signals
    are its own again (this process turns them into a stop of everything), and so is its
    collector, which the command turns off while it imports the rest."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    gc.enable()
    command([role])
