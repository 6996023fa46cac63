"""Who may call Parley's HTTP surfaces: the one rule `parley web` (the API, `/metrics`, the
event streams) and `parley mcp --http` apply, so they cannot drift apart.

With PARLEY_API_TOKEN set, a request must carry `Authorization: Bearer <token>`, compared
in constant time. Without it, only a client on this machine is served, and "on this
machine" is read strictly, because a loopback peer alone proves nothing:

- A reverse proxy on the same machine (nginx, Caddy, a Kubernetes sidecar) connects from
  127.0.0.1, so every remote client behind it would look local. A request that carries any
  forwarding header (`X-Forwarded-For`, `Forwarded`, `X-Real-IP`, ...) came through a proxy
  and is refused, whatever the header says: a client that sends
  `X-Forwarded-For: 127.0.0.1` itself gets nothing for it. (A proxy that adds none of them
  cannot be told from a local client: serve such a proxy only with the token set.)
- A page of another site, open in a browser on this machine, reaches 127.0.0.1 as well:
  by DNS rebinding (its own name resolving to 127.0.0.1, seen in the `Host` header) or by a
  cross-site request (seen in the `Origin` header). Both must name this machine.

The peer address is the socket's own: neither aiohttp nor uvicorn (`proxy_headers` is off
in `worker.mcp_http`) is let rewrite it from a forwarding header. Every refusal is one line
that names what to do, and never echoes what was sent.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from ipaddress import IPv6Address, ip_address
from urllib.parse import urlsplit

# Headers a proxy adds to say whom it serves; their presence is what counts, not their value.
FORWARDING = frozenset(
    {
        "forwarded",
        "x-real-ip",
        "x-client-ip",
        "x-original-forwarded-for",
        "x-envoy-external-address",
        "true-client-ip",
        "cf-connecting-ip",
        "via",
    }
)
FORWARDING_PREFIX = "x-forwarded-"  # -for, -host, -proto, -port, -server
BEYOND = "set PARLEY_API_TOKEN to serve clients beyond this machine"
NEEDS_TOKEN = "a bearer token is required"
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="parley"'}


@dataclass(frozen=True)
class Refusal:
    """Why a request is not served: its status (401 without the right token, 403 when no
    token is configured and the client is not on this machine) and one line to answer."""

    status: int
    reason: str

    @property
    def headers(self) -> dict[str, str]:
        return dict(CHALLENGE) if self.status == 401 else {}


def bearer_matches(header: str, token: str) -> bool:
    """`Authorization: Bearer <token>` (the scheme in any case), compared in constant time."""
    scheme, _, given = header.partition(" ")
    matches = secrets.compare_digest(given.encode(), token.encode())
    return scheme.lower() == "bearer" and matches


def check_token(headers: Mapping[str, str], token: str) -> Refusal | None:
    """None when the request carries `token`; else a 401."""
    if bearer_matches(headers.get("Authorization", ""), token):
        return None
    return Refusal(401, NEEDS_TOKEN)


def check_local(peer: str | None, headers: Mapping[str, str]) -> Refusal | None:
    """None when the request comes from this machine, read as the module docstring says;
    else a 403 saying why."""
    if not is_loopback(peer or ""):
        return Refusal(403, BEYOND)
    if (proxy := forwarding_header(headers.keys())) is not None:
        return Refusal(403, f"this request came through a proxy ({proxy}); {BEYOND}")
    host = headers.get("Host")
    if host is not None and not names_this_machine(host):
        return Refusal(403, f"the Host header does not name this machine; {BEYOND}")
    origin = headers.get("Origin")
    if origin is not None and not names_this_machine(_netloc(origin)):
        return Refusal(403, f"a page of another site may not call this server; {BEYOND}")
    return None


def check(peer: str | None, headers: Mapping[str, str], token: str | None) -> Refusal | None:
    """The rule: the token when one is configured, this machine when none is."""
    return check_token(headers, token) if token is not None else check_local(peer, headers)


def is_loopback(address: str) -> bool:
    """Whether `address` (an IP, maybe IPv4 mapped into IPv6) is this machine's loopback."""
    try:
        parsed = ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(parsed, IPv6Address) and parsed.ipv4_mapped is not None:
        return parsed.ipv4_mapped.is_loopback
    return parsed.is_loopback


def forwarding_header(names: Iterable[str]) -> str | None:
    """The first of `names` a proxy adds, as sent; None when there is none."""
    for name in names:
        lowered = name.lower()
        if lowered in FORWARDING or lowered.startswith(FORWARDING_PREFIX):
            return name
    return None


def names_this_machine(netloc: str) -> bool:
    """Whether a `Host` value (`host[:port]`) names this machine: `localhost` (and its
    subdomains, which browsers resolve to loopback themselves), a loopback address, or the
    unspecified one (`0.0.0.0` reaches this machine). Any other name could be one that an
    attacker's DNS points at 127.0.0.1."""
    try:
        name = urlsplit(f"//{netloc}").hostname or ""
    except ValueError:
        return False
    name = name.rstrip(".")
    if name == "localhost" or name.endswith(".localhost") or is_loopback(name):
        return True
    return name in ("0.0.0.0", "::")


def _netloc(origin: str) -> str:
    """The `host[:port]` of an `Origin` value; "" for `null` or anything unreadable."""
    try:
        return urlsplit(origin).netloc
    except ValueError:
        return ""
