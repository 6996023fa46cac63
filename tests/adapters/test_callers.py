"""The rule of who may call (`adapters.web.callers`), case by case; the same rule over every
real surface, through a real proxy, is tests/integration/http/test_reach.py."""

from __future__ import annotations

import pytest
from multidict import CIMultiDict

from adapters.web.callers import BEYOND, NEEDS_TOKEN, Refusal, check, is_loopback

TOKEN = "the-api-token-" + "z" * 20
LOCAL = {"Host": "127.0.0.1:8080"}


def headers(**given: str) -> CIMultiDict[str]:
    return CIMultiDict({name.replace("_", "-"): value for name, value in given.items()})


@pytest.mark.parametrize(
    ("peer", "sent"),
    [
        ("127.0.0.1", LOCAL),
        ("::1", {"Host": "[::1]:8080"}),
        ("::ffff:127.0.0.1", {"Host": "localhost:8080"}),
        ("127.0.0.2", {"Host": "app.localhost"}),
        ("127.0.0.1", {}),  # HTTP/1.0 sends no Host
        ("127.0.0.1", {"Host": "0.0.0.0:8080"}),  # a browser on this machine, at 0.0.0.0
        ("127.0.0.1", {**LOCAL, "Origin": "http://localhost:8080"}),
    ],
)
def test_a_client_on_this_machine_is_served_without_a_token(
    peer: str, sent: dict[str, str]
) -> None:
    assert check(peer, headers(**sent), None) is None


@pytest.mark.parametrize(
    ("peer", "sent", "said"),
    [
        ("192.0.2.7", LOCAL, BEYOND),
        ("", LOCAL, BEYOND),
        ("127.0.0.1", {**LOCAL, "X-Forwarded-For": "127.0.0.1"}, "proxy (X-Forwarded-For)"),
        ("127.0.0.1", {**LOCAL, "X-Forwarded-For": "203.0.113.9, 127.0.0.1"}, "proxy"),
        ("127.0.0.1", {**LOCAL, "Forwarded": "for=127.0.0.1"}, "proxy (Forwarded)"),
        ("127.0.0.1", {**LOCAL, "X-Real-IP": "127.0.0.1"}, "proxy (X-Real-IP)"),
        ("127.0.0.1", {**LOCAL, "X-Forwarded-Proto": "https"}, "proxy"),
        ("127.0.0.1", {**LOCAL, "Via": "1.1 caddy"}, "proxy (Via)"),
        ("127.0.0.1", {"Host": "rebound.example:8080"}, "Host header"),
        ("127.0.0.1", {"Host": "127.0.0.1.example"}, "Host header"),
        ("127.0.0.1", {"Host": "[::1"}, "Host header"),
        ("127.0.0.1", {"Host": "192.168.1.5:8080"}, "Host header"),
        ("127.0.0.1", {**LOCAL, "Origin": "https://evil.example"}, "another site"),
        ("127.0.0.1", {**LOCAL, "Origin": "null"}, "another site"),
    ],
)
def test_a_client_beyond_this_machine_is_refused_without_a_token(
    peer: str, sent: dict[str, str], said: str
) -> None:
    refused = check(peer, headers(**sent), None)
    assert refused is not None and refused.status == 403
    assert said in refused.reason and BEYOND in refused.reason
    assert "\n" not in refused.reason and refused.headers == {}
    assert all(value not in refused.reason for value in sent.values())  # nothing echoed


@pytest.mark.parametrize(
    "authorization",
    [None, "", "Bearer", f"Basic {TOKEN}", f"Bearer {TOKEN}x", f"Bearer  {TOKEN}", "Bearer wrong"],
)
def test_with_a_token_configured_anything_but_the_token_is_refused(
    authorization: str | None,
) -> None:
    sent = LOCAL if authorization is None else {**LOCAL, "Authorization": authorization}
    refused = check("127.0.0.1", headers(**sent), TOKEN)  # even from this machine
    assert refused == Refusal(401, NEEDS_TOKEN)
    assert refused.headers == {"WWW-Authenticate": 'Bearer realm="parley"'}


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER"])
def test_the_token_serves_any_client_through_any_proxy(scheme: str) -> None:
    sent = headers(Authorization=f"{scheme} {TOKEN}", X_Forwarded_For="203.0.113.9")
    assert check("127.0.0.1", sent, TOKEN) is None
    assert check("203.0.113.9", sent, TOKEN) is None


@pytest.mark.parametrize(
    ("address", "loopback"),
    [("127.0.0.1", True), ("127.8.9.10", True), ("::1", True), ("::ffff:127.0.0.1", True),
     ("::ffff:10.0.0.1", False), ("10.0.0.1", False), ("0.0.0.0", False), ("localhost", False),
     ("", False), ("fe80::1%eth0", False)],
)  # fmt: skip
def test_only_a_loopback_address_is_loopback(address: str, loopback: bool) -> None:
    assert is_loopback(address) is loopback
