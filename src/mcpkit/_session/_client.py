"""The client role: ``initialize``, version checks, capability checks on what we call."""

from __future__ import annotations

import logging
from collections.abc import Coroutine, Mapping
from typing import Any

from .._exceptions import (
    CapabilityError,
    InputFailed,
    MethodNotFound,
    ProtocolError,
    UnsupportedProtocolVersion,
    VersionError,
)
from .._incoming import IncomingRequest
from .._transports._base import RequestId, Transport, answer_lost
from ..types._revisions import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    STATELESS_PROTOCOL_VERSIONS,
    adapt_params,
    adapt_result,
)
from ._base import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    Negotiated,
    NotificationHandlerFn,
    RequestContext,
    RequestHandlerFn,
)
from ._capabilities import (
    CLIENT_METHOD_CAPABILITY,
    SERVER_METHOD_CAPABILITY,
    STATELESS_SERVER_METHOD_CAPABILITY,
    has_capability,
)
from ._keepalive import check_keepalive
from ._peer import Peer
from ._stateless import META_LOG_LEVEL, META_SERVER_INFO


def _without_envelope(result: dict[str, Any]) -> dict[str, Any]:
    """A complete stateless result without what only the protocol needed: ``resultType``
    and the server's identity in ``_meta`` (known from ``server/discover`` already)."""
    out = dict(result)
    out.pop("resultType", None)
    meta = out.get("_meta")
    if isinstance(meta, dict) and META_SERVER_INFO in meta:
        rest = {k: v for k, v in meta.items() if k != META_SERVER_INFO}
        if rest:
            out["_meta"] = rest
        else:
            del out["_meta"]
    return out


#: Times a stateless request whose response stream broke is sent again (as a new request).
MAX_REISSUES = 2

#: The methods a client may send again when their answer was lost (2026-07-28: a response
#: stream that broke before the answer) without being told it is safe: they change nothing
#: on the server, so a second copy, or a first that did run, is harmless. The one table of
#: them (docs/client.md). Everything else -- ``tools/call`` above all -- may have had an
#: effect already, and is sent again only when known safe (:meth:`ClientSession.send_request`).
EFFECTLESS_METHODS = frozenset(
    {
        "ping",
        "server/discover",
        "tools/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        # A listen stream holds no state beyond itself: opening it again is what the spec
        # asks (basic/patterns: "the client re-issues the request").
        "subscriptions/listen",
        # Reads of the tasks and skills extensions.
        "tasks/get",
        "tasks/list",
        "skills/list",
        "skills/get",
    }
)

#: The newest stateless revision, asked for by :meth:`ClientSession.discover`.
LATEST_STATELESS_VERSION = STATELESS_PROTOCOL_VERSIONS[0]

logger = logging.getLogger("mcpkit.client")

#: The extension (MCP Apps, ``io.modelcontextprotocol/ui``) declared at ``initialize`` too.
HANDSHAKE_EXTENSION = "io.modelcontextprotocol/ui"

#: Bound on the ``initialize`` exchange unless the caller sets another.
DEFAULT_INIT_TIMEOUT = 30.0


def _not_reissued(lost: ProtocolError) -> ProtocolError:
    """The error of a lost request that is not sent again: it keeps the transport's mark
    (a lost answer, not the server's), and says what the caller may do about it -- as a
    handshake-era server does for a request its dead worker was serving."""
    return ProtocolError(
        lost.code,
        f"{lost.message}; it may or may not have taken effect, and was not sent again: "
        "nothing says that is safe (the client sends again a tool call annotated "
        "readOnlyHint or idempotentHint, a request sent with idempotent=True, or any "
        "with session.assume_idempotent set; or retry it yourself if it is safe to)",
        lost.data,
    )


class ClientSession:
    """One connection to a server, from the client's side.

    Run :meth:`run` in a task group (or ``async with``), then :meth:`initialize`.

    Args:
        transport: the connection.
        client_info: our ``clientInfo`` (``name``, ``version``, ...).
        capabilities: the client capabilities to declare (declare exactly what ``handlers`` serve).
        handlers: method -> ``async fn(ctx, params) -> result`` for server->client requests.
        notification_handlers: method -> ``async fn(params)`` for server notifications.
        protocol_version: the revision to ask for (default: the latest we speak).
        keepalive_interval: ping the server this often (seconds) once initialized; a ping
            unanswered within ``keepalive_timeout`` closes the connection. Off by default.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        client_info: Mapping[str, Any],
        capabilities: Mapping[str, Any] | None = None,
        handlers: Mapping[str, RequestHandlerFn] | None = None,
        notification_handlers: Mapping[str, NotificationHandlerFn] | None = None,
        protocol_version: str = LATEST_HANDSHAKE_VERSION,
        supported_versions: tuple[str, ...] = HANDSHAKE_PROTOCOL_VERSIONS,
        max_concurrency: int = 64,
        keepalive_interval: float | None = None,
        keepalive_timeout: float = 10.0,
    ) -> None:
        check_keepalive(keepalive_interval, keepalive_timeout)
        self.keepalive_interval = keepalive_interval
        self.keepalive_timeout = keepalive_timeout
        if protocol_version not in supported_versions:
            raise VersionError(
                f"unsupported protocol version {protocol_version!r}; we speak {supported_versions}"
            )
        self.client_info = dict(client_info)
        self.capabilities = dict(capabilities or {})
        self.requested_version = protocol_version
        self.supported_versions = supported_versions
        self._handlers = dict(handlers or {})
        #: The engine, the negotiated context and everything we send (shared with the server role).
        self.peer = Peer(
            transport,
            other="server",
            needs=SERVER_METHOD_CAPABILITY,
            on_request=self._on_request,
            max_concurrency=max_concurrency,
            name="client",
        )
        self.peer.set_notification_handlers(notification_handlers or {})
        self.engine = self.peer.engine
        #: The whole ``initialize`` result.
        self.initialize_result: dict[str, Any] | None = None
        #: The whole ``server/discover`` result, once :meth:`discover` succeeded.
        self.discover_result: dict[str, Any] | None = None
        #: The log level sent with every stateless request (None: no log messages wanted).
        self.log_level: str | None = None
        #: ``resultType`` values extensions declared by the layer above understand (a
        #: result of one is returned whole, not read as an error).
        self.result_types: frozenset[str] = frozenset()
        #: Most input rounds one stateless request may take (InputRequiredResult answers).
        self.max_input_rounds = 8
        #: How many times a stateless request whose response stream broke (the server
        #: closed it before answering) is sent again, each time as a new request -- when
        #: that is known to be safe (see :meth:`send_request`).
        self.max_reissues = MAX_REISSUES
        #: Treat every request as safe to send again when its answer was lost (as if each
        #: were sent with ``idempotent=True``). Off: a request that may have had an effect
        #: is never sent twice behind the caller's back.
        self.assume_idempotent = False

    async def __aenter__(self) -> ClientSession:
        await self.engine.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> bool | None:
        return await self.engine.__aexit__(*exc)

    @property
    def negotiated(self) -> Negotiated | None:
        """What the handshake settled (None before :meth:`initialize`)."""
        return self.peer.negotiated

    @negotiated.setter
    def negotiated(self, value: Negotiated | None) -> None:
        self.peer.negotiated = value

    @property
    def protocol_version(self) -> str | None:
        """The negotiated revision (None before :meth:`initialize`)."""
        return self.peer.protocol_version

    @property
    def stateless(self) -> bool:
        """True when requests go out under a stateless revision (after :meth:`discover`)."""
        n = self.peer.negotiated
        return n is not None and n.stateless

    @property
    def server_capabilities(self) -> dict[str, Any]:
        """What the server declared."""
        return self.peer.peer_capabilities

    @property
    def server_info(self) -> dict[str, Any]:
        """The server's ``serverInfo``."""
        return self.peer.peer_info

    def set_notification_handler(self, method: str, handler: NotificationHandlerFn) -> None:
        """Serve server notification ``method`` with ``handler(params)``."""
        self.peer.set_notification_handler(method, handler)

    async def initialize(self, *, timeout: float | None = DEFAULT_INIT_TIMEOUT) -> dict[str, Any]:
        """Run the handshake: ``initialize``, check the answer, send ``initialized``.

        Raises :class:`VersionError` (after which the caller should disconnect, as the spec
        asks) when the server answers with a revision we do not speak.
        """
        # Extensions are declared from 2026-07-28 on (in each request's _meta): the
        # handshake revisions' ClientCapabilities have no `extensions`. MCP Apps is the
        # exception: its spec (SEP-1865) has hosts declare it at initialize on any revision.
        declared = {k: v for k, v in self.capabilities.items() if k != "extensions"}
        exts = self.capabilities.get("extensions") or {}
        if HANDSHAKE_EXTENSION in exts:
            declared["extensions"] = {HANDSHAKE_EXTENSION: exts[HANDSHAKE_EXTENSION]}
        params: dict[str, Any] | None = {
            "protocolVersion": self.requested_version,
            "capabilities": declared,
            "clientInfo": self.client_info,
        }
        params = adapt_params("initialize", params, self.requested_version)
        result = await self.engine.request("initialize", params, timeout=timeout, cancellable=False)
        if not isinstance(result, dict):
            raise ProtocolError(message=f"malformed initialize result: {result!r}")
        version = result.get("protocolVersion")
        if version not in self.supported_versions:
            raise VersionError(
                f"the server answered protocol version {version!r}, which this client does not speak "
                f"(supported: {', '.join(self.supported_versions)})"
            )
        caps = result.get("capabilities")
        info = result.get("serverInfo")
        if not isinstance(caps, dict) or not isinstance(info, dict):
            raise ProtocolError(
                message="malformed initialize result: capabilities and serverInfo must be objects"
            )
        instructions = result.get("instructions")
        self.peer.negotiated = Negotiated(
            version, caps, info, instructions if isinstance(instructions, str) else None
        )
        self.initialize_result = result
        await self.engine.notify("notifications/initialized")
        self.peer.start_keepalive(self.keepalive_interval, self.keepalive_timeout)
        return result

    async def discover(
        self,
        version: str = LATEST_STATELESS_VERSION,
        *,
        timeout: float | None = DEFAULT_INIT_TIMEOUT,
    ) -> dict[str, Any]:
        """Ask the server what it is (``server/discover``) and use a stateless revision.

        If the server answers :class:`UnsupportedProtocolVersion` naming another stateless
        revision we speak, that one is used. Raises :class:`ProtocolError` (or a transport
        error) when the server does not speak the stateless era, so the caller can fall back
        to :meth:`initialize`, and :class:`VersionError` when it does but shares no revision.
        """
        offered: list[str] = []
        for _ in range(2):
            try:
                result = await self.engine.request(
                    "server/discover", {"_meta": self._request_meta(version)}, timeout=timeout
                )
            except UnsupportedProtocolVersion as e:
                offered = e.supported
                shared = [v for v in STATELESS_PROTOCOL_VERSIONS if v in offered]
                if not shared:
                    raise VersionError(
                        f"the server speaks {', '.join(offered) or 'nothing we know'}; "
                        f"this client's stateless revisions are {', '.join(STATELESS_PROTOCOL_VERSIONS)}",
                        supported=offered,
                    ) from e
                # The same revision again is worth one more try: a server may refuse a
                # revision it offers (a rolling deploy behind a balancer); bounded by the loop.
                version = version if version in shared else shared[0]
                continue
            return self._discovered(version, result)
        raise VersionError("the server keeps refusing the revisions it offered", supported=offered)

    def _discovered(self, version: str, result: Any) -> dict[str, Any]:
        if not isinstance(result, dict) or not isinstance(result.get("capabilities"), dict):
            raise ProtocolError(message=f"malformed server/discover result: {result!r}")
        meta = result.get("_meta")
        info = meta.get(META_SERVER_INFO) if isinstance(meta, dict) else None
        instructions = result.get("instructions")
        self.peer.negotiated = Negotiated(
            version,
            result["capabilities"],
            info if isinstance(info, dict) else {},
            instructions if isinstance(instructions, str) else None,
        )
        self.peer.needs = STATELESS_SERVER_METHOD_CAPABILITY
        self.discover_result = result
        return result

    def _request_meta(self, version: str) -> dict[str, Any]:
        meta: dict[str, Any] = {
            META_PROTOCOL_VERSION: version,
            META_CLIENT_CAPABILITIES: self.capabilities,
            META_CLIENT_INFO: self.client_info,
        }
        if self.log_level is not None:
            meta[META_LOG_LEVEL] = self.log_level
        return meta

    async def _stateless_request(
        self,
        method: str,
        params: dict[str, Any] | None,
        reissues: int,
        idempotent: bool,
        **kw: Any,
    ) -> Any:
        """One request under the stateless revision: our context in ``_meta``, and the
        server's input requests answered by our handlers and retried, in bounded rounds."""
        negotiated = self.peer.negotiated
        assert negotiated is not None
        params = dict(params or {})
        given = params.get("_meta")
        params["_meta"] = {
            **(given if isinstance(given, dict) else {}),
            **self._request_meta(negotiated.protocol_version),
        }
        for _ in range(self.max_input_rounds + 1):
            try:
                result = await self.peer.send_request(method, params, **kw)
            except ProtocolError as e:
                if not answer_lost(e):
                    raise
                if not (idempotent or self.assume_idempotent or method in EFFECTLESS_METHODS):
                    raise _not_reissued(e) from None
                result = await self._reissue(method, params, kw, e, reissues)
            if not isinstance(result, dict):
                return result
            if result.get("resultType", "complete") == "complete":
                return _without_envelope(result)
            if result.get("resultType") in self.result_types:
                return result  # an extension's (a task handle): the layer above reads it
            if result.get("resultType") != "input_required":
                raise ProtocolError(
                    message=f"{method}: unknown resultType {result.get('resultType')!r}"
                )
            asked = result.get("inputRequests")
            answers = await self.answer_inputs(asked if isinstance(asked, dict) else {})
            params = {
                k: v for k, v in params.items() if k not in ("inputResponses", "requestState")
            }
            params["inputResponses"] = answers
            state = result.get("requestState")
            if isinstance(state, str):
                params["requestState"] = state
        raise ProtocolError(
            message=f"{method}: the server still asked for input after {self.max_input_rounds} rounds"
        )

    async def _reissue(
        self,
        method: str,
        params: dict[str, Any],
        kw: dict[str, Any],
        lost: ProtocolError,
        reissues: int,
    ) -> Any:
        """A stateless request whose response stream broke before the answer (``lost``),
        known safe to repeat, sent again as a new request with a new id (changelog.mdx:
        clients MUST re-issue it; we do so only when a second copy cannot do harm, issue
        41), at most ``reissues`` times; then the last such error, saying how often."""
        for _ in range(reissues):
            logger.info("%s: the response stream broke before the answer; sent again", method)
            try:
                return await self.peer.send_request(method, params, **kw)
            except ProtocolError as e:
                if not answer_lost(e):
                    raise
                lost = e
        if reissues:
            raise ProtocolError(lost.code, f"{lost.message} ({reissues + 1} times)", lost.data)
        raise lost

    async def answer_inputs(self, asked: dict[str, Any]) -> dict[str, Any]:
        """Our answers to input requests (an ``InputRequiredResult``'s, a task's), from the
        request handlers (sampling, elicitation, roots)."""
        answers: dict[str, Any] = {}
        for key, question in asked.items():
            if not isinstance(question, dict) or not isinstance(question.get("method"), str):
                raise ProtocolError(message=f"malformed input request {key!r}: {question!r}")
            method = question["method"]
            params = question.get("params")
            req = IncomingRequest(
                self.engine, f"input:{key}", method, params if isinstance(params, dict) else None
            )
            try:
                answers[key] = await self._serve(req)
            except Exception as e:
                # No InputResponse carries an error: the server cannot be told, and the
                # request is not retried (the spec's sampling and roots "Error Handling").
                raise InputFailed(
                    f"{method}: our handler could not answer the server's input request "
                    f"({type(e).__name__}: {e}); the request ends here",
                    method=method,
                ) from e
        return answers

    # ------------------------------------------------------------------ incoming

    async def _on_request(self, req: IncomingRequest) -> Any:
        if req.method == "ping":
            return {}
        return await self._serve(req)

    async def _serve(self, req: IncomingRequest) -> Any:
        method = req.method
        handler = self._handlers.get(method)
        cap = CLIENT_METHOD_CAPABILITY.get(method)
        if handler is None or (cap is not None and not has_capability(self.capabilities, cap)):
            raise MethodNotFound(message=f"Method not found: {method}")
        result = await handler(RequestContext(self, req, self.negotiated), req.params)
        return adapt_result(method, result, self.protocol_version)

    # ------------------------------------------------------------------ outgoing

    def check_server_capability(self, method: str) -> None:
        """Raise :class:`CapabilityError` unless the server declared what ``method`` needs."""
        self.peer.check_capability(method)

    def send_request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        related_request_id: RequestId | None = None,
        reissues: int | None = None,
        idempotent: bool = False,
        **kw: Any,
    ) -> Coroutine[Any, Any, Any]:
        """Send a request to the server (await the result); see
        :meth:`JSONRPCEngine.request` for keywords.

        After :meth:`discover`, requests carry our context in ``_meta``, an
        ``InputRequiredResult`` is answered by our handlers and the request sent again, and
        a request whose response stream broke before the answer is sent again as a new
        request, at most ``reissues`` times (default :attr:`max_reissues`) -- only when
        that is safe: a method of :data:`EFFECTLESS_METHODS`, a request the caller marks
        ``idempotent`` (sending it twice does no more than once), or any request once
        :attr:`assume_idempotent` is set. Any other lost request raises the transport's
        error at once, saying the request may or may not have taken effect and was not
        sent again. A request the session cannot send yet raises :class:`CapabilityError`
        at the call.
        """
        # Not a coroutine itself: the one doing the work is handed back (one frame less
        # per request, profiled on the client's hot path).
        negotiated = self.peer.negotiated
        if negotiated is None and method != "ping":
            raise CapabilityError(f"cannot send {method!r} before initialize completed")
        if negotiated is not None and negotiated.stateless:
            again = self.max_reissues if reissues is None else reissues
            return self._stateless_request(method, params, again, idempotent, **kw)
        return self.peer.send_request(method, params, related_request_id=related_request_id, **kw)

    async def notify(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        related_request_id: RequestId | None = None,
    ) -> None:
        """Send a notification to the server (fitted to the negotiated revision)."""
        await self.peer.notify(method, params, related_request_id=related_request_id)

    async def ping(self, timeout: float = 10.0) -> None:
        """Ping the server; raises :class:`RequestTimeout` if it does not answer in time."""
        await self.peer.ping(timeout)
