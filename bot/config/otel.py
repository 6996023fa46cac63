"""OpenTelemetry export, configured by the variables every OpenTelemetry SDK reads.

Operators already set `OTEL_EXPORTER_OTLP_ENDPOINT` (or `…_TRACES_ENDPOINT`), its headers,
`OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` for the rest of their services, so Parley
reads the same names, with the meanings the OpenTelemetry specification gives them, rather
than names of its own. Without an endpoint nothing is exported and nothing is loaded.

Only OTLP over HTTP with protobuf is spoken (the gRPC exporter would double the image's
dependencies for no gain a collector does not already offer); asking for another protocol
is a configuration error, as is any other bad value: one line naming the variable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit, urlunsplit

from dotenv import dotenv_values

from bot.config.settings import ConfigError

ENDPOINT = "OTEL_EXPORTER_OTLP_ENDPOINT"
TRACES_ENDPOINT = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
HEADERS = "OTEL_EXPORTER_OTLP_HEADERS"
TRACES_HEADERS = "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
PROTOCOL = "OTEL_EXPORTER_OTLP_PROTOCOL"
TRACES_PROTOCOL = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
TIMEOUT = "OTEL_EXPORTER_OTLP_TIMEOUT"
TRACES_TIMEOUT = "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"
SERVICE_NAME = "OTEL_SERVICE_NAME"
RESOURCE_ATTRIBUTES = "OTEL_RESOURCE_ATTRIBUTES"
CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
SDK_DISABLED = "OTEL_SDK_DISABLED"
TRACES_EXPORTER = "OTEL_TRACES_EXPORTER"

SPOKEN = "http/protobuf"
TRACES_PATH = "/v1/traces"  # appended to the base endpoint, as the specification says


@dataclass(frozen=True)
class OtelConfig:
    """Where and how to export runs' traces. `headers` may hold an API key: it is sent,
    never logged (`shown_endpoint` is what a log line may say of where spans go)."""

    endpoint: str
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    service_name: str = "parley"
    resource: Mapping[str, str] = field(default_factory=dict)
    capture_content: bool = False
    timeout_s: float = 10.0

    @property
    def shown_endpoint(self) -> str:
        """The endpoint without any credentials or query it may carry."""
        parts = urlsplit(self.endpoint)
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{parts.hostname}{port}{parts.path}"


def otel_config(environ: Mapping[str, str] | None = None) -> OtelConfig | None:
    """The export's configuration from `environ` (by default the process's environment over
    `.env`, as the settings read them), or None when no endpoint is set, the SDK is
    disabled, or the traces exporter is `none`."""
    if environ is None:
        environ = {**_dotenv(), **os.environ}
    env = {k: v.strip() for k, v in environ.items()}
    disabled = _flag(env, SDK_DISABLED)
    exporter = env.get(TRACES_EXPORTER, "") or "otlp"
    if exporter not in ("otlp", "none"):
        raise ConfigError(f"{TRACES_EXPORTER}: only otlp (or none) is supported, not {exporter!r}")
    endpoint = _endpoint(env)
    capture = _flag(env, CAPTURE_CONTENT)
    if disabled or exporter == "none" or endpoint is None:
        return None
    protocol = env.get(TRACES_PROTOCOL) or env.get(PROTOCOL) or SPOKEN
    if protocol != SPOKEN:
        name = TRACES_PROTOCOL if env.get(TRACES_PROTOCOL) else PROTOCOL
        raise ConfigError(f"{name}: only {SPOKEN} is supported, not {protocol!r}")
    headers_name = TRACES_HEADERS if env.get(TRACES_HEADERS) else HEADERS
    resource = pairs(RESOURCE_ATTRIBUTES, env.get(RESOURCE_ATTRIBUTES, ""))
    return OtelConfig(
        endpoint=endpoint,
        headers=pairs(headers_name, env.get(headers_name, ""), secret=True),
        service_name=env.get(SERVICE_NAME) or resource.get("service.name") or "parley",
        resource=resource,
        capture_content=capture,
        timeout_s=_timeout(env),
    )


def _dotenv() -> dict[str, str]:
    """The OpenTelemetry variables of `.env` in the working directory, if there is one."""
    found = dotenv_values(".env") if os.path.isfile(".env") else {}
    return {k: v for k, v in found.items() if k.startswith("OTEL_") and v is not None}


def _endpoint(env: Mapping[str, str]) -> str | None:
    """The traces endpoint: `…_TRACES_ENDPOINT` as it is, else the base endpoint with
    `/v1/traces` added to its path."""
    if traces := env.get(TRACES_ENDPOINT):
        return _url(TRACES_ENDPOINT, traces)
    if base := env.get(ENDPOINT):
        parts = urlsplit(_url(ENDPOINT, base))
        return urlunsplit(parts._replace(path=parts.path.rstrip("/") + TRACES_PATH))
    return None


def _url(name: str, value: str) -> str:
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018  (a port that is not a number raises here)
    except ValueError:
        raise ConfigError(f"{name}: not a URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{name}: must be an http:// or https:// URL with a host")
    return value


def pairs(name: str, value: str, *, secret: bool = False) -> dict[str, str]:
    """`key=value,key2=value2` (each part URL-encoded), as the OpenTelemetry variables
    write them. A malformed pair is named in the error, unless it may hold a secret."""
    found: dict[str, str] = {}
    for index, item in enumerate(part for part in value.split(",") if part.strip()):
        key, sep, val = item.partition("=")
        if not sep or not key.strip():
            which = f"item {index + 1}" if secret else repr(item.strip())
            raise ConfigError(f"{name}: {which} is not key=value")
        found[unquote(key.strip())] = unquote(val.strip())
    return found


def _flag(env: Mapping[str, str], name: str) -> bool:
    value = env.get(name, "").lower()
    if value in ("", "false"):
        return False
    if value == "true":
        return True
    raise ConfigError(f"{name}: must be true or false, not {value!r}")


def _timeout(env: Mapping[str, str]) -> float:
    """`…_TIMEOUT` in milliseconds, as the specification has it (10 s by default)."""
    name = TRACES_TIMEOUT if env.get(TRACES_TIMEOUT) else TIMEOUT
    value = env.get(name, "")
    if not value:
        return 10.0
    try:
        millis = float(value)
    except ValueError:
        millis = -1.0
    if not 0 < millis < 3_600_000:
        raise ConfigError(f"{name}: must be a number of milliseconds, more than 0")
    return millis / 1000
