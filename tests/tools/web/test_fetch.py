"""web_fetch against real local servers: what it must never reach, and the limits it keeps.

Every refusal is checked twice: by the error, and by a trap listening where the fetch would
have gone, which must have seen no connection at all.
"""

from __future__ import annotations

import logging
import ssl
import time
from collections.abc import AsyncIterator, Iterable
from typing import Any

import httpcore
import pytest

from bot.assembly.tool_settings import fetch_limits
from bot.config.settings import Settings
from bot.tools.base import TemporaryFailure, ToolError
from bot.tools.web import pinning
from bot.tools.web.config import FetchLimits
from bot.tools.web.extract import render
from bot.tools.web.fetch import Fetcher
from bot.tools.web.guard import Refused, Resolver
from bot.tools.web.pinning import SocketOption
from tests.tools.web.servers import PageServer, Trap, ipv6_loopback

pytestmark = pytest.mark.e2e
LOCAL = ["127.0.0.1/32"]  # the page server's address, allowed as an operator would
PUBLIC = "93.184.216.34"


@pytest.fixture
async def pages() -> AsyncIterator[PageServer]:
    async with PageServer() as server:
        yield server


@pytest.fixture
async def trap() -> AsyncIterator[Trap]:
    async with Trap("127.0.0.1") as server:
        yield server


def limits(**settings: Any) -> FetchLimits:
    """`web_fetch`'s limits as a worker builds them from these settings."""
    return fetch_limits(Settings(_env_file=None, **settings))


def resolving(*answers: list[str]) -> tuple[list[str], Resolver]:
    """A resolver giving `answers` in turn (the last one from then on), and its log."""
    asked: list[str] = []

    async def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        return answers[min(len(asked), len(answers)) - 1]

    return asked, resolve


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "2130706433", "0177.0.0.1", "0x7f.1", "127.1", "[::ffff:127.0.0.1]", "localhost"],
)
async def test_loopback_in_any_spelling_is_never_connected_to(trap: Trap, host: str) -> None:
    with pytest.raises(Refused, match="Refused: "):
        await Fetcher(limits()).fetch(f"http://{host}:{trap.port}/admin")
    assert trap.hits == []


@pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback here")
async def test_ipv6_loopback_is_never_connected_to() -> None:
    async with Trap("::1") as six:
        for url in (f"http://[::1]:{six.port}/", f"http://[0:0:0:0:0:0:0:1]:{six.port}/"):
            with pytest.raises(Refused, match="loopback"):
                await Fetcher(limits()).fetch(url)
        assert six.hits == []


async def test_a_name_that_resolves_to_a_private_address_is_refused(trap: Trap) -> None:
    asked, resolver = resolving(["127.0.0.1"])
    with pytest.raises(Refused, match=r"intranet.example \(127.0.0.1\) is loopback"):
        await Fetcher(limits(), resolver=resolver).fetch(f"http://intranet.example:{trap.port}/")
    assert asked == ["intranet.example"]
    assert trap.hits == []


class Relay(httpcore.AsyncNetworkBackend):
    """Stands in for the internet: a connection to PUBLIC goes to a local server on
    127.0.0.2 instead; any other address is connected to as it is."""

    def __init__(self) -> None:
        self.network = httpcore.AnyIOBackend()
        self.addresses: list[str] = []

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's signature)
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self.addresses.append(host)
        target = "127.0.0.2" if host == PUBLIC else host
        return await self.network.connect_tcp(target, port, timeout, local_address)

    async def sleep(self, seconds: float) -> None:
        await self.network.sleep(seconds)


async def test_dns_rebinding_cannot_switch_the_address_after_the_check(trap: Trap) -> None:
    """The name resolves to a public address once, and to 127.0.0.1 on every later look-up.
    A fetch that looked the name up again to connect would land in the trap (same port on
    127.0.0.1); the pinned one reaches the "public" server."""
    async with PageServer("127.0.0.2", trap.port) as public:
        asked, resolver = resolving([PUBLIC], ["127.0.0.1"])
        relay = Relay()
        fetcher = Fetcher(limits(), resolver=resolver, network=relay)
        page = await fetcher.fetch(f"http://rebind.example:{trap.port}/text")
        assert page.body == b"plain words\nsecond line"
        assert public.counts == {"/text": 1}
        assert relay.addresses == [PUBLIC]
        assert asked == ["rebind.example"]
        assert trap.hits == []


@pytest.mark.parametrize(
    "target", ["127.0.0.2", "2130706434", "0177.0.0.2", "[::ffff:127.0.0.2]", "127.2"]
)
async def test_a_redirect_from_an_allowed_server_to_a_private_one_is_refused(
    pages: PageServer, target: str
) -> None:
    async with Trap("127.0.0.2") as private:
        pages.redirect_to = f"http://{target}:{private.port}/secret"
        with pytest.raises(Refused, match="Refused: "):
            await Fetcher(limits(fetch_allow_hosts=LOCAL)).fetch(f"{pages.url}/away")
        assert pages.counts == {"/away": 1}
        assert private.hits == []


async def test_a_redirect_to_another_scheme_is_refused(pages: PageServer) -> None:
    pages.redirect_to = "file:///etc/passwd"
    with pytest.raises(ToolError, match="Only http and https"):
        await Fetcher(limits(fetch_allow_hosts=LOCAL)).fetch(f"{pages.url}/away")


async def test_redirect_loops_and_long_chains_stop(pages: PageServer) -> None:
    fetcher = Fetcher(limits(fetch_allow_hosts=LOCAL))
    with pytest.raises(ToolError, match="redirects in a loop"):
        await fetcher.fetch(f"{pages.url}/loop/a")
    assert pages.counts == {"/loop/a": 1, "/loop/b": 1}
    page = await fetcher.fetch(f"{pages.url}/chain/5")  # the default limit is 5
    assert page.body == b"end of the chain"
    assert page.url.endswith("/chain/0")
    pages.counts.clear()
    with pytest.raises(ToolError, match=r"Too many redirects \(more than 5\)"):
        await fetcher.fetch(f"{pages.url}/chain/6")
    assert "/chain/0" not in pages.counts
    assert sum(pages.counts.values()) == 6


async def test_a_huge_page_is_cut_at_the_byte_limit(pages: PageServer) -> None:
    page = await Fetcher(limits(fetch_allow_hosts=LOCAL)).fetch(f"{pages.url}/huge")
    assert page.cut
    assert len(page.body) == Settings().fetch_max_bytes == 2_000_000
    assert render(page).endswith("[cut: the page is longer than 2,000,000 bytes, which were read]")


async def test_a_slow_page_times_out_as_a_temporary_failure(pages: PageServer) -> None:
    started = time.monotonic()
    with pytest.raises(TemporaryFailure, match="took longer than 1 s"):
        await Fetcher(limits(fetch_allow_hosts=LOCAL, fetch_timeout=1)).fetch(f"{pages.url}/slow")
    assert time.monotonic() - started < 20


@pytest.mark.slow(15)  # waits out the default
async def test_the_default_timeout_ends_a_slow_page_at_15_s(pages: PageServer) -> None:
    with pytest.raises(TemporaryFailure, match="took longer than 15 s"):
        await Fetcher(limits(fetch_allow_hosts=LOCAL)).fetch(f"{pages.url}/slow")


@pytest.mark.parametrize(("path", "kind"), [("/image", "image/png"), ("/pdf", "application/pdf")])
async def test_other_content_types_are_refused_by_name(
    pages: PageServer, path: str, kind: str
) -> None:
    with pytest.raises(ToolError, match=f"is {kind}, not a web page") as refused:
        await Fetcher(limits(fetch_allow_hosts=LOCAL)).fetch(pages.url + path)
    assert not isinstance(refused.value, TemporaryFailure)


async def test_text_and_json_come_back_as_they_are(pages: PageServer) -> None:
    fetcher = Fetcher(limits(fetch_allow_hosts=LOCAL))
    text = render(await fetcher.fetch(f"{pages.url}/text"))
    assert text == f"URL: {pages.url}/text\n\nplain words\nsecond line"
    assert render(await fetcher.fetch(f"{pages.url}/json")).endswith('\n\n{"answer": 42}')


async def test_statuses_say_whether_to_try_again(pages: PageServer) -> None:
    fetcher = Fetcher(limits(fetch_allow_hosts=LOCAL))
    for code in (502, 503, 504):
        with pytest.raises(TemporaryFailure, match=f"answered {code}"):
            await fetcher.fetch(f"{pages.url}/status/{code}")
    for code in (404, 403, 500):
        with pytest.raises(ToolError, match=f"answered {code}") as failed:
            await fetcher.fetch(f"{pages.url}/status/{code}")
        assert not isinstance(failed.value, TemporaryFailure)


async def test_a_closed_port_is_a_temporary_failure(trap: Trap) -> None:
    port = trap.port
    await trap.__aexit__(None, None, None)
    with pytest.raises(TemporaryFailure, match="Could not connect"):
        await Fetcher(limits(fetch_allow_hosts=LOCAL)).fetch(f"http://127.0.0.1:{port}/")
    async with Trap("127.0.0.1"):  # the fixture closes one more
        pass


async def test_the_allowlist_lets_a_named_host_through(pages: PageServer) -> None:
    _, resolver = resolving(["127.0.0.1"])
    fetcher = Fetcher(limits(fetch_allow_hosts=["wiki.corp.example"]), resolver=resolver)
    page = await fetcher.fetch(f"http://wiki.corp.example:{pages.port}/text")
    assert page.body == b"plain words\nsecond line"
    with pytest.raises(Refused):
        await fetcher.fetch(f"http://other.corp.example:{pages.port}/text")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("file:///etc/passwd", "Only http and https"),
        ("gopher://example.com/", "Only http and https"),
        ("http://admin:hunter2@example.com/", "credentials"),
        ("http:///nohost", "no host"),
        ("http://example.com:99999/", "Not a valid URL"),
        ("http://exa mple.com/", "may not hold"),
    ],
)
async def test_bad_urls_get_one_clear_line(url: str, message: str) -> None:
    with pytest.raises(ToolError, match=message) as refused:
        await Fetcher(limits()).fetch(url)
    assert "hunter2" not in str(refused.value)
    assert "\n" not in str(refused.value)


async def test_query_strings_stay_out_of_logs_and_errors(
    pages: PageServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fetcher = Fetcher(limits(fetch_allow_hosts=LOCAL))
    with pytest.raises(ToolError) as failed:
        await fetcher.fetch(f"{pages.url}/status/404?token=hunter2")
    with pytest.raises(TemporaryFailure) as busy:
        await fetcher.fetch(f"{pages.url}/status/503?token=hunter2")
    assert pages.counts == {"/status/404": 1, "/status/503": 1}
    assert "hunter2" not in str(failed.value) + str(busy.value)
    assert caplog.records and "hunter2" not in caplog.text


async def test_pages_fetched_share_one_tls_context(
    pages: PageServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each context made reads certifi's bundle (some 20 ms of CPU): one per process."""
    pinning.pages_context.cache_clear()
    made: list[ssl.SSLContext] = []
    new = ssl.SSLContext.__new__

    def counting(cls: type[ssl.SSLContext], *args: Any, **kwargs: Any) -> ssl.SSLContext:
        made.append(new(cls, *args, **kwargs))
        return made[-1]

    monkeypatch.setattr(ssl.SSLContext, "__new__", counting)
    fetcher = Fetcher(limits(fetch_allow_hosts=LOCAL))
    for _ in range(3):
        assert "plain words" in render(await fetcher.fetch(f"{pages.url}/text"))
    assert made == [pinning.pages_context()]
    assert made[0].verify_mode == ssl.CERT_REQUIRED
