"""One Redis connection carries every event stream a web process serves.

A blocking XREAD holds its connection for as long as it waits, so a read per client means a
connection per idle browser tab: a thousand tabs exhaust Redis's client limit, workers can no
longer connect, and nothing gives the connections back. Here one reader task per process reads
every stream that has a listener in a single blocking XREAD and hands the entries to in-memory
queues, one per client. A stream's first listener wakes the reader (an entry on a wake stream of
its own) so that it re-issues the read with the new stream; the reader closes its connection a
little after its last listener leaves.

The number of open event streams is capped (`limit`, PARLEY_MAX_STREAMS). A stream that is cut
(Redis lost, the server stopping, a client too slow to keep up) ends in `StreamInterrupted`,
which carries the last id delivered so the client can resume after it (`Last-Event-ID`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

from bot.redis import keys
from bot.redis.results import done
from bot.waits import set_within

log = logging.getLogger(__name__)

Entry = tuple[str, dict[bytes, bytes]]
StreamId = tuple[int, int]

BLOCK_MS = 10_000  # a read returns at least this often, also when nothing happens
LINGER_S = 5.0  # the reader keeps its connection this long after its last listener left
SWEEP_S = 1.0  # how often listeners whose client went away are let go
BACKLOG = 1000  # entries a client may leave unread before it counts as too slow
BATCH = 500  # entries per stream and read
INTERRUPTED = "event stream interrupted"
REDIS_LOST = "the connection to Redis was lost"


def parse_id(value: str) -> StreamId:
    milliseconds, _, sequence = value.partition("-")
    return int(milliseconds), int(sequence or 0)


# The reader's own connection (`Services.stream_reader` makes it): it blocks, so it is never
# shared with other commands, and a read that outlives its block means Redis is gone.
READER_OPTIONS = {
    "single_connection_client": True,
    "socket_connect_timeout": 5,
    "socket_timeout": BLOCK_MS / 1000 + 10,
    "socket_keepalive": True,
}


class StreamInterrupted(Exception):
    """The stream was cut before its end; `last` is the id of the last event delivered."""

    def __init__(self, reason: str, last: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.last = last


class Listener:
    """One client's view of one stream: every entry after `since`, in order, each once."""

    def __init__(self, key: str, since: str, gone: Callable[[], bool]) -> None:
        self.key = key
        self.last = since
        self.gone = gone
        self.backlog: deque[Entry] = deque()
        self.queue: asyncio.Queue[Entry | None] = asyncio.Queue(BACKLOG)
        self.cut: str | None = None
        self._last = parse_id(since)

    def offer(self, entries: list[Entry]) -> bool:
        """Queue entries from the reader; False when the client has fallen too far behind."""
        try:
            for entry in entries:
                self.queue.put_nowait(entry)
        except asyncio.QueueFull:
            return False
        return True

    def interrupt(self, reason: str) -> None:
        if self.cut is None:
            self.cut = reason
        with contextlib.suppress(asyncio.QueueFull):
            self.queue.put_nowait(None)  # wakes a waiting `next`

    async def next(self, within: float) -> Entry | None:
        """The next entry not yet delivered, or None if nothing came `within` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while True:
            if self.backlog:
                entry: Entry | None = self.backlog.popleft()
            else:
                if self.cut is not None and self.queue.empty():
                    raise StreamInterrupted(self.cut, self.last)
                remaining = deadline - loop.time()
                if remaining <= 0:
                    return None
                try:
                    entry = await asyncio.wait_for(self.queue.get(), remaining)
                except TimeoutError:
                    return None
            if entry is None:
                continue
            ident = parse_id(entry[0])
            if ident <= self._last:
                continue  # already delivered by the catch-up, or before `since`
            self._last, self.last = ident, entry[0]
            return entry


class Slot:
    """A reserved place among the process's open event streams, given back on exit."""

    def __init__(self, hub: StreamHub) -> None:
        self.hub = hub
        self._held = True

    def listen(
        self, key: str, since: str, gone: Callable[[], bool]
    ) -> contextlib.AbstractAsyncContextManager[Listener]:
        return self.hub.listen(key, since, gone)

    def release(self) -> None:
        if self._held:
            self._held = False
            self.hub.open -= 1

    def __enter__(self) -> Slot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class StreamHub:
    """Fans the entries of the session streams out to their listeners over one connection.

    `redis` (the process's bounded pool) serves the short commands: catching a late listener
    up with XRANGE and waking the reader; `connect` makes the reader's own connection.
    """

    def __init__(self, redis: Redis, connect: Callable[[], Redis], limit: int) -> None:
        self.redis = redis
        self.connect = connect
        self.limit = limit
        self.open = 0
        self.listeners: dict[str, set[Listener]] = {}
        self._positions: dict[str, str] = {}  # everything after it reaches the listeners
        self._reading: frozenset[str] = frozenset()  # the streams of the read in flight
        self._wake_key = keys.web_wake(uuid.uuid4().hex)
        self._wake_position = "0-0"
        self._wake_pending = False
        self._changed = asyncio.Event()
        self._reader: asyncio.Task[None] | None = None
        self._chores: set[asyncio.Task[None]] = set()
        self._closed = False

    def reserve(self) -> Slot | None:
        """A place for one more stream, or None when PARLEY_MAX_STREAMS are open."""
        if self.open >= self.limit:
            return None
        self.open += 1
        return Slot(self)

    @contextlib.asynccontextmanager
    async def listen(
        self, key: str, since: str, gone: Callable[[], bool]
    ) -> AsyncIterator[Listener]:
        """Follow stream `key` after `since`; `gone` says when the client has left."""
        listener = Listener(key, since, gone)
        if self._closed:
            raise StreamInterrupted("the server is stopping", since)
        known = self._positions.get(key)
        self.listeners.setdefault(key, set()).add(listener)
        try:
            if known is None:
                self._positions[key] = since
            self._run_or_wake(key)
            if known is not None and parse_id(since) < parse_id(known):
                await self._catch_up(listener, known)
            yield listener
        finally:
            self._drop(listener)

    async def close(self) -> None:
        """On shutdown: end every stream (clients are told to resume) and the reader."""
        self._closed = True
        self._interrupt_all("the server is stopping")
        tasks = [t for t in (self._reader, *self._chores) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _catch_up(self, listener: Listener, known: str) -> None:
        """A listener from further back than the reader: read up to where the reader is.

        It is registered first, so what the reader reads meanwhile is queued for it; `next`
        hands out the catch-up first and skips what it already delivered."""
        start = listener.last
        try:
            while True:
                entries: list[Any] = await done(
                    self.redis.xrange(listener.key, min=start, max="+", count=BATCH)
                )
                listener.backlog.extend((i.decode(), f) for i, f in entries)
                if len(entries) < BATCH or parse_id(listener.backlog[-1][0]) >= parse_id(known):
                    return
                start = listener.backlog[-1][0]
        except (RedisError, OSError):
            raise StreamInterrupted(REDIS_LOST, listener.last) from None

    def _drop(self, listener: Listener) -> None:
        group = self.listeners.get(listener.key)
        if group is not None:
            group.discard(listener)
            if not group:
                del self.listeners[listener.key]
                if not self.listeners and self._reading:
                    self._interrupt_read()  # so that the reader lingers, then lets go

    def _run_or_wake(self, key: str) -> None:
        if self._reader is None:
            self._reader = asyncio.create_task(self._read())
            self._chore(self._sweep(self._reader))
            return
        self._changed.set()
        if self._reading and key not in self._reading:
            self._interrupt_read()

    def _interrupt_read(self) -> None:
        if not self._wake_pending:
            self._wake_pending = True
            self._chore(self._wake())

    def _chore(self, coroutine: Any) -> None:
        task: asyncio.Task[None] = asyncio.create_task(coroutine)
        self._chores.add(task)
        task.add_done_callback(self._chores.discard)

    async def _wake(self) -> None:
        """End the read in flight, so the next one includes the new stream."""
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.xadd(self._wake_key, {"wake": "1"}, maxlen=1)
                pipe.expire(self._wake_key, 3600)
                await pipe.execute()
        except (RedisError, OSError):
            self._wake_pending = False  # the read ends on its own within BLOCK_MS

    async def _sweep(self, reader: asyncio.Task[None]) -> None:
        """Let go of listeners whose client left: nothing else tells an idle stream."""
        while not reader.done():
            await asyncio.sleep(SWEEP_S)
            for group in list(self.listeners.values()):
                for listener in list(group):
                    if listener.gone():
                        listener.interrupt("the client left")
                        self._drop(listener)

    async def _read(self) -> None:
        client = self.connect()
        try:
            while await self._has_listeners():
                self._deliver(await self._read_once(client))
        except (RedisError, OSError) as exc:
            log.warning("event streams cut: lost Redis (%s)", type(exc).__name__)
            self._interrupt_all(REDIS_LOST)
        except Exception:  # no listener may wait forever on a reader that is gone
            log.exception("event streams cut: the reader failed")
            self._interrupt_all("the event reader failed")
        finally:
            self._reader = None
            self._positions.clear()
            with contextlib.suppress(Exception):
                await asyncio.shield(client.aclose())

    async def _read_once(self, client: Redis) -> list[Any]:
        """One blocking read of every stream listened to. A connection found broken is
        made again once and the read repeated from the same positions, so nothing is lost
        or repeated: a connection that went stale while the reader lingered (Redis
        restarted, a Sentinel failover moved the master) cuts no stream. A second failure
        in a row is Redis lost, for `_read` to report."""
        for attempt in (1, 2):
            streams = {k: self._positions[k] for k in self.listeners}
            self._reading = frozenset(streams)
            self._wake_pending = False
            streams[self._wake_key] = self._wake_position
            try:
                batches = await client.xread(streams, count=BATCH, block=BLOCK_MS)  # type: ignore[arg-type]
                return list(batches or [])
            except (RedisError, OSError):
                if attempt == 2:
                    raise
                log.info("event streams: the reader's connection broke; connecting again")
            finally:
                self._reading = frozenset()
        return []  # not reached: the second attempt returns or raises

    async def _has_listeners(self) -> bool:
        """True while someone listens; after the last one left, wait LINGER_S for another."""
        while not self.listeners:
            self._positions.clear()
            self._changed.clear()
            if not await set_within(self._changed, LINGER_S):
                return bool(self.listeners)
        return True

    def _deliver(self, batches: list[Any]) -> None:
        for name, raw in batches:
            key = name.decode()
            if not raw:
                continue
            entries: list[Entry] = [(i.decode(), f) for i, f in raw]
            last = entries[-1][0]
            if key == self._wake_key:
                self._wake_position = last
                continue
            if parse_id(last) > parse_id(self._positions.get(key, "0-0")):
                self._positions[key] = last
            for listener in list(self.listeners.get(key, ())):
                if not listener.offer(entries):
                    listener.interrupt("the client fell behind")
                    self._drop(listener)
        for key in [k for k in self._positions if k not in self.listeners]:
            del self._positions[key]

    def _interrupt_all(self, reason: str) -> None:
        for group in list(self.listeners.values()):
            for listener in list(group):
                listener.interrupt(reason)
                self._drop(listener)
