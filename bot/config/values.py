"""The shapes of the settings' structured values (a permission rule, a configured task, a
suggested prompt), and the checks of the values operators write by hand: each says in one
line what is wrong, for `bot.config.settings` to name the variable in front of it.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Annotated, Any, Literal
from urllib.parse import parse_qs, urlsplit

from cryptography.fernet import Fernet
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, SecretStr, model_validator
from pydantic_settings import NoDecode

from bot.config.zones import known_zone
from bot.vocabulary.run_config import RunConfig

# A list setting read by its validator (comma-separated or JSON), not decoded as JSON first.
IdList = Annotated[list[str], NoDecode]


def fixed_name(name: str) -> Any:
    """A setting's field under a fixed, unprefixed variable name (the names other tools
    already use: REDIS_URL, TELEGRAM_BOT_TOKEN...)."""
    return Field(default=None, validation_alias=AliasChoices(name, name.lower()))


ALIAS = re.compile(r"[A-Za-z0-9._-]{1,40}")  # a model's alias in PARLEY_MODELS
YEAR_S = 365 * 24 * 3600  # longer than any wait, timeout or interval: a mistake, or infinity
REDIS_SCHEMES = ("redis", "rediss", "unix")


class PolicyRule(BaseModel):
    """One permission rule: the first rule whose tool glob and argument globs match, for
    this role, person and kind of chat, decides.

    Roles: `admin` (PARLEY_ADMINS), `user` (PARLEY_ALLOWED_USERS and the people paired;
    everyone while it is empty), `guest` (anyone else, let in by PARLEY_ALLOW_GUESTS, or in
    private by PARLEY_DM_POLICY=open). `remember: false` on an `ask` rule keeps asking
    every time: no "always allow" button. `timeout` on an `ask` rule is how long its
    approvals wait for a person, in seconds (else PARLEY_CONFIRMATION_TTL).
    """

    model_config = ConfigDict(extra="forbid")

    action: Literal["allow", "deny", "ask"]
    tool: str = "*"
    args: dict[str, str] = Field(default_factory=dict)
    role: Literal["*", "admin", "user", "guest"] = "*"
    person: str = "*"  # a glob of person ids: tg:123, slack:*
    chat: Literal["*", "private", "group"] = "*"  # group: any chat shared with others
    remember: bool = True
    timeout: float | None = Field(default=None, ge=5, le=YEAR_S)

    @model_validator(mode="after")
    def _timeout_asks(self) -> PolicyRule:
        if self.timeout is not None and self.action != "ask":
            raise ValueError("timeout is only for a rule whose action is ask")
        return self


class ConfiguredTask(BaseModel):
    """A recurring task an operator sets in PARLEY_TASKS, e.g. a daily digest in a channel:
    `{"name": "digest", "when": "0 9 * * 1-5", "session": "slack:T1:C2", "prompt": "..."}`.
    `when` is a cron expression or an interval (`every 2 hours`); `session` is where the runs
    are answered (`tg:CHAT`, `tg:CHAT:TOPIC`, `slack:TEAM:CHANNEL`, or an HTTP session);
    `config` how they are made (`bot.vocabulary.run_config.RunConfig`, as for an API run)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,100}$")
    when: str = Field(min_length=1, max_length=200)
    session: str = Field(min_length=1, max_length=300)
    prompt: str = Field(min_length=1, max_length=4000)
    timezone: str | None = None
    if_missed: Literal["skip", "run_once"] = "skip"
    config: RunConfig | None = None  # how its runs are made: an output schema, a mode…


class SuggestedPrompt(BaseModel):
    """A prompt Slack offers in a new assistant thread (PARLEY_SLACK_SUGGESTED_PROMPTS): its
    `title` on the chip, the `message` sent when it is picked; a bare string is both."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1, max_length=200)
    message: str = Field(min_length=1, max_length=4000)

    @model_validator(mode="before")
    @classmethod
    def _bare(cls, value: Any) -> Any:
        return {"title": value, "message": value} if isinstance(value, str) else value


DEFAULT_PROMPTS = [
    SuggestedPrompt(title="What can you do?", message="What can you do?"),
    SuggestedPrompt(title="Summarise a text", message="Summarise this for me:"),
    SuggestedPrompt(title="Calculate something", message="What is 2^32 / 7?"),
]


def json_value(value: Any) -> Any:
    """Decoded here rather than by pydantic-settings, whose error names no variable."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not valid JSON ({exc})") from None
    return value


def suggested_prompts(value: Any) -> Any:
    """Refused as a whole with the shape it must have, whatever is wrong in it."""
    shape = 'a JSON list of at most 4 prompts, each "text" or {"title": …, "message": …}'
    value = json_value(value)
    if not isinstance(value, list) or len(value) > 4:
        raise ValueError(f"must be {shape}")
    for item in value:
        if isinstance(item, SuggestedPrompt):
            continue  # the default
        parts = [item] if not isinstance(item, dict) else [item.get("title"), item.get("message")]
        if isinstance(item, dict) and set(item) != {"title", "message"}:
            parts = []
        if not parts or not all(isinstance(p, str) and p.strip() for p in parts):
            raise ValueError(f"must be {shape}; {json.dumps(item)[:60]} is not one")
    return value


def redis_url(value: str) -> str:
    """What arq and redis-py accept; the message never repeats the URL (its password)."""
    url = urlsplit(value)
    if url.scheme not in REDIS_SCHEMES:
        raise ValueError("not a Redis URL (redis://HOST:PORT/DB, rediss://... or unix:///PATH)")
    try:
        url.port  # noqa: B018 (parsed on access)
    except ValueError:
        raise ValueError("the port is not a number") from None
    database = parse_qs(url.query).get("db", [""])[0]
    if not database and url.scheme != "unix":
        database = url.path.lstrip("/")
    if database and not re.fullmatch(r"[0-9]{1,5}", database):  # `isdigit` takes "٣"
        raise ValueError("the database must be a number, e.g. redis://localhost:6379/0")
    if url.scheme == "unix" and not url.path:
        raise ValueError("unix:// needs the socket's path, e.g. unix:///run/redis.sock")
    return value


def http_url(value: str | None) -> str | None:
    """An endpoint: a mistyped one would fail at the first call, deep in an SDK."""
    try:
        url = urlsplit(value) if value is not None else None
        ok = url is None or (url.scheme in ("http", "https") and bool(url.hostname))
    except ValueError:
        ok = False
    if not ok:
        raise ValueError("not an http(s) URL, e.g. https://api.example.com/v1")
    return value


def model_list(value: Any) -> Any:
    """`claude-sonnet-4-5, fast=claude-haiku-4-5, local=openai:llama3.1` or a JSON list;
    an alias is letters, digits, `.`, `_` and `-`."""
    if isinstance(value, str):
        text = value.strip()
        value = json.loads(text) if text.startswith("[") else text.split(",")
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError("a comma-separated list of model names (alias=name for an alias)")
    items = [item.strip() for item in value if item.strip()]
    for item in items:
        alias, sep, name = item.partition("=")
        if sep and (not ALIAS.fullmatch(alias.strip()) or not name.strip()):
            raise ValueError(f"{item!r}: write alias=name, the alias in letters and digits")
    return items


def id_list(value: Any) -> Any:
    """`tg:1, slack:U2` or a JSON list: operators write these by hand."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            return json.loads(text)
        return [part.strip() for part in text.split(",") if part.strip()]
    return value


def recurring(tasks: list[ConfiguredTask], minimum: float | None) -> list[ConfiguredTask]:
    """Each configured task names a known zone and recurs, no more often than
    PARLEY_TASK_MIN_INTERVAL allows (as for a task made by a person or the API); names
    are unique."""
    # apscheduler's triggers are imported only where tasks are configured
    from bot.vocabulary.schedule import WhenError, check_frequency, parse_when  # noqa: PLC0415

    names = [task.name for task in tasks]
    if len(set(names)) != len(names):
        raise ValueError("two tasks have the same name")
    now = datetime.now(UTC)
    for task in tasks:
        zone = known_zone(task.timezone or "UTC")
        try:
            schedule = parse_when(task.when, zone, now)
            if minimum is not None:
                check_frequency(schedule, now, minimum)
        except WhenError as exc:
            raise ValueError(f"task {task.name!r}: {exc}") from None
        if schedule.kind == "once":
            raise ValueError(f"task {task.name!r}: `when` must recur (cron or 'every ...')")
    return tasks


def trace_keys(value: str) -> list[str]:
    """The keys `PARLEY_TRACE_KEY` names, each checked to be a Fernet key; a ValueError that
    says what a key must be otherwise (never the value)."""
    keys = [part.strip() for part in value.split(",") if part.strip()]
    if not keys:
        raise ValueError(
            "give one key or several separated by commas; `parley trace-key` makes one"
        )
    for key in keys:
        try:
            Fernet(key)
        except (ValueError, TypeError):
            raise ValueError(
                "a key is 32 bytes in URL-safe base64 (44 characters); `parley trace-key` makes one"
            ) from None
    return keys


def keys_of(secret: SecretStr | None) -> list[str]:
    """The keys a model API's key setting holds: one, or several separated by commas
    (`bot.llm.keyring`), each without the spaces around it."""
    if secret is None:
        return []
    return [key.strip() for key in secret.get_secret_value().split(",") if key.strip()]


def at_openai(url: str | None) -> bool:
    """Whether an OpenAI-compatible service's base URL is OpenAI's own (unset is)."""
    return url is None or urlsplit(url).hostname == "api.openai.com"
