"""A real redis-server for the tests, on a free port, with AOF persistence on."""

from __future__ import annotations

import itertools
import os
import random
import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import redis
from redis.asyncio import Redis as AsyncRedis

# Ports for the tests' servers: below the kernel's ephemeral range (32768 on, by default), from
# which every outgoing connection takes its local port, so no client socket of any test can
# take a port between its choice and its server's bind; a block of them for each xdist worker
# (the benchmarks and a plain run have the last), taken in turn from a random start, so two
# workers never choose the same port and one reuses a port only long after.
PORTS_FROM, BLOCK, BLOCKS = 20_000, 1_500, 8


def _ports() -> Iterator[int]:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    block = int(worker[2:]) % (BLOCKS - 1) if worker[2:].isdigit() else BLOCKS - 1
    first = PORTS_FROM + block * BLOCK
    start = random.SystemRandom().randrange(BLOCK)  # not the seed pytest-randomly sets
    return (first + (start + n) % BLOCK for n in itertools.count())


_next_ports = _ports()


def free_port() -> int:
    """A port nothing listens on or connects from, for a server a test starts."""
    for port in _next_ports:
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue  # in use, perhaps by another run of the tests on this machine
            return port
    raise AssertionError("unreachable: the ports are taken in turn forever")


class RedisServer:
    def __init__(self, directory: Path, *args: str) -> None:
        self.directory = directory
        self.args = args  # more redis-server options, overriding the ones above
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is not installed (make test installs it)")
        self.process = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.directory),
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                # Tests flush it often: rewrite the AOF once it is past a megabyte and doubled,
                # so a restart does not replay every earlier test's writes.
                "--auto-aof-rewrite-min-size",
                "1mb",
                "--save",
                "",
                *self.args,
            ],
            stdout=subprocess.DEVNULL,
        )
        client = self.ping_client()
        deadline = time.monotonic() + 60  # generous: the machine may be busy
        while True:
            try:
                client.ping()
                return
            except (redis.ConnectionError, redis.BusyLoadingError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def ping_client(self) -> redis.Redis:
        """What `start` asks until the server answers (TLS servers are asked over TLS)."""
        return redis.Redis(port=self.port)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    redis.Redis(port=redis_server.port).flushall()
    return redis_server.url


@pytest.fixture
async def redis_client(redis_url: str) -> AsyncIterator[AsyncRedis]:
    """A client of the emptied test Redis, closed after the test."""
    client = AsyncRedis.from_url(redis_url)
    try:
        yield client
    finally:
        await client.aclose()
