"""Runs the model's tool calls: validated, in parallel, bounded in time and output.

Nothing a tool or the model does here raises into the agent loop: unknown tools, bad JSON,
invalid arguments, crashes and timeouts all become error results the model can read and act on.
Where each call runs, and how its timeout holds even against a tool that blocks, is
`bot.tools.isolation`'s business.

A read-only call that fails for a while (`TemporaryFailure`) is tried again within its
timeout; a call with side effects never is. What an `untrusted` tool returns is marked as
data from outside (`bot.tools.untrusted`) after it is cut to the output limit. A tool's own
secret settings (`PARLEY_TOOL_<NAME>_API_KEY`, `bot.tools.config`) are taken out of its
result and its error, so a careless tool cannot hand its key to the model, a trace or a chat.

Files a tool made for the person (a `ToolResult`'s) come back beside its text in the
outcome; the agent's tool step stores and announces them (`bot.agent.attachments`). A cached
result of a read-only call is its text alone: a file is sent once, by the call that made it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from dataclasses import dataclass, replace

from pydantic import BaseModel, ValidationError
from tenacity import (
    AsyncRetrying,
    retry_if_exception_type,
    stop_after_attempt,
    stop_before_delay,
    wait_exponential_jitter,
)

from bot.tools.base import (
    Attachment,
    TemporaryFailure,
    Tool,
    ToolContext,
    ToolError,
    ToolRegistry,
    ToolResult,
)
from bot.tools.config import ToolConfig
from bot.tools.isolation import ToolRunner
from bot.tools.untrusted import mark
from bot.vocabulary.messages import ToolUseBlock
from bot.vocabulary.usage import Usage

log = logging.getLogger(__name__)
RETRIES = 2  # more tries of a read-only call that failed for a while
REDACTED = "[redacted]"
Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class ToolOutcome:
    call_id: str
    name: str
    content: str
    is_error: bool = False
    duration: float = 0.0
    cached: bool = False
    files: tuple[Attachment, ...] = ()  # what the tool made for the person
    usage: Usage | None = None  # tokens the call spent on model calls (a helper's run)


def _validation_message(error: ValidationError) -> str:
    parts = []
    for item in error.errors():
        where = ".".join(str(p) for p in item["loc"]) or "arguments"
        parts.append(f"{where}: {item['msg']}")
    return "; ".join(parts)


def cache_key(call: ToolUseBlock) -> str:
    return call.name + ":" + json.dumps(call.input, sort_keys=True, ensure_ascii=False)


class ToolExecutor:
    def __init__(
        self,
        registry: ToolRegistry,
        *,
        timeout: float,
        concurrency: int,
        output_limit: int,
        threads: int = 64,
        processes: int = 2,
        backoff: float = 0.5,
        sleep: Sleep = asyncio.sleep,
        config: ToolConfig | None = None,
    ) -> None:
        """`config`: the tools' own settings, read once at start; each call gets its tool's."""
        self.registry = registry
        self.config = (config or ToolConfig()).among(registry.names)
        self.timeout = timeout
        self.output_limit = output_limit
        self.backoff = backoff  # the first wait before a read-only call is tried again
        self._sleep = sleep
        self._concurrency = concurrency
        modules = {t.function.__module__ for t in registry if t.isolation == "process"}
        self.runner = ToolRunner(threads=threads, processes=processes, modules=sorted(modules))

    async def warm(self) -> None:
        """Start a helper process ahead of the first call of a tool that runs in one. Only a
        head start: a call starts one itself if this failed."""
        if not self.runner.processes.modules:
            return
        try:
            await self.runner.processes.warm()
        except Exception:
            log.warning("could not start a helper process for tools", exc_info=True)

    async def aclose(self) -> None:
        """Stop the helper processes (a worker that shuts down)."""
        await self.runner.aclose()

    async def run_all(
        self,
        calls: Sequence[ToolUseBlock],
        ctx: ToolContext,
        cache: MutableMapping[str, str],
    ) -> list[ToolOutcome]:
        """Run independent calls concurrently; results come back in the order of `calls`."""
        return list(await asyncio.gather(*self.start(calls, ctx, cache)))

    def start(
        self,
        calls: Sequence[ToolUseBlock],
        ctx: ToolContext,
        cache: MutableMapping[str, str],
    ) -> list[asyncio.Task[ToolOutcome]]:
        """One task per call, at most `concurrency` running at once; cancel them to stop."""
        limit = asyncio.Semaphore(self._concurrency)

        async def bounded(call: ToolUseBlock) -> ToolOutcome:
            async with limit:
                return await self.run_one(call, ctx, cache)

        return [asyncio.create_task(bounded(call)) for call in calls]

    async def run_one(
        self, call: ToolUseBlock, ctx: ToolContext, cache: MutableMapping[str, str]
    ) -> ToolOutcome:
        started = time.monotonic()
        files: list[Attachment] = []
        spent: list[Usage] = []
        content, is_error, cached = await self._run(call, ctx, cache, (files, spent))
        for secret in self.config.secrets(call.name):  # a tool's own key never leaves it
            content = content.replace(secret, REDACTED)
        duration = time.monotonic() - started
        usage = sum(spent, Usage()) if spent else None
        files_made = tuple(files)
        return ToolOutcome(
            call.id, call.name, content, is_error, duration, cached, files_made, usage
        )

    async def _run(
        self,
        call: ToolUseBlock,
        ctx: ToolContext,
        cache: MutableMapping[str, str],
        made: tuple[list[Attachment], list[Usage]],
    ) -> tuple[str, bool, bool]:
        """The call's text, whether it failed, whether it came from `cache`; the files a
        successful call made, and the tokens it spent, go into `made`."""
        tool = self.registry.get(call.name)
        if tool is None:
            available = ", ".join(self.registry.names) or "none"
            return f"Unknown tool {call.name!r}. Available tools: {available}.", True, False
        if call.input_error:
            return f"Invalid arguments for {call.name}: {call.input_error}", True, False
        try:
            arguments = tool.arguments.model_validate(call.input)
        except ValidationError as exc:
            return f"Invalid arguments for {call.name}: {_validation_message(exc)}", True, False
        key = cache_key(call)
        if tool.read_only and key in cache:
            return cache[key], False, True
        timeout = tool.timeout or self.timeout
        ctx = replace(ctx, config=self.config.of(tool.name), call_id=call.id)
        try:
            deadline = asyncio.get_running_loop().time() + timeout
            output = await self._attempts(tool, ctx, arguments, deadline)
        except ToolError as exc:
            if isinstance(spent := getattr(exc, "usage", None), Usage):  # a helper's failure
                made[1].append(spent)
            return self._outside(tool, str(exc)), True, False
        except TimeoutError:
            return f"{call.name} timed out after {timeout:g} s and was stopped.", True, False
        except Exception as exc:
            log.warning("tool %s failed: %s", call.name, type(exc).__name__, exc_info=True)
            return f"{call.name} failed: {type(exc).__name__}: {exc}", True, False
        if isinstance(output, ToolResult):
            made[0].extend(output.files)
            made[1].extend([output.usage] if output.usage is not None else [])
            output = output.text
        output = self._outside(tool, self.truncate(output or "(no output)"))
        if tool.read_only:
            cache[key] = output
        return output, False, False

    async def _attempts(
        self, tool: Tool, ctx: ToolContext, arguments: BaseModel, deadline: float
    ) -> str | ToolResult:
        """Run the call; a read-only tool's `TemporaryFailure` is tried again with backoff,
        up to `RETRIES` more times, while its deadline leaves time for it."""
        if not tool.read_only:
            return await self.runner.run(tool, ctx, arguments, deadline)
        loop = asyncio.get_running_loop()
        attempts = AsyncRetrying(
            retry=retry_if_exception_type(TemporaryFailure),
            stop=stop_after_attempt(RETRIES + 1) | stop_before_delay(deadline - loop.time()),
            wait=wait_exponential_jitter(
                multiplier=self.backoff, max=self.backoff * 8, jitter=self.backoff
            ),
            sleep=self._sleep,
            reraise=True,
        )
        async for attempt in attempts:
            with attempt:
                return await self.runner.run(tool, ctx, arguments, deadline)
        raise AssertionError("tenacity ends in a result or the last failure")  # pragma: no cover

    @staticmethod
    def _outside(tool: Tool, text: str) -> str:
        return mark(tool.name, text) if tool.untrusted else text

    def truncate(self, output: str) -> str:
        if len(output) <= self.output_limit:
            return output
        return (
            output[: self.output_limit]
            + f"\n[output truncated: {len(output):,} characters in all, "
            f"the first {self.output_limit:,} shown]"
        )
