"""Driving an app the way a revision 2026-07-28 client does, and checking what it sends.

Requests are built by hand (``_meta`` and the standard headers) so that tests can also send
them wrong; every message the server sends back is checked against the 2026-07-28 schema.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import orjson
from tests._schema import message_errors, schema_errors

from mcpkit._http._sse import SSEParser
from mcpkit.lowlevel import ASGIClient

REV = "2026-07-28"
URL = "http://127.0.0.1/mcp"
ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / "examples" / "everything.py"
#: Bound on every wait of these tests.
TIMEOUT = 20.0
ALL_CAPS: dict[str, Any] = {"elicitation": {}, "sampling": {}, "roots": {}}
#: Result definition of each request (an ``input_required`` answer is checked as one).
RESULTS = {
    "server/discover": "DiscoverResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "completion/complete": "CompleteResult",
    "subscriptions/listen": "SubscriptionsListenResult",
}
#: The standard headers' body members (streamable-http.mdx, Standard Request Headers).
NAMED = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}


def meta(
    caps: Mapping[str, Any] | None = None, *, log_level: str | None = None, **extra: Any
) -> dict[str, Any]:
    """A well-formed request ``_meta``."""
    out: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": REV,
        "io.modelcontextprotocol/clientCapabilities": dict(caps or {}),
        "io.modelcontextprotocol/clientInfo": {"name": "stateless-tests", "version": "1"},
    }
    if log_level is not None:
        out["io.modelcontextprotocol/logLevel"] = log_level
    out.update(extra)
    return out


def request(
    method: str, params: Mapping[str, Any] | None = None, *, id: Any = 1, caps: Any = None
) -> dict[str, Any]:
    """A JSON-RPC request whose params carry a ``_meta`` (unless they bring their own)."""
    body = dict(params or {})
    body.setdefault("_meta", meta(caps if caps is not None else ALL_CAPS))
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": body}


def headers_for(msg: Mapping[str, Any], **overrides: str | None) -> dict[str, str]:
    """The headers a conforming client sends with ``msg``; ``overrides`` (``_`` for ``-``,
    None to leave one out) change or drop some."""
    h = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": REV,
        "mcp-method": str(msg["method"]),
    }
    member = NAMED.get(str(msg["method"]))
    params = msg.get("params") or {}
    if member is not None and isinstance(params.get(member), str):
        h["mcp-name"] = params[member]
    for key, value in overrides.items():
        name = key.replace("_", "-").lower()
        if value is None:
            h.pop(name, None)
        else:
            h[name] = value
    return h


def b64(text: str) -> str:
    """``text`` in the Base64 sentinel form of a mirrored header value."""
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


class Answer:
    """An HTTP answer: its status and the JSON-RPC messages it carried, in order."""

    def __init__(self, status: int, content_type: str, messages: list[Any]) -> None:
        self.status = status
        self.content_type = content_type
        self.messages = messages

    @property
    def response(self) -> dict[str, Any]:
        """The final message (the request's response)."""
        last = self.messages[-1]
        assert isinstance(last, dict) and ("result" in last or "error" in last), self.messages
        return last

    @property
    def result(self) -> dict[str, Any]:
        resp = self.response
        assert "result" in resp, resp
        return resp["result"]  # type: ignore[no-any-return]

    @property
    def error(self) -> dict[str, Any]:
        resp = self.response
        assert "error" in resp, resp
        return resp["error"]  # type: ignore[no-any-return]

    @property
    def notifications(self) -> list[dict[str, Any]]:
        return [m for m in self.messages if "method" in m]


def _decode(content_type: str, body: bytes) -> list[Any]:
    if not body:
        return []
    if content_type.startswith("text/event-stream"):
        return [orjson.loads(e.data) for e in SSEParser().feed(body) if e.data]
    return [orjson.loads(body)]


def check_sent(msg: Any, req: Mapping[str, Any] | None = None) -> None:
    """Assert ``msg`` (sent by the server) is valid at 2026-07-28; a response is checked
    against the result its request (``req``) calls for."""
    errors = message_errors(msg, REV, sender="server", allow_unknown_methods=False)
    if isinstance(msg, dict) and "result" in msg and req is not None:
        result = msg["result"]
        if isinstance(result, dict) and result.get("resultType") == "input_required":
            name = "InputRequiredResult"
        else:
            name = RESULTS.get(str(req["method"]), "Result")
        errors += schema_errors(REV, name, result)
    assert not errors, f"{msg!r}:\n" + "\n".join(errors)


async def post(
    http: ASGIClient,
    msg: Mapping[str, Any],
    headers: Mapping[str, str] | None = None,
    *,
    validate: bool = True,
) -> Answer:
    """POST one message; the answer's messages are schema-checked unless ``validate=False``."""
    h = dict(headers) if headers is not None else headers_for(msg)
    with anyio.fail_after(TIMEOUT):
        resp = await http.post(URL, content=orjson.dumps(msg), headers=h)
        body = await resp.aread()
    ctype = resp.headers.get("content-type") or ""
    answer = Answer(resp.status_code, ctype, _decode(ctype, body))
    if validate:
        for m in answer.messages:
            check_sent(m, msg)
    return answer


class Stream:
    """A response read as it arrives (``subscriptions/listen``, a long tool call)."""

    def __init__(self, resp: Any, req: Mapping[str, Any]) -> None:
        self.status = resp.status_code
        self._chunks = resp.aiter_bytes()
        self._parser = SSEParser()
        self._ready: list[Any] = []
        self._req = req

    async def aclose(self) -> None:
        """Stop reading (the body's generator is closed, not left to the collector)."""
        await self._chunks.aclose()

    async def next(self) -> Any:
        """The next message (schema-checked), bounded by the suite's timeout."""
        with anyio.fail_after(TIMEOUT):
            while not self._ready:
                chunk = await self._chunks.__anext__()
                self._ready += [orjson.loads(e.data) for e in self._parser.feed(chunk) if e.data]
        msg = self._ready.pop(0)
        self.check(msg)
        return msg

    def check(self, msg: Any) -> None:
        """Assert what the server sent is valid (a subclass checks what it knows better)."""
        check_sent(msg, self._req)


@asynccontextmanager
async def stream(
    http: ASGIClient,
    msg: Mapping[str, Any],
    headers: Mapping[str, str] | None = None,
    *,
    reader: type[Stream] = Stream,
) -> AsyncIterator[Any]:
    """POST ``msg`` and read its response stream as it comes (with ``reader``); leaving
    closes the stream (which, at 2026-07-28, cancels the request)."""
    h = dict(headers) if headers is not None else headers_for(msg)
    async with http.stream("POST", URL, content=orjson.dumps(msg), headers=h) as resp:
        reader = reader(resp, msg)
        try:
            yield reader
        finally:
            await reader.aclose()
