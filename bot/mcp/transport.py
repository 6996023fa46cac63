"""Opening a connection to one MCP server the way its configuration says, and saying in one
line why a connection failed.

A stdio server is a child process (`bot.mcp.stdio`) that gets a minimal environment (PATH,
HOME, LANG and the few harmless names the SDK adds) plus its own `env`, never the worker's:
the worker's holds Parley's API keys and tokens. The end of its stderr is kept, whose last
line explains a crash better than "connection closed". Every reason is cut to one line, with
the configured secrets and the URL's query blanked out.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import httpx2
from mcp import MCPError
from mcp.client._transport import TransportStreams
from mcp.client.sse import sse_client
from mcp.client.stdio import get_default_environment
from mcp.client.streamable_http import streamable_http_client

from bot import tls
from bot.mcp.config import ServerConfig
from bot.mcp.output import Garbled, LastWords
from bot.mcp.stdio import stdio_server

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
    own = {key: value.get_secret_value() for key, value in config.env.items()}
    return get_default_environment() | passed | own


@contextlib.asynccontextmanager
async def open_transport(
    config: ServerConfig, words: LastWords, output_limit: int
) -> AsyncIterator[TransportStreams]:
    """The read and write streams of a new connection; closing it stops a stdio server.
    `words` keeps the end of a stdio server's stderr; `output_limit` is the characters of a
    tool's result that the model may see, the most of one that is read."""
    if config.command is not None:
        env = child_environment(config)
        async with stdio_server(
            config.command, config.args, env, config.cwd, output_limit=output_limit, words=words
        ) as streams:
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
        httpx2.AsyncClient(headers=headers, timeout=timeout, verify=tls.shared_context()) as client,
        streamable_http_client(url, http_client=client) as streams,
    ):
        yield streams


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
    elif isinstance(exc, Ended | Garbled):
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
