"""``Proxy``: serve any MCP server (a command, a URL, a server file) over another transport.

Each client of the proxy gets its own connection upstream, opened before the client's first
message is read, so the proxy declares exactly the upstream server's capabilities, info and
instructions. Then everything is forwarded, both ways and unchanged apart from request ids:

* the client's requests go upstream; progress comes back as the client's own progress;
  cancelling one (``notifications/cancelled``) cancels it upstream;
* the server's requests (sampling, elicitation, roots) go to the client, tied to the client's
  request they serve when there is just one in flight (over HTTP they then ride its stream);
* notifications go through in both directions (log messages, list changes, resource
  updates, task status, roots changes, elicitation completion).

Downstream the proxy speaks the handshake revisions: a client of the stateless revision falls
back to ``initialize`` (mcpkit's Client does by itself), since a server's requests need the
back-channel only a session has. Upstream it uses the latest handshake revision.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack
from typing import Any

from ._client._targets import HTTPTarget, StdioTarget, describe, open_target, target_of
from ._exceptions import ConnectionClosed, ProtocolError
from ._session._base import RequestContext
from ._session._client import ClientSession
from ._session._server import ServerSession
from ._transports._base import Transport
from .types._revisions import HANDSHAKE_PROTOCOL_VERSIONS

logger = logging.getLogger("mcpkit.proxy")

#: Requests a client may send, forwarded as they are (the upstream server answers what it
#: does not serve; the proxy declares only what upstream declared).
CLIENT_REQUESTS = (
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "tasks/get",
    "tasks/result",
    "tasks/list",
    "tasks/cancel",
)
#: Requests the upstream server may send to the client.
SERVER_REQUESTS = ("sampling/createMessage", "elicitation/create", "roots/list")
SERVER_NOTIFICATIONS = (
    "notifications/message",
    "notifications/resources/updated",
    "notifications/resources/list_changed",
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/tasks/status",
    "notifications/elicitation/complete",
)
CLIENT_NOTIFICATIONS = ("notifications/roots/list_changed", "notifications/tasks/status")
#: What the proxy declares upstream: all a client can do (a request the proxy's own client
#: cannot answer is refused by that client's session, with the reason).
UPSTREAM_CAPABILITIES: dict[str, Any] = {
    "sampling": {},
    "elicitation": {"form": {}, "url": {}},
    "roots": {"listChanged": True},
}
#: Bound on one forwarded request (reset by each progress report).
REQUEST_TIMEOUT = 600.0


class Proxy:
    """A server that forwards everything to ``target`` (anything :class:`mcpkit.Client`
    accepts: a command line, a ``.py`` file, an ``http(s)`` URL, ``stdio(...)``/``http(...)``).

    Serve it like a :class:`~mcpkit.Server`: ``create_http_app(Proxy("python server.py"))``,
    or ``await Proxy(url).serve(transport)``. ``mcpkit proxy TARGET --transport http`` runs it.

    Example::

        app = create_http_app(Proxy("python weather.py"))   # the stdio server, over HTTP
    """

    def __init__(
        self,
        target: Any,
        *,
        name: str = "mcpkit-proxy",
        init_timeout: float = 30.0,
        request_timeout: float = REQUEST_TIMEOUT,
    ) -> None:
        if isinstance(target, (StdioTarget, HTTPTarget)):
            self.target: object = target
        else:
            # A command the user gave runs as if they ran it: with their environment.
            self.target = target_of(
                target, env=None, cwd=None, inherit_env=True, on_stderr=None, headers=None,
                auth=None, timeout=None,
            )  # fmt: skip
        self.name = name
        self.init_timeout = init_timeout
        self.request_timeout = request_timeout

    # ------------------------------------------------------------------ SessionFactory

    def create_session(self, transport: Transport, **kw: Any) -> ServerSession:
        """A downstream session whose upstream connection opens when it starts running."""
        link = _Link(self)
        kw.setdefault("supported_versions", HANDSHAKE_PROTOCOL_VERSIONS)
        session = ServerSession(
            transport,
            server_info={"name": self.name, "version": "0"},
            capabilities={},
            handlers={m: link.forward for m in CLIENT_REQUESTS},
            notification_handlers={m: _notify_upstream(link, m) for m in CLIENT_NOTIFICATIONS},
            around_run=link.running,
            **kw,
        )
        link.downstream = session
        return session

    async def serve(self, transport: Transport) -> None:
        """Serve one client over ``transport`` until it disconnects."""
        await self.create_session(transport).run()


def _notify_upstream(link: _Link, method: str) -> Any:
    async def forward(params: dict[str, Any] | None) -> None:
        if link.upstream is not None:
            await link.upstream.notify(method, params)

    return forward


class _Link:
    """One client's pair of sessions: downstream (we serve it) and upstream (we are its client)."""

    def __init__(self, proxy: Proxy) -> None:
        self.proxy = proxy
        self.downstream: ServerSession | None = None
        self.upstream: ClientSession | None = None
        #: The downstream requests being forwarded (to tie server requests to one).
        self.in_flight: dict[Any, RequestContext] = {}

    @contextlib.asynccontextmanager
    async def running(self, session: ServerSession) -> AsyncIterator[None]:
        """Open upstream, adopt its identity, serve; close upstream when the client leaves."""
        async with AsyncExitStack() as stack:
            transport = await open_target(stack, self.proxy.target)
            upstream = ClientSession(
                transport,
                client_info={"name": self.proxy.name, "version": "0"},
                capabilities=UPSTREAM_CAPABILITIES,
                handlers={m: self.ask_client for m in SERVER_REQUESTS},
                notification_handlers={m: self.tell_client(m) for m in SERVER_NOTIFICATIONS},
            )
            await stack.enter_async_context(upstream)
            try:
                init = await upstream.initialize(timeout=self.proxy.init_timeout)
            except (ProtocolError, ConnectionClosed, TimeoutError) as e:
                raise ConnectionClosed(
                    f"the upstream server {describe(self.proxy.target)} did not start: {e}"
                ) from None
            session.update_spec(
                server_info=dict(init.get("serverInfo") or session.server_info),
                instructions=init.get("instructions"),
                capabilities=dict(init.get("capabilities") or {}),
            )
            self.upstream = upstream
            yield

    async def forward(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        """A client's request, sent upstream; its progress reported back as the client's."""
        upstream = self.upstream
        if upstream is None:
            raise ConnectionClosed("the upstream server is not connected")
        key = rc.request.id
        self.in_flight[key] = rc

        async def progress(value: float, total: float | None, message: str | None) -> None:
            await rc.report_progress(value, total, message)

        try:
            return await upstream.send_request(
                rc.request.method,
                _without_progress_token(params),
                timeout=self.proxy.request_timeout,
                on_progress=progress if rc.request.progress_token is not None else None,
                reset_timeout_on_progress=True,
            )
        finally:
            self.in_flight.pop(key, None)

    async def ask_client(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        """The upstream server's request (sampling, elicitation, roots), asked of the client."""
        downstream = self.downstream
        assert downstream is not None
        method = rc.request.method
        related = next(iter(self.in_flight.values())) if len(self.in_flight) == 1 else None
        try:
            if related is not None:
                return await related.send_request(
                    method, params, timeout=self.proxy.request_timeout
                )
            return await downstream.send_request(method, params, timeout=self.proxy.request_timeout)
        except ProtocolError:
            raise
        except Exception as e:  # the client cannot answer (no capability, gone): say why
            raise ProtocolError(
                -32603, f"the proxy's client could not answer {method}: {e}"
            ) from None

    def tell_client(self, method: str) -> Any:
        async def forward(params: dict[str, Any] | None) -> None:
            downstream = self.downstream
            if downstream is None or downstream.negotiated is None:
                return
            related = next(iter(self.in_flight.values())) if len(self.in_flight) == 1 else None
            if related is not None and method == "notifications/message":
                await related.notify(method, params)  # over HTTP: on the call's own stream
            else:
                await downstream.notify(method, params)

        return forward


def _without_progress_token(params: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The client's params, minus its progress token (upstream gets one of ours)."""
    if params is None:
        return None
    meta = params.get("_meta")
    if not isinstance(meta, dict) or "progressToken" not in meta:
        return dict(params)
    rest = {k: v for k, v in meta.items() if k != "progressToken"}
    out = {k: v for k, v in params.items() if k != "_meta"}
    if rest:
        out["_meta"] = rest
    return out


def main(command: str, argv: list[str]) -> int:
    """``mcpkit proxy TARGET [--transport stdio|http|sse] [--host H] [--port N]``."""
    import argparse
    import sys

    p = argparse.ArgumentParser(
        prog=f"mcpkit {command}",
        description="Serve any MCP server (a command, a .py file or a URL) over another transport.",
    )
    p.add_argument("target", help="the server: a command line (one quoted string), a file or a URL")
    p.add_argument("--transport", "-t", choices=("stdio", "http", "sse"), default="stdio")
    p.add_argument("--host", default=None, help="HTTP: address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="HTTP: port (default 8000)")
    try:
        ns = p.parse_args(argv)
    except SystemExit as e:
        return int(e.code) if isinstance(e.code, int) else 2
    try:
        proxy = Proxy(ns.target)
    except (TypeError, ValueError) as e:
        print(f"mcpkit {command}: {e}", file=sys.stderr)
        return 2
    try:
        if ns.transport == "stdio":
            from ._transports._loop import run
            from ._transports._stdio import stdio_server

            async def serve_stdio() -> None:
                async with stdio_server() as transport:
                    await proxy.serve(transport)

            run(serve_stdio)
        else:
            from ._app import run as run_http

            options = {k: v for k, v in (("host", ns.host), ("port", ns.port)) if v is not None}
            run_http(proxy, ns.transport, **options)
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # one line, never a traceback
        cause: BaseException = e
        while isinstance(getattr(cause, "exceptions", None), tuple) and cause.exceptions:  # type: ignore[attr-defined]
            cause = cause.exceptions[0]  # type: ignore[attr-defined]  # an ExceptionGroup
        print(f"mcpkit {command}: {cause}", file=sys.stderr)
        return 1
    return 0
