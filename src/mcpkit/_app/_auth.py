"""The authorization gate of the HTTP apps: bearer tokens in, 401/403 challenges out.

Every request to a protected app passes here before anything else reads it: the token is
verified (its principal then rides with the request, and sessions are bound to it), the
metadata document is served at its well-known path, and each MCP request's own required
scopes (per tool, resource or prompt) are checked before it reaches the server, so an
insufficient scope is the HTTP 403 step-up challenge and not an error deep in a stream.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

import anyio
import orjson

from .._auth._principal import Principal
from .._auth._resource import ResourceServer
from .._exceptions import AuthError, AuthServerError, InsufficientScope, InvalidToken
from .._http._asgi import JSON, Answer, Receive, Scope, Send, route_path, same_path
from .._http._security import OwnerFn
from .._session._server import ServerSession
from ._cors import MAX_AGE
from ._registry import Hosting

logger = logging.getLogger("mcpkit.auth")


#: The entry of a request's header map under which the gate records the verified
#: principal's key once it admitted the request. No client can send it: a field name never
#: starts with ":" (RFC 9110 token), and ASGI servers hand over no pseudo-headers.
PRINCIPAL_KEY = ":mcpkit-principal"


def principal_owner(headers: dict[str, str]) -> str | None:
    """The session owner under authorization: the verified principal of this request (as
    the gate recorded it in the request's own header map)."""
    return headers.get(PRINCIPAL_KEY)


def owner_fn(auth: ResourceServer | None, configured: OwnerFn | None) -> OwnerFn | None:
    """The app's session-owner function: the one configured, else the principal's."""
    if configured is not None or auth is None:
        return configured
    return principal_owner


class AuthGate:
    """Admits a protected app's requests: see the module docstring."""

    def __init__(self, auth: ResourceServer, hosting: Hosting | None) -> None:
        self.auth = auth
        # A low-level factory (no hosting) has no per-operation scopes: only the
        # server-wide ones apply.
        self._required = hosting.required_scopes if hosting is not None else None

    def is_metadata(self, scope: Scope) -> bool:
        """Whether the request is for the Protected Resource Metadata document."""
        return self.is_metadata_path(route_path(scope))

    def is_metadata_path(self, path: str) -> bool:
        """Whether ``path`` (below the mount point) is the metadata document's."""
        return same_path(path, self.auth.metadata_path)

    async def serve_metadata(self, scope: Scope, send: Send) -> None:
        await self.metadata_answer(str(scope.get("method", ""))).write(send)

    def metadata_answer(self, method: str) -> Answer:
        """The Protected Resource Metadata document (CORS open), as ``method`` asks."""
        # Open to every origin (``*``): a public document, read without credentials by
        # browser hosts starting discovery.
        cors = [(b"access-control-allow-origin", b"*")]
        if method == "OPTIONS":
            cors += [
                (b"access-control-allow-methods", b"GET, OPTIONS"),
                (b"access-control-allow-headers", b"mcp-protocol-version"),
                (b"access-control-max-age", MAX_AGE),
            ]
            return Answer(204, headers=cors)
        if method not in ("GET", "HEAD"):
            return Answer(405, headers=[(b"allow", b"GET, OPTIONS"), *cors])
        body = orjson.dumps(self.auth.metadata())
        return Answer(200, body, content_type=JSON, headers=cors)

    async def refuse(self, send: Send, error: AuthError, *, bare: bool = False) -> None:
        """Answer a refused request (see :meth:`refusal`)."""
        await self.refusal(error, bare=bare).write(send)

    def refusal(self, error: AuthError, *, bare: bool = False) -> Answer:
        """The answer refusing a request: 401 with the challenge (``bare``: no token was
        sent, so no error code in it), 403 for a scope, 503 when tokens cannot be checked,
        400 otherwise."""
        body = orjson.dumps({"error": error.error, "error_description": error.description})
        if isinstance(error, AuthServerError):
            return Answer(503, body, content_type=JSON, headers=[(b"retry-after", b"5")])
        if isinstance(error, InvalidToken):
            status = 401
        elif isinstance(error, InsufficientScope):
            status = 403
        else:
            status = 400
        scopes = error.scopes if isinstance(error, InsufficientScope) else ()
        challenge = self.auth.challenge(None if bare else error, scopes)
        return Answer(
            status,
            body,
            content_type=JSON,
            headers=[(b"www-authenticate", challenge.encode("latin-1", "replace"))],
        )

    async def admit(self, headers: dict[str, str], scope: Scope, send: Send) -> Principal | None:
        """The request's principal, or None once it was refused (the answer is sent)."""
        query = scope.get("query_string", b"")
        verdict = await self.verify(
            headers, query.decode("latin-1") if isinstance(query, bytes) else str(query)
        )
        if isinstance(verdict, Answer):
            await verdict.write(send)
            return None
        return verdict

    async def verify(self, headers: dict[str, str], query: str) -> Principal | Answer:
        """The principal of a request with these headers and query string, or the answer
        refusing it."""
        try:
            return await self.auth.authenticate(headers.get("authorization"), query)
        except AuthServerError as e:
            # Our authorization server cannot be used: not the caller's fault (and logged
            # without the token, which no error carries).
            logger.warning("cannot verify access tokens: %s", e)
            return self.refusal(AuthServerError("the server cannot verify access tokens right now"))
        except AuthError as e:
            # No token at all gets the plain challenge (RFC 6750 3.1: no error code).
            return self.refusal(e, bare=headers.get("authorization") is None)

    async def serve(
        self,
        headers: dict[str, str],
        scope: Scope,
        send: Send,
        serve: Callable[[Send, Principal], Awaitable[None]],
    ) -> None:
        """Run ``serve(send, principal)`` for an admitted request (its principal rides
        with each MCP request it carries, and binds the sessions it opens); answer a
        refused one.

        A GET stream (the server's listening stream, a legacy SSE session) outlives no
        token: it ends when the token that opened it expires, and the client comes back
        with a fresh one (a resumable stream loses nothing)."""
        principal = await self.admit(headers, scope, send)
        if principal is None:
            return
        headers[PRINCIPAL_KEY] = principal.key  # what binds the sessions it opens
        if scope.get("method") == "GET" and principal.expires_at is not None:
            await _until(principal.expires_at, send, lambda out: serve(out, principal))
        else:
            await serve(send, principal)

    def needed(self, msg: Any, session: ServerSession | None = None) -> Sequence[str]:
        """The scopes one MCP message needs beyond the server-wide ones (none for a target
        hidden from ``session``: it is answered as an unknown one, never with a 403)."""
        if self._required is None or not isinstance(msg, dict):
            return ()
        method = msg.get("method")
        if not isinstance(method, str):
            return ()
        params = msg.get("params")
        return tuple(self._required(method, params if isinstance(params, dict) else None, session))

    async def allows(
        self,
        msgs: Sequence[Any],
        send: Send,
        principal: Principal | None,
        session: ServerSession | None = None,
    ) -> bool:
        """Whether ``principal`` may send these messages (on ``session``, whose
        visibility rules count); answers 403 if not."""
        refused = self.scope_refusal(msgs, principal, session)
        if refused is None:
            return True
        await refused.write(send)
        return False

    def scope_refusal(
        self,
        msgs: Sequence[Any],
        principal: Principal | None,
        session: ServerSession | None = None,
    ) -> Answer | None:
        """None when ``principal`` may send these messages, else the 403 refusing them.
        ``session``: the handshake-era session they came on (None: none, or a fresh one),
        whose visibility rules decide, with the server's, which targets are hidden."""
        needed: list[str] = []
        for msg in msgs:
            needed += self.needed(msg, session)
        try:
            self.auth.check_scopes(principal, list(dict.fromkeys(needed)))
        except InsufficientScope as e:
            return self.refusal(e)
        return None

    @staticmethod
    def until_expiry(method: str, principal: Principal, answer: Answer) -> Answer:
        """``answer``; a stream answering a GET is cut when the token that opened it
        expires (see :meth:`serve`)."""
        expires_at = principal.expires_at
        stream = answer.stream
        if method != "GET" or expires_at is None or stream is None:
            return answer
        return Answer.streamed(lambda send: _until(expires_at, send, stream))


#: An app's dispatcher: ``fn(scope, headers, receive, send, principal)``.
Dispatch = Callable[[Scope, dict[str, str], Receive, Send, "Principal | None"], Awaitable[None]]


async def serve_admitted(
    gate: AuthGate | None,
    scope: Scope,
    headers: dict[str, str],
    receive: Receive,
    send: Send,
    dispatch: Dispatch,
) -> None:
    """``dispatch`` a request with its verified principal: at once, with None, when the app
    checks no tokens; through the gate (which answers a refused request) when it does."""
    if gate is None:
        await dispatch(scope, headers, receive, send, None)
        return
    await gate.serve(
        headers,
        scope,
        send,
        lambda out, principal: dispatch(scope, headers, receive, out, principal),
    )


async def _until(expires_at: float, send: Send, serve: Callable[[Send], Awaitable[object]]) -> None:
    """``serve(send)`` cut at ``expires_at`` (Unix time), its response then ended cleanly
    (the last body chunk sent) instead of dropped."""
    started = ended = False

    async def tracked(message: MutableMapping[str, Any]) -> None:
        nonlocal started, ended
        if message["type"] == "http.response.start":
            started = True
        elif message["type"] == "http.response.body" and not message.get("more_body"):
            ended = True
        await send(message)

    with anyio.move_on_after(max(0.0, expires_at - time.time())) as scope:
        await serve(tracked)
    if scope.cancelled_caught and started and not ended:
        await send({"type": "http.response.body", "body": b"", "more_body": False})
