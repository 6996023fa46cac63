"""A pinned connection still checks TLS against the URL's host name, not the address.

The server's certificate names secure.example and no address, so the fetch succeeds only
if SNI and the certificate check use the name while the socket goes to the pinned address.
"""

from __future__ import annotations

import datetime
import ssl
from pathlib import Path

import pytest
from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from bot.assembly.tool_settings import fetch_limits
from bot.config.settings import Settings
from bot.tools.base import ToolError
from bot.tools.web.fetch import Fetcher
from tests.tools.web.test_fetch import PUBLIC, Relay, resolving

pytestmark = pytest.mark.e2e


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed certificate for secure.example, and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "secure.example")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("secure.example")]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


async def test_tls_is_checked_for_the_name_on_the_pinned_address(
    certificate: tuple[Path, Path],
) -> None:
    cert_file, key_file = certificate
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(cert_file, key_file)
    app = web.Application()
    seen_hosts: list[str] = []

    async def page(request: web.Request) -> web.Response:
        seen_hosts.append(request.host)
        return web.Response(text="over TLS")

    app.router.add_get("/", page)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.2", 0, ssl_context=server_context)
    await site.start()
    port = runner.addresses[0][1]
    client_context = ssl.create_default_context(cafile=cert_file)
    try:
        _, resolver = resolving([PUBLIC])
        fetcher = Fetcher(
            fetch_limits(Settings()), resolver=resolver, network=Relay(), ssl_context=client_context
        )
        page_ = await fetcher.fetch(f"https://secure.example:{port}/")
        assert page_.body == b"over TLS"
        assert seen_hosts == [f"secure.example:{port}"]
        with pytest.raises(ToolError, match="TLS certificate is not valid"):
            await fetcher.fetch(f"https://impostor.example:{port}/")
        assert len(seen_hosts) == 1
    finally:
        await runner.cleanup()
