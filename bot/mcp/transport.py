"""Opening a connection to one MCP server the way its configuration says, and saying in one
line why a connection failed.

A stdio server is a child process that gets a minimal environment (PATH, HOME, LANG and the
few harmless names the SDK adds) plus its own `env`, never the worker's: the worker's holds
Parley's API keys and tokens. Its stderr goes to a scratch file, whose last line explains a
crash better than "connection closed". Every reason is cut to one line, with the configured
secrets and the URL's query blanked out.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import tempfile
from collections.abc import AsyncIterator
from typing import IO, Any
from urllib.parse import urlsplit

import httpx2
from mcp import MCPError, StdioServerParameters, stdio_client
from mcp.client._transport import TransportStreams
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from bot.mcp.config import ServerConfig

PASSED_ON = ("PATH", "HOME", "LANG")  # from the worker's environment to a stdio server
CONNECT_TIMEOUT = 30.0
READ_TIMEOUT = 300.0  # an HTTP server may hold a response stream open this long
REASON_LIMIT = 300
# The SDK's HTTP client logs each request's URL at INFO; some servers take a key in the query.
CHATTY_LOGGERS = ("httpx2", "mcp.client.sse", "mcp.client.streamable_http")
QUERY = re.compile(r"(\bhttps?://[^\s?#\"']+)[?#][^\s\"']*")


class HideQueries(logging.Filter):
    """Log records of the MCP SDK and its HTTP client, with URLs' queries cut off."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        hidden = QUERY.sub(r"\1?…", message)
        if hidden != message:
            record.msg, record.args = hidden, None
        return True


def hide_queries() -> None:
    """Install `HideQueries` on the SDK's loggers, once."""
    for name in CHATTY_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, HideQueries) for f in logger.filters):
            logger.addFilter(HideQueries())


class Ended(Exception):
    """The server's connection ended on its side (a process that exited, a closed stream)."""


def child_environment(config: ServerConfig) -> dict[str, str]:
    """What a stdio server's process gets in its environment."""
    passed = {name: os.environ[name] for name in PASSED_ON if name in os.environ}
    return passed | {key: value.get_secret_value() for key, value in config.env.items()}


@contextlib.asynccontextmanager
async def open_transport(config: ServerConfig, errlog: IO[str]) -> AsyncIterator[TransportStreams]:
    """The read and write streams of a new connection; closing it stops a stdio server."""
    if config.command is not None:
        params = StdioServerParameters(
            command=config.command,
            args=config.args,
            env=child_environment(config),
            cwd=config.cwd,
            encoding_error_handler="replace",
        )
        async with stdio_client(params, errlog=errlog) as streams:  # type: ignore[arg-type]
            yield streams
        return
    headers = {key: value.get_secret_value() for key, value in config.headers.items()}
    url = config.url or ""
    if config.kind == "sse":
        async with sse_client(url, headers=headers, timeout=CONNECT_TIMEOUT) as streams:
            yield streams
        return
    timeout = httpx2.Timeout(CONNECT_TIMEOUT, read=READ_TIMEOUT)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as client,
        streamable_http_client(url, http_client=client) as streams,
    ):
        yield streams


def scratch_log() -> IO[str]:
    """Where a stdio server's stderr goes for one connection."""
    return tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")


def last_line(errlog: IO[str]) -> str:
    """The last line the server wrote to its stderr, if any."""
    with contextlib.suppress(OSError, ValueError):
        errlog.seek(max(0, errlog.seek(0, os.SEEK_END) - 4096))
        lines = [line.strip() for line in errlog.read().splitlines() if line.strip()]
        return lines[-1] if lines else ""
    return ""


def leaf(exc: BaseException) -> BaseException:
    """The first real failure inside exception groups (task groups wrap them)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def failure_reason(exc: BaseException, config: ServerConfig, stderr: str = "") -> str:
    """Why a connection failed or ended, in one line without secrets."""
    exc = leaf(exc)
    if isinstance(exc, FileNotFoundError | PermissionError) and config.command is not None:
        where = f" in {config.cwd!r}" if config.cwd and exc.filename == config.cwd else ""
        reason = f"cannot start {config.command!r}{where}: {exc.strerror}"
    elif isinstance(exc, httpx2.HTTPStatusError):
        reason = f"HTTP {exc.response.status_code} from {_shown(config.url)}"
    elif isinstance(exc, httpx2.TransportError):
        reason = f"cannot reach {_shown(config.url)} ({type(exc).__name__})"
    elif isinstance(exc, MCPError):
        reason = exc.error.message
    elif isinstance(exc, Ended):
        reason = str(exc)
    elif isinstance(exc, TimeoutError):
        reason = "no answer in time"
    else:
        reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if stderr:
        reason = f"{reason}; its last words: {stderr}"
    return redact(reason, config)


def redact(text: str, config: ServerConfig) -> str:
    """`text` on one line, short, with no configured secret and no URL query in it."""
    for secret in sorted(config.secrets(), key=len, reverse=True):
        text = text.replace(secret, "***")
    if config.url and config.url != _shown(config.url):
        text = text.replace(config.url, _shown(config.url))
    text = " ".join(text.split())
    return text if len(text) <= REASON_LIMIT else text[: REASON_LIMIT - 1] + "…"


def _shown(url: Any) -> str:
    """A URL without its credentials, query or fragment (tokens live there)."""
    try:
        parts = urlsplit(str(url))
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "the server"
    return f"{parts.scheme}://{host}{port}{parts.path}"
