"""The MCP servers an operator declares, in the JSON format other MCP clients already read:

```json
{"mcpServers": {
  "files": {"command": "npx", "args": ["-y", "server-files", "/srv"],
            "env": {"TOKEN": "${FILES_TOKEN}"}},
  "search": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${KEY}"},
             "trust": "allow", "tools": {"deny": ["delete_*"]}, "timeout": 60}
}}
```

A server runs as a child process (`command`) or is reached over streamable HTTP (`url`), or
over the older SSE transport (`"transport": "sse"`, or `"type": "sse"` as some clients
write). Parley's own keys: `trust` (`ask`: every call needs approval; `allow`; `deny`: nothing
offered), `tools` (globs of the server's tool names to offer or hide), `timeout` (seconds per
call) and `disabled`.

The file is checked strictly and once, when a worker starts: a typo would otherwise turn
into a server that silently never appears. Any mistake is one `ConfigError` line naming the
file, the server and the problem. `${VAR}` in `env` and `headers` values is replaced from the
worker's environment; the values are kept as secrets and never shown.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, model_validator
from pydantic_core import ErrorDetails

from bot.config.settings import ConfigError, Settings

VARIABLE = "PARLEY_MCP_CONFIG"
DEFAULT_FILE = Path("mcp.json")
SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
TOOL_NAME_LIMIT = 64
REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
Trust = Literal["allow", "ask", "deny"]
TransportName = Literal[
    "stdio", "sse", "http", "streamable-http", "streamable_http", "streamableHttp"
]
STDIO_KEYS = ("args", "env", "cwd")


class ToolFilter(BaseModel):
    """Which of a server's tools are offered: those matching an `allow` glob and no `deny`."""

    model_config = ConfigDict(extra="forbid")

    allow: list[str] = Field(default_factory=lambda: ["*"])
    deny: list[str] = Field(default_factory=list)


class ServerConfig(BaseModel):
    """One entry of `mcpServers`."""

    model_config = ConfigDict(extra="forbid")

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, SecretStr] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, SecretStr] = Field(default_factory=dict)
    transport: TransportName | None = None
    type: TransportName | None = None
    trust: Trust = "ask"
    tools: ToolFilter = Field(default_factory=ToolFilter)
    timeout: float | None = Field(default=None, gt=0)
    disabled: bool = False

    @model_validator(mode="after")
    def _one_way_to_connect(self) -> ServerConfig:
        if self.command is None and self.url is None:
            raise ValueError('needs "command" (a program to run) or "url" (an HTTP server)')
        if self.command is not None and self.url is not None:
            raise ValueError('has both "command" and "url"; give one')
        if self.transport and self.type and _kind(self.transport) != _kind(self.type):
            raise ValueError('"transport" and "type" disagree')
        if self.command is not None:
            if self.kind != "stdio":
                raise ValueError(f'"command" runs a stdio server, not {self.kind}')
            if self.headers:
                raise ValueError('"headers" only apply to a server with a "url"')
        else:
            if self.kind == "stdio":
                raise ValueError('a stdio server needs "command", not "url"')
            given = [key for key in STDIO_KEYS if key in self.model_fields_set]
            if given:
                raise ValueError(f'"{given[0]}" only applies to a server with a "command"')
            if not re.match(r"^https?://[^/\s]+", self.url or ""):
                raise ValueError('"url" must be an http(s) URL, e.g. https://example.com/mcp')
        return self

    @property
    def kind(self) -> Literal["stdio", "http", "sse"]:
        """How to connect: declared, or what `command`/`url` imply."""
        declared = self.transport or self.type
        if declared is not None:
            return _kind(declared)
        return "stdio" if self.command is not None else "http"

    def secrets(self) -> list[str]:
        """Every configured value that must never appear in a log line or an error."""
        values = [*self.env.values(), *self.headers.values()]
        return [value.get_secret_value() for value in values if value.get_secret_value()]


def _kind(name: str) -> Literal["stdio", "http", "sse"]:
    if name in ("stdio", "sse"):
        return "stdio" if name == "stdio" else "sse"
    return "http"


class McpConfig(BaseModel):
    """The whole file: servers by name."""

    model_config = ConfigDict(extra="forbid")

    servers: dict[str, ServerConfig] = Field(alias="mcpServers")


MESSAGES = {
    "string_type": "must be a string",
    "list_type": "must be a list",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "missing": "is missing",
}


def load_mcp_config(settings: Settings, environ: dict[str, str] | None = None) -> McpConfig | None:
    """The servers of PARLEY_MCP_CONFIG, else of ./mcp.json when there is one, else None."""
    path = settings.mcp_config
    if path is None:
        if not DEFAULT_FILE.is_file():
            return None
        path = DEFAULT_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{VARIABLE}: {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise ConfigError(f"{VARIABLE}: {path}: cannot read it ({reason})") from None
    return parse_mcp_config(text, str(path), os.environ if environ is None else environ)


def parse_mcp_config(text: str, shown: str, environ: Any) -> McpConfig:
    """`text` checked, with `${VAR}` references replaced from `environ`."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        raise ConfigError(f"{VARIABLE}: {shown}: not valid JSON ({where}: {exc.msg})") from None
    if not isinstance(raw, dict):
        raise ConfigError(f'{VARIABLE}: {shown}: must be an object with "mcpServers"')
    try:
        config = McpConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"{VARIABLE}: {shown}: {_problem(exc.errors()[0])}") from None
    for name, server in config.servers.items():
        problem = _name_problem(name) or _expand(server, environ)
        if problem:
            raise ConfigError(f'{VARIABLE}: {shown}: server "{name}": {problem}')
    return config


def _problem(error: ErrorDetails) -> str:
    """One pydantic error as an operator reads it: where, then what."""
    loc = [str(part) for part in error["loc"]]
    if error["type"] == "extra_forbidden":
        what = f'unknown key "{loc.pop()}"'
    elif error["type"] == "literal_error":
        expected = error.get("ctx", {}).get("expected", "")
        what = f"must be one of {expected}".replace("'", '"')
    elif error["type"] == "greater_than":
        what = f"must be greater than {error.get('ctx', {}).get('gt')}"
    else:
        what = MESSAGES.get(error["type"], str(error["msg"]).removeprefix("Value error, "))
    if loc[:1] == ["mcpServers"] and len(loc) >= 2:
        server, keys = loc[1], loc[2:]
        where = f'"{".".join(keys)}" ' if keys else ""
        return f'server "{server}": {where}{what}'
    if loc == ["mcpServers"] and error["type"] == "missing":
        return 'needs "mcpServers": {"NAME": {...}}'
    return ("".join(f'"{part}" ' for part in loc[:1]) + what).strip()


def _name_problem(name: str) -> str | None:
    if not SERVER_NAME.match(name) or "__" in name:
        return "the name may only use letters, digits, _ and - (no __): it starts tool names"
    if len(name) + 3 > TOOL_NAME_LIMIT:
        return f"the name is too long: {name}__TOOL must fit in {TOOL_NAME_LIMIT} characters"
    return None


def _expand(server: ServerConfig, environ: Any) -> str | None:
    """Replace `${VAR}` in env and header values; the problem if a variable is not set."""
    for field in ("env", "headers"):
        values: dict[str, SecretStr] = getattr(server, field)
        for key, value in values.items():
            missing = [v for v in REFERENCE.findall(value.get_secret_value()) if v not in environ]
            if missing:
                return f'{field} "{key}" uses ${{{missing[0]}}}, which is not set'
            expanded = REFERENCE.sub(lambda m: environ[m[1]], value.get_secret_value())
            values[key] = SecretStr(expanded)
    return None
