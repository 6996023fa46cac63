"""Where Redis is and how every process reaches it: REDIS_URL, the TLS files for
`rediss://` and Redis Sentinel (`bot.config.redis_options` reads and checks them). A part of
`bot.config.settings.Settings`; `worker.redis_connections` makes the connections from it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings

from bot.config import redis_options, values
from bot.config.redis_options import RedisSentinel, RedisTls
from bot.config.values import IdList


class RedisReach(BaseSettings):
    """REDIS_URL and what a URL cannot carry well (`bot.config.redis_options`)."""

    redis_url: str = Field(
        default="redis://localhost:6379/0",
        validation_alias=AliasChoices("REDIS_URL", "redis_url"),
    )
    redis_tls_ca: Path | None = None
    redis_tls_cert: Path | None = None
    redis_tls_key: Path | None = None
    redis_tls_check_hostname: bool = True
    redis_sentinels: IdList = Field(default_factory=list)
    redis_sentinel_master: str | None = None
    redis_sentinel_password: SecretStr | None = None

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, value: str) -> str:
        return values.redis_url(value)

    @field_validator("redis_sentinels", mode="before")
    @classmethod
    def _sentinels(cls, value: Any) -> Any:
        return redis_options.sentinel_list(value)

    @model_validator(mode="after")
    def _redis_reachable(self) -> RedisReach:
        """TLS files that fit REDIS_URL, sentinels with their master's name."""
        redis_options.check_tls(self.redis_url, self.redis_tls)
        redis_options.check_sentinel(
            self.redis_url, self.redis_sentinels, self.redis_sentinel_master
        )
        return self

    @property
    def redis_tls(self) -> RedisTls:
        return RedisTls(
            self.redis_tls_ca,
            self.redis_tls_cert,
            self.redis_tls_key,
            self.redis_tls_check_hostname,
        )

    @property
    def redis_sentinel(self) -> RedisSentinel | None:
        """The sentinels to ask for the master, if Redis is reached through them."""
        if not self.redis_sentinels or self.redis_sentinel_master is None:
            return None
        password = self.redis_sentinel_password
        return RedisSentinel(
            tuple(redis_options.address(item) for item in self.redis_sentinels),
            self.redis_sentinel_master,
            password.get_secret_value() if password is not None else None,
        )
