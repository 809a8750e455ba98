"""The legacy HTTP+SSE server transport (protocol revision 2024-11-05).

``GET <sse_path>`` opens the session's only server->client stream; its first event,
``endpoint``, names the URL (with the session id) the client POSTs its messages to. The
session lives as long as that stream.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator, Iterable
from contextlib import AsyncExitStack, asynccontextmanager

import anyio
import orjson

from .._auth._principal import Principal
from .._auth._resource import ResourceServer
from .._exceptions import INVALID_REQUEST, PARSE_ERROR
from .._http._asgi import (
    BODY_TIMEOUT,
    SSE_HEADERS,
    ClientGone,
    Receive,
    Scope,
    Send,
    accepts,
    cancel_on_disconnect,
    header_map,
    respond,
    respond_error,
    route_path,
    same_path,
)
from .._http._security import HostOriginPolicy, OwnerFn, SessionOwnership
from .._http._sse import encode_event
from .._http._transport_sse import SSEServerTransport
from .._session._server import ServerSession
from . import _cors as cors
from ._auth import AuthGate, owner_fn, serve_admitted
from ._common import host_origin_refused, read_post_body, serve_lifespan
from ._registry import SessionFactory, hosting_of

logger = logging.getLogger("mcpkit.http")


class SSEApp:
    """ASGI app of the legacy transport. Create it with :func:`create_sse_app`."""

    #: Seconds a POST body may take to arrive in full; slower is answered 408 (slowloris).
    body_timeout: float = BODY_TIMEOUT

    def __init__(
        self,
        server: SessionFactory,
        *,
        sse_path: str = "/sse",
        message_path: str = "/messages/",
        allowed_hosts: Iterable[str] | None = None,
        allowed_origins: Iterable[str] | None = None,
        max_body_size: int = 4 * 1024 * 1024,
        max_sessions: int = 10_000,
        session_owner: OwnerFn | None = None,
        auth: ResourceServer | None = None,
    ) -> None:
        self.server = server
        #: Checks bearer tokens when the app is protected (``auth``).
        self.gate = AuthGate(auth, hosting_of(server)) if auth is not None else None
        self.ownership = SessionOwnership(owner_fn(auth, session_owner))
        self.sse_path = sse_path
        self.message_path = message_path
        self.policy = HostOriginPolicy(allowed_hosts, allowed_origins)
        self.max_body_size = max_body_size
        self.max_sessions = max_sessions
        self.sessions: dict[str, SSEServerTransport] = {}
        #: Session id -> who opened its stream (when ``session_owner`` is set).
        self.owners: dict[str, str | None] = {}
        #: Session id -> its session (whose visibility rules the scope check follows).
        self.served: dict[str, ServerSession] = {}

    async def aclose(self) -> None:
        for t in list(self.sessions.values()):
            t.close()

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        await serve_lifespan(receive, send, self._hosting)

    @asynccontextmanager
    async def _hosting(self) -> AsyncIterator[None]:
        hosting = hosting_of(self.server)  # mcpkit.Server's own lifespan
        async with AsyncExitStack() as stack:
            if hosting is not None:
                await stack.enter_async_context(hosting.running())
            try:
                yield
            finally:
                await self.aclose()

    def handles(self, scope: Scope) -> bool:
        """Whether a request is for this app's two endpoints."""
        path = route_path(scope)
        return same_path(path, self.sse_path) or same_path(path, self.message_path)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        if self.gate is not None and self.gate.is_metadata(scope):
            await self.gate.serve_metadata(scope, send)
            return
        headers = header_map(scope)
        if await host_origin_refused(self.policy, headers, send):
            return
        origin = headers.get("origin")
        if origin is not None and self.policy.origins_named:
            # A browser host on an origin the deployer named: the same CORS as the
            # Streamable HTTP endpoint (its preflight answered before any token check).
            if scope["method"] == "OPTIONS":
                await cors.preflight(origin, headers, b"GET, POST").write(send)
                return
            send = cors.cors_send(send, cors.response_headers(origin))
        await serve_admitted(self.gate, scope, headers, receive, send, self._dispatch)

    async def _dispatch(
        self,
        scope: Scope,
        headers: dict[str, str],
        receive: Receive,
        send: Send,
        principal: Principal | None,
    ) -> None:
        path = route_path(scope)
        try:
            if same_path(path, self.sse_path) and scope["method"] == "GET":
                await self._sse(scope, headers, receive, send, principal)
            elif same_path(path, self.message_path) and scope["method"] == "POST":
                await self._message(scope, headers, receive, send, principal)
            else:
                await respond(send, 404, b"Not Found", content_type=b"text/plain")
        except ClientGone:
            pass

    async def _sse(
        self,
        scope: Scope,
        headers: dict[str, str],
        receive: Receive,
        send: Send,
        principal: Principal | None,
    ) -> None:
        if not accepts(headers.get("accept", "text/event-stream"), "text/event-stream"):
            await respond_error(
                send, 406, INVALID_REQUEST, "Not Acceptable: this endpoint sends text/event-stream"
            )
            return
        if len(self.sessions) >= self.max_sessions:
            await respond_error(
                send, 503, INVALID_REQUEST, "Service Unavailable: too many sessions"
            )
            return
        sid = secrets.token_hex(16)
        transport = SSEServerTransport()
        transport.principal = principal
        session = self.server.create_session(transport)
        self.sessions[sid] = transport
        self.served[sid] = session
        self.owners[sid] = self.ownership.owner(headers)
        root = scope.get("root_path", "")
        endpoint = f"{root}{self.message_path}?session_id={sid}"
        await send({"type": "http.response.start", "status": 200, "headers": list(SSE_HEADERS)})
        await send(
            {
                "type": "http.response.body",
                "body": encode_event(endpoint.encode(), event="endpoint"),
                "more_body": True,
            }
        )
        try:
            async with anyio.create_task_group() as tg:

                async def run() -> None:
                    try:
                        await session.run()
                    finally:
                        tg.cancel_scope.cancel()

                tg.start_soon(cancel_on_disconnect, receive, tg.cancel_scope)
                tg.start_soon(run)
                async for chunk in transport.out_recv:
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                tg.cancel_scope.cancel()
        finally:
            self.sessions.pop(sid, None)
            self.served.pop(sid, None)
            self.owners.pop(sid, None)
            transport.close()
        await send({"type": "http.response.body", "body": b""})

    async def _message(
        self,
        scope: Scope,
        headers: dict[str, str],
        receive: Receive,
        send: Send,
        principal: Principal | None,
    ) -> None:
        qs = scope.get("query_string", b"").decode("latin-1")
        sid = None
        for part in qs.split("&"):
            k, _, v = part.partition("=")
            if k == "session_id":
                sid = v
        if not sid:
            await respond_error(send, 400, INVALID_REQUEST, "Bad Request: session_id is required")
            return
        transport = self.sessions.get(sid)
        if transport is None or not self.ownership.allows(self.owners.get(sid), headers):
            # Someone else's session is answered as unknown: not usable, not even probeable.
            await respond_error(send, 404, INVALID_REQUEST, "Not Found: unknown session")
            return
        body = await read_post_body(headers, receive, send, self.max_body_size, self.body_timeout)
        if body is None:
            return
        try:
            msg = orjson.loads(body)
        except orjson.JSONDecodeError as e:
            await respond_error(send, 400, PARSE_ERROR, f"Parse error: {e}")
            return
        if not isinstance(msg, (dict, list)):
            await respond_error(send, 400, INVALID_REQUEST, "Invalid Request")
            return
        if self.gate is not None:
            if not await self.gate.allows(
                msg if isinstance(msg, list) else (msg,), send, principal, self.served.get(sid)
            ):
                return
            # The same owner, maybe with new scopes (a step-up): later requests see them.
            transport.principal = principal
        try:
            await transport.feed(msg)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            await respond_error(send, 404, INVALID_REQUEST, "Not Found: the session ended")
            return
        await respond(send, 202, b"Accepted", content_type=b"text/plain")


def create_sse_app(
    server: SessionFactory,
    *,
    sse_path: str = "/sse",
    message_path: str = "/messages/",
    allowed_hosts: Iterable[str] | None = None,
    allowed_origins: Iterable[str] | None = None,
    max_body_size: int = 4 * 1024 * 1024,
    max_sessions: int = 10_000,
    session_owner: OwnerFn | None = None,
    auth: ResourceServer | None = None,
) -> SSEApp:
    """An ASGI app serving ``server`` over the legacy HTTP+SSE transport (2024-11-05).

    Clients connect with ``GET /sse`` and POST to the endpoint it announces. Same Host/Origin
    protection, ``session_owner`` binding and ``auth`` (bearer tokens) as
    :func:`create_http_app`.
    """
    return SSEApp(
        server,
        sse_path=sse_path,
        message_path=message_path,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
        max_body_size=max_body_size,
        max_sessions=max_sessions,
        session_owner=session_owner,
        auth=auth if auth is not None else getattr(server, "auth", None),
    )


__all__ = ["SSEApp", "SSEServerTransport", "create_sse_app"]
