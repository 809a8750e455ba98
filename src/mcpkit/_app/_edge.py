"""The one edge of the Streamable HTTP endpoint: :func:`serve_exchange`.

A front end reads a request into an :class:`Exchange` (method, path, headers, the client's
address, and ``receive`` for the body and the client's disconnect), calls
:func:`serve_exchange`, and writes the :class:`~mcpkit._http._asgi.Answer` it returns
(:func:`write_answer`). The ASGI app (:class:`~mcpkit.lowlevel.StreamableHTTPApp`, what
uvicorn and the in-process ``ASGIClient`` call) is such a front end and nothing more; a
faster one, on another server's documented interface, would be another.

Everything between is decided here, once, in this order: the metadata document, the path,
Host/Origin, the CORS preflight of an allowed browser origin (every answer to one carries
the CORS headers: ``_cors.py``), a repeated standard header, the shutdown, the bearer token
(the principal), the method, the body (Accept, Content-Type, size, speed, JSON, the
JSON-RPC envelope), the scopes the message needs, and the era (:func:`stateless_era`). What
was decided is handed down as the choice of handler: the handlers below never look at the
era again. A POST of the stateless era goes to
:class:`~mcpkit._app._stateless.StatelessEraHandler`, one of the handshake era to its
session through the ``PostHandler``; both return their answer here: one body (a JSON
answer, an SSE answer ready within a few loop turns, an error), or a stream that writes
itself once serving has begun (an SSE answer still running, the GET stream, a batch).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

import orjson

from .._auth._principal import Principal
from .._exceptions import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    BackendUnavailable,
)
from .._http._asgi import (
    NO_ANSWER,
    Answer,
    ClientGone,
    Headers,
    Receive,
    Scope,
    Send,
    accepts_json_and_sse,
    header_map,
    media_type,
    repeated_header_answer,
)
from .._http._request_info import request_info
from .._http._transport import SessionGone
from .._session._stateless import is_stateless
from .._transports._base import TransportInfo
from ..types._metakeys import PROTOCOL_VERSION_META_KEY
from ..types._revisions import STATELESS_PROTOCOL_VERSIONS
from . import _cors as cors
from ._auth import PRINCIPAL_KEY
from ._common import allow_header, check_message, host_origin_problem, post_body

if TYPE_CHECKING:
    from ._streamable import StreamableHTTPApp

logger = logging.getLogger("mcpkit.http")


class Exchange:
    """One HTTP request as a front end read it: what :func:`serve_exchange` serves.

    ``path`` is below the app's mount point, ``full_path`` the whole of it (what
    ``ctx.http_request.path`` says); ``headers`` has lower-case names (see
    :func:`~mcpkit._http._asgi.header_map`); ``client`` is the peer's ``(host, port)``;
    ``receive`` gives the body (ASGI ``http.request`` messages) and then the client's
    disconnect (``http.disconnect``).
    """

    __slots__ = ("client", "full_path", "headers", "method", "path", "query", "receive", "scheme")

    def __init__(
        self,
        method: str,
        path: str,
        headers: Headers,
        receive: Receive,
        *,
        full_path: str | None = None,
        query: str = "",
        scheme: str = "http",
        client: tuple[str, int] | None = None,
    ) -> None:
        self.method = method
        self.path = path
        self.full_path = path if full_path is None else full_path
        self.headers = headers
        self.receive = receive
        self.query = query
        self.scheme = scheme
        self.client = client


def exchange_of(scope: Scope, receive: Receive) -> Exchange:
    """The exchange an ASGI ``http`` scope describes."""
    client = scope.get("client")
    query = scope.get("query_string", b"")
    # route_path() and full_path() in one (this runs on every request): ASGI servers and
    # frameworks (uvicorn --root-path, Starlette's Mount) include root_path in path, older
    # ones gave the path below it.
    path: str = scope.get("path", "/")
    root: str = scope.get("root_path", "")
    if root and path.startswith(root):
        below, whole = path[len(root) :] or "/", path
    else:
        below, whole = path or "/", root + path
    return Exchange(
        scope["method"],
        below,
        header_map(scope),
        receive,
        full_path=whole,
        query=query.decode("latin-1") if isinstance(query, bytes) else str(query),
        scheme=str(scope.get("scheme", "http")),
        client=(str(client[0]), int(client[1])) if client else None,
    )


def stateless_era(headers: Mapping[str, str], msg: Any = None) -> bool:
    """Whether an exchange is of the stateless era (2026-07-28): the one place the HTTP
    endpoint decides it, called once per exchange by :func:`serve_exchange`.

    - Without a message (a GET, a DELETE, a request refused before its body is read):
      whether ``MCP-Protocol-Version`` names a stateless revision (any of its values, when
      the header was repeated).
    - A message with an ``Mcp-Session-Id``: whether the header or its ``_meta`` names a
      stateless revision. 2026-07-28 has no sessions and its servers ignore that header
      (streamable-http.mdx, Earlier Streamable HTTP Revisions): a stale session id must not
      turn such a request into a 404.
    - A message without: :func:`~mcpkit._session._stateless.is_stateless`, as for every
      transport. Outside a session no handshake revision can be served, so a request
      naming any revision in its ``_meta`` is of the stateless era (one that era does not
      speak is answered UnsupportedProtocolVersion, -32022).
    """
    version = headers.get("mcp-protocol-version")
    if version is not None:
        # Without the optional whitespace around it (RFC 9110, section 5.5).
        version = version.strip(" \t")
        if version in STATELESS_PROTOCOL_VERSIONS:
            return True
    if msg is None:
        return version is not None and any(
            v.strip() in STATELESS_PROTOCOL_VERSIONS for v in version.split(",")
        )
    if not isinstance(msg, dict):
        return False
    params = msg.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if "mcp-session-id" in headers:
        return isinstance(meta, dict) and (
            meta.get(PROTOCOL_VERSION_META_KEY) in STATELESS_PROTOCOL_VERSIONS
        )
    method = msg.get("method")
    return isinstance(method, str) and is_stateless(method, meta, version, handshake_versions=())


def _content_problem(headers: dict[str, str]) -> Answer | None:
    """The answer refusing a POST's Accept or Content-Type, or None."""
    if not accepts_json_and_sse(headers.get("accept")):
        return Answer.error(
            406,
            INVALID_REQUEST,
            "Not Acceptable: the Accept header must list application/json and text/event-stream",
        )
    if media_type(headers) != "application/json":
        return Answer.error(415, INVALID_REQUEST, "Unsupported Media Type: send application/json")
    return None


def _has_body(headers: Mapping[str, str]) -> bool:
    return "transfer-encoding" in headers or headers.get("content-length", "0").strip() != "0"


async def serve_exchange(app: StreamableHTTPApp, ex: Exchange) -> Answer:
    """The answer to one exchange with ``app``'s endpoint (see the module docstring)."""
    gate = app.gate
    if gate is not None and gate.is_metadata_path(ex.path):
        return gate.metadata_answer(ex.method)
    if not app.on_path(ex.path):
        return Answer(404, b"Not Found", content_type=b"text/plain")
    headers = ex.headers
    refused = host_origin_problem(app.policy, headers)
    if refused is not None:
        return Answer.error(refused[0], INVALID_REQUEST, refused[1])  # no CORS headers
    origin = headers.get("origin")
    if origin is None or not app.policy.origins_named:
        # Not a browser's cross-origin request, or no origin named by the deployer (the
        # loopback defaults admit local pages, they do not open the endpoint to them): no
        # CORS.
        return await _admitted(app, ex)
    # A browser host on an allowed origin (_cors.py): its preflight answered before the
    # token is checked (a browser sends none with it), every answer made readable to it.
    if ex.method == "OPTIONS":
        return cors.preflight(origin, headers, allow_header(app.options))
    method, path = ex.method, app.options.path

    async def failing(stream: Callable[[Send], Awaitable[object]], send: Send) -> None:
        try:
            await stream(send)
        except (SessionGone, BackendUnavailable) as e:  # as write_answer, CORS kept
            await _failure(method, path, e).write(send)

    return cors.with_headers(await _admitted(app, ex), cors.response_headers(origin), failing)


async def _admitted(app: StreamableHTTPApp, ex: Exchange) -> Answer:
    """The answer to an exchange on the endpoint whose Host and Origin are allowed."""
    headers = ex.headers
    gate = app.gate
    if headers.repeated is not None:  # a standard MCP header given twice: refused
        return repeated_header_answer(headers, stateless_era(headers))
    if "upgrade" in headers.get("connection", "").lower() and _has_body(headers):
        # W10: nothing here upgrades, and uvicorn's httptools protocol stops reading such a
        # request at its head (the app sees no body) and may read the body as the next
        # request: refused before its body is read, and the connection closed with it.
        return Answer.error(
            400,
            INVALID_REQUEST,
            "Bad Request: this endpoint upgrades to no other protocol",
            headers=[(b"connection", b"close")],
        )
    if app.closing:
        return Answer.error(503, INTERNAL_ERROR, "Service Unavailable: shutting down")
    principal: Principal | None = None
    if gate is not None:
        verdict = await gate.verify(headers, ex.query)
        if isinstance(verdict, Answer):
            return verdict
        principal = verdict
        headers[PRINCIPAL_KEY] = principal.key  # what binds the sessions it opens
    try:
        answer = await _route(app, ex, principal)
    except ClientGone:
        return NO_ANSWER
    except (SessionGone, BackendUnavailable) as e:
        return _failure(ex.method, app.options.path, e)
    if principal is not None:
        return gate.until_expiry(ex.method, principal, answer)  # type: ignore[union-attr]
    return answer


async def _route(app: StreamableHTTPApp, ex: Exchange, principal: Principal | None) -> Answer:
    method = ex.method
    if app.options.backend is not None:
        await app.ensure_host()  # sessions of other workers are restored here
    if method == "POST":
        return await _post(app, ex, principal)
    headers = ex.headers
    if method in ("GET", "DELETE"):
        if stateless_era(headers):
            # 2026-07-28 has neither the GET stream nor sessions to end: the method is
            # not allowed for that revision (streamable-http.mdx, Earlier Streamable
            # HTTP Revisions), whatever this endpoint still offers older clients.
            version = headers["mcp-protocol-version"].strip()
            return Answer.error(
                405,
                INVALID_REQUEST,
                f"Method Not Allowed: revision {version} has no GET stream or sessions; "
                "POST each request",
                headers=[(b"allow", b"POST")],
            )
        if method == "GET":
            return await app.streams.get(headers, ex.receive)
        return await app.end_session(headers)
    return Answer.error(
        405,
        INVALID_REQUEST,
        "Method Not Allowed",
        headers=[(b"allow", allow_header(app.options))],
    )


async def _post(app: StreamableHTTPApp, ex: Exchange, principal: Principal | None) -> Answer:
    """A POST: its body read and checked, its era decided, and handed to the handler of
    that era."""
    headers = ex.headers
    refused = _content_problem(headers)
    if refused is not None:
        return refused
    options = app.options
    body = await post_body(headers, ex.receive, options.max_body_size, options.body_timeout)
    if isinstance(body, Answer):
        return body
    try:
        msg = orjson.loads(body)
    except orjson.JSONDecodeError as e:
        return Answer.error(400, PARSE_ERROR, f"Parse error: {e}")
    # What the code serving the POSTed request may read (ctx.http_request, ctx.principal):
    # handed along with the request, to whoever serves it.
    http = request_info("POST", ex.full_path, ex.query, headers, ex.client, ex.scheme, principal)
    info = TransportInfo("http", "tcp", http=http, principal=principal)
    posts = app.posts
    if isinstance(msg, list) and msg:
        return Answer(0, stream=partial(posts.post_batch, msg, headers, ex.receive, info))
    problem = check_message(msg)
    if problem is not None:
        rid = msg.get("id") if isinstance(msg, dict) else None
        return Answer.error(
            400, INVALID_REQUEST, problem, id=rid if isinstance(rid, (str, int)) else None
        )
    if stateless_era(headers, msg):
        # No session: the server's visibility rules alone decide what is hidden (a
        # handshake-era request is checked once its session is found, by posts.post).
        gate = app.gate
        refused = gate.scope_refusal((msg,), principal) if gate is not None else None
        if refused is not None:
            return refused
        await app.ensure_host()  # the server's lifespan runs before any request is served
        return await app.stateless_era.post(msg, headers, ex.receive, info)
    return await posts.post(msg, headers, ex.receive, info)


def _failure(method: str, path: str | None, e: Exception) -> Answer:
    """The answer to an exchange its session or the shared state failed."""
    if isinstance(e, SessionGone):
        return Answer.error(404, INVALID_REQUEST, "Not Found: the session ended")
    # The shared state is down: nothing was lost, the client may retry.
    logger.warning("%s %s: %s", method, path, e)
    return Answer.error(
        503,
        INTERNAL_ERROR,
        "Service Unavailable: the session store is not answering; retry shortly",
        headers=[(b"retry-after", b"1")],
    )


async def write_answer(answer: Answer, send: Send, method: str = "", path: str = "") -> None:
    """Write ``answer`` through ``send`` (ASGI messages). A streamed answer that fails
    because its session ended or the shared state is down is answered with that error,
    as :func:`serve_exchange` answers one that fails before; a client gone is not."""
    if answer.stream is None:
        await answer.write(send)
        return
    try:
        await answer.stream(send)
    except ClientGone:
        pass
    except (SessionGone, BackendUnavailable) as e:
        await _failure(method, path, e).write(send)
