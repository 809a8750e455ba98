# ruff: noqa: ASYNC220  (the server process is started from a test coroutine)
"""``mcpkit run FILE --transport http|sse`` end to end, and a server failing in the middle of a
session (500, a connection cut mid-stream): the client raises promptly and the session goes on."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from _http_helpers import CLIENT_INFO, DemoServer, read_body, replaying, running
from tests._served import Served

from mcpkit._app import create_http_app
from mcpkit._exceptions import ProtocolError
from mcpkit._http import open_sse, open_streamable_http
from mcpkit._session import ClientSession

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

ROOT = Path(__file__).resolve().parents[2]


def _mcpkit() -> list[str]:
    exe = Path(sys.executable).parent / "mcpkit"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "mcpkit._cli"]


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_mcpkit_run_serves_a_file_over_http(transport: str) -> None:
    argv = [*_mcpkit(), "run", str(ROOT / "examples" / "everything.py")]
    argv += ["--transport", transport, "--host", "127.0.0.1", "--port", "0"]
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    served = Served(proc)
    try:
        # The announced URL names the endpoint and the port the OS picked.
        url = await anyio.to_thread.run_sync(served.url)
        assert url.startswith("http://127.0.0.1:")
        assert url.endswith("/mcp" if transport == "http" else "/sse"), url
        opener = open_streamable_http(url) if transport == "http" else open_sse(url)
        with anyio.fail_after(20):
            async with opener as t, ClientSession(t, client_info=CLIENT_INFO) as cs:
                init = await cs.initialize()
                assert init["serverInfo"]["name"]
                tools = await cs.send_request("tools/list", timeout=10)
                assert tools["tools"]
                if transport == "http":
                    assert t.session_id is not None
        proc.send_signal(signal.SIGINT)
        await anyio.to_thread.run_sync(proc.wait, 10)
        assert proc.returncode in (0, 130, -2), proc.returncode
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        served.close()


class Failing:
    """ASGI middleware over the real app: ``tools/call`` of ``gated`` fails as told."""

    def __init__(self, app: Any, mode: str) -> None:
        self.app = app
        self.mode = mode
        self.resumes = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.app, name)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        if scope["method"] == "GET" and "last-event-id" in headers:
            self.resumes += 1
            if self.mode == "cut-then-500":
                await send({"type": "http.response.start", "status": 500, "headers": []})
                await send({"type": "http.response.body", "body": b"resume refused"})
                return
        body = await read_body(receive)
        target = b'"gated"' in body
        if target and self.mode == "500":
            await send(
                {"type": "http.response.start", "status": 500, "headers": [(b"content-type", b"text/plain")]}
            )  # fmt: skip
            await send({"type": "http.response.body", "body": b"internal error"})
            return
        replay = replaying(body, receive)
        if not (target and self.mode.startswith("cut")):
            await self.app(scope, replay, send)
            return
        # The server dies mid-stream: once the stream has started (after the priming event
        # when there is one), nothing more is sent and the connection is dropped without
        # the end of the chunked body (uvicorn aborts it when the app raises).
        cut_after = (
            "http.response.start" if self.mode == "cut-not-resumable" else "http.response.body"
        )
        async with anyio.create_task_group() as tg:

            async def cut(m: Any) -> None:
                await send(m)
                if m["type"] == cut_after:
                    tg.cancel_scope.cancel()

            tg.start_soon(self.app, scope, replay, cut)
        raise RuntimeError("the server died mid-stream")


@pytest.mark.parametrize("mode", ["500", "cut-then-500", "cut-not-resumable"])
async def test_server_failing_mid_session_fails_the_call_promptly(
    demo: DemoServer, mode: str
) -> None:
    app = create_http_app(demo, retry_ms=200, resumable=mode != "cut-not-resumable")
    failing = Failing(app, mode)
    with running(failing) as srv, anyio.fail_after(20):
        async with (
            open_streamable_http(srv.url) as t,
            ClientSession(t, client_info=CLIENT_INFO) as cs,
        ):
            await cs.initialize()
            t0 = time.monotonic()
            with pytest.raises(ProtocolError) as ei:
                await cs.send_request(
                    "tools/call", {"name": "gated", "arguments": {}}, timeout=None
                )
            elapsed = time.monotonic() - t0
            assert elapsed < 3, elapsed  # no hang: well before any timeout (there is none)
            expected = {
                "500": "HTTP 500",
                "cut-then-500": "resuming failed: HTTP 500",
                "cut-not-resumable": "closed the stream",
            }[mode]
            assert expected in str(ei.value)
            assert failing.resumes == (1 if mode == "cut-then-500" else 0)
            # The session itself is fine: the next call goes through.
            r = await cs.send_request(
                "tools/call", {"name": "echo", "arguments": {"text": "still here"}}, timeout=10
            )
            assert r["content"][0]["text"] == "still here"
            assert not t.session_expired and t.renewals == 0
    demo.gate.set()
