#!/usr/bin/env python3
"""Checks run inside a fresh venv holding only the built wheel (and one extra).

    python scripts/installed_checks.py bare|http|trio|otel|auth|redis|llm|all

Called by ``scripts/user_paths.py wheel``; run from outside the checkout, so what is tested
is the installed package, never ``src/``.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import socket
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import anyio

import mcpkit
import mcpkit.types
from mcpkit import Client, Context, Server

BIN = Path(sys.executable).parent
MCPKIT = str(BIN / "mcpkit")
SERVER = textwrap.dedent(
    """
    from mcpkit import Server

    server = Server("installed")


    @server.tool()
    def add(a: int, b: int) -> int:
        '''Add two numbers.'''
        return a + b
    """
)


def check_package() -> None:
    where = Path(mcpkit.__file__).parent
    assert "site-packages" in str(where), f"mcpkit imported from {where}, not the wheel"
    assert (where / "py.typed").is_file(), "py.typed is missing from the wheel"
    missing = [n for n in mcpkit.__all__ if getattr(mcpkit, n, None) is None]
    missing += [f"types.{n}" for n in mcpkit.types.__all__ if not hasattr(mcpkit.types, n)]
    assert not missing, f"public names that do not import: {missing}"
    modules = [m.name for m in pkgutil.walk_packages(mcpkit.__path__, "mcpkit.")]
    for name in modules:
        importlib.import_module(name)
    version = subprocess.run([MCPKIT, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == f"mcpkit {mcpkit.__version__}", version.stdout
    print(
        f"ok: mcpkit {mcpkit.__version__}: {len(mcpkit.__all__)} names, "
        f"{len(mcpkit.types.__all__)} types, {len(modules)} modules import"
    )


async def call_add(target: Any) -> None:
    with anyio.fail_after(60):
        async with Client(target) as client:
            assert [t.name for t in await client.list_tools()] == ["add"]
            result = await client.call_tool("add", {"a": 2, "b": 3})
            assert result.structured_content == {"result": 5}, result


def check_stdio(server: Path) -> None:
    anyio.run(call_add, [MCPKIT, "run", str(server)])
    print("ok: `mcpkit run` serves a tool over stdio")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def call_over_http(server: Path, *options: str) -> None:
    port = free_port()
    argv = [MCPKIT, "run", str(server), "--transport", "http", "--port", str(port), *options]
    async with await anyio.open_process(argv) as proc:
        try:
            with anyio.fail_after(30):  # until uvicorn listens
                while True:
                    try:
                        await (await anyio.connect_tcp("127.0.0.1", port)).aclose()
                        break
                    except OSError:
                        await anyio.sleep(0.05)
            await call_add(f"http://127.0.0.1:{port}/mcp")
        finally:
            proc.terminate()


def check_http(server: Path, flavor: str) -> None:
    if flavor in ("http", "all"):
        anyio.run(call_over_http, server)
        print("ok: `mcpkit run --transport http` serves, and the client calls it over HTTP")
        return
    done = subprocess.run(
        [MCPKIT, "run", str(server), "--transport", "http"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1 and "mcpkit[http]" in done.stderr, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    print("ok: without [http], `mcpkit run --transport http` names the extra to install")


def check_granian(server: Path, flavor: str) -> None:
    if flavor in ("granian", "all"):
        anyio.run(call_over_http, server, "--http-server", "granian")
        print("ok: `mcpkit run --transport http --http-server granian` serves on granian")
        return
    done = subprocess.run(
        [MCPKIT, "run", str(server), "--transport", "http", "--http-server", "granian"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1 and "mcpkit[granian]" in done.stderr, (
        done.returncode,
        done.stderr,
    )
    assert "Traceback" not in done.stderr, done.stderr
    print("ok: without [granian], `--http-server granian` names the extra to install")


def check_inspect(server: Path, flavor: str) -> None:
    """``mcpkit inspect``: the page (an asset of the wheel) and its API, from the install."""
    argv = [MCPKIT, "inspect", str(server), "--no-open"]
    if flavor not in ("http", "all"):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 2 and "mcpkit[http]" in done.stderr, done.stderr
        print("ok: without [http], `mcpkit inspect` names the extra to install")
        return
    import json
    import urllib.request

    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().decode().strip()
        base, token = url.split("/?token=")
        with urllib.request.urlopen(url, timeout=10) as page:
            html = page.read().decode()
        assert "mcpkit inspector" in html and "schemaForm" in html, html[:200]
        headers = {"X-Inspector-Token": token}
        seq, connected = 0, False
        for _ in range(10):  # long polls of at most 20 s each
            request = urllib.request.Request(f"{base}/api/events?after={seq}", headers=headers)
            with urllib.request.urlopen(request, timeout=30) as answer:
                got = json.load(answer)["result"]
            seq = got["last"]
            if any(e["kind"] == "status" and e["state"] == "connected" for e in got["events"]):
                connected = True
                break
        assert connected, "the inspector never connected to the server"
        request = urllib.request.Request(f"{base}/api/list/tools", headers=headers)
        with urllib.request.urlopen(request, timeout=30) as answer:
            assert json.load(answer)["result"], "no tools listed"
    finally:
        proc.terminate()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()
    print("ok: `mcpkit inspect` serves its page from the wheel and reaches the server")


def check_trio(server: Path) -> None:
    code = (
        "import anyio, runpy, sys; "
        f"server = runpy.run_path({str(server)!r})['server']; "
        "anyio.run(server.serve_stdio, backend='trio')"
    )
    anyio.run(call_add, [sys.executable, "-c", code], backend="trio")
    print("ok: a server and a client under trio talk over stdio")


async def _traced_call() -> None:
    from opentelemetry import trace
    from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

    server = Server("traced")

    @server.tool()
    def parent(ctx: Context) -> str:
        """The traceparent the request carried."""
        return str((ctx.meta or {}).get("traceparent"))

    span = NonRecordingSpan(SpanContext(0xABC, 0xDEF, is_remote=False, trace_flags=TraceFlags(1)))
    with anyio.fail_after(60), trace.use_span(span):
        async with Client(server) as client:
            result = await client.call_tool("parent", {})
    expected = f"00-{0xABC:032x}-{0xDEF:016x}-01"
    assert [getattr(c, "text", None) for c in result.content] == [expected], result


def check_otel() -> None:
    anyio.run(_traced_call)
    print("ok: the active span's trace context reaches the server in _meta")


def check_proxy_without_httpx2() -> None:
    # A proxy in the environment needs httpx2: without it the error says how to get it.
    code = (
        "import anyio, os; from mcpkit import Client; "
        "os.environ['HTTP_PROXY'] = 'http://127.0.0.1:9'; os.environ.pop('NO_PROXY', None); "
        "\nasync def main():\n async with Client('http://127.0.0.1:1/mcp'): pass\n"
        "anyio.run(main)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode != 0 and "mcpkit[all]" in done.stderr, done.stderr[-2000:]
    print("ok: a proxy in the environment without httpx2 names the extra to install")


def check_auth_client() -> None:
    """The OAuth client builds without the [auth] extra (secrets need no PyJWT), and
    ``mcpkit auth status`` runs as a user types it."""
    from mcpkit.auth import ClientCredentials, OAuth

    OAuth(redirect_handler=lambda url: url, redirect_uri="http://127.0.0.1:1/callback")
    ClientCredentials("agent", "secret")
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "MCPKIT_AUTH_FILE": str(Path(tmp) / "auth.json")}
        out = subprocess.run(
            [sys.executable, "-m", "mcpkit", "auth", "status"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert out.returncode == 0 and "no logins" in out.stdout, out
    print("ok: the OAuth client builds and `mcpkit auth status` runs")


def check_auth(flavor: str) -> None:
    from mcpkit import InvalidToken
    from mcpkit.auth import JWTVerifier, ResourceServer, StaticTokenVerifier

    ResourceServer(StaticTokenVerifier({"t": ["s"]}), resource="http://127.0.0.1/mcp")
    check_auth_client()
    if flavor not in ("auth", "all"):
        try:
            JWTVerifier("https://as.example", "https://rs.example/mcp")
        except ImportError as e:
            assert "mcpkit[auth]" in str(e), e
            print("ok: without [auth], JWTVerifier names the extra to install")
            return
        raise AssertionError("JWTVerifier built without PyJWT")
    verifier = JWTVerifier("https://as.example", "https://rs.example/mcp")
    unsigned = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0."  # {"alg":"none"}: refused before any fetch

    async def refuse() -> None:
        try:
            await verifier.verify(unsigned)
        except InvalidToken as e:
            assert "none" in str(e), e
        else:
            raise AssertionError("an unsigned token was accepted")

    anyio.run(refuse)
    print("ok: [auth] verifies JWTs (PyJWT with cryptography installed)")


def check_redis(flavor: str) -> None:
    from mcpkit import RedisBackend

    if flavor not in ("redis", "all"):
        try:
            RedisBackend("redis://127.0.0.1:6379/0")
        except ImportError as e:
            assert "mcpkit[redis]" in str(e), e
            print("ok: without [redis], RedisBackend names the extra to install")
            return
        raise AssertionError("RedisBackend built without redis-py")
    import shutil
    import socket
    import subprocess

    exe = shutil.which("redis-server")
    if exe is None:
        raise AssertionError("redis-server is not installed (CI installs it)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [exe, "--port", str(port), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        backend = RedisBackend(f"redis://127.0.0.1:{port}/0")

        async def ping() -> None:
            for _ in range(100):
                try:
                    async with backend.guard("ping"):
                        assert await backend.client.ping()
                    return
                except Exception:  # noqa: PERF203 (not up yet: try again)
                    await anyio.sleep(0.05)
            raise AssertionError("redis-server did not answer")

        anyio.run(ping)
    finally:
        proc.terminate()
        proc.wait(10)
    print("ok: [redis] talks to a real redis-server")


def check_llm(flavor: str) -> None:
    """``mcpkit.sampling``: a handler builds and answers through a local fake of OpenAI's
    Chat Completions API with [llm] (or [all]); without it, building one names the extra."""
    from mcpkit.sampling import OpenAIHandler

    if flavor not in ("llm", "all"):
        try:
            OpenAIHandler("gpt-test", api_key="k")
        except ImportError as e:
            assert "mcpkit[llm]" in str(e), e
            print("ok: without [llm], OpenAIHandler names the extra to install")
            return
        raise AssertionError("OpenAIHandler built without httpx2")
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from mcpkit.types import CreateMessageRequestParams, SamplingMessage, TextContent

    seen: list[Any] = []

    class FakeOpenAI(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            seen.append((self.path, self.headers.get("authorization"), body))
            reply = {"model": body["model"], "choices": [{"finish_reason": "stop", "message": {}}]}
            reply["choices"][0]["message"] = {"role": "assistant", "content": "pong"}
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    fake = ThreadingHTTPServer(("127.0.0.1", 0), FakeOpenAI)
    thread = threading.Thread(target=fake.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{fake.server_address[1]}/v1"
        handler = OpenAIHandler("gpt-test", api_key="k", base_url=url)
        ping = SamplingMessage(role="user", content=TextContent(type="text", text="ping"))
        params = CreateMessageRequestParams(messages=[ping], max_tokens=16)
        result = anyio.run(handler, params)
    finally:
        fake.shutdown()
        fake.server_close()
        thread.join(10)
    assert getattr(result.content, "text", None) == "pong", result
    path, auth, body = seen[0]
    assert (path, auth) == ("/v1/chat/completions", "Bearer k"), seen
    assert body["messages"] == [{"role": "user", "content": "ping"}], body
    print("ok: [llm] OpenAIHandler answers through a local Chat Completions API")


def main(flavor: str) -> None:
    check_package()
    with tempfile.TemporaryDirectory() as tmp:
        server = Path(tmp) / "server.py"
        server.write_text(SERVER)
        check_stdio(server)
        check_http(server, flavor)
        check_granian(server, flavor)
        check_inspect(server, flavor)
        if flavor in ("trio", "all"):
            check_trio(server)
    if flavor in ("otel", "all"):
        check_otel()
    check_auth(flavor)
    check_redis(flavor)
    check_llm(flavor)
    if flavor == "bare":
        check_proxy_without_httpx2()
    if flavor == "all":
        import httpx2  # noqa: F401  - `http_client=` and httpx2 auth need it

        print("ok: httpx2 is installed with [all]")


if __name__ == "__main__":
    os.environ.pop("PYTHONPATH", None)
    main(sys.argv[1])
