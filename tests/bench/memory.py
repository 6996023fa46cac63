"""Memory: Redis bytes per session, idle, mid-turn and over a long conversation, and a
worker's resident memory with many turns open at once.

Real redis-server and `parley worker` processes; the fake Anthropic API runs in this process,
so a turn can be held open mid-reply (its stream paused after its first words) for as long as
the measurement takes. Bytes are Redis's own `MEMORY USAGE` of every key of a session, its
events stream (the last 15 minutes' events, for clients following its turns) apart; a
process's memory is its resident set from /proc, its children's included. Targets: a session's
hot state under 64 KiB whatever the conversation's length, also one with a photo in each
turn (the photos are in the file store, Redis keeps their references), and a worker under
1 GiB with 1,000 turns open. `python -m tests.bench.memory [SESSIONS] [TURNS] [OPEN]`;
PARLEY_BENCH_QUICK=1 runs small counts.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from arq.connections import RedisSettings, create_pool
from redis.asyncio import Redis

from bot.files.store import FileStore
from bot.mailbox.inbox import Mailbox
from bot.redis import keys
from bot.vocabulary.envelope import Envelope, Sender
from tests.bench.processes import environment
from tests.bench.table import Figure, report
from tests.fakes.llm import FakeLLM, Reply
from tests.fakes.llm.script import RecordedRequest
from tests.support.images import image_bytes
from tests.support.redis_server import RedisServer
from tests.support.workers import Announcements

QUICK = os.environ.get("PARLEY_BENCH_QUICK") == "1"

DEADLINE_S = 300.0  # a loaded machine is slow, not broken
KIB, MIB = 1024, 1024 * 1024
ANSWER = "A fair answer, in a few sentences that say what the person asked about. " * 12


@dataclass(frozen=True)
class Sizes:
    sessions: int  # idle sessions measured
    turns: int  # of the long conversation
    open: int  # turns held open at once in one worker

    @classmethod
    def of(cls, argv: list[str]) -> Sizes:
        given = [int(a) for a in argv[:3]]
        default = [3, 6, 50] if QUICK else [50, 60, 1000]
        sessions, turns, open_ = given + default[len(given) :]
        return cls(sessions, turns, open_)


async def start_worker(
    redis_url: str, folder: str, model_url: str, **more: str
) -> asyncio.subprocess.Process:
    """`python -m worker worker`, once it said on `parley:workers` that it takes jobs."""
    announcements = Announcements(redis_url)
    after = await announcements.last()
    inherited = environment(redis_url, folder, model_url, **more).items()
    env = {name: value for name, value in inherited if not name.startswith("PARLEY_BENCH")}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "worker", "worker", env=env)

    def failed() -> str | None:
        return None if proc.returncode is None else f"it exited with {proc.returncode}"

    try:
        await announcements.wait(after, proc.pid, failed)
    except BaseException:  # pytest's Failed included: no worker is left behind
        await stop(proc)
        raise
    return proc


async def stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.terminate()
    await asyncio.wait_for(proc.wait(), 60)


def rss(pid: int, *, tree: bool = True) -> int:
    """Resident bytes of `pid` and (with `tree`) all its descendants; 0 for one gone."""
    total = 0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total = int(line.split()[1]) * KIB
        for task in Path(f"/proc/{pid}/task").iterdir() if tree else []:
            children = (task / "children").read_text().split()
            total += sum(rss(int(child)) for child in children)
    except OSError:
        pass
    return total


async def key_bytes(redis: Redis, session: str) -> Counter[str]:
    """What Redis spends on each key of `session` (`parley:{session}:*`), by its name."""
    names = [name async for name in redis.scan_iter(match=keys.session(session, "*"), count=1000)]
    prefix = len(keys.session(session, ""))
    sizes: Counter[str] = Counter()
    for name in names:  # `seen:{envelope id}` markers are summed as one
        sizes[name.decode()[prefix:].split(":")[0]] += await redis.memory_usage(name) or 0
    return sizes


async def session_bytes(redis: Redis, session: str) -> tuple[int, int]:
    """The session's hot state (every key but its events), and its events stream: those are
    a buffer of the last minutes' turns for clients following them, and lapse when idle."""
    sizes = await key_bytes(redis, session)
    events = sizes.pop("events", 0)
    return sum(sizes.values()), events


def shown(sizes: tuple[int, int]) -> str:
    return f"{sizes[0] / KIB:6.1f} KiB state + {sizes[1] / KIB:6.1f} KiB events"


async def turn(mailbox: Mailbox, session: str, text: str, n: int) -> None:
    """Submit a message and wait for its turn to be committed (the inbox empty again)."""
    await mailbox.submit(
        Envelope(id=f"{session}-{n}", session=session, text=text, sender=Sender(id="b:u"))
    )
    await answered(mailbox, session)


async def answered(mailbox: Mailbox, session: str) -> None:
    """Until the session's inbox is empty: its turns are committed."""
    deadline = time.monotonic() + DEADLINE_S
    while await mailbox.pending(session) > 0:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{session}: a turn did not end within {DEADLINE_S:.0f} s")
        await asyncio.sleep(0.02)


async def per_session(mailbox: Mailbox, gate: asyncio.Event, size: Sizes) -> float:
    """Idle sessions after three turns, one mid-turn, one long conversation; the largest
    hot state."""
    names = [f"bench:idle:{n}" for n in range(size.sessions)]
    await asyncio.gather(*(turn(mailbox, s, f"question {k}", k) for s in names for k in range(3)))
    idle = [await session_bytes(mailbox.redis, s) for s in names]
    print(f"idle session after 3 turns, the largest of {size.sessions}: {shown(max(idle))}")
    gate.clear()
    await mailbox.submit(
        Envelope(id="active-0", session="bench:active", text="hold", sender=Sender(id="b:u"))
    )
    await written(mailbox.redis, ["bench:active"])
    active = await session_bytes(mailbox.redis, "bench:active")
    print(f"session mid-turn (lease, inbox, state, events):  {shown(active)}")
    gate.set()
    sizes: list[tuple[int, int]] = []
    for n in range(size.turns):
        await turn(mailbox, "bench:long", f"tell me more, part {n}", n)
        if n % 10 == 9 or n == size.turns - 1:
            sizes.append(await session_bytes(mailbox.redis, "bench:long"))
            print(f"  conversation after {n + 1:3} turns: {shown(sizes[-1])}")
    shares = await key_bytes(mailbox.redis, "bench:long")
    print("  of which: " + ", ".join(f"{k} {v / KIB:.1f} KiB" for k, v in shares.items()))
    return max(state for state, _ in [*idle, active, *sizes])


async def with_photos(mailbox: Mailbox, files: FileStore, turns: int) -> tuple[float, float]:
    """A conversation with a photo in each of `turns` turns, beside one of the same words
    without: the hot state's bytes, and what each photo adds to it."""
    for session, with_photo in (("bench:words", False), ("bench:photos", True)):
        for n in range(turns):
            refs = [files.put(image_bytes((1280, 960), "JPEG"), "image/jpeg", "photo.jpg")]
            await mailbox.submit(
                Envelope(id=f"{session}-{n}", session=session, text=f"and this one, {n}?",
                         attachments=refs if with_photo else [], sender=Sender(id="b:u"))
            )  # fmt: skip
            await answered(mailbox, session)
    words = await session_bytes(mailbox.redis, "bench:words")
    photos = await session_bytes(mailbox.redis, "bench:photos")
    each = (photos[0] - words[0]) / turns
    print(f"conversation with a photo in each of {turns} turns: {shown(photos)} "
          f"({each:.0f} bytes of state per photo; without them: {shown(words)})")  # fmt: skip
    return photos[0], each


async def written(redis: Redis, sessions: list[str]) -> None:
    """Until every session's reply has its first words in its events stream."""
    deadline = time.monotonic() + DEADLINE_S
    while True:
        async with redis.pipeline(transaction=False) as pipe:
            for session in sessions:
                pipe.xlen(keys.events(session))
            lengths = await pipe.execute()
        if all(lengths):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{lengths.count(0)} turns never started their reply")
        await asyncio.sleep(0.2)


async def open_turns(mailbox: Mailbox, gate: asyncio.Event, pid: int, count: int) -> int:
    """The worker's resident memory idle, with `count` turns paused mid-reply, and after."""
    idle = rss(pid)
    gate.clear()
    sessions = [f"bench:open:{n}" for n in range(count)]
    for n, session in enumerate(sessions):
        await mailbox.submit(
            Envelope(id=f"open-{n}", session=session, text="hold", sender=Sender(id="b:u"))
        )
    await written(mailbox.redis, sessions)
    held = rss(pid)
    info = await mailbox.redis.info("memory")
    gate.set()
    for session in sessions:
        await answered(mailbox, session)
    after = rss(pid)
    print(
        f"worker RSS: {idle / MIB:.0f} MiB idle, {held / MIB:.0f} MiB with {count} turns open "
        f"({(held - idle) / max(1, count) / KIB:.0f} KiB a turn), {after / MIB:.0f} MiB after; "
        f"Redis used_memory {int(info['used_memory']) / MIB:.1f} MiB with them open"
    )
    return held


async def main() -> None:
    size = Sizes.of(sys.argv[1:])
    gate = asyncio.Event()
    gate.set()

    def brain(request: RecordedRequest) -> Reply:
        if request.system_text().startswith("You condense"):
            return Reply(text="Notes on the conversation so far. " * 10)
        return Reply(text=ANSWER, chunk_size=40, gate=gate, gate_after=5)

    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp))
        server.start()
        pool = await create_pool(RedisSettings.from_dsn(server.url))
        try:
            async with FakeLLM() as llm:
                llm.responder = brain
                sessions = str(max(200, size.open + 10))
                worker = await start_worker(
                    server.url, tmp, llm.anthropic_base_url, PARLEY_WORKER_SESSIONS=sessions
                )
                try:
                    mailbox = Mailbox(pool, pool)
                    largest = await per_session(mailbox, gate, size)
                    files = FileStore(Path(tmp) / "files")
                    photos, each = await with_photos(mailbox, files, size.turns // 6)
                    held = await open_turns(mailbox, gate, worker.pid, size.open)
                finally:
                    gate.set()
                    await stop(worker)
        finally:
            await pool.aclose()
            server.stop()
    report(
        Figure("memory: Redis hot state per session, largest", largest / KIB, "KiB", 64.0),
        Figure("memory: Redis hot state per session, a photo a turn", photos / KIB, "KiB", 64.0),
        Figure("memory: Redis bytes per stored photo", each, "bytes"),
        Figure(f"memory: worker RSS, {size.open} turns open", held / MIB, "MiB", 1024.0),
    )


if __name__ == "__main__":
    asyncio.run(main())
