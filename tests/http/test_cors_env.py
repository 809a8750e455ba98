"""CORS as a deployer turns it on: ``mcpkit run`` with ``MCPKIT_ALLOWED_ORIGINS`` (issue 44),
on the Streamable HTTP endpoint and on the legacy HTTP+SSE endpoints, in a real server
process started as users start it.

An origin named in the variable gets its preflight answered (204, the endpoint's methods)
and its answers made readable (``Access-Control-Allow-Origin`` echoing it); another origin
keeps its 403 with no CORS header. Before, the legacy endpoints answered the preflight 404
and sent no ``Access-Control-*`` header to a named origin.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2
import orjson
import pytest
from tests._served import Served

ROOT = Path(__file__).resolve().parents[2]
ALLOWED = "http://host.example:5173"
OTHER = "http://evil.example:5173"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2024-11-05",
        "capabilities": {},
        "clientInfo": {"name": "cors-env", "version": "1"},
    },
}


def _mcpkit() -> list[str]:
    exe = Path(sys.executable).parent / "mcpkit"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "mcpkit._cli"]


@pytest.fixture(scope="module")
def urls() -> Iterator[dict[str, str]]:
    """Both transports' URLs, each served by its own ``mcpkit run`` process."""
    env = {**os.environ, "MCPKIT_ALLOWED_ORIGINS": ALLOWED}
    started: list[Served] = []
    try:
        for transport in ("http", "sse"):
            argv = [*_mcpkit(), "run", str(ROOT / "examples" / "everything.py")]
            argv += ["--transport", transport, "--host", "127.0.0.1", "--port", "0"]
            started.append(Served.start(argv, env=env))
        yield {"http": started[0].url(), "sse": started[1].url()}
    finally:
        for srv in started:
            srv.proc.kill()
            srv.proc.wait()
            srv.close()


def _allows(answer: httpx2.Response, origin: str = ALLOWED) -> None:
    assert answer.headers.get("access-control-allow-origin") == origin, answer.headers
    assert "origin" in answer.headers.get("vary", "").lower()
    assert "access-control-allow-credentials" not in answer.headers


def _no_cors(answer: httpx2.Response) -> None:
    assert not [k for k in answer.headers if k.lower().startswith("access-control-")]


@pytest.mark.parametrize("transport", ["http", "sse"])
def test_preflight_answered_for_the_named_origin_only(urls: dict[str, str], transport: str) -> None:
    url = urls[transport]
    ask = {
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type, mcp-protocol-version",
    }
    with httpx2.Client(timeout=10) as http:
        ok = http.options(url, headers={"Origin": ALLOWED, **ask})
        refused = http.options(url, headers={"Origin": OTHER, **ask})
    assert ok.status_code == 204, (transport, ok.status_code, ok.text)
    _allows(ok)
    methods = {m.strip() for m in ok.headers["access-control-allow-methods"].split(",")}
    assert {"GET", "POST", "OPTIONS"} <= methods
    allowed = {h.strip() for h in ok.headers["access-control-allow-headers"].split(",")}
    assert {"content-type", "mcp-protocol-version", "authorization"} <= allowed
    assert refused.status_code == 403
    _no_cors(refused)


def test_legacy_stream_and_messages_readable_by_the_named_origin(urls: dict[str, str]) -> None:
    url = urls["sse"]
    base = url.rsplit("/", 1)[0]
    with httpx2.Client(timeout=10) as http:
        with http.stream(
            "GET", url, headers={"Origin": ALLOWED, "Accept": "text/event-stream"}
        ) as stream:
            assert stream.status_code == 200
            _allows(stream)
            exposed = stream.headers["access-control-expose-headers"].lower()
            assert "mcp-session-id" in exposed
            lines = stream.iter_lines()
            endpoint = next(ln[5:].strip() for ln in lines if ln.startswith("data:"))
            posted = http.post(
                base + endpoint[endpoint.index("/messages") :],
                content=orjson.dumps(INIT),
                headers={"Origin": ALLOWED, "Content-Type": "application/json"},
            )
            assert posted.status_code == 202, posted.text
            _allows(posted)
            answer = next(ln[5:] for ln in lines if ln.startswith("data:"))
            assert orjson.loads(answer)["result"]["serverInfo"]["name"]
        refused = http.get(url, headers={"Origin": OTHER, "Accept": "text/event-stream"})
    assert refused.status_code == 403
    _no_cors(refused)


def test_streamable_answers_readable_by_the_named_origin(urls: dict[str, str]) -> None:
    url = urls["http"]
    init = {**INIT, "params": {**INIT["params"], "protocolVersion": "2025-11-25"}}  # type: ignore[dict-item]
    with httpx2.Client(timeout=10) as http:
        answer = http.post(
            url,
            content=orjson.dumps(init),
            headers={
                "Origin": ALLOWED,
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
            },
        )
    assert answer.status_code == 200, answer.text
    _allows(answer)
    assert "mcp-session-id" in answer.headers["access-control-expose-headers"].lower()
