"""TLS: a server behind HTTPS with a certificate from a CA of the test's own (made with
``cryptography``), and mutual TLS; the client trusts that CA with ``verify=``, refuses an
unknown one by default, and presents a client certificate with ``cert=``."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from pathlib import Path

import anyio
import pytest
from _http_helpers import running
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from mcpkit import Client, MCPError, Server, http

pytestmark = pytest.mark.anyio


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _cert(
    subject: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: tuple[str, ec.EllipticCurvePrivateKey] | None,
    *,
    ca: bool = False,
    server: bool = False,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.timezone.utc)
    issuer_name, issuer_key = issuer if issuer else (subject, key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer_name)]))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        # What a real CA puts in every certificate; Python 3.13 verifies strictly
        # (VERIFY_X509_STRICT) and refuses a chain without the key identifiers.
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()), False
        )
        .add_extension(
            x509.KeyUsage(
                digital_signature=not ca,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=ca,
                crl_sign=ca,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
    )
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
    return builder.sign(issuer_key, hashes.SHA256())


def _write(
    path: Path, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey | None = None
) -> Path:
    data = cert.public_bytes(serialization.Encoding.PEM)
    if key is not None:
        data += key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    path.write_bytes(data)
    return path


@pytest.fixture
def pki(tmp_path: Path) -> dict[str, Path]:
    ca_key, client_key, server_key = _key(), _key(), _key()
    ca = _cert("test-ca", ca_key, None, ca=True)
    return {
        "ca": _write(tmp_path / "ca.pem", ca),
        "server": _write(
            tmp_path / "server.pem",
            _cert("127.0.0.1", server_key, ("test-ca", ca_key), server=True),
            server_key,
        ),
        "client": _write(
            tmp_path / "client.pem", _cert("client", client_key, ("test-ca", ca_key)), client_key
        ),
    }


def _app() -> object:
    server = Server("tls")

    @server.tool()
    def hello() -> str:
        """Hello."""
        return "hello over TLS"

    return server.http_app()


async def _hello(url: str, **tls: object) -> str:
    with anyio.fail_after(20):
        async with Client(http(url, **tls)) as client:  # type: ignore[arg-type]
            result = await client.call_tool("hello", {})
    return str(result.content[0].text)  # type: ignore[union-attr]


async def test_https_with_a_private_ca(pki: dict[str, Path]) -> None:
    with running(_app(), ssl_certfile=str(pki["server"])) as srv:
        url = f"https://127.0.0.1:{srv.port}/mcp"
        assert await _hello(url, verify=str(pki["ca"])) == "hello over TLS"
        context = ssl.create_default_context(cafile=str(pki["ca"]))
        assert await _hello(url, verify=context) == "hello over TLS"
        assert await _hello(url, verify=False) == "hello over TLS"  # tests only
        with pytest.raises(MCPError, match=r"(?i)certificate"):
            await _hello(url)  # the system's trust store does not know the test CA


async def test_mutual_tls(pki: dict[str, Path]) -> None:
    options = {
        "ssl_certfile": str(pki["server"]),
        "ssl_ca_certs": str(pki["ca"]),
        "ssl_cert_reqs": ssl.CERT_REQUIRED,
    }
    with running(_app(), **options) as srv:
        url = f"https://127.0.0.1:{srv.port}/mcp"
        assert await _hello(url, verify=str(pki["ca"]), cert=str(pki["client"])) == "hello over TLS"
        with pytest.raises(MCPError):
            await _hello(url, verify=str(pki["ca"]))  # no client certificate: refused


def test_tls_options_belong_to_our_client() -> None:
    with pytest.raises(ValueError, match="set them on yours"):
        http("https://example.com/mcp", http_client=object(), verify=False)
    with pytest.raises(ValueError, match="no such CA"):
        from mcpkit._client._targets import tls_context

        tls_context("/no/such/ca.pem", None)


async def test_a_group_entry_names_its_ca(pki: dict[str, Path]) -> None:
    from mcpkit import ClientGroup

    with running(_app(), ssl_certfile=str(pki["server"])) as srv, anyio.fail_after(20):
        entry = {"url": f"https://127.0.0.1:{srv.port}/mcp", "verify": str(pki["ca"])}
        config = {"mcpServers": {"secure": entry}}
        # Group-wide stdio options (on_stderr) do not trouble a URL entry.
        async with ClientGroup(config, on_stderr=lambda line: None) as group:
            assert not group.errors, group.errors
            result = await group.call_tool("secure_hello", {})
    assert result.content[0].text == "hello over TLS"  # type: ignore[union-attr]
