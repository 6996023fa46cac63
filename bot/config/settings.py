"""Settings from the environment and `.env`, validated once at start.

Every process reads the same `Settings`; a bad value must stop the process with one line that
names the variable, because a traceback from deep inside pydantic tells an operator nothing.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    DirectoryPath,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)
from pydantic_settings.exceptions import SettingsError

from bot.config import values
from bot.config.platform_settings import PlatformSettings
from bot.config.pricing import Price
from bot.config.redis_reach import RedisReach
from bot.config.secret_files import SecretFileError, SecretFiles, holds_secret
from bot.config.values import (
    YEAR_S,
    ConfiguredTask,
    PolicyRule,
)
from bot.config.zones import known_zone
from bot.vocabulary.run_config import Effort, Reasoning
from bot.vocabulary.steering import SteerMode
from bot.vocabulary.voice import VoiceMode

ENV_PREFIX = "PARLEY_"
TOOL_PREFIX = ENV_PREFIX + "TOOL_"  # also the tools' own settings (`bot.tools.config`)
# A word in a tool setting's name that says its value is a secret (`PARLEY_TOOL_X_API_KEY`):
# kept out of logs, traces and the tool's own results.
_SECRET_WORD = re.compile(r"(^|_)(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTH)(_|$)")


def names_a_secret(tool_setting: str) -> bool:
    """Whether a tool setting's name (`api_key`, or the whole `PARLEY_TOOL_X_API_KEY`) says
    its value is a secret."""
    return _SECRET_WORD.search(tool_setting.upper().removeprefix(TOOL_PREFIX)) is not None


class ConfigError(Exception):
    """A configuration problem, phrased for the person who set the variable."""


IdList = values.IdList


_env = values.fixed_name


class Settings(RedisReach, PlatformSettings):
    """All of Parley's configuration; see `.env.example` for each variable."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
        env_ignore_empty=True,
        allow_inf_nan=False,  # no setting is infinite, or not a number
    )

    model: str = Field(
        default="claude-sonnet-4-5",
        validation_alias=AliasChoices("PARLEY_MODEL", "model"),
    )
    # More models than PARLEY_MODEL: an allow list (`name`, or `alias=name`), and the chain a
    # turn goes on with when a model stays overloaded or out of reach (`bot.llm.served`).
    models: Annotated[list[str], NoDecode] = Field(default_factory=list)
    fallback_models: Annotated[list[str], NoDecode] = Field(default_factory=list)
    anthropic_api_key: SecretStr | None = _env("ANTHROPIC_API_KEY")
    anthropic_base_url: str | None = _env("ANTHROPIC_BASE_URL")
    openai_api_key: SecretStr | None = _env("OPENAI_API_KEY")
    openai_base_url: str | None = _env("OPENAI_BASE_URL")
    database_url: str = Field(
        default="sqlite+aiosqlite:///./data/parley.db",
        validation_alias=AliasChoices("DATABASE_URL", "database_url"),
    )

    prices: Annotated[dict[str, Price], NoDecode] = Field(default_factory=dict)
    retention_days: float | None = Field(default=None, gt=0, le=36_500)

    max_tokens: int = Field(default=4096, ge=1)
    # Sampling: None leaves each API's default. Anthropic's models take 0 to 1, OpenAI's 0 to 2.
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    # Thinking before answering (`bot.vocabulary.run_config.Reasoning`), and how much.
    reasoning: Reasoning = "off"
    reasoning_effort: Effort = "medium"
    max_iterations: int = Field(default=20, ge=1, le=200)
    # a turn's wall clock, approvals aside
    turn_timeout: float = Field(default=180.0, gt=0, le=YEAR_S)
    context_window: int | None = Field(default=None, ge=1024)
    compact_threshold: float = Field(default=0.75, gt=0.05, le=0.95)
    compact_keep_turns: int = Field(default=3, ge=1)

    llm_attempts: int = Field(default=3, ge=1, le=10)
    llm_backoff_base: float = Field(default=1.0, ge=0, le=YEAR_S)
    llm_backoff_max: float = Field(default=10.0, ge=0, le=YEAR_S)
    llm_max_retry_after: float = Field(default=60.0, ge=0, le=YEAR_S)
    llm_timeout: float = Field(default=120.0, gt=0, le=YEAR_S)

    tool_timeout: float = Field(default=30.0, gt=0, le=YEAR_S)
    # Helpers (`delegate`): each child run's own step cap, token budget and wall clock (each
    # at most what its parent has left), how many one turn runs at once, how many it starts
    # in all, and how deep they nest (1: a helper cannot delegate).
    delegate_steps: int = Field(default=10, ge=1, le=100)
    delegate_tokens: int = Field(default=50_000, ge=100)
    delegate_timeout: float = Field(default=120.0, gt=0, le=3600)
    delegate_concurrency: int = Field(default=4, ge=1, le=64)
    helpers_per_turn: int = Field(default=8, ge=1, le=100)
    delegate_depth: int = Field(default=1, ge=0, le=4)
    tool_concurrency: int = Field(default=4, ge=1, le=64)
    tool_output_limit: int = Field(default=16_000, ge=200)
    tool_threads: int = Field(default=64, ge=1, le=4096)
    tool_processes: int = Field(default=2, ge=1, le=64)
    policy: Annotated[list[PolicyRule], NoDecode] = Field(default_factory=list)
    tool_modules: Annotated[list[str], NoDecode] = Field(default_factory=list)

    bootstrap_dir: DirectoryPath | None = None
    skills_dir: Path = Path("skills")  # and bootstrap_dir's skills/ (bot.skills)

    api_token: SecretStr | None = None
    trace_key: SecretStr | None = None  # seals runs' traces at rest (`bot.store.sealing`)
    http_host: str = "127.0.0.1"
    http_port: int = Field(default=8080, ge=1, le=65535)
    max_streams: int = Field(default=1000, ge=1)
    # Requests a second each caller of the HTTP API may make, with a burst; 0: no limit.
    api_rate: float = Field(default=50.0, ge=0, le=100_000)
    api_burst: int = Field(default=200, ge=1, le=1_000_000)
    redis_connections: int = Field(default=50, ge=2)
    redis_idle_timeout: float = Field(default=60.0, gt=0, le=YEAR_S)
    # Seconds `parley web` may take to stop on SIGTERM: under Docker's 10 s before it kills.
    shutdown_grace: float = Field(default=8.0, ge=0, le=3600)

    lease_ttl: float = Field(default=30.0, ge=1, le=YEAR_S)
    max_attempts: int = Field(default=3, ge=1)
    merge_messages: int = Field(default=10, ge=0)
    # What a message does to its person's running turn (`bot.vocabulary.steering`).
    steer_mode: SteerMode = "steer"
    confirmation_ttl: float = Field(default=600.0, ge=5, le=YEAR_S)
    # Seconds before an approval or a question expires that its person is reminded; "off".
    confirmation_remind: float | None = Field(default=120.0, ge=1, le=YEAR_S)
    sweep_interval: float = Field(default=1.0, gt=0, le=YEAR_S)
    liveness_ttl: float = Field(default=3.0, ge=0.3, le=YEAR_S)
    # arq's poll of its queue: only the backstop, a worker is rung for new work (`worker.picking`)
    poll_delay: float = Field(default=1.0, gt=0, le=YEAR_S)
    worker_sessions: int = Field(default=200, ge=1)
    timezone: str = "UTC"
    allowed_users: IdList = Field(default_factory=list)
    user_messages_per_minute: int = Field(default=20, ge=1)
    user_tokens_per_day: int | None = Field(default=None, ge=1)  # unset: no daily budget
    allow_guests: bool = False  # with allowed_users: strangers come in, as guests
    admins: IdList = Field(default_factory=list)
    # Who may talk in private chats (`adapters.chat.access`); unset: as PARLEY_ALLOWED_USERS
    # says (`allowlist` when it is set, `open` when not).
    dm_policy: Literal["allowlist", "pairing", "open"] | None = None
    pairing_code_ttl: float = Field(default=3600.0, ge=1, le=7 * 86_400)
    user_models: IdList = Field(default_factory=list)  # what people may prefer; admins: any
    # Messages of a group or channel not addressed to the bot that a turn there also sees,
    # at most (`adapters.chat.group_context`); 0: none.
    group_context: int = Field(default=0, ge=0, le=50)

    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "WARNING"
    log_format: Literal["text", "json"] = "text"

    task_min_interval: float = Field(default=300.0, ge=1, le=YEAR_S)  # before `tasks`: it reads it
    tasks: Annotated[list[ConfiguredTask], NoDecode] = Field(default_factory=list)
    tasks_per_person: int = Field(default=20, ge=1)
    task_grace: float = Field(default=600.0, ge=0, le=YEAR_S)
    # Tokens each scheduled task's runs may spend in a UTC day (0: no cap), and the model
    # quiet check-ins (`/checkin`) run on (None: the default model); `bot.tasks.spend`.
    task_tokens_per_day: int = Field(default=100_000, ge=0)
    checkin_model: str | None = Field(default=None, min_length=1, max_length=200)
    scheduler_lease: float = Field(default=6.0, ge=2, le=YEAR_S)

    mcp_config: Path | None = None  # unset: ./mcp.json when it exists
    fetch_allow_hosts: IdList = Field(default_factory=list)  # internal hosts and networks
    fetch_max_bytes: int = Field(default=2_000_000, ge=1024)
    fetch_timeout: float = Field(default=15.0, gt=0, le=YEAR_S)
    fetch_max_redirects: int = Field(default=5, ge=0, le=20)
    search_backend: Literal["searxng", "brave", "tavily"] | None = None
    search_url: str | None = None  # SearXNG's address; for Brave and Tavily, their API's
    search_api_key: SecretStr | None = None
    search_results: int = Field(default=5, ge=1, le=20)
    sandbox_cpu_seconds: int = Field(default=10, ge=1, le=3600)
    sandbox_memory_mb: int = Field(default=512, ge=64)
    sandbox_timeout: float = Field(default=20.0, gt=0, le=YEAR_S)
    sandbox_output_limit: int = Field(default=64_000, ge=1000)
    workspace_dir: Path = Path("data/workspaces")
    files_dir: Path = Path("data/files")  # what people send, by content (`bot.files.store`)
    max_files: int = Field(default=10, ge=1, le=10)  # per message (an album's most)
    max_file_mb: float = Field(default=20.0, gt=0, le=2000)  # the Bot API's download cap
    max_turn_mb: float = Field(default=50.0, gt=0, le=2000)
    # The reader processes every file goes through (`bot.files.reading`): seconds per file
    # (of CPU, and of wall clock), memory each, and how many one process runs at once.
    file_read_seconds: float = Field(default=20.0, gt=0, le=3600)
    file_read_mb: int = Field(default=512, ge=128, le=65536)
    file_readers: int = Field(default=4, ge=1, le=64)
    workspace_quota_mb: float = Field(default=50.0, gt=0, le=1_048_576)
    # Voice notes (`bot.files.voice`): transcribed only where a model is named.
    transcribe_model: str | None = Field(default=None, min_length=1, max_length=200)
    transcribe_base_url: str | None = None  # unset: OpenAI's
    transcribe_api_key: SecretStr | None = None  # unset: OPENAI_API_KEY, for OpenAI's alone
    transcribe_timeout: float = Field(default=60.0, gt=0, le=3600)
    transcribe_max_seconds: int = Field(default=600, ge=1, le=7200)
    # Recall by meaning (`bot.memory.embeddings`): `local`, the model inside Parley; `off`,
    # by words alone; another name, that model at an OpenAI-compatible `/embeddings`.
    embeddings_model: str = Field(default="local", min_length=1, max_length=200)
    embeddings_base_url: str | None = None  # unset: OpenAI's
    embeddings_api_key: SecretStr | None = None  # unset: OPENAI_API_KEY, for OpenAI's alone
    embeddings_timeout: float = Field(default=5.0, gt=0, le=300)
    # Pictures the agent makes (`generate_image`, `bot.tools.images`): offered only where a
    # model is named, at an OpenAI-compatible `/images` endpoint.
    image_model: str | None = Field(default=None, min_length=1, max_length=200)
    image_base_url: str | None = None  # unset: OpenAI's
    image_api_key: SecretStr | None = None  # unset: OPENAI_API_KEY, for OpenAI's alone
    image_timeout: float = Field(default=120.0, gt=0, le=3600)
    # Replies said aloud (`bot.session.voice`): only where a model is named, at an
    # OpenAI-compatible `/audio/speech` endpoint; what people get unless they chose (`/voice`).
    speech_model: str | None = Field(default=None, min_length=1, max_length=200)
    speech_voice: str = Field(default="alloy", min_length=1, max_length=100)
    speech_base_url: str | None = None  # unset: OpenAI's
    speech_api_key: SecretStr | None = None  # unset: OPENAI_API_KEY, for OpenAI's alone
    speech_timeout: float = Field(default=30.0, gt=0, le=3600)
    speech_max_chars: int = Field(default=1500, ge=100, le=4096)  # 4096: OpenAI's most
    voice_replies: VoiceMode = "off"
    # A day's digest per person and group chat (`bot.memory.digest`): written by this model
    # (unset: the default model; `off`: none), within so many tokens a scope and day.
    digest_model: str | None = Field(default=None, min_length=1, max_length=200)
    digest_max_tokens: int = Field(default=8000, ge=1000, le=200_000)
    # The lab (`bot.lab`): an evaluation's replays run at most this many at once.
    lab_lanes: int = Field(default=2, ge=1, le=32)
    # Files the agent sends (`send_file`, `run_python`'s ./out/): each as large as Telegram
    # takes a bot's document, and so many a turn.
    send_file_mb: float = Field(default=50.0, gt=0, le=2000)
    send_files_per_turn: int = Field(default=10, ge=0, le=100)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The secrets' `NAME_FILE` variables (`bot.config.secret_files`) before the
        environment's and `.env`'s values, which they stand in for."""
        given = [getattr(source, "env_vars", {}) for source in (env_settings, dotenv_settings)]
        files = SecretFiles(settings_cls, secret_variables(), *given)
        return init_settings, files, env_settings, dotenv_settings, file_secret_settings

    @field_validator("confirmation_remind", mode="before")
    @classmethod
    def _remind_off(cls, value: Any) -> Any:
        """`off` turns the reminder off."""
        if isinstance(value, str) and value.strip().lower() == "off":
            return None
        return value

    @field_validator("trace_key")
    @classmethod
    def _trace_keys(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            values.trace_keys(value.get_secret_value())
        return value

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        known_zone(value)
        return value

    @field_validator("tasks")
    @classmethod
    def _recurring_tasks(
        cls, value: list[ConfiguredTask], info: ValidationInfo
    ) -> list[ConfiguredTask]:
        # absent when PARLEY_TASK_MIN_INTERVAL was refused itself
        return values.recurring(value, info.data.get("task_min_interval"))

    @field_validator("prices", "policy", "tool_modules", "tasks", mode="before")
    @classmethod
    def _json(cls, value: Any) -> Any:
        return values.json_value(value)

    @field_validator("database_url")
    @classmethod
    def _database_url(cls, value: str) -> str:
        # sqlalchemy is imported only where a database is named
        from bot.config.database_url import BadDatabaseUrl, database_url  # noqa: PLC0415

        try:
            database_url(value)
        except BadDatabaseUrl as exc:
            raise ValueError(str(exc).removeprefix("DATABASE_URL: ")) from None
        return value

    @field_validator(
        "anthropic_base_url",
        "openai_base_url",
        "search_url",
        "transcribe_base_url",
        "embeddings_base_url",
        "image_base_url",
        "speech_base_url",
    )
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        return values.http_url(value)

    @field_validator("models", "fallback_models", mode="before")
    @classmethod
    def _model_list(cls, value: Any) -> Any:
        return values.model_list(value)

    @field_validator("allowed_users", "admins", "fetch_allow_hosts", "user_models", mode="before")
    @classmethod
    def _id_list(cls, value: Any) -> Any:
        return values.id_list(value)

    @field_validator("allowed_users", "admins")
    @classmethod
    def _prefixed(cls, value: list[str]) -> list[str]:
        for item in value:
            platform, _, ident = item.partition(":")
            if not platform or not ident:
                raise ValueError(f"{item!r} needs a platform prefix, e.g. tg:123 or slack:U01")
        return value

    @model_validator(mode="after")
    def _search_is_complete(self) -> Settings:
        """A search backend with what it needs: SearXNG an address, the others a key."""
        if self.search_backend == "searxng" and not self.search_url:
            raise ValueError("PARLEY_SEARCH_URL: SearXNG needs its address")
        if self.search_backend in ("brave", "tavily") and not self.search_api_key:
            raise ValueError(f"PARLEY_SEARCH_API_KEY: {self.search_backend} needs an API key")
        return self

    @model_validator(mode="after")
    def _transcription_has_a_key(self) -> Settings:
        """OpenAI's endpoint refuses every call without a key: said at start, not per voice
        note. Another endpoint (a local server) may need none."""
        if self.transcribe_model and self.transcribes_at_openai and not self.transcription_key:
            raise ValueError(
                "PARLEY_TRANSCRIBE_API_KEY: OpenAI's transcription endpoint needs a key (or "
                "set OPENAI_API_KEY, or PARLEY_TRANSCRIBE_BASE_URL for another endpoint)"
            )
        return self

    @model_validator(mode="after")
    def _embeddings_have_a_key(self) -> Settings:
        """As for voice notes: OpenAI's endpoint needs a key, another may not."""
        url = self.embeddings_base_url
        at_openai = values.at_openai(url)
        named = self.embeddings_model not in ("local", "off")
        if named and at_openai and not (self.embeddings_api_key or self.openai_api_key):
            raise ValueError(
                "PARLEY_EMBEDDINGS_API_KEY: OpenAI's embeddings endpoint needs a key (or set "
                "OPENAI_API_KEY, or PARLEY_EMBEDDINGS_BASE_URL for another endpoint)"
            )
        return self

    @model_validator(mode="after")
    def _images_have_a_key(self) -> Settings:
        """As for voice notes: OpenAI's endpoint needs a key, another may not."""
        if self.image_model and self.image_key is None and self.images_at_openai:
            raise ValueError(
                "PARLEY_IMAGE_API_KEY: OpenAI's images endpoint needs a key (or set "
                "OPENAI_API_KEY, or PARLEY_IMAGE_BASE_URL for another endpoint)"
            )
        return self

    @model_validator(mode="after")
    def _speech_has_a_key(self) -> Settings:
        """As for voice notes: OpenAI's endpoint needs a key, another may not."""
        if self.speech_model and self.speech_key is None and self.speaks_at_openai:
            raise ValueError(
                "PARLEY_SPEECH_API_KEY: OpenAI's speech endpoint needs a key (or set "
                "OPENAI_API_KEY, or PARLEY_SPEECH_BASE_URL for another endpoint)"
            )
        return self

    @property
    def speaks_at_openai(self) -> bool:
        """Whether replies are said at OpenAI's own endpoint (no other base URL set)."""
        return values.at_openai(self.speech_base_url)

    @property
    def speech_key(self) -> SecretStr | None:
        """The key sent with a reply to be said (see `key_for`)."""
        return self.key_for(self.speech_api_key, self.speaks_at_openai)

    @property
    def images_at_openai(self) -> bool:
        """Whether pictures are made at OpenAI's own endpoint (no other base URL set)."""
        return values.at_openai(self.image_base_url)

    @property
    def image_key(self) -> SecretStr | None:
        """The key sent with a picture's request (see `key_for`)."""
        return self.key_for(self.image_api_key, self.images_at_openai)

    @property
    def transcribes_at_openai(self) -> bool:
        """Whether voice notes go to OpenAI's own endpoint (no other base URL set)."""
        return values.at_openai(self.transcribe_base_url)

    @property
    def transcription_key(self) -> SecretStr | None:
        """The key sent with a voice note (see `key_for`)."""
        return self.key_for(self.transcribe_api_key, self.transcribes_at_openai)

    def key_for(self, own: SecretStr | None, at_openai: bool) -> SecretStr | None:
        """An OpenAI-compatible service's key: its own, else OPENAI_API_KEY's (its first key,
        where it holds several) for OpenAI's endpoint alone, never OpenAI's key to another
        host."""
        if own is not None or not at_openai:
            return own
        keys = values.keys_of(self.openai_api_key)
        return SecretStr(keys[0]) if keys else None

    def may_use(self, person: str) -> bool:
        """Everyone may, unless PARLEY_ALLOWED_USERS lists who (and guests are not let in);
        admins always may."""
        return self.allow_guests or self.is_user(person) or self.is_admin(person)

    def is_user(self, person: str) -> bool:
        """A user rather than a guest: listed, or anyone while no list is set."""
        return not self.allowed_users or person in self.allowed_users

    def is_admin(self, person: str) -> bool:
        return person in self.admins


def env_name(loc: str) -> str:
    """The environment variable behind an error location (a field name or one of its aliases)."""
    for name, info in Settings.model_fields.items():
        alias = info.validation_alias
        choices = alias.choices if isinstance(alias, AliasChoices) else []
        if loc == name or loc in choices:
            return str(choices[0]) if choices else ENV_PREFIX + name.upper()
    return loc.upper()


def secret_variables() -> dict[str, str]:
    """The secret settings' fields and the variables that set them, e.g. `anthropic_api_key`:
    `ANTHROPIC_API_KEY`; each may be given as a file (`bot.config.secret_files`)."""
    fields = Settings.model_fields.items()
    return {name: env_name(name) for name, info in fields if holds_secret(name, info)}


def load_settings(**overrides: Any) -> Settings:
    """Read the settings, turning a validation failure into one readable `ConfigError`."""
    try:
        return Settings(**overrides)
    except SecretFileError as exc:  # already one line that names the variable
        raise ConfigError(str(exc)) from None
    except SettingsError as exc:  # a value pydantic-settings could not decode
        field = re.search(r'field "(\w+)"', str(exc))
        raise ConfigError(f"{env_name(field[1]) if field else 'settings'}: {exc}") from None
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            message = str(error["msg"]).removeprefix("Value error, ")
            if error["loc"]:
                message = f"{env_name(str(error['loc'][0]))}: {message}"
            problems.append(message)
        raise ConfigError("; ".join(problems)) from None
