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
