"""The OAuth client against hostile or broken servers: each a named test. A small server
(served by uvicorn on 127.0.0.1) plays the MCP server and its authorization server, and
misbehaves as each test says; the client must refuse clearly, before a person is sent
anywhere or a secret goes anywhere, and never loop."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from tests.http._http_helpers import ThreadServer, running

from mcpkit import Client, ProtocolError
from mcpkit.auth import (
    ClientCredentials,
    FileTokenStore,
    JWTBearer,
    MemoryTokenStore,
    OAuth,
    Token,
)
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio

CALLBACK = "http://127.0.0.1:9/callback"


class Hostile:
    """The MCP server and its authorization server in one app; ``docs`` overrides the JSON
    documents (by path), ``always_401`` refuses every token."""

    def __init__(self) -> None:
        self.base = ""
        self.docs: dict[str, Any] = {}
        self.token_answer: tuple[int, dict[str, Any]] = (200, {"access_token": "t1"})
        self.always_401 = False
        self.hits: list[str] = []
        #: The forms POSTed to the token endpoint.
        self.forms: list[dict[str, str]] = []
        #: Assertions the token endpoint refuses (``invalid_grant``).
        self.refused_assertions: set[str] = set()

    def defaults(self) -> dict[str, Any]:
        b = self.base
        return {
            "/.well-known/oauth-protected-resource/mcp": {
                "resource": f"{b}/mcp",
                "authorization_servers": [b],
            },
            "/.well-known/oauth-authorization-server": {
                "issuer": b,
                "authorization_endpoint": f"{b}/authorize",
                "token_endpoint": f"{b}/token",
                "registration_endpoint": f"{b}/register",
                "code_challenge_methods_supported": ["S256"],
            },
            "/register": {"client_id": "registered"},
        }

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        path = scope["path"]
        self.hits.append(path)
        raw_body = b""
        while True:
            message = await receive()
            raw_body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = dict(scope["headers"])
        status, body, extra = 404, {"error": "not_found"}, []
        docs = {**self.defaults(), **self.docs}
        if path == "/mcp":
            if b"authorization" in headers and not self.always_401:
                status, body = 400, {"error": "no MCP here: the client got a token"}
            else:
                meta = f"{self.base}/.well-known/oauth-protected-resource/mcp"
                challenge = self.docs.get("challenge", f'Bearer resource_metadata="{meta}"')
                status, body = 401, {"error": "invalid_token"}
                extra = [(b"www-authenticate", challenge.encode())]
        elif path == "/token":
            form = {k: v[0] for k, v in parse_qs(raw_body.decode()).items()}
            self.forms.append(form)
            status, body = self.token_answer
            if form.get("assertion") in self.refused_assertions:
                status, body = 400, {"error": "invalid_grant"}
        elif path in docs:
            status, body = 200, docs[path]
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        hdrs = [(b"content-type", b"application/json"), *extra]
        await send({"type": "http.response.start", "status": status, "headers": hdrs})
        await send({"type": "http.response.body", "body": raw})


@pytest.fixture
def hostile() -> Iterator[tuple[Hostile, ThreadServer]]:
    app = Hostile()
    with running(app) as srv:
        app.base = srv.base
        yield app, srv


class Browser:
    """Approves at once: the callback with the code and the state it was given."""

    def __init__(self) -> None:
        self.visited: list[str] = []

    async def __call__(self, url: str) -> str:
        self.visited.append(url)
        q = parse_qs(urlsplit(url).query)
        return f"{CALLBACK}?code=c0de&state={q['state'][0]}"


async def refused(url: str, auth: Any) -> ProtocolError:
    with pytest.raises(ProtocolError, match="authorization failed") as info:
        async with Client(url, auth=auth, init_timeout=15) as client:
            await client.list_tools()
    return info.value


async def test_an_issuer_without_pkce_s256_is_refused_before_the_browser(
    hostile: tuple[Hostile, ThreadServer],
) -> None:
    app, srv = hostile
    meta = app.defaults()["/.well-known/oauth-authorization-server"]
    app.docs["/.well-known/oauth-authorization-server"] = {
        **meta,
        "code_challenge_methods_supported": ["plain"],
    }
    browser = Browser()
    error = await refused(srv.url, OAuth(redirect_handler=browser, redirect_uri=CALLBACK))
    assert "PKCE S256" in str(error) and browser.visited == []
    assert "/register" not in app.hits and "/token" not in app.hits


async def test_an_authorization_endpoint_off_https_is_refused(
    hostile: tuple[Hostile, ThreadServer],
) -> None:
    app, srv = hostile
    meta = app.defaults()["/.well-known/oauth-authorization-server"]
    app.docs["/.well-known/oauth-authorization-server"] = {
        **meta,
        "authorization_endpoint": "http://evil.example.com/authorize",
    }
    browser = Browser()
    error = await refused(srv.url, OAuth(redirect_handler=browser, redirect_uri=CALLBACK))
    assert "https" in str(error) and browser.visited == []


async def test_a_challenge_naming_metadata_on_plain_http_elsewhere_is_not_fetched(
    hostile: tuple[Hostile, ThreadServer],
) -> None:
    app, srv = hostile
    app.docs["challenge"] = 'Bearer resource_metadata="http://evil.example.com/prm"'
    error = await refused(srv.url, ClientCredentials("c", "secret-123"))
    assert "evil.example.com" in str(error) and "secret-123" not in str(error)
    assert "/token" not in app.hits


async def test_an_oversized_metadata_document_is_refused(
    hostile: tuple[Hostile, ThreadServer],
) -> None:
    app, srv = hostile
    app.docs["/.well-known/oauth-protected-resource/mcp"] = {"pad": "x" * 300_000}
    error = await refused(srv.url, ClientCredentials("c", "s"))
    assert "larger than" in str(error)


async def test_metadata_from_an_issuer_that_is_not_asked_for_is_refused(
    hostile: tuple[Hostile, ThreadServer],
) -> None:
    app, srv = hostile
    meta = app.defaults()["/.well-known/oauth-authorization-server"]
    app.docs["/.well-known/oauth-authorization-server"] = {**meta, "issuer": app.base + "/"}
    error = await refused(srv.url, ClientCredentials("c", "s"))
    assert "names issuer" in str(error) and "/token" not in app.hits


async def test_a_token_endpoint_refusal_is_named_and_leaks_nothing(
    hostile: tuple[Hostile, ThreadServer],
) -> None:
    app, srv = hostile
    app.token_answer = (400, {"error": "invalid_grant", "error_description": "code used"})
    auth = OAuth(redirect_handler=Browser(), redirect_uri=CALLBACK, client_secret=None)
    error = await refused(srv.url, auth)
    assert error.data == {"authError": "invalid_grant"}
    assert "code used" in str(error) and "c0de" not in str(error)


async def test_a_server_refusing_every_token_gets_bounded_retries(
    hostile: tuple[Hostile, ThreadServer],
) -> None:
    app, srv = hostile
    app.always_401 = True
    with pytest.raises(ProtocolError, match="401"):
        async with Client(srv.url, auth=ClientCredentials("c", "s"), init_timeout=15) as c:
            await c.list_tools()
    # At most three logins a minute, whatever the number of requests, then the 401 is
    # the answer.
    assert app.hits.count("/token") == 3


def test_reprs_never_show_secrets_or_tokens() -> None:
    shown = " ".join(
        repr(x)
        for x in (
            ClientCredentials("c", "s3cret"),
            ClientCredentials("c", private_key="-----BEGIN PRIVATE KEY-----"),
            OAuth(redirect_handler=Browser(), redirect_uri=CALLBACK, client_secret="s3cret"),
            Token("tok3n", refresh_token="r3fresh"),
        )
    )
    for secret in ("s3cret", "PRIVATE KEY", "tok3n", "r3fresh"):
        assert secret not in shown


async def test_the_token_file_is_private_and_a_damaged_one_is_not_overwritten(
    tmp_path: Path,
) -> None:
    path = tmp_path / "new" / "auth.json"
    store = FileTokenStore(path)
    await store.set("token:x", {"access_token": "t"})
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert await store.get("token:x") == {"access_token": "t"}
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not a JSON token store"):
        await store.set("token:y", {"access_token": "u"})
    assert path.read_text() == "{not json"


async def test_a_token_is_kept_under_the_server_it_was_asked_for(
    hostile: tuple[Hostile, ThreadServer], tmp_path: Path
) -> None:
    """The resource metadata may name a wider resource (the origin): the token is still
    found again for the endpoint the client talks to, by a later client (another run)."""
    app, srv = hostile
    app.docs["/.well-known/oauth-protected-resource/mcp"] = {
        "resource": app.base,  # the whole origin
        "authorization_servers": [app.base],
    }
    store = FileTokenStore(tmp_path / "auth.json")
    first = ClientCredentials("c", "s", store=store)
    challenge = {
        "www-authenticate": f'Bearer resource_metadata="{app.base}/.well-known/oauth-protected-resource/mcp"'
    }
    assert await first.on_challenge("POST", srv.url, 401, challenge) is True
    assert app.forms[-1]["resource"] == app.base  # asked for the resource the metadata names
    later = ClientCredentials("c", "s", store=store)
    assert await later.headers_for("POST", srv.url) == {"authorization": "Bearer t1"}
    assert len(app.forms) == 1  # no second token request


async def test_a_kept_dpop_token_without_its_key_is_not_sent() -> None:
    """DPoP keys live in memory only: a DPoP-bound token from an earlier run would be
    refused (or worse, sent as a bearer token); the client logs in again instead."""
    store = MemoryTokenStore()
    url = "http://127.0.0.1:1/mcp"
    await store.set("token:" + url, Token("bound", token_type="DPoP").to_dict())
    assert await ClientCredentials("c", "s", store=store).headers_for("POST", url) == {}
    await store.set("token:" + url, Token("plain").to_dict())
    kept = await ClientCredentials("c", "s", store=store).headers_for("POST", url)
    assert kept == {"authorization": "Bearer plain"}


async def test_a_refused_workload_assertion_is_not_sent_again_but_a_rotated_one_is(
    hostile: tuple[Hostile, ThreadServer],
) -> None:
    app, srv = hostile
    app.refused_assertions = {"old-jwt"}
    current = ["old-jwt"]
    auth = JWTBearer(lambda: current[0])
    challenge = {
        "www-authenticate": f'Bearer resource_metadata="{app.base}/.well-known/oauth-protected-resource/mcp"'
    }
    for _ in range(2):
        with pytest.raises(Exception, match="invalid_grant"):
            await auth.on_challenge("POST", srv.url, 401, challenge)
    assert [f["assertion"] for f in app.forms] == ["old-jwt"]  # the refused one, once
    current[0] = "new-jwt"  # the platform rotated the token
    assert await auth.on_challenge("POST", srv.url, 401, challenge) is True
    assert [f["assertion"] for f in app.forms] == ["old-jwt", "new-jwt"]
    assert app.forms[-1]["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"


async def test_auth_with_an_mcpkit_http_client_is_refused_not_dropped() -> None:
    """An ASGIClient has no auth hook: auth= with it is an error, not requests sent
    without credentials."""
    from mcpkit import Server, http

    async with ASGIClient(Server("s").http_app()) as h:
        with pytest.raises(TypeError, match="auth= cannot be used"):
            target = http("http://127.0.0.1/mcp", http_client=h, auth=ClientCredentials("c", "s"))
            async with Client(target):
                pass
