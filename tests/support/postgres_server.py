"""A real PostgreSQL server for the tests, on a free port, from Debian's packages.

One server serves the whole session; each test that asks for `postgres_url` gets a fresh
database of its own, so tests never see each other's rows and nothing needs cleaning up.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.redis_server import free_port


def find_bindir() -> Path | None:
    """Where initdb and postgres live; Debian keeps them off PATH, one directory per version."""
    found = shutil.which("initdb")
    if found is not None:
        # Resolved, since a symlink on PATH may point into the directory `postgres` lives in.
        return Path(found).resolve().parent
    installed = Path("/usr/lib/postgresql").glob("*/bin/initdb")
    versions = sorted(installed, key=lambda p: [int(n) for n in p.parts[-3].split(".")])
    return versions[-1].parent if versions else None


class PostgresServer:
    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        # Not under tmp_path_factory: as root the server runs as `postgres`, which cannot get
        # into /tmp/pytest-of-root. A directory of its own in /tmp, handed over, it can.
        self.directory = Path(tempfile.mkdtemp(prefix="parley-postgres-"))
        self.log = self.directory / "server.log"
        # initdb and postgres refuse to run as root (CI runs as root), so drop to `postgres`,
        # the user the Debian package creates. setpriv execs, so signals reach postgres itself.
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(self.directory, "postgres", "postgres")
            self.as_user = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"]

    def url(self, database: str) -> str:
        return f"postgresql+asyncpg://parley@127.0.0.1:{self.port}/{database}"

    def run(self, binary: str, *args: str, as_user: bool = False) -> None:
        command = [*(self.as_user if as_user else []), str(self.bindir / binary), *args]
        result = subprocess.run(command, cwd=self.directory, capture_output=True, text=True)
        if result.returncode != 0:
            pytest.fail(f"{binary} failed ({result.returncode}):\n{result.stdout}{result.stderr}")

    def start(self) -> None:
        data = str(self.directory / "data")
        # Locale C: the tests must not depend on which locales the machine has generated.
        options = ["-A", "trust", "-U", "parley", "--encoding=UTF8", "--locale=C", "--no-sync"]
        self.run("initdb", "-D", data, *options, as_user=True)
        settings = ["fsync=off", "synchronous_commit=off", "full_page_writes=off"]
        # The socket goes into our directory: Debian's /var/run/postgresql may not exist.
        command = [str(self.bindir / "postgres"), "-D", data, "-h", "127.0.0.1"]
        command += ["-p", str(self.port), "-k", str(self.directory)]
        command += [arg for setting in settings for arg in ("-c", setting)]
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [*self.as_user, *command], cwd=self.directory, stdout=log, stderr=log
            )
        ready = [str(self.bindir / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(self.port)]
        deadline = time.monotonic() + 60  # generous: the machine may be busy
        while subprocess.run([*ready, "-U", "parley", "-d", "postgres"]).returncode != 0:
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"PostgreSQL did not start; its log:\n{self.log.read_text()}")
            time.sleep(0.05)

    def create_database(self) -> str:
        """A new empty database; the createdb binary works whether or not a loop is running."""
        name = f"parley_{uuid.uuid4().hex}"
        self.run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "parley", name)
        return self.url(name)

    def stop(self) -> None:
        if self.process is not None:
            # SIGINT is the fast shutdown; SIGTERM would wait for every client to disconnect.
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None

    def remove(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    bindir = find_bindir()
    if bindir is None:
        pytest.skip(
            "PostgreSQL is not installed (make test installs it): no initdb on PATH "
            "or in /usr/lib/postgresql/*/bin"
        )
    server = PostgresServer(bindir)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        server.remove()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    return postgres_server.create_database()
