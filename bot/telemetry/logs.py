"""How every Parley process logs: plain text by default, or one JSON object per line
(`PARLEY_LOG_FORMAT=json`) for a log collector; either way with the session and run a line
was logged in, and never a secret.

The session and run are context variables, set by the session runner around a turn, so a
line logged anywhere below it (a provider's retry, a tool's failure, a platform's refusal)
says which turn it belongs to without being handed it. Secrets are taken out of every line
by a filter on the root handler: the configured keys and tokens and the passwords in the
Redis and database URLs, wherever they appear (an SDK's error that quotes a URL with the bot
token in it, say), and a tool's own setting whose name says it holds one
(`PARLEY_TOOL_<NAME>_API_KEY`, `..._TOKEN`, `..._SECRET`, `..._PASSWORD`: `tool_secrets`).
"""

from __future__ import annotations

import contextvars
import json
import logging
import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from dotenv import dotenv_values
from pydantic import SecretStr

from bot.config.settings import TOOL_PREFIX, Settings, names_a_secret

SESSION: contextvars.ContextVar[str | None] = contextvars.ContextVar("session", default=None)
RUN: contextvars.ContextVar[str | None] = contextvars.ContextVar("run", default=None)
REDACTED = "[redacted]"
MIN_SECRET = 6  # shorter values would blank out ordinary words
TEXT = "%(asctime)s %(levelname)s %(name)s:%(where)s %(message)s"
ENV_FILE = Path(str(Settings.model_config.get("env_file")))


def tool_secrets(environ: Mapping[str, str | None] | None = None) -> list[str]:
    """The values of the tools' own settings whose names say they are secrets, from `.env`
    and the environment as `bot.assembly.tool_settings` reads them (or from `environ`)."""
    if environ is None:
        from_file = dotenv_values(ENV_FILE) if ENV_FILE.is_file() else {}
        environ = {**from_file, **os.environ}
    return [
        value
        for name, value in environ.items()
        if value and name.upper().startswith(TOOL_PREFIX) and names_a_secret(name)
    ]


def secrets_of(settings: Settings, environ: Mapping[str, str | None] | None = None) -> list[str]:
    """Every secret value the settings hold, and the tools' (`tool_secrets`, of `environ`),
    longest first (so one that contains another is taken out whole)."""
    found = [
        value.get_secret_value()
        for name in Settings.model_fields
        if isinstance(value := getattr(settings, name), SecretStr)
    ]
    found += [key.strip() for value in found if "," in value for key in value.split(",")]
    found += tool_secrets(environ)
    for url in (settings.redis_url, settings.database_url):
        try:
            found.append(urlsplit(url).password or "")
        except ValueError:
            continue
    return sorted({s for s in found if len(s) >= MIN_SECRET}, key=len, reverse=True)


class Scrub(logging.Filter):
    """Stamps a record with the turn it was logged in (at the moment it is logged, as the
    context variables then are), and takes the secrets out of its message and exception."""

    def __init__(self, secrets: list[str]) -> None:
        super().__init__()
        self.secrets = secrets

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        for secret in self.secrets:
            message = message.replace(secret, REDACTED)
            if record.exc_text:
                record.exc_text = record.exc_text.replace(secret, REDACTED)
        record.msg, record.args = message, None
        ids = {"session": SESSION.get(), "run": RUN.get()}
        record.__dict__.update(ids)
        record.where = "".join(f" {name}={value}" for name, value in ids.items() if value)
        return True


class JsonLines(logging.Formatter):
    """One JSON object per record: time, level, logger, message, the session, run and trace
    ids `Scrub` stamped it with when it was logged in a turn, and the exception's text."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if (session := getattr(record, "session", None)) is not None:
            line["session"] = session
        if (run := getattr(record, "run", None)) is not None:
            line["run"] = line["trace"] = run  # a run's trace has the run's id
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exception"] = record.exc_text
        return json.dumps(line, ensure_ascii=False)


def configure(settings: Settings) -> None:
    """The root logger's one handler, its format and its filter."""
    handler = logging.StreamHandler()
    handler.addFilter(Scrub(secrets_of(settings)))
    if settings.log_format == "json":
        handler.setFormatter(JsonLines())
    else:
        handler.setFormatter(logging.Formatter(TEXT))
    logging.basicConfig(level=settings.log_level, handlers=[handler], force=True)
