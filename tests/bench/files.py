"""Files as a person meets them, and as an attacker sends them.

- Fairness: a third person's small photo, read alone and then while two other people's heavy
  PDFs are being read (`tests.fakes.hostile_files.pdf_heavy`), through the same `Intake` the
  web process uses, with the default settings; the figure is the ratio of the medians.
- Bombs: the time to refuse each file of `tests.fakes.hostile_files.BOMBS`, the reader
  process started for it included, and that reader's peak memory, as it says itself.
- Bodies: a real `parley web` is posted a 190 MB multipart message twice, announced by its
  `Content-Length` and sent chunked without one; the figure is the growth of its RSS.

Run with `make bench`, or `python -m tests.bench.files`.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
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
FIGURES = (
    "a third person's photo beside two heavy PDFs: against alone",
    "refusing a bomb: slowest",
    "refusing a bomb: reader's peak memory",
    "web RSS growth for the largest refused body",
)


async def photo_times(intake: Intake, photo: Arrived) -> list[float]:
    took = []
    for _ in range(PHOTOS):
        started = time.perf_counter()
        await intake.accept([photo], "cat")
        took.append((time.perf_counter() - started) * 1000)
    return took


async def fairness(root: Path) -> None:
    intake = Intake(Readers(root, ReadLimits()), Limits())
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


async def bodies(tmp: Path) -> None:
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
        async with httpx.AsyncClient(base_url=base, timeout=120) as client:
            session = (await client.post("/api/sessions", json={})).json()["id"]
            url = f"/api/sessions/{session}/messages"
            before = rss_mb(web.pid)
            size = BODY_MB * 1024 * 1024
            headers = {"Content-Type": "multipart/form-data; boundary=b"}
            announced = await client.post(url, content=b"-" * size, headers=headers)
            chunked = await client.post(url, content=chunks(size), headers=headers)  # type: ignore[arg-type]
            grown = rss_mb(web.pid) - before
    finally:
        web.terminate()
        await web.wait()
        redis.stop()
    print(f"{BODY_MB} MB bodies: announced {announced.status_code}, chunked "
          f"{chunked.status_code}; web RSS grew {grown:.1f} MB")  # fmt: skip
    report(Figure(FIGURES[3], grown, "MB", 100))


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        await fairness(Path(tmp) / "files")
        bombs(Path(tmp) / "files")
        await bodies(Path(tmp))


if __name__ == "__main__":
    asyncio.run(main())
