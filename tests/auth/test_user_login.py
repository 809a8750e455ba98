"""A person logs in: :class:`mcpkit.auth.OAuth` against a real authorization server
(oidc-provider) protecting ``examples/protected_server.py``: dynamic registration (a native
client), the authorization code with PKCE through a scripted browser and the loopback
redirect, the token for the server's resource, refresh without the browser, step-up with
the union of scopes, tokens kept in a 0600 file; and the answers a careful client refuses
(another state, another issuer, a denial), each a clear error.
"""

from __future__ import annotations

import io
import json
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from tests.auth._as import AuthorizationServer
from tests.auth._browser import Browser

from mcpkit import Client, ProtocolError
from mcpkit.auth import FileTokenStore, LoopbackRedirect, MemoryTokenStore, OAuth

pytestmark = pytest.mark.anyio

#: A redirect URI nobody listens on: the scripted browser stops before going there.
NOWHERE = "http://127.0.0.1:9/callback"


def in_the_browser(browser: Browser) -> LoopbackRedirect:
    """A loopback redirect whose "browser" is the scripted one, in its own thread (as a
    real browser is another process)."""

    def open_browser(url: str) -> None:
        threading.Thread(target=browser.visit, args=(url,), daemon=True).start()

    return LoopbackRedirect(open_browser=open_browser, timeout=30, out=io.StringIO())


def stopping_browser(edit: dict[str, str] | None = None) -> tuple[Browser, object]:
    """A redirect handler that visits and returns the authorization response, with
    ``edit`` applied to its parameters (a tampered answer)."""
    browser = Browser(stop_at=NOWHERE)

    async def handler(url: str) -> str:
        import anyio

        back = await anyio.to_thread.run_sync(browser.visit, url)
        params = {k: v[0] for k, v in parse_qs(urlsplit(back).query).items()}
        params.update(edit or {})
        return NOWHERE + "?" + urlencode(params)

    return browser, handler


def text(result: object) -> str:
    return str(result.content[0].text)  # type: ignore[attr-defined]


@pytest.fixture
def store_file(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "conf" / "auth.json"


async def test_a_person_logs_in_once_and_the_login_is_kept(
    auth_server: AuthorizationServer, served: str, store_file: Path
) -> None:
    browser = Browser()
    redirect = in_the_browser(browser)
    auth = OAuth(redirect_handler=redirect, store=FileTokenStore(store_file), client_name="test")
    try:
        async with Client(served, auth=auth) as client:
            who = json.loads(text(await client.call_tool("whoami", {})))
    finally:
        redirect.close()
    assert who["subject"] == "alice"
    assert "mcp:tools" in who["scopes"]
    assert len(browser.visits) == 1
    query = parse_qs(urlsplit(browser.visits[0]).query)
    assert query["code_challenge_method"] == ["S256"] and query["resource"] == [served]
    assert "offline_access" in query["scope"][0].split()  # the issuer lists it
    # Registered once (a native client), kept per issuer; the token per server; 0600.
    assert stat.S_IMODE(store_file.stat().st_mode) == 0o600  # noqa: ASYNC240 - a test's look
    kept = json.loads(store_file.read_text())  # noqa: ASYNC240
    assert kept[f"client:{auth_server.issuer}"]["client_id"]
    token = kept[f"token:{served}"]
    assert token["issuer"] == auth_server.issuer and token["refresh_token"]

    async def never(url: str) -> str:
        raise AssertionError("a kept login needs no browser")

    again = OAuth(redirect_handler=never, redirect_uri=NOWHERE, store=FileTokenStore(store_file))
    async with Client(served, auth=again) as client:
        assert json.loads(text(await client.call_tool("whoami", {})))["subject"] == "alice"


async def test_an_expired_token_is_refreshed_without_the_browser(
    auth_server: AuthorizationServer, served: str
) -> None:
    now = [time.time()]
    browser, handler = stopping_browser()
    auth = OAuth(redirect_handler=handler, redirect_uri=NOWHERE, clock=lambda: now[0])
    async with Client(served, auth=auth) as client:
        await client.call_tool("whoami", {})
        first = auth.token
        assert first is not None and first.refresh_token
        now[0] += 3600  # past the access token's life (600 s), not the refresh token's
        await client.call_tool("whoami", {})
    assert len(browser.visits) == 1
    assert auth.token is not None and auth.token.access_token != first.access_token


async def test_a_step_up_asks_for_the_union_of_scopes(
    auth_server: AuthorizationServer, served: str
) -> None:
    browser, handler = stopping_browser()
    auth = OAuth(redirect_handler=handler, redirect_uri=NOWHERE, offline_access=False)
    async with Client(served, auth=auth) as client:
        await client.call_tool("whoami", {})
        echoed = await client.call_tool("admin_echo", {"text": "hi"})
    assert text(echoed) == "hi"
    scopes = [parse_qs(urlsplit(v).query)["scope"][0].split() for v in browser.visits]
    assert scopes == [["mcp:tools"], ["mcp:tools", "mcp:admin"]]


@pytest.mark.parametrize(
    ("edit", "error"),
    [
        ({"state": "forged-state"}, "invalid_state"),
        ({"iss": "https://evil.example.com"}, "invalid_issuer"),
        ({"error": "access_denied", "error_description": "the user said no"}, "access_denied"),
    ],
    ids=["another-state", "another-issuer", "denied"],
)
async def test_a_tampered_or_refused_authorization_is_one_clear_error(
    auth_server: AuthorizationServer, served: str, edit: dict[str, str], error: str
) -> None:
    _, handler = stopping_browser(edit)
    store = MemoryTokenStore()
    auth = OAuth(redirect_handler=handler, redirect_uri=NOWHERE, store=store)
    with pytest.raises(ProtocolError, match="authorization failed") as info:
        async with Client(served, auth=auth) as client:
            await client.call_tool("whoami", {})
    assert info.value.data == {"authError": error}
    assert auth.token is None and not any(k.startswith("token:") for k in store.names())
