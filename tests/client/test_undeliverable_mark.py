"""Issue 33: the client reports a server it could not reach (``TransportError``, "cannot
reach ...") on the mark the HTTP transport sets on its own error when a request's HTTP
exchange failed, never on the error's text: a server answering with the transport's very
words is still answering, and its error stays a ``ProtocolError``
(tests/http/test_lost_server_mark.py, with the words of a lost server)."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import pytest

from mcpkit import Client, ProtocolError, Server, TransportError, http
from mcpkit._client._util import undeliverable
from mcpkit._exceptions import HTTPConnectError
from mcpkit._http._client_common import NOT_DELIVERED, undelivered_error
from mcpkit._http._interface import HTTPResponse
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio
URL = "http://127.0.0.1/mcp"
WORDS = "HTTP request failed: HTTPConnectError: could not connect to 127.0.0.1:9"
REVISIONS = pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])


def _server() -> Server:
    server = Server("answers")

    @server.tool()
    def ok() -> str:
        """Answers."""
        return "ok"

    return server


class Unplugged:
    """An in-process app's HTTP client that can be unplugged: from then on every exchange
    fails as with a server that is gone (the connection refused)."""

    def __init__(self, inner: ASGIClient) -> None:
        self.inner = inner
        self.down = False

    def _check(self) -> None:
        if self.down:
            raise HTTPConnectError("could not connect to 127.0.0.1:80 (unplugged)")

    def stream(self, method: str, url: str, **kw: Any) -> AbstractAsyncContextManager[HTTPResponse]:
        self._check()
        return self.inner.stream(method, url, **kw)

    async def post(self, url: str, **kw: Any) -> HTTPResponse:
        self._check()
        return await self.inner.post(url, **kw)

    async def delete(
        self, url: str, *, headers: Mapping[str, str] | None = None, timeout: Any = None
    ) -> HTTPResponse:
        self._check()
        return await self.inner.delete(url, headers=headers, timeout=timeout)

    async def aclose(self) -> None:
        await self.inner.aclose()


@REVISIONS
async def test_a_server_gone_mid_conversation_is_a_transport_error(revision: str) -> None:
    with anyio.fail_after(20):
        async with ASGIClient(_server().http_app()) as h:
            plug = Unplugged(h)
            async with Client(http(URL, http_client=plug), protocol_version=revision) as client:
                assert (await client.call_tool("ok")).content[0].text == "ok"  # type: ignore[union-attr]
                plug.down = True
                with pytest.raises(TransportError) as caught:
                    await client.call_tool("ok")
    said = str(caught.value)
    assert f"tools/call: cannot reach {URL}: HTTP request failed: HTTPConnectError" in said, said


async def test_a_server_never_reached_is_a_transport_error() -> None:
    with anyio.fail_after(20):
        async with ASGIClient(_server().http_app()) as h:
            plug = Unplugged(h)
            plug.down = True
            with pytest.raises(TransportError) as caught:
                async with Client(http(URL, http_client=plug)):
                    pass  # pragma: no cover
    assert f"cannot reach {URL}: HTTP request failed: HTTPConnectError" in str(caught.value)


def test_only_the_transports_mark_counts() -> None:
    made = undelivered_error(1, WORDS)["error"]
    assert made["message"] == WORDS  # what the user reads is unchanged
    assert undeliverable(ProtocolError(made["code"], made["message"], made["data"]))
    # The words, or the key with a plain (parsed) value, are what any server can send.
    assert not undeliverable(ProtocolError(-32000, WORDS))
    forged = {NOT_DELIVERED: str(made["data"][NOT_DELIVERED])}
    assert not undeliverable(ProtocolError(-32000, WORDS, forged))


def _answering_500_to(app: Any, marker: bytes) -> Any:
    """``app`` behind a front that answers HTTP 500 to any POST whose body has ``marker``
    (a server reached, failing), passing everything else through."""

    async def front(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        body, more = b"", True
        while more:
            msg = await receive()
            body, more = body + msg.get("body", b""), msg.get("more_body", False)
        if marker in body:
            headers = [(b"content-type", b"text/plain")]
            await send({"type": "http.response.start", "status": 500, "headers": headers})
            await send({"type": "http.response.body", "body": b"database down"})
            return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await app(scope, replay, send)

    return front


@REVISIONS
async def test_an_http_error_status_is_the_servers_answer_not_cannot_reach(revision: str) -> None:
    # The server was reached and answered 500: its answer (a ProtocolError naming the
    # status and what it said), never a TransportError saying "cannot reach"; the next
    # call goes through.
    app = _answering_500_to(_server().http_app(), b'"explode"')
    with anyio.fail_after(20):
        async with (
            ASGIClient(app) as h,
            Client(http(URL, http_client=h), protocol_version=revision) as client,
        ):
            with pytest.raises(ProtocolError) as caught:
                await client.call_tool("explode")
            assert (await client.call_tool("ok")).content[0].text == "ok"  # type: ignore[union-attr]
    assert not isinstance(caught.value, TransportError)
    assert caught.value.message == "HTTP 500: database down", caught.value.message
    assert caught.value.data == {"httpStatus": 500}
    assert not undeliverable(caught.value)
