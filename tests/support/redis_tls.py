"""A redis-server that speaks only TLS, with certificates made for the test: a CA, the
server's certificate for `localhost` and 127.0.0.1, a client certificate (the server requires
one), and a second CA that signed nothing here, to be refused with."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

import redis
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from tests.support.redis_server import RedisServer, free_port

Key = ec.EllipticCurvePrivateKey


@dataclass(frozen=True)
class Certificates:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    other_ca: Path  # a CA that signed neither certificate


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _write(folder: Path, stem: str, cert: x509.Certificate, key: Key) -> tuple[Path, Path]:
    cert_path, key_path = folder / f"{stem}.crt", folder / f"{stem}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    key_path.chmod(0o600)
    return cert_path, key_path


def _ca(common: str) -> tuple[x509.Certificate, Key]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(common))
        .issuer_name(_name(common))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return cert, key


def _leaf(
    common: str, ca: x509.Certificate, ca_key: Key, usage: x509.ObjectIdentifier
) -> tuple[x509.Certificate, Key]:

    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(common))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return cert, key


def make_certificates(folder: Path) -> Certificates:
    folder.mkdir(parents=True, exist_ok=True)
    ca, ca_key = _ca("Parley test CA")
    other, other_key = _ca("Some other CA")
    ca_path, _ = _write(folder, "ca", ca, ca_key)
    other_path, _ = _write(folder, "other-ca", other, other_key)
    server = _write(folder, "server", *_leaf("redis", ca, ca_key, ExtendedKeyUsageOID.SERVER_AUTH))
    client = _write(folder, "client", *_leaf("parley", ca, ca_key, ExtendedKeyUsageOID.CLIENT_AUTH))
    return Certificates(ca_path, *server, *client, other_path)


class TlsRedisServer(RedisServer):
    """A redis-server with no plain port: TLS only, client certificates required."""

    def __init__(self, directory: Path, certificates: Certificates) -> None:
        self.certificates = certificates
        self.tls_port = free_port()
        super().__init__(
            directory,
            "--port",
            "0",
            "--tls-port",
            str(self.tls_port),
            "--tls-cert-file",
            str(certificates.server_cert),
            "--tls-key-file",
            str(certificates.server_key),
            "--tls-ca-cert-file",
            str(certificates.ca),
            "--tls-auth-clients",
            "yes",
        )

    @property
    def url(self) -> str:
        return f"rediss://localhost:{self.tls_port}/0"

    @property
    def client_url(self) -> str:
        """The URL the tests' own clients use: the TLS files in redis-py's query options
        (Parley itself reads them from its settings, `tls_env`)."""
        certificates = self.certificates
        return (
            f"{self.url}?ssl_ca_certs={certificates.ca}&ssl_certfile={certificates.client_cert}"
            f"&ssl_keyfile={certificates.client_key}"
        )

    def ping_client(self) -> redis.Redis:
        return redis.Redis(
            host="localhost",
            port=self.tls_port,
            ssl=True,
            ssl_ca_certs=str(self.certificates.ca),
            ssl_certfile=str(self.certificates.client_cert),
            ssl_keyfile=str(self.certificates.client_key),
        )

    def tls_env(self) -> dict[str, str]:
        """The variables a Parley process reaches this server with."""
        return {
            "REDIS_URL": self.url,
            "PARLEY_REDIS_TLS_CA": str(self.certificates.ca),
            "PARLEY_REDIS_TLS_CERT": str(self.certificates.client_cert),
            "PARLEY_REDIS_TLS_KEY": str(self.certificates.client_key),
        }
