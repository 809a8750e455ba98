"""``mcpkit auth dev-issuer``: docs/auth.md's walkthrough run as written (real processes:
the issuer, ``examples/protected_server.py`` trusting it through ``JWTVerifier``, and the
client commands), ``mcpkit auth login`` against an issuer without registration naming
``--client-id``, and the issuer's own refusals (driven in process, on both backends)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import queue
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import anyio
import jwt
import pytest
from tests.conftest import BACKEND

from mcpkit._auth._devissuer import DevIssuer

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
BROWSER = Path(__file__).with_name("_detached_browser.py")
one_pass = pytest.mark.skipif(
    BACKEND != "asyncio", reason="separate processes: one pass (asyncio) is enough"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def walkthrough() -> list[str]:
    """The sh blocks of docs/auth.md's development-issuer section, in order."""
    page = (ROOT / "docs" / "auth.md").read_text()
    section = page.split("## Trying it on one machine", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, re.S)


def environment(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPKIT_AUTH")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"  # `mcpkit` as a user runs it
    env["MCPKIT_AUTH_FILE"] = str(tmp_path / "auth.json")  # not the developer's logins
    env["BROWSER"] = f"{shlex.quote(sys.executable)} {shlex.quote(str(BROWSER))} %s"
    return env


class Running:
    """A long-running command of the page, its output lines read as they come."""

    def __init__(self, command: str, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            ["bash", "-c", command],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def wait_for(self, text: str, timeout: float = 30) -> str:
        while True:
            try:
                line = self.lines.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"no {text!r} within {timeout} s: {self.seen}") from None
            assert line is not None, f"exited before {text!r}: {self.seen}"
            self.seen.append(line)
            if text in line:
                return line

    def stop(self) -> None:
        # The shell and the command it started: their own process group.
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=15)
        self._reader.join(timeout=15)  # the pipe's end, once the command is gone
        assert self.proc.stdout is not None
        self.proc.stdout.close()


@contextmanager
def running(command: str, env: dict[str, str]) -> Iterator[Running]:
    proc = Running(command, env)
    try:
        yield proc
    finally:
        proc.stop()


def run_lines(block: str, env: dict[str, str]) -> list[tuple[int, str]]:
    """Each command line of ``block`` in one shell (variables carry over): its exit status
    and its output (stdout and stderr)."""
    script = ["exec 2>&1"]
    for line in block.strip().splitlines():
        script += [line, 'echo "::exit $?"']
    done = subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    parts = re.split(r"::exit (\d+)\n", done.stdout)
    return [(int(parts[i + 1]), parts[i]) for i in range(0, len(parts) - 1, 2)]


@one_pass
def test_the_walkthrough_of_docs_auth_md_runs_as_written(tmp_path: Path) -> None:
    issuer_port, server_port = free_port(), free_port()
    blocks = [
        b.replace("9400", str(issuer_port)).replace("8000", str(server_port)) for b in walkthrough()
    ]
    assert len(blocks) == 3 and "mcpkit auth dev-issuer" in blocks[0]
    issuer, url = f"http://127.0.0.1:{issuer_port}", f"http://127.0.0.1:{server_port}/mcp"
    env = environment(tmp_path)
    with running(blocks[0].strip(), env) as dev_issuer:
        assert dev_issuer.wait_for(issuer) == issuer  # its URL, alone on the first line
        assert "DEVELOPMENT ONLY" in dev_issuer.wait_for("mcpkit auth dev-issuer:")
        with running(blocks[1].strip(), env) as server:
            server.wait_for(f"serving Streamable HTTP (sessions in this process) at {url}")
            results = run_lines(blocks[2], env)
    assert len(results) == 7, results
    (refused, out), login, (c1, called), status, logout, token, (c2, as_alice) = results
    assert refused == 1 and "401" in out and f"run `mcpkit auth login {url}`" in out
    assert login[0] == 0 and f"logged in to {url} through {issuer}" in login[1], login
    assert c1 == 0, called
    who = json.loads(called)
    assert who["subject"] == "dev-user" and who["scopes"] == ["mcp:tools"]
    assert who["client_id"].startswith("dev-")  # registered by itself
    assert status[0] == 0 and url in status[1] and "eyJ" not in status[1], status
    assert logout == (0, f"logged out of {url}\n")
    assert token == (0, "")
    assert c2 == 0 and json.loads(as_alice) == {
        "subject": "alice",
        "client_id": "mcpkit-dev",
        "scopes": ["mcp:tools"],
    }


@one_pass
def test_login_without_registration_names_client_id(tmp_path: Path) -> None:
    issuer_port, server_port = free_port(), free_port()
    issuer, url = f"http://127.0.0.1:{issuer_port}", f"http://127.0.0.1:{server_port}/mcp"
    env = environment(tmp_path)
    server_env = {**env, "MCPKIT_AUTH_ISSUER": issuer, "MCPKIT_AUTH_RESOURCE": url}
    serve = f"mcpkit run examples/protected_server.py --transport http --port {server_port}"
    with (
        running(f"mcpkit auth dev-issuer --port {issuer_port} --no-registration", env) as dev,
        running(serve, server_env) as server,
    ):
        dev.wait_for(issuer)
        server.wait_for("serving Streamable HTTP")
        login = ["mcpkit", "auth", "login", url]
        done = subprocess.run(
            login, env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
        )
        assert done.returncode == 1
        assert "no dynamic registration" in done.stderr and "--client-id" in done.stderr
        assert "OAuth(client_id" not in done.stderr and "temporarily_unavailable" not in done.stderr
        done = subprocess.run(
            [*login, "--client-id", "my-cli"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0 and f"through {issuer}" in done.stdout, done.stderr
        called = subprocess.run(
            ["mcpkit", "call", url, "whoami"], env=env, capture_output=True, text=True, timeout=60
        )
        assert json.loads(called.stdout)["client_id"] == "my-cli", called.stderr


@one_pass
def test_dev_token_refuses_a_remote_issuer_and_a_busy_port_is_one_line(tmp_path: Path) -> None:
    env = environment(tmp_path)
    done = subprocess.run(
        ["mcpkit", "auth", "dev-token", "https://auth.example.com"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "not a loopback URL" in done.stderr and not done.stdout
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        done = subprocess.run(
            ["mcpkit", "auth", "dev-issuer", "--port", str(port)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 2 and not done.stdout
    assert done.stderr.strip().splitlines() == [
        f"mcpkit auth dev-issuer: cannot listen on 127.0.0.1:{port} (Address already in use); "
        "pick another with --port"
    ]


# ---------------------------------------------------------------- in process


async def asgi(
    app: Any,
    method: str,
    target: str,
    body: bytes = b"",
    host: str = "127.0.0.1:9400",
    **headers: str,
) -> tuple[int, dict[str, str], Any]:
    """One request to the ASGI app: status, headers, JSON body."""
    path, _, query = target.partition("?")
    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "query_string": query.encode(),
        "headers": [(b"host", host.encode())]
        + [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()],
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    start = sent[0]
    answer = {k.decode(): v.decode() for k, v in start["headers"]}
    return start["status"], answer, json.loads(sent[1]["body"])


FORM = "application/x-www-form-urlencoded"


def pkce() -> tuple[str, str]:
    verifier = "v" * 50
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


@pytest.mark.loop_dependent  # runs the issuer on the suite's backend
def test_the_code_flow_checks_pkce_redirect_and_single_use() -> None:
    issuer = DevIssuer("http://127.0.0.1:9400", subject="bob")
    verifier, challenge = pkce()
    query = {
        "response_type": "code",
        "client_id": "c",
        "redirect_uri": "http://127.0.0.1:5555/callback",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "s1",
        "scope": "a b",
        "resource": "http://127.0.0.1:8000/mcp",
    }

    async def main() -> None:
        status, headers, _ = await asgi(issuer, "GET", "/authorize?" + urlencode(query))
        assert status == 302
        back = parse_qs(urlsplit(headers["location"]).query)
        assert back["state"] == ["s1"] and back["iss"] == ["http://127.0.0.1:9400"]
        form = {"grant_type": "authorization_code", "code": back["code"][0], "client_id": "c"}
        form["redirect_uri"] = query["redirect_uri"]
        wrong = urlencode({**form, "code_verifier": "x" * 50}).encode()
        status, _, error = await asgi(issuer, "POST", "/token", wrong, content_type=FORM)
        assert (status, error["error"]) == (400, "invalid_grant")  # and the code is spent
        status, headers, _ = await asgi(issuer, "GET", "/authorize?" + urlencode(query))
        code = parse_qs(urlsplit(headers["location"]).query)["code"][0]
        good = urlencode({**form, "code": code, "code_verifier": verifier}).encode()
        status, _, tokens = await asgi(issuer, "POST", "/token", good, content_type=FORM)
        assert status == 200, tokens
        status, _, again = await asgi(issuer, "POST", "/token", good, content_type=FORM)
        assert (status, again["error"]) == (400, "invalid_grant")  # a code is used once
        status, _, jwks = await asgi(issuer, "GET", "/jwks")
        key = jwt.PyJWK(jwks["keys"][0])
        claims = jwt.decode(
            tokens["access_token"], key, algorithms=["ES256"], audience=query["resource"]
        )
        assert (claims["sub"], claims["scope"], claims["iss"]) == ("bob", "a b", issuer.issuer)
        assert jwt.get_unverified_header(tokens["access_token"])["typ"] == "at+jwt"

    anyio.run(main, backend=BACKEND)


@pytest.mark.loop_dependent  # runs the issuer on the suite's backend
def test_what_the_issuer_refuses() -> None:
    issuer = DevIssuer("http://127.0.0.1:9400", registration=False)

    async def main() -> None:
        remote = {"response_type": "code", "client_id": "c", "code_challenge": "x"}
        remote |= {"code_challenge_method": "S256", "redirect_uri": "https://evil.example/cb"}
        status, _, error = await asgi(issuer, "GET", "/authorize?" + urlencode(remote))
        assert status == 400 and "loopback" in error["error_description"]
        plain = {
            **remote,
            "redirect_uri": "http://127.0.0.1:1/cb",
            "code_challenge_method": "plain",
        }
        assert (await asgi(issuer, "GET", "/authorize?" + urlencode(plain)))[0] == 400
        # the minter takes JSON only: a cross-site form post cannot reach it
        body = b"sub=x"
        status, _, _ = await asgi(issuer, "POST", "/dev/token", body, content_type=FORM)
        assert status == 415
        status, _, error = await asgi(
            issuer, "POST", "/dev/token", b'{"sub": ""}', content_type="application/json"
        )
        assert status == 400 and "sub" in error["error_description"]
        status, _, _ = await asgi(
            issuer, "POST", "/register", b"{}", content_type="application/json"
        )
        assert status == 404  # registration turned off, and not in the metadata
        assert "registration_endpoint" not in issuer.metadata()
        # a rebinding attack's Host
        status, _, _ = await asgi(issuer, "GET", "/jwks", host="evil.example:9400")
        assert status == 403

    anyio.run(main, backend=BACKEND)
