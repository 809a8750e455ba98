"""What our HTTP client does with answers it did not expect: each failure named for what it is.

Before these fixes, an 80 MB reply was reported as a timeout (or "malformed response: SSE
event too large"), a redirect as a malformed document, and a read timeout on a kept-alive
connection sent the POST a second time.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from anyio.abc import SocketStream, TaskGroup
from tests.http._http_helpers import CLIENT_INFO, running

from mcpkit import Server
from mcpkit._exceptions import HTTPReadTimeout, ProtocolError
from mcpkit.lowlevel import ClientSession, open_streamable_http

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

MiB = 1024 * 1024


def _big_server() -> Server:
    server = Server("big")

    @server.tool()
    def blob(mib: int) -> str:
        """A text of ``mib`` MiB."""
        return "x" * (mib * MiB)

    return server


async def _call(cs: ClientSession, mib: int) -> Any:
    return await cs.send_request(
        "tools/call", {"name": "blob", "arguments": {"mib": mib}}, timeout=20
    )


@pytest.mark.parametrize("json_response", [False, True], ids=["sse", "json"])
async def test_a_reply_over_max_message_size_fails_that_call_saying_so(
    json_response: bool,
) -> None:
    app = _big_server().http_app(json_response=json_response)
    with running(app) as srv, anyio.fail_after(25):
        async with (
            open_streamable_http(srv.url, max_message_size=2 * MiB) as t,
            ClientSession(t, client_info=CLIENT_INFO) as cs,
        ):
            await cs.initialize()
            with pytest.raises(ProtocolError, match=r"larger than max_message_size \(2 MiB\)"):
                await _call(cs, 3)
            # Only that call failed: the session serves the next one.
            small = await _call(cs, 1)
            assert len(small["content"][0]["text"]) == MiB


async def test_a_redirect_loop_is_reported_with_its_target() -> None:
    # Redirects are followed (tests/http/test_redirects.py); one that never ends is cut.
    async def moved(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        headers = [(b"location", b"/mcp/"), (b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 307, "headers": headers})
        await send({"type": "http.response.body", "body": b""})

    with running(moved) as srv, anyio.fail_after(15):
        async with (
            open_streamable_http(srv.url) as t,
            ClientSession(t, client_info=CLIENT_INFO) as cs,
        ):
            with pytest.raises(
                ProtocolError, match=r"more than 10 redirects, the last to \S+/mcp/"
            ):
                await cs.initialize()


async def _raw_http_server(tg: TaskGroup, accepted: list[int], hung: list[str]) -> int:
    """A bare HTTP/1.1 server: ``/ok`` is answered (keep-alive), ``/hang`` never is."""
    listener = (await anyio.create_tcp_listener(local_host="127.0.0.1")).listeners[0]

    async def handle(stream: SocketStream) -> None:
        async with stream:
            buf = b""
            while True:
                while b"\r\n\r\n" not in buf:
                    data = await stream.receive()
                    if not data:
                        return
                    buf += data
                head, _, buf = buf.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                while len(buf) < length:
                    buf += await stream.receive()
                buf = buf[length:]
                path = head.split(b" ")[1].decode()
                if path == "/hang":
                    hung.append(path)
                    await anyio.sleep_forever()
                await stream.send(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")

    async def accept_loop() -> None:
        async with listener:
            while True:
                stream = await listener.accept()
                accepted.append(1)  # in the kernel's order, before anything is read
                tg.start_soon(handle, stream)

    tg.start_soon(accept_loop)
    return int(listener.extra(anyio.abc.SocketAttribute.local_port))


async def test_a_read_timeout_on_a_kept_alive_connection_never_sends_the_post_again() -> None:
    from mcpkit._http._h1client import HTTP1Client

    accepted: list[int] = []
    hung: list[str] = []
    async with anyio.create_task_group() as tg:
        port = await _raw_http_server(tg, accepted, hung)
        base = f"http://127.0.0.1:{port}"
        client = HTTP1Client(timeout=5)
        try:
            with anyio.fail_after(10):
                assert (await client.post(f"{base}/ok", content=b"{}")).status_code == 200
                with pytest.raises(HTTPReadTimeout):
                    await client.post(f"{base}/hang", content=b"{}", timeout=(5, 0.3))
                # A fresh connection answers; any resend of /hang was accepted before it.
                assert (await client.post(f"{base}/ok", content=b"{}")).status_code == 200
        finally:
            await client.aclose()
            tg.cancel_scope.cancel()
    assert hung == ["/hang"], "the timed-out POST was sent again"
    assert len(accepted) == 2
