"""The HTTP client follows redirects as a well-kept client does: the FastAPI mount of
docs/http.md (``/mcp`` answers 307 to ``/mcp/``) works with ``mcpkit call`` and ``Client``;
307/308 keep the method and body; a hop to another origin carries no credentials."""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from _http_helpers import read_body, running
from fastapi import FastAPI

from mcpkit import Client, Server, create_http_app
from mcpkit._client._cli import main as cli
from mcpkit._exceptions import HTTPError
from mcpkit._http._h1client import MAX_REDIRECTS, HTTP1Client


def _fastapi_app() -> Any:
    # Exactly as docs/http.md shows it.
    server = Server("demo")

    @server.tool()
    def stats() -> str:
        """Some statistics."""
        return "42 calls"

    mcp_app = create_http_app(server, path="/")

    @asynccontextmanager
    async def lifespan(app: Any) -> Any:
        async with mcp_app:
            yield

    app = FastAPI(lifespan=lifespan)
    app.mount("/mcp", mcp_app)
    return app


def test_the_documented_fastapi_mount_works_from_the_cli(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with running(_fastapi_app()) as srv:
        code = cli("call", [f"http://127.0.0.1:{srv.port}/mcp", "stats"])
    out, err = capsys.readouterr()
    assert (code, out.strip()) == (0, "42 calls"), err


@pytest.mark.anyio
async def test_the_documented_fastapi_mount_works_from_client() -> None:
    with running(_fastapi_app()) as srv, anyio.fail_after(30):
        async with Client(f"http://127.0.0.1:{srv.port}/mcp") as client:
            result = await client.call_tool("stats", {})
    assert result.content[0].text == "42 calls"  # type: ignore[union-attr]


class Hops:
    """An ASGI app: ``/go/<status>?to=<url>`` redirects; ``/echo`` says what it received."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = await read_body(receive)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        path = scope["path"]
        if path == "/loop":
            await send(
                {"type": "http.response.start", "status": 302, "headers": [(b"location", b"/loop")]}
            )
            await send({"type": "http.response.body", "body": b""})
            return
        if path.startswith("/go/"):
            to = scope["query_string"].decode().removeprefix("to=")
            status = int(path.rsplit("/", 1)[1])
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [(b"location", to.encode())],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return
        self.seen.append({"method": scope["method"], "body": body, "headers": headers})
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("status", "method"), [(307, "POST"), (308, "POST"), (303, "GET"), (302, "GET")]
)
async def test_redirect_methods(status: int, method: str) -> None:
    hops = Hops()
    with running(hops) as srv, anyio.fail_after(20):
        base = f"http://127.0.0.1:{srv.port}"
        async with HTTP1Client() as http:
            r = await http.post(f"{base}/go/{status}?to=/echo", content=b"payload")
    assert r.status_code == 200
    (seen,) = hops.seen
    assert seen["method"] == method
    assert seen["body"] == (b"payload" if method == "POST" else b"")


@pytest.mark.anyio
async def test_credentials_stay_on_their_origin() -> None:
    first, second = Hops(), Hops()
    with running(first) as a, running(second) as b, anyio.fail_after(20):
        a_url, b_url = f"http://127.0.0.1:{a.port}", f"http://127.0.0.1:{b.port}"
        secret = {"authorization": "Bearer s3cret", "x-trace": "keep"}
        async with HTTP1Client(auth=lambda: {"authorization": "Bearer from-hook"}) as http:
            await http.post(f"{a_url}/go/307?to=/echo", content=b"x", headers=secret)
            await http.post(f"{a_url}/go/307?to={b_url}/echo", content=b"x", headers=secret)
    (same,) = first.seen
    (other,) = second.seen
    assert same["headers"]["authorization"] == "Bearer from-hook"  # the hook's, same origin
    assert "authorization" not in other["headers"]  # neither ours nor the hook's
    assert other["headers"]["x-trace"] == "keep"


@pytest.mark.anyio
async def test_a_redirect_loop_is_cut() -> None:
    with running(Hops()) as srv, anyio.fail_after(20):
        async with HTTP1Client() as http:
            with pytest.raises(HTTPError, match=f"more than {MAX_REDIRECTS} redirects"):
                await http.get(f"http://127.0.0.1:{srv.port}/loop")


@pytest.mark.anyio
async def test_a_redirect_off_http_is_refused_naming_the_url() -> None:
    # The target's origin cannot be parsed as ours (another scheme): no credentials follow,
    # and the request is refused as an unsupported URL rather than sent anywhere.
    with running(Hops()) as srv, anyio.fail_after(20):
        async with HTTP1Client(auth=lambda: {"authorization": "Bearer from-hook"}) as http:
            with pytest.raises(HTTPError, match=r"unsupported URL 'ftp://127\.0\.0\.1/x'"):
                await http.get(f"http://127.0.0.1:{srv.port}/go/302?to=ftp://127.0.0.1/x")
