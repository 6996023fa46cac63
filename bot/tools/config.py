"""A tool's own settings: the operator's `PARLEY_TOOL_<NAME>_<KEY>` variables.

A tool module cannot add fields to Parley's settings, and reading the environment itself
would let it read every other secret there too. So each tool gets a namespace of its own:
`PARLEY_TOOL_SAVE_NOTE_FILE=/srv/notes.txt` reaches the tool `save_note` as
`ctx.config["file"]`, and no other tool sees it. The name is the tool's in upper case, a `-`
in it written `_` (a variable's name cannot hold one); the key after it is lower-cased. Where
two tools' names would both fit a variable (`save` and `save_note`), it is the longer one's.

The variables are read once, when a process builds its executor, and the executor hands each
call its tool's namespace (`ToolExecutor`): the environment is never read per call.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from bot.config.settings import TOOL_PREFIX, names_a_secret

MIN_SECRET = 6  # as `bot.telemetry.logs`: shorter values would blank out ordinary words


def namespace(tool: str) -> str:
    """The start of the variables that belong to `tool`: `PARLEY_TOOL_SAVE_NOTE_`."""
    return f"{TOOL_PREFIX}{tool.upper().replace('-', '_')}_"


@dataclass(frozen=True)
class ToolConfig:
    """The `PARLEY_TOOL_` variables a process started with, by their upper-case names, and
    the names of the tools they are for. Their values may be a tool's keys, so they are
    never shown (`repr`)."""

    variables: Mapping[str, str] = field(default_factory=dict, repr=False)
    tools: frozenset[str] = frozenset()
    _of: dict[str, dict[str, str]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @classmethod
    def read(cls, *sources: Mapping[str, str | None]) -> ToolConfig:
        """The variables of `sources`, the later ones winning (a `.env` file, then the
        environment); names are not case-sensitive, as Parley's settings' are not."""
        found: dict[str, str] = {}
        for source in sources:
            for name, value in source.items():
                if name.upper().startswith(TOOL_PREFIX) and value is not None:
                    found[name.upper()] = value
        return cls(MappingProxyType(found))

    def among(self, tools: Iterable[str]) -> ToolConfig:
        """These variables for an executor of `tools`, so that each goes to the one tool
        whose name fits it best."""
        return replace(self, tools=frozenset(tools))

    def of(self, tool: str) -> dict[str, str]:
        """`tool`'s own settings, keys lower-cased and without their prefix: worked out once
        per tool, and a copy for each call, which the call may keep or pickle (a helper
        process) without touching the next call's."""
        if (known := self._of.get(tool)) is None:
            start = namespace(tool)
            longer = [n for n in map(namespace, self.tools) if n.startswith(start) and n != start]
            self._of[tool] = known = {
                name[len(start) :].lower(): value
                for name, value in self.variables.items()
                if name.startswith(start)
                and len(name) > len(start)
                and not any(name.startswith(other) for other in longer)
            }
        return dict(known)

    def secrets(self, tool: str) -> list[str]:
        """`tool`'s settings whose names say they are secrets (`api_key`), longest first:
        what its results and errors must not show (`bot.tools.executor`)."""
        found = {v for k, v in self.of(tool).items() if names_a_secret(k) and len(v) >= MIN_SECRET}
        return sorted(found, key=len, reverse=True)
