"""Secrets from files: `NAME_FILE=/run/secrets/name` instead of `NAME=value`.

Docker and Kubernetes mount a secret as a file and the images that take one read the path
from a variable named after the setting with `_FILE` after it (`ANTHROPIC_API_KEY_FILE`).
A value in a variable shows in `docker inspect`, in `/proc/PID/environ` and in the
manifests; a file does not. pydantic-settings' own `secrets_dir` is another convention (one
file per setting in a folder), so this is a settings source of its own, placed in front of
the environment's (`Settings.settings_customise_sources`).

Every setting that holds a secret takes a `_FILE` variable (`secret_variables`): the fields
typed `SecretStr`, and the Redis and database URLs (their passwords). The value read becomes
the setting as if it had been set directly, so it is typed, checked and kept out of logs and
traces exactly as one from the environment is (`bot.telemetry.logs.secrets_of`).

A problem is one line that names the variable and the path, never what the file holds: both
the variable and its `_FILE` set; a file missing, unreadable, empty, not UTF-8 text, or larger
than `MAX_SECRET_FILE` (a secret is one value, not a document).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource

MAX_SECRET_FILE = 64 * 1024  # bytes
SUFFIX = "_FILE"
URL_SECRETS = ("redis_url", "database_url")  # secret for the password in them


class SecretFileError(Exception):
    """A `_FILE` variable that cannot give its setting a value: one line, for the operator."""


def holds_secret(name: str, info: FieldInfo) -> bool:
    """Whether the field `name` holds a secret: typed so, or a URL with a password in it."""
    annotation = info.annotation
    return name in URL_SECRETS or SecretStr in (annotation, *getattr(annotation, "__args__", ()))


def read_secret(variable: str, path: str) -> str:
    """The secret in the file at `path` (named by `variable`), a trailing newline left out:
    `echo key > file` writes one."""
    try:
        with Path(path).open("rb") as opened:
            data = opened.read(MAX_SECRET_FILE + 1)
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise SecretFileError(f"{variable}: cannot read {path} ({why})") from None
    if len(data) > MAX_SECRET_FILE:
        raise SecretFileError(
            f"{variable}: {path} is larger than {MAX_SECRET_FILE // 1024} KiB; a secret "
            "file holds one value"
        )
    try:
        text = data.decode("utf-8").removeprefix("\ufeff").rstrip("\r\n")
    except UnicodeDecodeError:
        raise SecretFileError(f"{variable}: {path} is not UTF-8 text") from None
    if not text.strip():
        raise SecretFileError(f"{variable}: {path} is empty")
    return text


class SecretFiles(PydanticBaseSettingsSource):
    """The secret settings whose `NAME_FILE` variable is set, each read from its file.

    `variables` are the names each secret field is set by (`secret_variables`); `sources`
    the variables as the process sees them (the environment, then `.env`), consulted for
    the `_FILE` variables and to refuse a secret given both ways."""

    def __init__(
        self,
        settings_cls: type[BaseSettings],
        variables: Mapping[str, str],
        *sources: Mapping[str, str | None],
    ) -> None:
        super().__init__(settings_cls)
        self.variables = variables
        self.given: dict[str, str] = {}
        for source in reversed(sources):  # the first source wins, as in the settings
            self.given.update({k.upper(): v for k, v in source.items() if v})

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        """Unused: `__call__` reads every field at once."""
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for field, variable in self.variables.items():
            path = self.given.get(variable + SUFFIX)
            if path is None:
                continue
            if variable in self.given:
                raise SecretFileError(
                    f"{variable} and {variable}{SUFFIX} are both set; set only one of them"
                )
            found[field] = read_secret(variable + SUFFIX, path)
        return found
