"""What `web_fetch` may connect to: public addresses only, unless the operator says otherwise.

A model that can fetch any URL can be talked (by a page, or a person) into fetching the
worker's own network: a cloud metadata service that hands out credentials, an admin panel on
localhost, a database on 10.0.0.5. So every host is checked twice. Before anything is sent,
the host as written in the URL is read the way a browser or libc would read it (`2130706433`,
`0177.0.0.1`, `0x7f.1` and `127.1` all mean 127.0.0.1), and a host that could be read two
ways is refused rather than guessed at. Then, when the connection is made, the name is
resolved, every address it resolves to is checked, and the connection goes to the address
that was checked (`bot.tools.web.pinning`), so a DNS answer that changes in between (DNS
rebinding) cannot sneak a private address past the check.

`PARLEY_FETCH_ALLOW_HOSTS` lets an operator open the door for their own internal hosts: host
names (`wiki.corp.example`, `*.corp.example`) and networks (`10.1.0.0/16`).
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass

from bot.config.settings import ConfigError
from bot.tools.base import ToolError

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]

# Names that reach a cloud provider's metadata service whatever DNS says elsewhere.
METADATA_NAMES = frozenset({"metadata.google.internal", "metadata.goog", "metadata"})
METADATA_ADDRESSES = frozenset(
    {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
)
NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
DOCUMENTATION = tuple(
    ipaddress.ip_network(net)
    for net in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32")
)
NUMBER = re.compile(r"^(0[xX][0-9a-fA-F]*|[0-9]+)$")
HOST_CHARACTERS = re.compile(r"^[a-z0-9._-]+$")


class Refused(ToolError):
    """A URL or address the guard will not let `web_fetch` reach; said to the model as is."""


async def system_resolver(host: str, port: int) -> list[str]:
    """The addresses the system's resolver gives, looked up without blocking the loop."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise Refused(f"Cannot resolve the host name {host!r}: {exc.strerror}.") from None
    return [str(info[4][0]) for info in infos]


def normalize_host(host: str) -> str:
    """The host as a resolver will see it: lowercase ASCII (IDNA), one trailing dot dropped.
    Characters a URL parser might read differently (`%`, `\\`, spaces) are refused."""
    name = host.strip("[]") if host.startswith("[") else host
    if ":" in name:  # an IPv6 literal; a zone (`%eth0`) is refused below
        if not re.fullmatch(r"[0-9a-fA-F:.]+", name):
            raise Refused(f"The host {host!r} is not an address this tool can read safely.")
        return name.lower()
    if not name.isascii():
        try:
            name = name.encode("idna").decode("ascii")
        except UnicodeError:
            raise Refused(f"The host {host!r} is not a valid host name.") from None
    name = name.lower()
    if name.endswith("."):
        name = name[:-1]
    if not name or not HOST_CHARACTERS.match(name) or ".." in name or name.startswith("."):
        raise Refused(f"The host {host!r} is not a valid host name.")
    return name


def _ipv4_number(part: str) -> int | None:
    """One part of a dotted address as browsers read it: 0x.. hex, 0.. octal, else decimal."""
    if part[:2] in ("0x", "0X"):
        digits, base = part[2:], 16
        if not digits:
            return 0
    elif len(part) > 1 and part.startswith("0"):
        digits, base = part[1:], 8
    else:
        digits, base = part, 10
    try:
        return int(digits, base)
    except ValueError:
        return None


def parse_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """`host` (normalized) as an IPv4 address in any spelling libc accepts, or None when it
    is a name. A host whose last label is a number is an address or nothing: `1.2.3.999`
    or `08.1` is refused, never looked up as a name."""
    parts = host.split(".")
    if not NUMBER.match(parts[-1]):
        return None
    numbers = [_ipv4_number(part) if NUMBER.match(part) else None for part in parts]
    if len(parts) > 4 or any(n is None for n in numbers):
        raise Refused(f"The host {host!r} looks like an IP address but is not a valid one.")
    values = [n for n in numbers if n is not None]
    *head, last = values
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(values)):
        raise Refused(f"The host {host!r} looks like an IP address but is not a valid one.")
    value = last
    for index, number in enumerate(head):
        value += number << (8 * (3 - index))
    return ipaddress.IPv4Address(value)


def literal_address(host: str) -> Address | None:
    """The address a normalized host spells, or None for a name."""
    if ":" in host:
        try:
            return ipaddress.IPv6Address(host)
        except ValueError:
            raise Refused(f"The host {host!r} is not a valid IPv6 address.") from None
    return parse_ipv4(host)


def wrapped_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address of a mapped (`::ffff:a.b.c.d`), translated (`::ffff:0:a.b.c.d`) or
    compatible (`::a.b.c.d`) IPv6 address: a socket may carry these to the IPv4 host."""
    value = int(address)
    if value >> 32 in (0, 0xFFFF, 0xFFFF0000) and value > 1:
        return ipaddress.IPv4Address(value & 0xFFFFFFFF)
    return None


def embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses a 6to4, NAT64 or Teredo address is routed on to."""
    found: list[ipaddress.IPv4Address] = []
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if any(address in network for network in NAT64):
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    if address.teredo is not None:
        found.extend(address.teredo)
    return found


def _kind(address: Address) -> str | None:
    """What is wrong with reaching `address`, or None if it is an ordinary public one."""
    if address in METADATA_ADDRESSES:
        return "a cloud metadata address"
    checks = (
        ("unspecified", address.is_unspecified),
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("shared (CGNAT)", address in ipaddress.ip_network("100.64.0.0/10")),
        ("unique-local", address in ipaddress.ip_network("fc00::/7")),
        ("reserved", address.is_reserved),
        ("a documentation address", any(address in net for net in DOCUMENTATION)),
        ("private", address.is_private),
        ("not public", not address.is_global),
    )
    return next((name for name, hit in checks if hit), None)


def problem(address: Address) -> str | None:
    """Why `address` may not be fetched from, the IPv4 address inside an IPv6 one included.
    A NAT64 address is judged by its IPv4 address alone: DNS64 gives one for every name."""
    if isinstance(address, ipaddress.IPv6Address):
        if (wrapped := wrapped_ipv4(address)) is not None:
            return f"an IPv6 address wrapping the IPv4 address {wrapped}"
        for inner in embedded_ipv4(address):
            if (kind := _kind(inner)) is not None:
                return f"{kind} (as {inner} inside an IPv6 address)"
        if any(address in network for network in NAT64):
            return None
    return _kind(address)


@dataclass(frozen=True)
class Allowlist:
    """The operator's exceptions: exact names, `*.` suffixes and networks."""

    names: frozenset[str] = frozenset()
    suffixes: tuple[str, ...] = ()
    networks: tuple[Network, ...] = ()

    @classmethod
    def parse(cls, entries: Iterable[str]) -> Allowlist:
        """Read PARLEY_FETCH_ALLOW_HOSTS; a bad entry is a one-line ConfigError."""
        names: set[str] = set()
        suffixes: list[str] = []
        networks: list[Network] = []
        for entry in entries:
            text = entry.strip()
            try:
                networks.append(ipaddress.ip_network(text, strict=False))
                continue
            except ValueError:
                pass
            wildcard = text.startswith("*.")
            try:
                name = normalize_host(text[2:] if wildcard else text)
                if literal_address(name) is not None:
                    raise Refused(text)
            except Refused:
                raise ConfigError(
                    f"PARLEY_FETCH_ALLOW_HOSTS: {entry!r} is neither a host name, "
                    "a *.domain pattern nor an IP network"
                ) from None
            (suffixes.append("." + name) if wildcard else names.add(name))
        return cls(frozenset(names), tuple(suffixes), tuple(networks))

    def allows_name(self, host: str) -> bool:
        return host in self.names or host.endswith(self.suffixes)

    def allows_address(self, address: Address) -> bool:
        return any(address in network for network in self.networks)


@dataclass(frozen=True)
class Guard:
    """The checks for one fetch: the allowlist, and the resolver (a seam for tests)."""

    allow: Allowlist = Allowlist()
    resolver: Resolver = system_resolver

    def check_host(self, host: str) -> str:
        """The normalized host, if it may be tried at all: a literal address is checked
        here, a name when it is resolved (`resolve`)."""
        name = normalize_host(host)
        address = literal_address(name)
        if address is not None:
            self.check_address(address, host)
        elif name in METADATA_NAMES and not self.allow.allows_name(name):
            raise Refused(f"Refused: {host} is a cloud metadata service.")
        return name

    def check_address(self, address: Address, host: str, *, named: bool = False) -> None:
        """Refuse `address` unless it is public or the operator allowed it. A name the
        operator allowed may lead anywhere but to a metadata address."""
        if self.allow.allows_address(address):
            return
        if named and self.allow.allows_name(host) and address not in METADATA_ADDRESSES:
            return
        if (kind := problem(address)) is not None:
            where = host if str(address) == host else f"{host} ({address})"
            raise Refused(
                f"Refused: {where} is {kind}; only public addresses may be fetched "
                "(an operator can allow internal hosts with PARLEY_FETCH_ALLOW_HOSTS)."
            )

    async def resolve(self, host: str, port: int) -> Address:
        """The one address to connect to for `host`: every address it resolves to must
        pass, so a name with one public and one private answer is refused outright."""
        name = self.check_host(host)
        literal = literal_address(name)
        if literal is not None:
            return literal
        answers = await self.resolver(name, port)
        addresses: list[Address] = []
        for answer in answers:
            try:
                addresses.append(ipaddress.ip_address(answer))
            except ValueError:  # a scoped address such as fe80::1%eth0
                raise Refused(f"Refused: {host} resolves to {answer!r}.") from None
        if not addresses:
            raise Refused(f"Cannot resolve the host name {host!r}: no addresses.")
        for address in addresses:
            self.check_address(address, name, named=True)
        return addresses[0]
