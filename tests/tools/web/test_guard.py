"""The SSRF guard reads hosts the way browsers and libc do, and refuses every internal one."""

from __future__ import annotations

import ipaddress

import pytest

from bot.config.settings import ConfigError
from bot.tools.web.guard import Allowlist, Guard, Refused, normalize_host, parse_ipv4

REFUSED = [
    # loopback, in every spelling a resolver accepts
    "127.0.0.1",
    "127.0.0.1.",
    "2130706433",  # decimal
    "0177.0.0.1",  # octal
    "0x7f.1",  # hex, short form
    "0x7F000001",
    "0x7f.0x0.0.1",
    "127.1",
    "127.0.1",
    "017700000001",
    "１２７.０.０.１",  # fullwidth digits, as IDNA maps them
    "127。0。0。1",  # ideographic full stops
    "::1",
    "[::1]",
    "0:0:0:0:0:0:0:1",
    # IPv4 inside IPv6
    "::ffff:127.0.0.1",
    "[::ffff:127.0.0.1]",
    "::ffff:7f00:1",
    "::127.0.0.1",  # IPv4-compatible
    "::ffff:0:127.0.0.1",  # IPv4-translated
    "::ffff:8.8.8.8",  # mapped forms are refused whatever they wrap
    "2002:7f00:1::",  # 6to4 of 127.0.0.1
    "2002:a00:1::1",  # 6to4 of 10.0.0.1
    "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
    "64:ff9b::169.254.169.254",
    "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo, client 10.0.0.1
    # private, shared, link-local, metadata
    "10.0.0.1",
    "10.255.255.255",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "0xc0.0xa8.1.1",
    "100.64.0.1",
    "100.127.255.254",
    "169.254.0.1",
    "169.254.169.254",
    "2852039166",  # 169.254.169.254 in decimal
    "fe80::1",
    "FE80::1",
    "fd00:ec2::254",
    "fc00::1",
    "fd12:3456:789a::1",
    "metadata.google.internal",
    "METADATA.GOOGLE.INTERNAL.",
    # unspecified, multicast, reserved, broadcast, documentation
    "0.0.0.0",
    "0",
    "::",
    "224.0.0.1",
    "239.255.255.250",
    "ff02::1",
    "240.0.0.1",
    "255.255.255.255",
    "0xffffffff",
    "192.0.2.1",
    "198.51.100.7",
    "203.0.113.9",
    "2001:db8::1",
    "198.18.0.1",  # benchmarking
]

UNREADABLE = [
    "1.2.3.999",
    "1.2.3.4.5",
    "08.1",  # 8 is no octal digit
    "4294967296",  # more than 32 bits
    "256.1",
    "0x1g.1",
    "%31%32%37.0.0.1",
    "127.0.0.1%2f",
    "a..b",
    "fe80::1%eth0",
    "exa mple.com",
]

PUBLIC = [
    ("8.8.8.8", "8.8.8.8"),
    ("134744072", "134744072"),  # 8.8.8.8 in decimal: an odd spelling of a public address
    ("2606:4700::1111", "2606:4700::1111"),
    ("2002:808:808::1", "2002:808:808::1"),  # 6to4 of a public address
    ("64:ff9b::808:808", "64:ff9b::808:808"),  # NAT64 of a public address
    ("Example.COM.", "example.com"),
    ("exämple.com", "xn--exmple-cua.com"),
    ("127.0.0.1.nip.example", "127.0.0.1.nip.example"),  # a name: checked once resolved
]


@pytest.mark.parametrize("host", REFUSED)
def test_internal_addresses_are_refused_in_any_spelling(host: str) -> None:
    with pytest.raises(Refused, match=r"Refused: .* is "):
        Guard().check_host(host)


@pytest.mark.parametrize("host", UNREADABLE)
def test_a_host_that_cannot_be_read_one_way_is_refused(host: str) -> None:
    with pytest.raises(Refused, match="not"):
        Guard().check_host(host)


@pytest.mark.parametrize(("host", "normalized"), PUBLIC)
def test_public_hosts_pass_normalized(host: str, normalized: str) -> None:
    assert Guard().check_host(host) == normalized


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("2130706433", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("10.1.258", "10.1.1.2"),
        ("0x", "0.0.0.0"),
        ("1.2.3.4", "1.2.3.4"),
    ],
)
def test_numeric_hosts_are_read_as_libc_reads_them(host: str, address: str) -> None:
    assert parse_ipv4(normalize_host(host)) == ipaddress.IPv4Address(address)


async def test_every_resolved_address_is_checked() -> None:
    async def mixed(host: str, port: int) -> list[str]:
        return ["93.184.216.34", "10.0.0.7"]

    with pytest.raises(Refused, match=r"intranet.example \(10.0.0.7\) is private"):
        await Guard(resolver=mixed).resolve("intranet.example", 80)


async def test_a_public_name_resolves_to_its_first_address() -> None:
    async def public(host: str, port: int) -> list[str]:
        return ["93.184.216.34", "2606:2800:220:1::1"]

    address = await Guard(resolver=public).resolve("www.example.com", 443)
    assert address == ipaddress.ip_address("93.184.216.34")


async def test_the_allowlist_lets_named_hosts_and_networks_through() -> None:
    async def internal(host: str, port: int) -> list[str]:
        return {"wiki.corp.example": ["10.1.2.3"], "db.other.example": ["10.9.9.9"]}[host]

    allow = Allowlist.parse(["*.corp.example", "192.168.0.0/16", "fd00::/8"])
    guard = Guard(allow, internal)
    assert str(await guard.resolve("wiki.corp.example", 80)) == "10.1.2.3"
    assert str(await guard.resolve("192.168.7.7", 80)) == "192.168.7.7"
    assert str(await guard.resolve("fd00::5", 80)) == "fd00::5"
    with pytest.raises(Refused, match="private"):
        await guard.resolve("db.other.example", 80)
    with pytest.raises(Refused, match="private"):
        await guard.resolve("10.1.2.3", 80)  # the name was allowed, not its address


async def test_an_allowed_name_still_never_reaches_the_metadata_service() -> None:
    async def metadata(host: str, port: int) -> list[str]:
        return ["169.254.169.254"]

    guard = Guard(Allowlist.parse(["cloud.corp.example"]), metadata)
    with pytest.raises(Refused, match="metadata"):
        await guard.resolve("cloud.corp.example", 80)


@pytest.mark.parametrize("entry", ["10.0.0.0/33", "*.", "bad host", "http://x.example"])
def test_a_bad_allowlist_entry_is_a_config_error_naming_the_variable(entry: str) -> None:
    with pytest.raises(ConfigError, match=r"^PARLEY_FETCH_ALLOW_HOSTS: "):
        Allowlist.parse([entry])
