"""CORS for browser hosts on another origin: what the Streamable HTTP endpoint adds for an
``Origin`` the deployer named (``allowed_origins``, ``--allowed-origin``,
``MCPKIT_ALLOWED_ORIGINS``). The loopback origins a loopback server admits by default get
none: they are admitted to keep DNS rebinding out, not to open the endpoint to every page
a local dev server serves.

A page's ``fetch`` of the endpoint with ``Content-Type: application/json`` (or any MCP
header) is preflighted: the browser first sends ``OPTIONS`` with
``Access-Control-Request-Method``/``-Headers`` and sends the request only if the answer
allows it; then it lets the page read the response only if that carries
``Access-Control-Allow-Origin``, and only the response headers named in
``Access-Control-Expose-Headers`` (``Mcp-Session-Id`` among them, without which no
2025-era client can keep its session).

The allowed origin is echoed, never ``*``: requests carry ``Authorization``, and the answer
differs by origin (``Vary: Origin``). No ``Access-Control-Allow-Credentials``: MCP's
credentials are bearer tokens in a header, not cookies. A disallowed origin gets no CORS
header at all (its requests keep their 403). :func:`~mcpkit._app._edge.serve_exchange`
is the one place this is applied to the Streamable HTTP endpoint; the legacy HTTP+SSE
endpoints (``_legacy.py``) apply the same answers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from .._http._asgi import MCP_PARAM_PREFIX, Answer, Send

#: The request headers an MCP client sends: the content headers, the bearer token, the
#: session and revision, the resumption cursor, and what 2026-07-28 mirrors from the body
#: (``Mcp-Param-{Name}`` are added as a preflight names them: their names vary by tool).
ALLOWED_HEADERS = (
    "content-type",
    "accept",
    "authorization",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
    "mcp-method",
    "mcp-name",
)
_ALLOWED = ", ".join(ALLOWED_HEADERS)
#: The response headers a page may read: the session, the revision, the OAuth challenge
#: (its ``resource_metadata`` starts discovery) and a 503's retry hint.
EXPOSED_HEADERS = b"mcp-session-id, mcp-protocol-version, www-authenticate, retry-after"
#: How long a browser may keep a preflight's verdict (s; Chromium caps it at 7200).
MAX_AGE = b"7200"
#: A field-name token (RFC 9110): what a requested ``Mcp-Param-*`` name must be.
_TOKEN = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyz")


def preflight(origin: str, headers: MutableMapping[str, str], methods: bytes) -> Answer:
    """The ``204`` answering a preflight (any ``OPTIONS``) from ``origin``, an allowed
    one: the endpoint's ``methods``, the MCP headers, and any ``Mcp-Param-*`` it asks for."""
    allowed = _ALLOWED
    asked = headers.get("access-control-request-headers")
    if asked:
        params = [
            name
            for name in (part.strip(" \t").lower() for part in asked.split(","))
            if name.startswith(MCP_PARAM_PREFIX) and _TOKEN.issuperset(name)
        ]
        if params:
            allowed = ", ".join((allowed, *dict.fromkeys(params)))
    return Answer(
        204,
        headers=[
            (b"access-control-allow-origin", origin.encode("latin-1")),
            (b"access-control-allow-methods", methods + b", OPTIONS"),
            (b"access-control-allow-headers", allowed.encode("latin-1")),
            (b"access-control-max-age", MAX_AGE),
            (b"vary", b"Origin"),
        ],
    )


def response_headers(origin: str) -> list[tuple[bytes, bytes]]:
    """What an actual response to a request from ``origin`` (allowed) carries."""
    return [
        (b"access-control-allow-origin", origin.encode("latin-1")),
        (b"access-control-expose-headers", EXPOSED_HEADERS),
        (b"vary", b"Origin"),
    ]


def cors_send(send: Send, extra: list[tuple[bytes, bytes]]) -> Send:
    """``send`` adding ``extra`` to the head of the response it writes."""

    async def out(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", ()), *extra]}
        await send(message)

    return out


def with_headers(
    answer: Answer,
    extra: list[tuple[bytes, bytes]],
    wrap: Callable[[Callable[[Send], Awaitable[object]], Send], Awaitable[object]] | None = None,
) -> Answer:
    """``answer`` with ``extra`` in its head (a new one: answers may be shared). A streamed
    answer writes its head itself: it gets a ``send`` that adds them, passed through
    ``wrap(stream, send)`` when given (what runs the stream)."""
    stream = answer.stream
    if stream is None:
        return Answer(answer.status, answer.body, headers=[*answer.headers, *extra])

    async def streamed(send: Send) -> None:
        out = cors_send(send, extra)
        if wrap is None:
            await stream(out)
        else:
            await wrap(stream, out)

    return Answer.streamed(streamed)
