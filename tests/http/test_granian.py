"""The Streamable HTTP endpoint on granian's RSGI (the ``[granian]`` extra), on real sockets.

One granian server, started as a user starts it (``python granian_app.py``:
``Server.run("http", http_server="granian")`` on granian's embeddable server), serves the
whole module: a real client calls a tool and follows a streamed answer in both eras, a
listen stream flows and its slot is given back once its client leaves, and a list of hostile
requests is answered by granian exactly as the ASGI app answers them in process (the one
edge, ``serve_exchange``, decides for both: nothing is skipped). ``granian --interface rsgi
granian_app:app`` (the app as an RSGI application, its lifespan run by granian's worker) has
one test of its own. Skipped only where granian is not installed (CI installs it: the
``[test]`` extra).
"""

from __future__ import annotations

import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from _http_helpers import HEADERS, asgi_call, free_port
from _wire import Conn, request

import mcpkit

pytest.importorskip("granian")
httpx = pytest.importorskip("httpx2")

import granian_app  # noqa: E402  (after the skip: it is the server the tests run)

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ERAS = ["2025-11-25", "2026-07-28"]
REV = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": REV,
    "io.modelcontextprotocol/clientCapabilities": {},
}


class Process:
    """A server process whose output a thread reads to its end; :meth:`wait_for` waits,
    bounded, for a line matching a pattern."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        # granian's own log lines go to stdout: read with stderr, as one stream.
        self.proc = subprocess.Popen(
            argv,
            cwd=HERE,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        self.lines: list[str] = []
        self._new: queue.Queue[str | None] = queue.Queue()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            line = raw.decode(errors="replace").rstrip("\n")
            self.lines.append(line)
            self._new.put(line)
        self._new.put(None)

    def wait_for(self, pattern: str, timeout: float = 20) -> re.Match[str]:
        """The first line (from now on) matching ``pattern``; fails if the process ends or
        stays silent for ``timeout`` seconds."""
        while True:
            try:
                line = self._new.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"no {pattern!r} within {timeout} s:\n{self.log}") from None
            if line is None:
                raise AssertionError(f"the server exited before {pattern!r}:\n{self.log}")
            found = re.search(pattern, line)
            if found:
                return found

    @property
    def log(self) -> str:
        return "\n".join(self.lines[-40:])

    def stop(self, sig: int = signal.SIGINT) -> int:
        """Signal the process, wait for it (bounded) and return its exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout=15)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self._thread.join(timeout=10)
            assert self.proc.stdout is not None
            self.proc.stdout.close()
        return code


def _env(**extra: str) -> dict[str, str]:
    paths = [str(ROOT / "src"), str(HERE), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p), **extra}


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, Process]]:
    """The module's one granian server (``Server.run`` with ``http_server="granian"``; no
    ``MCPKIT_HTTP_SERVER``, so the keyword alone chooses granian) and its URL."""
    env = {k: v for k, v in _env().items() if k != "MCPKIT_HTTP_SERVER"}
    proc = Process([sys.executable, "granian_app.py"], env)
    try:
        url = proc.wait_for(r"^mcpkit: serving .+ on granian at (http://\S+) \(Ctrl-C").group(1)
        yield url, proc
    finally:
        code = proc.stop(signal.SIGTERM)
    # A SIGTERM is a graceful stop: the lifespan ended, the process exits 0, no traceback.
    assert code == 0, proc.log
    assert "granian_app: lifespan down" in proc.lines, proc.log
    assert not any("Traceback" in line for line in proc.lines), proc.log


@pytest.fixture
async def http() -> AsyncIterator[Any]:
    async with httpx.AsyncClient(timeout=20) as client:
        yield client


@pytest.mark.parametrize("era", ERAS)
async def test_a_client_calls_tools_and_follows_a_streamed_answer(
    served: tuple[str, Process], era: str
) -> None:
    url, proc = served
    assert "granian_app: lifespan up" in proc.lines  # the server's lifespan spans serving
    progress: list[tuple[float, float | None]] = []
    with anyio.fail_after(20):
        async with mcpkit.Client(url, protocol_version=era) as client:
            assert client.protocol_version == era
            result = await client.call_tool("echo", {"text": "over granian"})
            assert result.content[0].text == "over granian"  # type: ignore[union-attr]
            # Three progress notifications 0.1 s apart, then the result: an SSE answer
            # written through granian's response stream as it happens.
            done = await client.call_tool(
                "steps", {"n": 3}, progress_handler=lambda p, t, m: progress.append((p, t))
            )
    assert done.content[0].text == "3 steps"  # type: ignore[union-attr]
    assert progress == [(1, 3), (2, 3), (3, 3)]


def _listen(rid: str) -> bytes:
    params = {"notifications": {"toolsListChanged": True}, "_meta": META}
    body = {"jsonrpc": "2.0", "id": rid, "method": "subscriptions/listen", "params": params}
    return orjson.dumps(body)


LISTEN_HEADERS = {**HEADERS, "mcp-protocol-version": REV, "mcp-method": "subscriptions/listen"}


async def _open_listen(port: int, rid: str) -> tuple[Conn, int]:
    """A listen stream POSTed on a connection of its own, and its status (its head read)."""
    conn = Conn(await anyio.connect_tcp("127.0.0.1", port))
    await conn.send(request("POST", "/mcp", _listen(rid), LISTEN_HEADERS))
    head = await conn.until(b"\r\n\r\n")
    return conn, int(head.split(b" ", 2)[1])


async def test_a_listen_stream_flows_and_its_slot_returns_when_its_client_leaves(
    served: tuple[str, Process],
) -> None:
    """2026-07-28 ``subscriptions/listen``: an SSE stream that never ends on its own. The app
    holds one at a time (``max_listen_streams=1``): while it is open a second is refused,
    and once its client leaves (granian's ``client_disconnect``) the slot is given back.
    (Raw connections: one per stream, whatever a client library's pool would do.)"""
    url, _ = served
    port = int(url.split(":")[2].split("/")[0])
    with anyio.fail_after(20):
        first, status = await _open_listen(port, "a")
        assert status == 200
        # Written through granian's response stream as it happens: chunked, no length.
        assert b"notifications/subscriptions/acknowledged" in await first.until(b"\n\n")
        busy, status = await _open_listen(port, "b")
        assert status == 503
        await busy.stream.aclose()
        await first.stream.aclose()  # the first client leaves
        while True:  # the server sees it: the slot comes back (bounded)
            again, status = await _open_listen(port, "c")
            await again.stream.aclose()
            if status == 200:
                break
            assert status == 503
            await anyio.sleep(0.05)  # polling the server's state, not ordering our own steps


def _call(rid: int, name: str = "echo", meta: dict[str, Any] | None = None) -> bytes:
    params: dict[str, Any] = {"name": name, "arguments": {"text": "x"}}
    if meta is not None:
        params["_meta"] = meta
    return orjson.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})


V26 = {"mcp-protocol-version": REV, "mcp-method": "tools/call", "mcp-name": "echo"}
#: (method, path, headers, body) the edge refuses; each answered as the ASGI app answers.
HOSTILE: dict[str, tuple[str, str, dict[str, str], bytes]] = {
    "origin not allowed": ("POST", "/mcp", {**HEADERS, "origin": "http://evil.example"}, _call(1)),
    "origin not allowed (2026)": (
        "POST", "/mcp", {**HEADERS, **V26, "origin": "http://evil.example"}, _call(1, meta=META)
    ),
    "host not allowed": ("POST", "/mcp", {**HEADERS, "host": "evil.example"}, _call(1)),
    "not accepting SSE": ("POST", "/mcp", {**HEADERS, "accept": "application/json"}, _call(1)),
    "not JSON": ("POST", "/mcp", {**HEADERS, "content-type": "text/plain"}, _call(1)),
    "declared too large": ("POST", "/mcp", HEADERS, b" " * (granian_app.MAX_BODY + 1)),
    "malformed JSON": ("POST", "/mcp", HEADERS, b'{"jsonrpc": "2.0",'),
    "not JSON-RPC": ("POST", "/mcp", HEADERS, b'{"jsonrpc": "1.0", "id": 1}'),
    "unknown session": ("POST", "/mcp", {**HEADERS, "mcp-session-id": "nope"}, _call(1)),
    "no session": ("POST", "/mcp", HEADERS, _call(1)),
    "2026 header missing": (
        "POST", "/mcp", {**HEADERS, "mcp-protocol-version": REV}, _call(1, meta=META)
    ),
    "2026 header disagrees": (
        "POST", "/mcp", {**HEADERS, **V26, "mcp-name": "other"}, _call(1, meta=META)
    ),
    "upgrade with a body": ("POST", "/mcp", {**HEADERS, "connection": "upgrade"}, _call(1)),
    "GET in 2026": ("GET", "/mcp", {"accept": "text/event-stream", **V26}, b""),
    "PUT": ("PUT", "/mcp", HEADERS, b"{}"),
    "another path": ("POST", "/other", HEADERS, _call(1)),
}  # fmt: skip


async def test_hostile_requests_are_answered_as_the_asgi_app_answers_them(
    served: tuple[str, Process],
) -> None:
    """The same edge behind both front ends: status, content type and body alike."""
    url, _ = served
    base = url.rsplit("/", 1)[0]
    app = granian_app.server.http_app(
        max_body_size=granian_app.MAX_BODY,
        max_listen_streams=granian_app.MAX_LISTEN,
        body_timeout=granian_app.SLOW,
    )
    async with app:
        for name, (method, path, headers, body) in HOSTILE.items():
            await _alike(name, app, base, method, path, headers, body)


async def _alike(
    name: str, app: Any, base: str, method: str, path: str, headers: dict[str, str], body: bytes
) -> None:
    """One request to granian and to ``app`` in process: the same answer."""
    with anyio.fail_after(10):
        # In process as a server hands it over: the body's length declared.
        declared = {**headers, "content-length": str(len(body))} if body else headers
        status, got_headers, got = await asgi_call(app, method, declared, body, path)
        # A connection each: granian closes one whose body it did not read (413).
        async with httpx.AsyncClient(timeout=10) as one:
            r = await one.request(method, base + path, headers=headers, content=body)
    assert status >= 400, name
    assert (r.status_code, r.content) == (status, got), name
    assert r.headers.get("content-type") == got_headers.get("content-type"), name


async def test_a_repeated_standard_header_and_a_chunked_body_too_large_are_refused(
    served: tuple[str, Process], http: Any
) -> None:
    """What a dict of headers cannot say in process: a header given twice (granian hands
    both: 400 naming it), and a body without a declared length that grows past the limit
    (read chunk by chunk, refused once past it: 413); the server serves on."""
    url, _ = served
    twice = [*V26.items(), *HEADERS.items(), ("mcp-protocol-version", REV)]
    with anyio.fail_after(20):
        r = await http.post(url, headers=twice, content=_call(1, meta=META))
        assert r.status_code == 400
        assert r.json()["error"]["data"] == {"header": "MCP-Protocol-Version"}

        async def chunks() -> AsyncIterator[bytes]:
            for _ in range(4):
                yield b" " * (granian_app.MAX_BODY // 2)

        r = await http.post(url, headers=HEADERS, content=chunks())
        assert "content-length" not in r.request.headers  # sent chunked
        assert r.status_code == 413
        assert "Payload Too Large" in r.json()["error"]["message"]
        # granian closes a connection whose body it did not read in full: a new one.
        async with httpx.AsyncClient(timeout=20) as fresh:
            ok = await fresh.post(url, headers={**HEADERS, **V26}, content=_call(2, meta=META))
        assert ok.status_code == 200


async def test_granian_cli_serves_the_app_as_rsgi_with_its_lifespan() -> None:
    """``granian --interface rsgi granian_app:app``: the app is an RSGI application; the
    server's lifespan starts before requests and ends when granian stops its worker."""
    port = free_port()
    argv = [sys.executable, "-m", "granian", "--interface", "rsgi", "--host", "127.0.0.1"]
    proc = Process([*argv, "--port", str(port), "granian_app:app"], _env())
    try:
        # The worker hosts the app (__rsgi_init__), then binds its socket.
        proc.wait_for(r"^granian_app: lifespan up$")
        with anyio.fail_after(20):
            await _until_listening(port, proc)
            async with mcpkit.Client(f"http://127.0.0.1:{port}/mcp", protocol_version=REV) as c:
                result = await c.call_tool("echo", {"text": "rsgi"})
        assert result.content[0].text == "rsgi"  # type: ignore[union-attr]
    finally:
        code = proc.stop(signal.SIGINT)
    assert code == 0, proc.log
    assert "granian_app: lifespan down" in proc.lines, proc.log


async def _until_listening(port: int, proc: Process) -> None:
    """Until ``port`` takes connections: granian announces nothing once its worker listens
    (its "Listening at" line comes first), so it is polled, as for other foreign servers."""
    while True:
        try:
            stream = await anyio.connect_tcp("127.0.0.1", port)
        except OSError:
            assert proc.proc.poll() is None, proc.log
            await anyio.sleep(0.05)
            continue
        await stream.aclose()
        return


def test_the_server_choice_is_checked_before_anything_listens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``http_server`` (else ``MCPKIT_HTTP_SERVER``) names uvicorn or granian; another name,
    uvicorn's options or the legacy transport with granian are refused, naming the setting."""
    from mcpkit._app._serve import http_server_choice, serve_http

    monkeypatch.delenv("MCPKIT_HTTP_SERVER", raising=False)
    assert http_server_choice(None) == "uvicorn"
    monkeypatch.setenv("MCPKIT_HTTP_SERVER", " Granian ")
    assert http_server_choice(None) == "granian"
    assert http_server_choice("uvicorn") == "uvicorn"  # the keyword wins
    monkeypatch.setenv("MCPKIT_HTTP_SERVER", "hypercorn")
    with pytest.raises(ValueError, match=r"MCPKIT_HTTP_SERVER='hypercorn': use uvicorn or granian"):
        http_server_choice(None)
    with pytest.raises(ValueError, match=r"http_server='nope'"):
        http_server_choice("nope")
    server = granian_app.server
    with pytest.raises(ValueError, match="uvicorn_options apply to uvicorn only"):
        serve_http(server, port=0, http_server="granian", uvicorn_options={"http": "h11"})
    with pytest.raises(ValueError, match="legacy_sse is served by the ASGI app"):
        serve_http(server, port=0, http_server="granian", legacy_sse=True)


def test_mcpkit_run_refuses_a_wrong_http_server_variable_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``MCPKIT_HTTP_SERVER`` naming no server: ``mcpkit run -t http`` says so in one line
    and exits 2 before loading the file, as for any other wrong setting."""
    from mcpkit._server._cli import main

    monkeypatch.setenv("MCPKIT_HTTP_SERVER", "hypercorn")
    assert main("run", [str(ROOT / "examples" / "everything.py"), "-t", "http"]) == 2
    err = capsys.readouterr().err
    assert err == "mcpkit run: MCPKIT_HTTP_SERVER='hypercorn': use uvicorn or granian\n"


def test_a_slow_body_gets_408_and_a_slow_head_is_cut(served: tuple[str, Process]) -> None:
    """Slowloris under granian: a body slower than ``body_timeout`` is answered 408 by the
    edge (as under uvicorn), a head slower than ``header_timeout`` ends the connection
    (granian's ``header_read_timeout``). Plain sockets, each wait bounded."""
    url, _ = served
    port = int(url.split(":")[2].split("/")[0])
    head = "".join(f"{k}: {v}\r\n" for k, v in HEADERS.items())
    slow_body = f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n{head}content-length: 100\r\n\r\n{{"
    body_answer = _until_closed(port, slow_body.encode())
    assert body_answer.startswith(b"HTTP/1.1 408 "), body_answer
    assert b"Request Timeout: the body is too slow" in body_answer
    # The head never completed: the connection is closed without an answer.
    assert _until_closed(port, b"POST /mcp HTTP/1.1\r\nhost: 127.0") == b""


def _until_closed(port: int, wire: bytes) -> bytes:
    """Send ``wire`` and read until the server closes (bounded by the socket's timeout)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(wire)
        got = b""
        while chunk := sock.recv(65536):
            got += chunk
    return got


def _mcpkit_run(*args: str, **env: str) -> list[str]:
    exe = Path(sys.executable).parent / "mcpkit"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "mcpkit._cli"]
    return [*cmd, "run", str(ROOT / "examples" / "everything.py"), *args]


async def test_mcpkit_run_http_server_flag_serves_on_granian() -> None:
    """``mcpkit run FILE -t http --http-server granian``: the flag, as documented, runs the
    server on granian (its log says so), and a real client lists and calls tools."""
    argv = _mcpkit_run("-t", "http", "--http-server", "granian", "--port", str(free_port()))
    env = {k: v for k, v in _env().items() if k != "MCPKIT_HTTP_SERVER"}
    proc = Process(argv, env)
    try:
        url = proc.wait_for(r"^mcpkit: serving .+ on granian at (http://\S+) \(Ctrl-C").group(1)
        with anyio.fail_after(30):
            async with mcpkit.Client(url) as client:
                tools = await client.list_tools()
                assert "add" in {t.name for t in tools}
                result = await client.call_tool("add", {"a": 2, "b": 3})
        assert not result.is_error and "5" in str(result.content[0])
    finally:
        code = proc.stop(signal.SIGINT)
    assert code in (0, 130), proc.log


def test_the_legacy_transport_refuses_granian_and_ignores_the_variable() -> None:
    """granian serves the ``http`` transport only: ``-t sse --http-server granian`` is one
    line and exit 2; ``MCPKIT_HTTP_SERVER=granian`` names the http transport's server, so
    ``-t sse`` under it still serves (on uvicorn)."""
    argv = _mcpkit_run("-t", "sse", "--http-server", "granian", "--port", str(free_port()))
    done = subprocess.run(argv, env=_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "--http-server: the legacy sse transport is served by uvicorn only" in done.stderr
    assert "Traceback" not in done.stderr
    argv = _mcpkit_run("-t", "sse", "--port", str(free_port()))
    proc = Process(argv, _env(MCPKIT_HTTP_SERVER="granian"))
    try:
        proc.wait_for(r"^mcpkit: serving HTTP\+SSE .+ at (http://\S+)")
    finally:
        proc.stop(signal.SIGINT)
