"""The TLS context of the process's clients of the model APIs and of MCP servers, made once.

Making an `ssl.SSLContext` reads a whole bundle of CA certificates, about 20 ms of CPU, and
httpx2 makes one for every client it builds: every model provider (a worker builds two as it
starts, one to check the configuration and one for the agent, and a process one for every
agent it builds) and every connection to an MCP server over HTTP. A context is made to be
shared by any number of connections, so this one is made on first use and kept. Every client
that uses it speaks HTTP/1.1, the protocol httpcore sets on a context as it connects, so
sharing it changes nothing for any of them. (The web tools keep one of their own, from
certifi's bundle: `bot.tools.web.pinning`.)
"""

from __future__ import annotations

import functools
import ssl

import httpx2


@functools.cache
def shared_context() -> ssl.SSLContext:
    """What httpx2 makes for `verify=True`: the system's store, or SSL_CERT_FILE or
    SSL_CERT_DIR where they are set (read once)."""
    return httpx2.create_ssl_context()
