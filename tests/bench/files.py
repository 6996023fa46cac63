"""Files as a person meets them, and as an attacker sends them.

- Fairness: a third person's small photo, read alone and then while two other people's heavy
  PDFs are being read (`tests.fakes.hostile_files.pdf_heavy`), through the same `Intake` the
  web process uses, with the default settings; the figure is the ratio of the medians.
- Bombs: the time to refuse each file of `tests.fakes.hostile_files.BOMBS`, the reader
  process started for it included, and that reader's peak memory, as it says itself.
- Bodies: a real `parley web` is posted a 190 MB multipart message twice, announced by its
  `Content-Length` and sent chunked without one; the figure is the growth of its RSS. Then
  200 messages of 3.6 MB each at once, while `/healthz` is asked every 50 ms: its slowest
  answer, and the web process's RSS growth meanwhile.

Run with `make bench`, or `python -m tests.bench.files`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import httpx

from bot.config.settings import Settings
from bot.files.intake import Arrived, Intake, Limits
from bot.files.reading import Readers, ReadLimits
from bot.store.database import open_database
from tests.bench.dashboard import web_env
from tests.bench.processes import serving
from tests.bench.table import Figure, report, samples
from tests.fakes import hostile_files
from tests.support.images import image_bytes
from tests.support.redis_server import RedisServer, free_port

PHOTOS = samples(15, 3)
BODY_MB = 190
UPLOADS = samples(200, 20)
FIGURES = (
    "a third person's photo beside two heavy PDFs: against alone",
    "refusing a bomb: slowest",
    "refusing a bomb: reader's peak memory",
    "web RSS growth for the largest refused body",
    "/healthz during an upload burst: slowest",
    "web RSS growth during an upload burst",
)


async def photo_times(intake: Intake, photo: Arrived) -> list[float]:
    took = []
    for _ in range(PHOTOS):
        started = time.perf_counter()
        await intake.accept([photo], "cat")
        took.append((time.perf_counter() - started) * 1000)
    return took


async def fairness(root: Path) -> None:
    readers = Readers(root, ReadLimits(), ahead=True)  # as `parley web` and workers keep them
    intake = Intake(readers, Limits())
    photo = Arrived(image_bytes((640, 480), "JPEG"), "photo.jpg")
    alone = statistics.median(await photo_times(intake, photo))
    heavy = Arrived(hostile_files.pdf_heavy(), "heavy.pdf")
    started = time.perf_counter()
    pdfs = [asyncio.create_task(intake.accept([heavy], person)) for person in ("ann", "bob")]
    await asyncio.sleep(0.2)
    beside = statistics.median(await photo_times(intake, photo))
    assert not any(pdf.done() for pdf in pdfs), "the heavy PDFs ended before the photos"
    await asyncio.gather(*pdfs)
    print(f"photo alone {alone:.0f} ms; beside two heavy PDFs {beside:.0f} ms "
          f"(each PDF read in {time.perf_counter() - started:.1f} s)")  # fmt: skip
    await readers.aclose()
    report(Figure(FIGURES[0], beside / alone, "×", 1.5))


def refused(name: str, data: bytes, store: Path) -> dict[str, object]:
    """The reader process run on one file as `bot.files.reading` runs it (the defaults), and
    its last word: why it refused, and its peak memory."""
    limits = ReadLimits()
    job = {"purpose": "people", "store": str(store), "seconds": limits.seconds,
           "memory_mb": limits.memory_mb, "files": [{"name": name, "size": len(data)}]}  # fmt: skip
    command = [sys.executable, "-m", "bot.files.reader"]
    stdin = json.dumps(job).encode() + b"\n" + data
    answer = subprocess.run(command, input=stdin, capture_output=True, check=True).stdout
    said: dict[str, object] = json.loads(answer.splitlines()[-1])
    return said


def bombs(tmp: Path) -> None:
    slowest = peak = 0.0
    for label, make in hostile_files.BOMBS.items():
        name, data = make()
        started = time.perf_counter()
        said = refused(name, data, tmp)
        took = time.perf_counter() - started
        assert "refused" in said, said
        print(f"{label:22} refused in {took * 1000:5.0f} ms, reader's peak "
              f"{said['peak_mb']:5.1f} MB: {said['why']}")  # fmt: skip
        slowest, peak = max(slowest, took), max(peak, float(str(said["peak_mb"])))
    report(Figure(FIGURES[1], slowest, "s", 1.0), Figure(FIGURES[2], peak, "MB", 100))


def rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0]) / 1024


async def chunks(total: int) -> object:
    yield b'--b\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n\r\n'
    for _ in range(total // (1024 * 1024)):
        yield b"\x00" * (1024 * 1024)
    yield b"\r\n--b--\r\n"


@contextlib.asynccontextmanager
async def web_process(tmp: Path) -> AsyncIterator[tuple[str, int]]:
    """A real `parley web` on SQLite and its own redis-server: its address and pid."""
    database_url = f"sqlite+aiosqlite:///{tmp}/parley.db"
    await (await open_database(Settings(_env_file=None, database_url=database_url))).aclose()
    redis = RedisServer(tmp)
    redis.start()
    port = free_port()
    web = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "worker", "web", env=web_env(redis.url, database_url, port)
    )
    base = f"http://127.0.0.1:{port}"
    try:
        await serving(base, web)
        yield base, web.pid
    finally:
        web.terminate()
        await web.wait()
        redis.stop()


async def refused_bodies(base: str, pid: int) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=120) as client:
        session = (await client.post("/api/sessions", json={})).json()["id"]
        url = f"/api/sessions/{session}/messages"
        before = rss_mb(pid)
        size = BODY_MB * 1024 * 1024
        headers = {"Content-Type": "multipart/form-data; boundary=b"}
        announced = await client.post(url, content=b"-" * size, headers=headers)
        chunked = await client.post(url, content=chunks(size), headers=headers)  # type: ignore[arg-type]
        grown = rss_mb(pid) - before
    print(f"{BODY_MB} MB bodies: announced {announced.status_code}, chunked "
          f"{chunked.status_code}; web RSS grew {grown:.1f} MB")  # fmt: skip
    report(Figure(FIGURES[3], grown, "MB", 100))


async def upload(client: httpx.AsyncClient, data: bytes) -> int:
    """One message with a file, to a conversation of its own; its status, once answered."""
    session = (await client.post("/api/sessions", json={})).json()["id"]
    files = {"file": ("data.bin", data, "application/octet-stream")}
    async with client.stream("POST", f"/api/sessions/{session}/messages", files=files) as answer:
        return answer.status_code


async def burst(base: str, pid: int, tmp: Path) -> None:
    """`UPLOADS` messages of 3.6 MB at once, while another process asks `/healthz` every
    50 ms (this one is busy sending), and the web process's RSS is read."""
    data = os.urandom(3_600_000)
    before = rss_mb(pid)
    stop = tmp / "stop-polling"
    poll = [sys.executable, "-m", "tests.bench.files", "--poll", f"{base}/healthz", str(stop)]
    poller = await asyncio.create_subprocess_exec(*poll, stdout=asyncio.subprocess.PIPE)
    assert poller.stdout is not None
    assert await poller.stdout.readline() == b"polling\n"  # its imports take a while
    limits = httpx.Limits(max_connections=UPLOADS + 2)
    async with httpx.AsyncClient(base_url=base, timeout=600, limits=limits) as client:
        uploads = asyncio.gather(*(upload(client, data) for _ in range(UPLOADS)))
        peak = 0.0
        while not uploads.done():
            peak = max(peak, rss_mb(pid) - before)
            await asyncio.sleep(0.05)
        statuses = Counter(await uploads)
    stop.touch()
    waits: list[float] = json.loads((await poller.communicate())[0])
    assert waits, "/healthz was never asked during the burst"
    slowest = max(waits)
    print(f"{UPLOADS} uploads of 3.6 MB at once: answers {dict(statuses)}; /healthz "
          f"median {statistics.median(waits):.1f} ms, slowest {slowest:.1f} ms of {len(waits)}; "
          f"web RSS grew at most {peak:.1f} MB")  # fmt: skip
    report(Figure(FIGURES[4], slowest, "ms", 100), Figure(FIGURES[5], peak, "MB", 100))


def poll_health(url: str, stop: Path) -> None:
    """Ask `url` every 50 ms until `stop` exists; print each answer's time (ms) as JSON,
    after a line that says it polls (the first answer came)."""
    waits = []
    with httpx.Client(timeout=60) as client:
        client.get(url).raise_for_status()
        print("polling", flush=True)
        while not stop.exists():
            started = time.perf_counter()
            client.get(url).raise_for_status()
            waits.append((time.perf_counter() - started) * 1000)
            time.sleep(0.05)
    print(json.dumps(waits))


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        await fairness(Path(tmp) / "files")
        bombs(Path(tmp) / "files")
        async with web_process(Path(tmp)) as (base, pid):
            await refused_bodies(base, pid)
            await burst(base, pid, Path(tmp))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--poll"]:
        poll_health(sys.argv[2], Path(sys.argv[3]))
    else:
        asyncio.run(main())
