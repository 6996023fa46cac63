"""`parley up`: everything on one machine for a newcomer: Redis, a worker, the scheduler and
the web app.

Starts redis-server in ./data/redis when REDIS_URL points at this machine and nothing answers
there, then runs `parley worker`, `parley scheduler` and `parley web` as child processes until
Ctrl-C.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

import redis

from bot.config.settings import Settings
from worker.redis_pool import shown_url

LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1"}


def _redis_answers(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
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


def up(settings: Settings) -> int:
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, _interrupt)
    # A plain redis:// may be started here; a Redis over TLS or behind sentinels is the
    # operator's, and the processes wait for it themselves.
    plain = settings.redis_sentinel is None and urlparse(settings.redis_url).scheme == "redis"
    redis_process = _start_redis(settings.redis_url) if plain else None
    command = [sys.executable, "-m", "worker"]
    children = [subprocess.Popen([*command, name]) for name in ("worker", "scheduler", "web")]
    print(
        f"Parley: open http://{settings.http_host}:{settings.http_port}/ (Ctrl-C stops)", flush=True
    )
    try:
        while all(child.poll() is None for child in children):
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        for child in children:
            child.wait(30)
        if redis_process is not None:
            redis_process.terminate()
            redis_process.wait(10)
    return max(child.returncode or 0 for child in children)
