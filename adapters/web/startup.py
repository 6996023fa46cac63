"""A credential a platform refuses stops `parley web`, with one line naming the variable.

Telegram and Slack are connected in the background, so the HTTP API serves while they are out
of reach, and a network error is retried until they answer. A token they refuse will never
start working, though: retrying it forever would look like an outage. The service reports it
here instead, and `parley web` stops with the `ConfigError`.
"""

from __future__ import annotations

import asyncio

from aiohttp import web

from bot.config.settings import ConfigError

REFUSED = web.AppKey("refused_configuration", asyncio.Future[ConfigError])
# Each configured platform, and whether it has answered with its credentials accepted
# (Telegram's getMe, Slack's auth.test) since start: what /readyz reports, read from here
# rather than asked of the platform on every probe.
CONNECTED = web.AppKey("platforms_connected", dict[str, bool])


def watch_refusals(app: web.Application) -> asyncio.Future[ConfigError]:
    """The future `parley web` waits on; set up before the app starts."""
    refused: asyncio.Future[ConfigError] = asyncio.get_running_loop().create_future()
    app[REFUSED] = refused
    return refused


def refuse(app: web.Application, error: ConfigError) -> None:
    """Report a refused credential; the first one stops the process."""
    refused = app.get(REFUSED)
    if refused is not None and not refused.done():
        refused.set_result(error)


def expect(app: web.Application, platform: str) -> None:
    """A platform that is configured: not ready until `connected` says so."""
    app.setdefault(CONNECTED, {})[platform] = False


def connected(app: web.Application, platform: str) -> None:
    """The platform accepted its credentials."""
    states = app.get(CONNECTED)
    if states is not None:
        states[platform] = True
