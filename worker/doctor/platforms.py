"""The platforms' credentials, asked of the platforms themselves: Telegram's getMe (and its
webhook's state when one is configured), Slack's auth.test (and apps.connections.open for
Socket Mode's app token).

The clients are those `parley web` builds (`make_bot`, `make_client`, on TELEGRAM_API_URL and
SLACK_API_URL), and a refusal is read by the same rules that stop `parley web`
(`refusal`): what the doctor says is what the process would meet. Each platform's SDK is
imported only where its token is set, through its adapter first (`adapters.telegram.sdk`
imports aiogram without building every type's validator): seconds a doctor of a deployment
without that platform does not spend.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from bot.config.settings import Settings
from worker.doctor.report import Finding, failed, ok, skipped, warning

if TYPE_CHECKING:
    from aiogram import Bot

TELEGRAM_STUCK = "check that TELEGRAM_API_URL answers from here (network, proxy, firewall)"
SLACK_STUCK = "check that SLACK_API_URL answers from here (network, proxy, firewall)"


def load_telegram() -> None:
    """aiogram, through the adapter that imports it the fast way (`adapters.telegram.sdk`)."""
    import adapters.telegram.service  # noqa: F401, PLC0415


def load_slack() -> None:
    """slack_sdk and slack_bolt, through the adapter."""
    import adapters.slack.service  # noqa: F401, PLC0415


def _reason(said: str) -> str:
    """A refusal's text without the variable's name in front (the fix names it)."""
    return said.split(": ", 1)[1] if ": " in said else said


async def check_telegram(settings: Settings) -> list[Finding]:
    if settings.telegram_bot_token is None:
        return [skipped("telegram", "TELEGRAM_BOT_TOKEN is not set")]
    from aiogram.exceptions import TelegramAPIError  # noqa: PLC0415

    from adapters.telegram.client import make_bot  # noqa: PLC0415 (first: aiogram, fast)
    from adapters.telegram.service import refusal  # noqa: PLC0415

    bot = make_bot(settings)
    try:
        me = await bot.get_me()
        mode = "webhook" if settings.telegram_webhook_url else "long polling"
        found = [ok("telegram", f"token accepted: @{me.username} (id {me.id}), {mode}")]
        return found + await _webhook(bot, settings)
    except TelegramAPIError as exc:
        refused = refusal(exc)
        if refused is not None:
            return [
                failed(
                    "telegram",
                    _reason(str(refused)),
                    "check TELEGRAM_BOT_TOKEN (@BotFather's /token shows it)",
                )
            ]
        return [
            failed(
                "telegram",
                f"no answer from Telegram ({type(exc).__name__})",
                f"try again; if it persists, {TELEGRAM_STUCK}",
            )
        ]
    finally:
        await bot.session.close()


async def _webhook(bot: Bot, settings: Settings) -> list[Finding]:
    """What Telegram says of the webhook it delivers to, when one is configured."""
    configured = settings.telegram_webhook_url
    if configured is None:
        return []
    info = await bot.get_webhook_info()
    if info.url != configured:
        return [
            warning(
                "telegram webhook",
                f"Telegram delivers to {info.url or 'no webhook'}, not TELEGRAM_WEBHOOK_URL",
                "start `parley web`: it sets the webhook when it connects",
            )
        ]
    if info.last_error_message:
        return [
            warning(
                "telegram webhook",
                f"Telegram's last delivery failed: {info.last_error_message} "
                f"({info.pending_update_count} updates waiting)",
                "check that TELEGRAM_WEBHOOK_URL reaches `parley web` from the "
                "internet (DNS, TLS certificate, proxy)",
            )
        ]
    return [
        ok(
            "telegram webhook",
            f"delivering to TELEGRAM_WEBHOOK_URL, {info.pending_update_count} updates waiting",
        )
    ]


async def check_slack(settings: Settings) -> list[Finding]:
    if settings.slack_bot_token is None:
        return [skipped("slack", "SLACK_BOT_TOKEN is not set")]
    from adapters.slack.client import make_client  # noqa: PLC0415

    client = make_client(settings)
    try:
        found = [
            await _slack_call(
                client.auth_test(),
                "slack",
                "SLACK_BOT_TOKEN",
                "the app's Bot User OAuth Token, xoxb-…",
            )
        ]
        app_token = settings.slack_app_token
        if app_token is not None:
            opened = client.apps_connections_open(app_token=app_token.get_secret_value())
            found.append(
                await _slack_call(
                    opened,
                    "slack app token",
                    "SLACK_APP_TOKEN",
                    "an app-level token, xapp-…, with connections:write",
                )
            )
        return found
    finally:
        if client.session is not None:
            await client.session.close()


async def _slack_call(call: Awaitable[Any], check: str, variable: str, what: str) -> Finding:
    import aiohttp  # noqa: PLC0415
    from slack_sdk.errors import SlackApiError  # noqa: PLC0415

    from adapters.slack.client import error_of, retry_after  # noqa: PLC0415
    from adapters.slack.service import refusal  # noqa: PLC0415

    try:
        answer = await call
    except SlackApiError as exc:
        refused = refusal(exc, variable)
        if refused is not None:
            return failed(check, _reason(str(refused)), f"check {variable} ({what})")
        if retry_after(exc) is not None:  # a rate limit refuses the call, not the token
            return warning(
                check,
                f"Slack rate-limited the call ({variable} was not refused)",
                "run the doctor again in a minute (apps.connections.open allows about one a "
                "minute)",
            )
        return failed(
            check,
            f"Slack answered {error_of(exc) or 'an error'}",
            f"try again; if it persists, {SLACK_STUCK}",
        )
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        return failed(check, f"no answer from Slack ({type(exc).__name__})", SLACK_STUCK)
    if variable == "SLACK_APP_TOKEN":
        return ok(check, "accepted (Socket Mode)")
    return ok(check, f"token accepted: @{answer.get('user')} in {answer.get('team')}")
