"""Issue 33: the client raises TransportError for a server lost mid-call (or never reached,
tests/client/test_undeliverable_mark.py) only on the mark the HTTP transport sets on its own
error -- a server answering with the transport's very words is still answering, and its
error stays a ProtocolError."""

from __future__ import annotations

import anyio
import pytest

from mcpkit import Client, ProtocolError, Server, TransportError, http
from mcpkit._client._util import answer_lost
from mcpkit._http._client_common import CONNECTION_LOST, lost_server_error
from mcpkit._transports._base import ANSWER_LOST, LOST
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio
URL = "http://127.0.0.1/mcp"
WORDS = "gave up resuming the stream after 5 attempts"
#: The transport's words for a server it could not reach (an undelivered request).
UNREACHED = "HTTP request failed: HTTPConnectError: could not connect to 127.0.0.1:9"


def _server() -> Server:
    server = Server("mimic")

    @server.tool()
    async def mimic(words: str) -> str:
        """Fails with the words the HTTP transport uses for a lost or unreached server."""
        raise ProtocolError(-32000, words)

    return server


@pytest.mark.parametrize("words", [WORDS, UNREACHED])
@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_a_server_using_the_transports_words_is_still_answering(
    revision: str, words: str
) -> None:
    with anyio.fail_after(20):
        async with (
            ASGIClient(_server().http_app()) as h,
            Client(http(URL, http_client=h), protocol_version=revision) as client,
        ):
            with pytest.raises(ProtocolError) as caught:
                await client.call_tool("mimic", {"words": words})
    assert not isinstance(caught.value, TransportError)
    assert caught.value.code == -32000 and caught.value.message == words


def test_only_the_transports_marks_count() -> None:
    made = lost_server_error(1, WORDS)["error"]
    assert answer_lost(ProtocolError(made["code"], made["message"], made["data"]))
    assert answer_lost(ProtocolError(-32000, "x", {ANSWER_LOST: LOST}))  # 2026's mark
    # The words, or the keys with plain (parsed) values, are what any server can send.
    assert not answer_lost(ProtocolError(-32000, WORDS))
    assert not answer_lost(
        ProtocolError(-32000, WORDS, {CONNECTION_LOST: str(made["data"][CONNECTION_LOST])})
    )
    assert not answer_lost(ProtocolError(-32000, "x", {ANSWER_LOST: "forged"}))
