"""The tool contract: a typed function whose signature is its JSON schema, and where it runs.

```python
@tool(read_only=True)
async def current_time(ctx: ToolContext, timezone: Annotated[str, Field(description=...)]) -> str:
    \"\"\"The docstring is what the model reads about the tool.\"\"\"
```
The first parameter is always the `ToolContext`; every other parameter becomes a field of a
pydantic model that validates the model's arguments. Tools keep nothing between calls; one
that needs more than its call (a store, a limit, an API key) is made by a factory that takes
just that and closes over it, so no tool is handed what another one needs.

A tool may be `async def` or plain `def`, and it says where it runs (`isolation`), because a
tool must never stall the worker: one event loop serves every session of a worker process
and keeps their leases alive, so a body that blocks it stops them all.

- `"thread"` (the default): in a thread of its own, an async tool on an event loop of its
  own. Blocking code (sync HTTP clients, file I/O, `time.sleep`) is harmless there. At its
  timeout the caller stops waiting and reports it; an async tool is cancelled, a thread
  that never returns is abandoned but keeps its slot, so stuck threads stay bounded
  (`PARLEY_TOOL_THREADS`; when all are taken, calls wait and then fail as busy).
- `"process"`: in a small pool of helper processes, killed at the timeout. For CPU work
  that may hold the GIL for long inside C code (big-integer maths, regular expressions),
  which would stall the loop even from a thread. The tool must be a module-level `@tool`,
  and its arguments, context and result are pickled.
- `"loop"`: awaited on the worker's own loop. Only for async tools that never block and
  need that loop's resources (its Redis or SQL connections); a timeout cancels them.
"""

from __future__ import annotations

import inspect
import json
import re
import threading
import zoneinfo
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, Protocol, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, create_model

from bot.llm.base import ToolSpec
from bot.vocabulary.chats import chat_of
from bot.vocabulary.envelope import Sender
from bot.vocabulary.files import FileRef
from bot.vocabulary.preferences import Preferences
from bot.vocabulary.usage import Usage

ToolFunction = Callable[..., Any]
Isolation = Literal["thread", "process", "loop"]
NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class ToolError(Exception):
    """Raised by a tool to report a failure the model should read as is (no traceback)."""


@dataclass(frozen=True)
class Attachment:
    """A file a tool made for the person, sent into the chat as it is: an image as a
    picture, anything else as a file to download. `name` is what the person sees it
    called; `caption`, a line shown with it."""

    name: str
    data: bytes = field(repr=False)
    caption: str = ""


@dataclass(frozen=True)
class ToolResult:
    """What a tool returns when it has files for the person besides its text for the model.
    Parley stores the files, sends them where the conversation is and tells the model so
    under `text`; a tool returns plain text (or JSON) when it has none."""

    text: str
    files: tuple[Attachment, ...] = ()
    # Tokens spent on the call's behalf by model calls it caused (a helper's run): they
    # count as the calling run's own.
    usage: Usage | None = None


class FileRoom:
    """What the calls of one batch may still hand back as files for the person: how many
    (`files`, of the turn's PARLEY_SEND_FILES_PER_TURN) and, of the files programs leave in
    the sandbox's ./out/, how many bytes (`out_bytes`, of the turn's `SCRATCH_MB`). The
    calls of a batch run at once, so a call takes what it may read before it reads a byte
    (`take`) and gives back what it did not use (`settle`): together they never read more
    than their turn has left, and no call gives back more than was taken. The turn counts
    what was read (`out_read`) in its saved progress. A call in a helper process gets a
    copy, which gives nothing back to the turn."""

    def __init__(self, files: int, out_bytes: int) -> None:
        self.files = max(files, 0)
        self.out_bytes = max(out_bytes, 0)
        self.out_read = 0
        self._held = [0, 0]  # taken and not settled yet
        self._lock = threading.Lock()  # calls in threads take from it too

    def take(self, files: int, out_bytes: int = 0) -> tuple[int, int]:
        """As much of `files` and `out_bytes` as is left, taken for one call."""
        with self._lock:
            got = min(max(files, 0), self.files), min(max(out_bytes, 0), self.out_bytes)
            self.files, self.out_bytes = self.files - got[0], self.out_bytes - got[1]
            self._held = [self._held[0] + got[0], self._held[1] + got[1]]
            return got

    def settle(self, taken: tuple[int, int], files: int, out_bytes: int = 0) -> None:
        """A call that `taken` so much used `files` and read `out_bytes`: the rest is back."""
        with self._lock:
            back = [
                min(max(taken[0] - files, 0), self._held[0]),
                min(max(taken[1] - out_bytes, 0), self._held[1]),
            ]
            self.files, self.out_bytes = self.files + back[0], self.out_bytes + back[1]
            self._held = [max(self._held[0] - taken[0], 0), max(self._held[1] - taken[1], 0)]
            self.out_read += min(max(out_bytes, 0), taken[1])

    def __getstate__(self) -> dict[str, int]:
        return {"files": self.files, "out_bytes": self.out_bytes}

    def __setstate__(self, state: dict[str, int]) -> None:
        self.__init__(state["files"], state["out_bytes"])  # type: ignore[misc]


class TemporaryFailure(ToolError):
    """A failure that may pass if tried again soon: a network error, a server's 5xx. The
    call of a `read_only` tool is tried again, with backoff, within its timeout; a tool with
    side effects is never run twice for it, since its first try may have had its effect."""


@dataclass(frozen=True)
class ToolContext:
    """What a tool may know about its call, and nothing more: passed in, never looked up.

    Who asks (`user`) and where (the chat, its platform and kind; `reply_to` is where the
    conversation's replies go, opaque, so a tool can leave work that answers here later), what
    the person chose (`preferences`, their time zone among them), the session's `workspace`
    folder (None where it has none), the tool's own settings (`config`: the operator's
    `PARLEY_TOOL_<NAME>_<KEY>` variables, keys lower-cased), the room its turn has left for
    files (`files`, see `FileRoom`), and the images the person sent in the turn (`images`, by
    reference, oldest first: what `generate_image` edits; a tool reads their bytes from the
    file store it is built with). Parley's settings and stores are not here: a tool that
    needs them is built with what it needs, so a context holds no secret but the tool's own and
    pickles as it is (a call in a helper process)."""

    session_key: str
    user: Sender  # who is talking
    platform: str = "console"
    chat_kind: str = "private"
    reply_to: Mapping[str, Any] = field(default_factory=dict)
    preferences: Preferences = field(default_factory=Preferences)
    default_timezone: str = "UTC"  # the deployment's (PARLEY_TIMEZONE)
    workspace: Path | None = None
    config: Mapping[str, str] = field(default_factory=dict, repr=False)  # may hold a key
    call_id: str = ""  # the id of the tool call being run (set by the executor)
    files: FileRoom | None = None  # what the turn may still be sent; None: no turn bounds it
    images: tuple[FileRef, ...] = ()  # the images the person sent in this turn, oldest first

    @property
    def chat(self) -> str:
        """The chat the session is in: its topics and threads share it."""
        return chat_of(self.session_key)

    @property
    def timezone(self) -> zoneinfo.ZoneInfo:
        """The person's own time zone, else the deployment's."""
        return zoneinfo.ZoneInfo(self.preferences.timezone or self.default_timezone)


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    function: ToolFunction
    arguments: type[BaseModel]
    sensitive: bool = False
    read_only: bool = False
    timeout: float | None = None
    isolation: Isolation = "thread"
    untrusted: bool = False  # what it returns comes from outside: pages, files, MCP servers
    input_schema: Mapping[str, Any] | None = None  # given as is (MCP); else `arguments`'

    @cached_property
    def spec(self) -> ToolSpec:
        """Built once: the schema is asked for on every model call."""
        if self.input_schema is not None:
            return ToolSpec(self.name, self.description, dict(self.input_schema))
        schema = self.arguments.model_json_schema()
        schema.pop("title", None)
        return ToolSpec(self.name, self.description, schema)

    async def __call__(self, ctx: ToolContext, arguments: BaseModel) -> str | ToolResult:
        """Run the function right here, whatever its isolation says (the executor decides
        where to call this)."""
        return await self.run(ctx, dict(arguments))

    async def run(self, ctx: ToolContext, values: Mapping[str, Any]) -> str | ToolResult:
        """`__call__` with the validated values as a plain mapping, which pickles."""
        result = self.function(ctx, **values)
        if inspect.isawaitable(result):
            result = await result
        return self.text(result)

    def run_sync(self, ctx: ToolContext, values: Mapping[str, Any]) -> str | ToolResult:
        """`run` for a plain `def` tool, without an event loop."""
        return self.text(self.function(ctx, **values))

    @staticmethod
    def text(result: Any) -> str | ToolResult:
        """The result as the model reads it; a `ToolResult` keeps its files beside."""
        if isinstance(result, str | ToolResult):
            return result
        return json.dumps(result, ensure_ascii=False, default=str)


def _arguments_model(name: str, function: ToolFunction) -> type[BaseModel]:
    hints = get_type_hints(function, include_extras=True)
    params = list(inspect.signature(function).parameters.values())
    if not params:
        raise TypeError(f"tool {name}: the first parameter must take the ToolContext")
    fields: dict[str, Any] = {}
    for param in params[1:]:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"tool {name}: *args and **kwargs cannot be described to a model")
        annotation = hints.get(param.name, Any)
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (annotation, default)
    config = ConfigDict(extra="forbid")
    model: type[BaseModel] = create_model(f"{name}_arguments", __config__=config, **fields)
    return model


@overload
def tool(function: ToolFunction, /) -> Tool: ...
@overload
def tool(
    *,
    name: str | None = None,
    sensitive: bool = False,
    read_only: bool = False,
    timeout: float | None = None,
    isolation: Isolation = "thread",
    untrusted: bool = False,
) -> Callable[[ToolFunction], Tool]: ...
def tool(
    function: ToolFunction | None = None,
    /,
    *,
    name: str | None = None,
    sensitive: bool = False,
    read_only: bool = False,
    timeout: float | None = None,
    isolation: Isolation = "thread",
    untrusted: bool = False,
) -> Tool | Callable[[ToolFunction], Tool]:
    """Turn a function into a `Tool`; `sensitive` tools need approval by default,
    `isolation` says where it runs (see the module's docstring), and the results of an
    `untrusted` tool reach the model marked as data from outside, never as instructions."""

    def wrap(fn: ToolFunction) -> Tool:
        if isolation == "loop" and not inspect.iscoroutinefunction(fn):
            raise TypeError(f"tool {fn.__name__}: only an async function may run on the loop")
        tool_name = name or fn.__name__
        if not NAME.match(tool_name):
            raise ValueError(f"tool name {tool_name!r} must match {NAME.pattern}")
        description = inspect.getdoc(fn)
        if not description:
            raise ValueError(f"tool {tool_name}: the docstring tells the model what it does")
        return Tool(
            tool_name,
            description,
            fn,
            _arguments_model(tool_name, fn),
            sensitive,
            read_only,
            timeout,
            isolation,
            untrusted,
        )

    return wrap(function) if function is not None else wrap


class ToolSource(Protocol):
    """Tools that come and go while a worker runs: an MCP server's, withdrawn while it is
    down. Asked on every model call, so `tools` must be cheap."""

    def tools(self) -> Mapping[str, Tool]: ...


class ToolRegistry:
    """The tools one agent may use, by name: its own, then those its sources have now."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._sources: list[ToolSource] = []
        for item in tools:
            self.register(item)

    def register(self, item: Tool) -> Tool:
        if item.name in self._tools:
            raise ValueError(f"tool {item.name!r} is registered twice")
        self._tools[item.name] = item
        return item

    def add_source(self, source: ToolSource) -> None:
        """Offer `source`'s tools too; a name already taken here keeps its own tool."""
        self._sources.append(source)

    def get(self, name: str) -> Tool | None:
        if (found := self._tools.get(name)) is not None:
            return found
        for source in self._sources:
            if (found := source.tools().get(name)) is not None:
                return found
        return None

    def _all(self) -> dict[str, Tool]:
        everything: dict[str, Tool] = {}
        for source in reversed(self._sources):
            everything.update(source.tools())
        everything.update(self._tools)
        return everything

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._all().values())

    def __len__(self) -> int:
        return len(self._all())

    @property
    def names(self) -> list[str]:
        return sorted(self._all())

    @property
    def specs(self) -> list[ToolSpec]:
        """Its own tools first, in the order registered, so that a prompt's cached prefix
        stays the same while sources change."""
        own = [item.spec for item in self._tools.values()]
        return own + [t.spec for name, t in self._all().items() if name not in self._tools]

    def only(self, names: Collection[str]) -> ToolRegistry:
        """These tools limited to `names` (a run that asked for some tools): the model is
        offered no other, and a call to another is refused as to an unknown tool."""
        return _Subset(self, frozenset(names))

    def without(self, names: Collection[str]) -> ToolRegistry:
        """These tools but `names` (those a chat's admins switched off): the model is not
        offered them, and a call to one is refused as to an unknown tool."""
        return _Without(self, frozenset(names))


class _Subset(ToolRegistry):
    def __init__(self, whole: ToolRegistry, names: frozenset[str]) -> None:
        super().__init__()
        self._whole = whole
        self._names = names

    def get(self, name: str) -> Tool | None:
        return self._whole.get(name) if name in self._names else None

    def _all(self) -> dict[str, Tool]:
        return {name: t for name, t in self._whole._all().items() if name in self._names}

    @property
    def specs(self) -> list[ToolSpec]:
        return [spec for spec in self._whole.specs if spec.name in self._names]


class _Without(ToolRegistry):
    def __init__(self, whole: ToolRegistry, names: frozenset[str]) -> None:
        super().__init__()
        self._whole = whole
        self._names = names

    def get(self, name: str) -> Tool | None:
        return None if name in self._names else self._whole.get(name)

    def _all(self) -> dict[str, Tool]:
        return {n: t for n, t in self._whole._all().items() if n not in self._names}

    @property
    def specs(self) -> list[ToolSpec]:
        return [spec for spec in self._whole.specs if spec.name not in self._names]
