"""How Redis is reached beyond its URL: TLS files (`rediss://`) and Redis Sentinel.

REDIS_URL keeps what redis-py reads from a URL (scheme, password, user, database); what a URL
cannot carry well (paths to a CA, a client certificate and its key; a list of sentinels) is
in settings of its own, read strictly here so that a typo stops the process with one line
naming the variable, rather than a TLS handshake failing later in every process:

- PARLEY_REDIS_TLS_CA, PARLEY_REDIS_TLS_CERT, PARLEY_REDIS_TLS_KEY: PEM files; only with
  `rediss://`; the certificate and its key together. PARLEY_REDIS_TLS_CHECK_HOSTNAME (on by
  default) checks that the server's certificate names the host connected to. The server's
  certificate is always verified (against the CA file, else the system's CAs).
- PARLEY_REDIS_SENTINELS=host1:26379,host2:26379 and PARLEY_REDIS_SENTINEL_MASTER: every
  process asks the sentinels where the master is, and asks again after a failover. REDIS_URL
  still gives the master's password, user, database and TLS (its host is not used);
  PARLEY_REDIS_SENTINEL_PASSWORD is the sentinels' own, when they require one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

SENTINEL_PORT = 26379
MASTER_NAME = re.compile(r"[A-Za-z0-9._-]{1,100}")
_HOST = re.compile(r"[A-Za-z0-9._-]{1,253}")


@dataclass(frozen=True)
class RedisTls:
    """The TLS files and checks for `rediss://`; none set: the system's CAs."""

    ca: Path | None = None
    cert: Path | None = None
    key: Path | None = None
    check_hostname: bool = True

    def kwargs(self) -> dict[str, Any]:
        """What redis-py's SSL connections take."""
        return {
            "ssl_ca_certs": str(self.ca) if self.ca else None,
            "ssl_certfile": str(self.cert) if self.cert else None,
            "ssl_keyfile": str(self.key) if self.key else None,
            "ssl_cert_reqs": "required",
            "ssl_check_hostname": self.check_hostname,
        }


@dataclass(frozen=True)
class RedisSentinel:
    """The sentinels that know where the master named `master` is."""

    addresses: tuple[tuple[str, int], ...]
    master: str
    password: str | None = None


def address(text: str) -> tuple[str, int]:
    """`host:port`, `host` (port 26379) or `[v6]:port`, as a pair; one line if it is not."""
    text = text.strip()
    try:
        parts = urlsplit(f"//{text}")
        host, port = parts.hostname, parts.port
    except ValueError:
        raise ValueError(f"{text!r} is not host:port") from None
    if not host or parts.username or parts.path or parts.query or parts.fragment:
        raise ValueError(f"{text!r} is not host:port")
    if ":" not in host and not _HOST.fullmatch(host):
        raise ValueError(f"{text!r} is not host:port")
    return host, port or SENTINEL_PORT


def sentinel_list(value: Any) -> Any:
    """PARLEY_REDIS_SENTINELS as written (comma-separated) or as a list, each entry checked."""
    if isinstance(value, str):
        value = [part for part in value.split(",") if part.strip()]
    if isinstance(value, list):
        for item in value:
            address(str(item))
        return [str(item).strip() for item in value]
    return value


def check_tls(url: str, tls: RedisTls) -> None:
    """The TLS settings fit REDIS_URL and name readable files."""
    named = {
        "PARLEY_REDIS_TLS_CA": tls.ca,
        "PARLEY_REDIS_TLS_CERT": tls.cert,
        "PARLEY_REDIS_TLS_KEY": tls.key,
    }
    given = [name for name, path in named.items() if path is not None]
    if given and urlsplit(url).scheme != "rediss":
        raise ValueError(f"{given[0]}: set, but REDIS_URL does not start with rediss://")
    if (tls.cert is None) != (tls.key is None):
        missing = "PARLEY_REDIS_TLS_KEY" if tls.key is None else "PARLEY_REDIS_TLS_CERT"
        raise ValueError(f"{missing}: a client certificate and its key go together")
    for name, path in named.items():
        if path is not None and not path.is_file():
            raise ValueError(f"{name}: no readable file at {path}")


def check_sentinel(url: str, sentinels: list[str], master: str | None) -> None:
    """Sentinels and a master's name, both or neither, over TCP."""
    if sentinels and not master:
        raise ValueError("PARLEY_REDIS_SENTINEL_MASTER: the sentinels need the master's name")
    if master and not sentinels:
        raise ValueError("PARLEY_REDIS_SENTINELS: the master's name needs sentinels to ask")
    if master and not MASTER_NAME.fullmatch(master):
        raise ValueError("PARLEY_REDIS_SENTINEL_MASTER: letters, digits, '.', '_' and '-' only")
    if sentinels and urlsplit(url).scheme == "unix":
        raise ValueError("REDIS_URL: Sentinel reaches the master over TCP, not unix://")
