"""The image, built by a Docker engine, holds a chat end to end: `docker build`, then its
`parley web` and `parley worker` in containers of their own (on the host's network, with the
tests' Redis and fake model), a message through the API answered by the worker, the health
commands the Compose file uses answering 0, and the image's size printed.

It needs a Docker engine, which a machine may not have: it is marked `docker` and runs only
with `--docker-engine` (`make image-test`, which `.ci/run` calls where `docker info` answers);
without it the test is deselected, not skipped."""

from __future__ import annotations

import asyncio
import gzip
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.fakes.llm import FakeLLM, Reply
from tests.support.redis_server import free_port
from tests.support.stack import ROOT, send, stack_env, texts
from tests.support.waiting import until

pytestmark = [pytest.mark.e2e, pytest.mark.docker]

TAG = f"parley:test-{os.getpid()}"
# What the containers take from the tests' environment: the checkout's paths and tools stay out.
LEFT_OUT = ("PATH", "HOME", "PYTHONPATH", "PARLEY_TOOL_MODULES", "PARLEY_FILES_DIR")


def docker(*args: str, timeout: float = 120) -> str:
    done = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"docker {' '.join(args)}: {done.stdout}{done.stderr}"
    return done.stdout.strip()


@pytest.fixture(scope="module")
def image() -> Iterator[str]:
    docker("build", "--tag", TAG, str(ROOT), timeout=1800)
    yield TAG
    docker("image", "rm", "--force", TAG)


def remove(*containers: str) -> None:
    subprocess.run(["docker", "rm", "--force", *containers], capture_output=True, timeout=120)


def compressed_size(image: str) -> int:
    """The image's bytes as a registry would hold them, roughly: `docker save`, gzipped."""
    saved = subprocess.run(["docker", "save", image], capture_output=True, check=True).stdout
    return len(gzip.compress(saved, compresslevel=6))


async def test_the_image_holds_a_chat_and_answers_its_health_checks(
    image: str, redis_url: str, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o777)
    data.chmod(0o777)  # the image's user (uid 10001) writes the shared SQLite file here
    port = free_port()
    env = stack_env(redis_url, fake_llm, "sqlite+aiosqlite:////app/data/parley.db")
    env["PARLEY_HTTP_PORT"] = str(port)
    flags = [f"--env={name}={value}" for name, value in env.items() if name not in LEFT_OUT]
    run = ["run", "--detach", "--network=host", f"--volume={data}:/app/data", *flags]
    names = {role: f"parley-{role}-{os.getpid()}" for role in ("web", "worker")}
    try:
        for role, name in names.items():
            await asyncio.to_thread(docker, *run, f"--name={name}", image, "parley", role)
        fake_llm.enqueue(Reply(text="Hello from the image."))
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:

            async def alive() -> bool:
                try:
                    return (await client.get("/healthz")).status_code == 200
                except httpx.TransportError:
                    return False

            await until(alive, lambda: docker("logs", names["web"]), 180)
            session = (await client.post("/api/sessions")).json()["id"]
            events = await send(client, session, "hi")
        assert texts(events) == "Hello from the image."
        for role, name in names.items():
            await asyncio.to_thread(docker, "exec", name, "parley", "health", role)
    finally:
        await asyncio.to_thread(remove, *names.values())
    size = await asyncio.to_thread(compressed_size, image)
    sys.stdout.write(f"\nimage {image}: {size / 2**20:.0f} MiB compressed (target < 250)\n")
