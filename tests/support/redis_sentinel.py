"""Redis Sentinel for the tests: a master, a replica of it, and two sentinels watching them
(quorum 1), each a real redis-server on a free port. `promote` makes the sentinels promote
the replica and returns once they name it as the master; `failover` also waits for the old
master's demotion."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.support.redis_server import RedisServer, free_port

MASTER = "parley"
WITHIN = 60.0  # seconds: generous, the machine may be busy


class SentinelProcess:
    def __init__(self, directory: Path, master_port: int) -> None:
        self.directory = directory
        self.port = free_port()
        self.config = directory / "sentinel.conf"
        self.config.write_text(
            f"port {self.port}\nbind 127.0.0.1\ndir {directory}\n"
            f"sentinel monitor {MASTER} 127.0.0.1 {master_port} 1\n"
            f"sentinel down-after-milliseconds {MASTER} 1000\n"
            f"sentinel failover-timeout {MASTER} 10000\n"
        )
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is not installed (make test installs it)")
        self.process = subprocess.Popen(
            [binary, str(self.config), "--sentinel"], stdout=subprocess.DEVNULL
        )

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_timeout=5)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None


class SentinelGroup:
    def __init__(self, directory: Path) -> None:
        (directory / "master").mkdir(parents=True)
        (directory / "replica").mkdir()
        self.master = RedisServer(directory / "master")
        self.replica = RedisServer(directory / "replica")
        self.replica.args = ("--replicaof", "127.0.0.1", str(self.master.port))
        self.sentinels = [
            SentinelProcess(self._folder(directory / f"sentinel-{n}"), self.master.port)
            for n in range(2)
        ]

    @staticmethod
    def _folder(path: Path) -> Path:
        path.mkdir()
        return path

    def start(self) -> None:
        self.master.start()
        self.replica.start()
        for sentinel in self.sentinels:
            sentinel.start()
        self._until(self._replica_known, "the sentinels to know the master and its replica")

    def env(self) -> dict[str, str]:
        """The variables a Parley process finds the master with (REDIS_URL's host unused)."""
        return {
            "REDIS_URL": "redis://sentinel-managed/0",
            "PARLEY_REDIS_SENTINELS": ",".join(f"127.0.0.1:{s.port}" for s in self.sentinels),
            "PARLEY_REDIS_SENTINEL_MASTER": MASTER,
        }

    def master_port(self) -> int:
        for sentinel in self.sentinels:
            if (port := self._named(sentinel)) is not None:
                return port
        raise AssertionError("no sentinel names a master")

    def master_url(self) -> str:
        return f"redis://127.0.0.1:{self.master_port()}/0"

    def failover(self, *, kill: bool = False) -> int:
        """`promote`, then wait until the old master, when it lives, is a replica of the new
        one: the failover is complete."""
        new = self.promote(kill=kill)
        if not kill:
            self._until(self._old_master_demoted, "the old master to become a replica")
        return new

    def promote(self, *, kill: bool = False) -> int:
        """Promote the replica (SENTINEL FAILOVER, or `kill` the master with SIGKILL and let
        the sentinels find it down); the new master's port, once every sentinel names it and
        it takes writes. A living old master takes writes too, until the sentinels demote it
        some 10 s later.

        The master is killed only once the replica holds every write it took: Redis
        replicates asynchronously, and what it acknowledged just before dying may be lost
        (OPERATIONS.md says how to bound that)."""
        before = self.master_port()
        if kill:
            assert self.master.process is not None
            self._replicated()
            self.master.process.kill()
            self.master.process.wait(10)
            self.master.process = None
        else:
            self._until(self._failover_started, "SENTINEL FAILOVER to be accepted")

        def moved() -> bool:
            ports = {self._named(s) for s in self.sentinels}
            if ports != {self.replica.port} or before == self.replica.port:
                return False
            try:
                return bool(redis.Redis(port=self.replica.port).set("parley:test:writable", 1))
            except redis.RedisError:
                return False

        self._until(moved, "every sentinel to name the replica as the master")
        return self.replica.port

    def _replicated(self) -> None:
        master = redis.Redis(port=self.master.port)
        master.set("parley:test:replicated", 1)  # WAIT counts from this client's last write
        acknowledged = master.execute_command(  # type: ignore[no-untyped-call]
            "WAIT", 1, int(WITHIN * 1000)
        )
        assert acknowledged == 1, "the replica did not catch up with the master"

    def _old_master_demoted(self) -> bool:
        try:
            found: dict[str, Any] = redis.Redis(port=self.master.port).info("replication")  # type: ignore[assignment]
            role = found["role"]
        except redis.RedisError:
            return False
        return bool(role == "slave")

    def stop(self) -> None:
        for sentinel in self.sentinels:
            sentinel.stop()
        self.replica.stop()
        self.master.stop()

    def _replica_known(self) -> bool:
        try:
            replicas = self.sentinels[0].client().sentinel_slaves(MASTER)  # type: ignore[no-untyped-call]
        except redis.RedisError:
            return False
        return any(int(r["port"]) == self.replica.port for r in replicas) and all(
            self._named(s) == self.master.port for s in self.sentinels
        )

    def _failover_started(self) -> bool:
        try:
            return bool(self.sentinels[0].client().sentinel_failover(MASTER))  # type: ignore[no-untyped-call]
        except redis.ResponseError:  # NOGOODSLAVE: the replica not yet in sync
            return False

    @staticmethod
    def _named(sentinel: SentinelProcess) -> int | None:
        try:
            client = sentinel.client()
            _, port = client.sentinel_get_master_addr_by_name(MASTER)  # type: ignore[no-untyped-call]
            return int(port)
        except (redis.RedisError, TypeError):
            return None

    @staticmethod
    def _until(check: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + WITHIN
        while not check():
            if time.monotonic() > deadline:
                raise AssertionError(f"not within {WITHIN:g} s: {what}")
            time.sleep(0.1)
