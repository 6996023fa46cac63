"""The Telegram and Slack settings: each platform's credentials, where its API is, and how
replies stream and are paced there. A part of `bot.config.settings.Settings`, which reads them
with the rest; checked here so that a token of the wrong shape, or a Slack bot with no way to
hear from Slack, stops the process with one line naming the variable.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode

from bot.config import values
from bot.config.values import DEFAULT_PROMPTS, SuggestedPrompt, fixed_name


class PlatformSettings(BaseSettings):
    """Telegram's and Slack's settings (`.env.example` says what each does)."""

    telegram_bot_token: SecretStr | None = fixed_name("TELEGRAM_BOT_TOKEN")
    telegram_api_url: str = Field(
        default="https://api.telegram.org",
        validation_alias=AliasChoices("TELEGRAM_API_URL", "telegram_api_url"),
    )
    telegram_webhook_url: str | None = fixed_name("TELEGRAM_WEBHOOK_URL")
    telegram_webhook_secret: SecretStr | None = fixed_name("TELEGRAM_WEBHOOK_SECRET")
    telegram_group_trigger: Literal["mention", "all"] = "mention"
    # How a reply streams in a private chat: a draft (finished by a message), or a message
    # edited in place as in groups, for clients that keep a stale draft painted.
    telegram_stream: Literal["draft", "edit"] = "draft"
    # 👀 on a person's message while it waits for its answer.
    telegram_reactions: bool = False
    # Approval prompts and questions in a group shown only to the person they are for.
    telegram_ephemeral_prompts: bool = False
    telegram_chat_rate: float = Field(default=1.0, gt=0, le=1000)
    telegram_group_rate: float = Field(default=20 / 60, gt=0, le=1000)
    telegram_bot_rate: float = Field(default=30.0, gt=0, le=1000)

    slack_bot_token: SecretStr | None = fixed_name("SLACK_BOT_TOKEN")
    slack_app_token: SecretStr | None = fixed_name("SLACK_APP_TOKEN")
    slack_signing_secret: SecretStr | None = fixed_name("SLACK_SIGNING_SECRET")
    slack_api_url: str = Field(
        default="https://slack.com/api/",
        validation_alias=AliasChoices("SLACK_API_URL", "slack_api_url"),
    )
    slack_rate_share: float = Field(default=0.8, gt=0, le=1)
    # Seconds a reply runs before a Stop button shows under it (a quick answer gets none).
    slack_stop_after: float = Field(default=3.0, ge=0, le=3600)
    # What a new assistant thread offers to ask: a JSON list of at most 4 (Slack's most).
    slack_suggested_prompts: Annotated[list[SuggestedPrompt], NoDecode] = Field(
        default_factory=lambda: list(DEFAULT_PROMPTS), max_length=4
    )

    @field_validator("telegram_api_url", "telegram_webhook_url", "slack_api_url")
    @classmethod
    def _platform_url(cls, value: str | None) -> str | None:
        return values.http_url(value)

    @field_validator("telegram_bot_token")
    @classmethod
    def _bot_token(cls, value: SecretStr | None) -> SecretStr | None:
        """The shape aiogram insists on, checked here so it is one line, not a traceback."""
        if value is not None and not re.fullmatch(r"\d+:\S+", value.get_secret_value()):
            raise ValueError("not a bot token (@BotFather's look like 123456789:AAH...)")
        return value

    @field_validator("slack_suggested_prompts", mode="before")
    @classmethod
    def _prompts_shape(cls, value: Any) -> Any:
        return values.suggested_prompts(value)

    @model_validator(mode="after")
    def _slack_receives_somehow(self) -> PlatformSettings:
        """A Slack bot needs a way to hear from Slack: Socket Mode, or signed HTTP events."""
        if self.slack_bot_token and not (self.slack_app_token or self.slack_signing_secret):
            raise ValueError(
                "SLACK_SIGNING_SECRET: needed for HTTP events (or set SLACK_APP_TOKEN for "
                "Socket Mode)"
            )
        return self
