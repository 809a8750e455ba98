"""A small HTTP/1.1 client over anyio's streams, with keep-alive, for the MCP transports.

Why not httpx: for one MCP call it spends several times the client CPU this does (measured,
docs/performance-notes.md, "Client on maintained parts"), and MCP needs none of what the
difference buys (cookies, HTTP/2, rich URL and header models). The framing is h11's (a
maintained, pure-Python HTTP/1.1 state machine: RFC 9112's rules, chunked bodies, bounded
heads, header values that could smuggle a line refused before a byte is sent), and where
httptools is installed its parser (llhttp, C) reads the responses (``_h1parse``); the
connections are anyio's (``anyio.connect_tcp``: IPv6 and IPv4 raced for a host name; TLS by
``anyio.streams.tls``). What is ours is the lean part: one request at a time per connection,
a small pool of kept-alive connections per origin, redirects, the ``auth=`` hook and the
timeouts. Users who need more pass an ``httpx2.AsyncClient`` (or an ``httpx2.Auth``), and the
transports use httpx2 instead through :class:`HttpxAdapter`. Works on asyncio and trio.
"""

from __future__ import annotations

import functools
import inspect
import ssl
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, NamedTuple, Protocol, TypeVar
from urllib.parse import urljoin, urlsplit

import anyio
from anyio.abc import ByteStream
from anyio.streams.tls import TLSStream

from .. import _exceptions as _exc
from ._h1parse import MAX_HEAD as MAX_HEAD
from ._h1parse import Head, check, new_exchange

#: (connect/write timeout, read timeout) in seconds; None = no limit.
Timeouts = tuple["float | None", "float | None"]

#: How often one request may go again after the auth hook answered a 401/403 (a token,
#: then a DPoP nonce, then a step-up); the hook itself decides whether a retry can help.
MAX_AUTH_RETRIES = 3


#: What adds an ``auth=`` hook's headers to one request, given its method and URL.
HeaderSource = Callable[[str, str], Awaitable[Mapping[str, str]]]


def header_source(auth: Any) -> HeaderSource | None:
    """How the ``auth=`` hook's headers are had, decided once per client (not per request):
    ``auth.headers_for(method, url)`` when it has one (an OAuth client signing each request,
    as DPoP does), else ``auth()``; either may be sync or async."""
    if auth is None:
        return None
    per_request = getattr(auth, "headers_for", None)
    call: Callable[[str, str], Any] = per_request or (lambda method, url: auth())

    async def headers(method: str, url: str) -> Mapping[str, str]:
        extra = call(method, url)
        got: Mapping[str, str] = await extra if inspect.isawaitable(extra) else extra
        return got

    return headers


async def auth_retry(auth: Any, method: str, url: str, resp: Any) -> bool:
    """Whether the ``auth=`` hook made a refused request worth sending again: it gets the
    response's status and headers (``on_challenge``), closing the response either way."""
    on_challenge = getattr(auth, "on_challenge", None)
    if on_challenge is None:
        return False
    try:
        retry = bool(await on_challenge(method, url, resp.status_code, resp.headers))
    except BaseException:
        await resp.aclose()  # its connection is not left open
        raise
    if retry:
        await resp.aclose()
    return retry


_MAX_IDLE_PER_ORIGIN = 8


# The client's errors belong to the one tree of mcpkit._exceptions (TransportError > HTTPError).
HTTPError = _exc.HTTPError
ConnectError = _exc.HTTPConnectError
ReadTimeout = _exc.HTTPReadTimeout
RemoteProtocolError = _exc.HTTPProtocolError


class Headers:
    """Response headers: case-insensitive ``get``; repeated headers joined with commas."""

    __slots__ = ("_d",)

    def __init__(self, raw: list[tuple[str, str]]) -> None:
        d: dict[str, str] = {}
        for name, value in raw:  # names come lowercased
            d[name] = f"{d[name]}, {value}" if name in d else value
        self._d = d

    def get(self, name: str, default: Any = None) -> Any:
        return self._d.get(name.lower(), default)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._d

    def __getitem__(self, name: str) -> str:
        return self._d[name.lower()]


#: The most bytes one read asks of a connection.
_READ_SIZE = 65536


class _Conn:
    """One connection: its stream and its exchange (one request at a time; _h1parse: the
    responses read by httptools' parser where installed, else by h11)."""

    __slots__ = ("ex", "key", "stream")

    def __init__(self, stream: ByteStream, key: tuple[str, str, int]) -> None:
        self.stream = stream
        self.key = key
        self.ex = new_exchange()

    async def fill(self, read_t: float | None) -> None:
        """Read once more from the server into the exchange (b"" at its end)."""
        try:
            chunk = await _receive(self.stream, read_t)
        except ReadTimeout:
            raise  # a TimeoutError, so an OSError too: not the end of the stream
        except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
            chunk = b""
        self.ex.feed(chunk)

    async def close(self) -> None:
        await _close_quietly(self.stream)


class Response:
    """A response whose body is read as it arrives (:meth:`aiter_bytes`) or at once (:meth:`aread`)."""

    def __init__(
        self, client: HTTP1Client, conn: _Conn, head: Head, read_timeout: float | None
    ) -> None:
        self._client = client
        self._conn = conn
        self.status_code: int = head.status
        self.reason_phrase = head.reason
        self.headers = Headers(head.headers)
        self._read_timeout = read_timeout
        self._done = False
        self._closed = False
        self._body: bytes | None = None

    async def aiter_bytes(self) -> AsyncGenerator[bytes, None]:
        if self._body is not None:
            if self._body:
                yield self._body
            return
        conn = self._conn
        ex = conn.ex
        while True:
            if ex.body:
                chunks, ex.body = ex.body, []
                for c in chunks:
                    yield c
            if ex.done:
                self._done = True
                return
            await conn.fill(self._read_timeout)

    async def aread(self) -> bytes:
        if self._body is None:
            ex = self._conn.ex
            if ex.done and not self._done:  # all of it is here already: no await
                self._body = b"".join(ex.body)
                ex.body = []
                self._done = True
            else:
                self._body = b"".join([c async for c in self.aiter_bytes()])
        return self._body

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self._client._release(self._conn, reusable=self._done)


#: Redirects followed at most, per request.
MAX_REDIRECTS = 10
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_CREDENTIALS = frozenset({"authorization", "cookie", "proxy-authorization"})


class _Target(NamedTuple):
    """What a request URL says: the pool key (scheme, host, port), the Host header, the
    request target, and the origin redirects compare."""

    key: tuple[str, str, int]
    host: str
    target: str
    netloc: str


@functools.lru_cache(maxsize=64)  # a client posts to one URL again and again
def _parse(url: str) -> _Target:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise HTTPError(f"unsupported URL {url!r}")
    port = parts.port or (443 if scheme == "https" else 80)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    # Host is the authority without any user:password@ of the URL.
    host = parts.netloc.rpartition("@")[2]
    return _Target((scheme, parts.hostname.lower(), port), host, target, parts.netloc)


def _origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a URL we can send to; :class:`HTTPError` for any other (a
    redirect off HTTP is refused there, before anything is sent)."""
    return _parse(url).key


def _without_credentials(headers: Mapping[str, str] | None) -> dict[str, str] | None:
    if headers is None:
        return None
    return {k: v for k, v in headers.items() if k.lower() not in _CREDENTIALS}


class _Answered(Protocol):
    status_code: int

    @property
    def headers(self) -> Any: ...  # Mapping-like: .get("location")

    async def aclose(self) -> None: ...


_R = TypeVar("_R", bound=_Answered)


async def follow(
    send_once: Callable[[str, str, bytes, Mapping[str, str] | None, bool], Awaitable[_R]],
    method: str,
    url: str,
    content: bytes,
    headers: Mapping[str, str] | None,
    *,
    auth: Any,
    redirects: bool = True,
) -> _R:
    """The one policy of both HTTP clients (ours and the httpx2 adapter) around
    ``send_once(method, url, content, headers, use_auth)``: the ``auth=`` hook's chance to
    answer a 401/403 before the request goes again (a token, a DPoP nonce, a step-up), and
    redirects followed as browsers and httpx do (307/308 keep the method and body; 303, and
    301/302 after a POST, become a GET without a body), at most :data:`MAX_REDIRECTS` hops.
    A hop to another origin (scheme, host, port) carries no credentials: neither the
    caller's (``Authorization``, ``Cookie``), nor the hook's (``use_auth`` false), where
    httpx2 itself would drop only ``Authorization`` and forward a DPoP proof or an API key."""
    origin = _origin(url)
    retries = hops = 0
    while True:
        same = _origin(url) == origin
        sent = headers if same else _without_credentials(headers)
        resp = await send_once(method, url, content, sent, same)
        if (
            resp.status_code in (401, 403)
            and same
            and retries < MAX_AUTH_RETRIES
            and auth is not None
            and await auth_retry(auth, method, url, resp)
        ):
            retries += 1  # the body is bytes we still have: it goes again
            continue
        location = resp.headers.get("location") if redirects else None
        if resp.status_code not in _REDIRECTS or not location:
            return resp
        await resp.aclose()
        hops += 1
        url = urljoin(url, location)
        if hops > MAX_REDIRECTS:
            raise RemoteProtocolError(f"more than {MAX_REDIRECTS} redirects, the last to {url}")
        if resp.status_code == 303 or (resp.status_code in (301, 302) and method == "POST"):
            method, content = "GET", b""


async def _receive(stream: ByteStream, read_t: float | None) -> bytes:
    """The next bytes from the server; :class:`ReadTimeout` after ``read_t`` seconds."""
    if read_t is None:
        return await stream.receive(_READ_SIZE)
    with anyio.move_on_after(read_t):
        return await stream.receive(_READ_SIZE)
    raise ReadTimeout(f"no data from the server within {read_t} s")


async def _exchange(conn: _Conn, data: bytes, send_t: float | None, read_t: float | None) -> None:
    """Send a request and read until its response's head (and, most often, its whole body)
    is in: one cancel scope for it all, its deadline moved for each step (``send_t`` for the
    write, ``read_t`` for each read: the same timeouts as a scope per step, fewer scopes)."""
    ex = conn.ex
    with anyio.CancelScope() as scope:
        scope.deadline = _deadline(send_t)
        await conn.stream.send(data)
        while ex.head is None:
            scope.deadline = _deadline(read_t)
            try:
                chunk = await conn.stream.receive(_READ_SIZE)
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                chunk = b""
            except OSError as e:
                if isinstance(e, TimeoutError):
                    raise
                chunk = b""
            ex.feed(chunk)
        return
    raise TimeoutError("no answer in time")  # _send says which (ReadTimeout)


def _deadline(t: float | None) -> float:
    return anyio.current_time() + t if t is not None else float("inf")


async def _close_quietly(stream: ByteStream) -> None:
    with anyio.CancelScope(shield=True), anyio.move_on_after(1):
        try:
            await stream.aclose()
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass


class HTTP1Client:
    """A keep-alive HTTP/1.1 client with the subset of httpx's API the transports use.

    Args:
        headers: sent with every request.
        auth: a callable (sync or async) returning headers to add to each request, or an
            object with ``headers_for(method, url)``; with ``on_challenge`` it may answer a
            401/403 before the request goes again (see :func:`auth_retry`).
        timeout: default connect/write timeout (and read timeout of :meth:`request`).
        ssl_context: for ``https`` (default: the system's trust store via ``ssl``).
    """

    def __init__(
        self,
        *,
        auth: Any = None,
        timeout: float | None = 30.0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self._auth = auth
        self._auth_headers = header_source(auth)
        self.timeout = timeout
        self._ssl = ssl_context
        self._idle: dict[tuple[str, str, int], list[_Conn]] = {}
        self._closed = False

    async def __aenter__(self) -> HTTP1Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, {}
        for conns in idle.values():
            for c in conns:
                await c.close()

    # ------------------------------------------------------------------ requests

    @asynccontextmanager
    async def stream(
        self,
        method: str,
        url: str,
        *,
        content: bytes = b"",
        headers: Mapping[str, str] | None = None,
        timeout: Timeouts | float | None = None,
    ) -> AsyncIterator[Response]:
        resp = await self._follow(method, url, content, headers, timeout)
        try:
            yield resp
        finally:
            await resp.aclose()

    async def request(
        self,
        method: str,
        url: str,
        *,
        content: bytes = b"",
        headers: Mapping[str, str] | None = None,
        timeout: Timeouts | float | None = None,
    ) -> Response:
        """Send and read the whole body."""
        resp = await self._follow(method, url, content, headers, timeout)
        try:
            await resp.aread()
        finally:
            await resp.aclose()
        return resp

    async def post(
        self,
        url: str,
        *,
        content: bytes = b"",
        headers: Mapping[str, str] | None = None,
        timeout: Timeouts | float | None = None,
    ) -> Response:
        return await self.request("POST", url, content=content, headers=headers, timeout=timeout)

    async def get(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: Timeouts | float | None = None,
    ) -> Response:
        return await self.request("GET", url, headers=headers, timeout=timeout)

    async def delete(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: Timeouts | float | None = None,
    ) -> Response:
        return await self.request("DELETE", url, headers=headers, timeout=timeout)

    # ------------------------------------------------------------------ internals

    async def _follow(
        self,
        method: str,
        url: str,
        content: bytes,
        headers: Mapping[str, str] | None,
        timeout: Timeouts | float | None,
    ) -> Response:
        """:meth:`_send` under the clients' one auth and redirect policy (:func:`follow`)."""

        async def once(
            m: str, u: str, body: bytes, h: Mapping[str, str] | None, use_auth: bool
        ) -> Response:
            return await self._send(m, u, body, h, timeout, use_auth=use_auth)

        return await follow(once, method, url, content, headers, auth=self._auth)

    def _timeouts(self, timeout: Timeouts | float | None) -> Timeouts:
        if timeout is None:
            return (self.timeout, self.timeout)
        if isinstance(timeout, tuple):
            return timeout
        return (timeout, timeout)

    async def _send(
        self,
        method: str,
        url: str,
        content: bytes,
        headers: Mapping[str, str] | None,
        timeout: Timeouts | float | None,
        *,
        use_auth: bool = True,
    ) -> Response:
        if self._closed:
            raise HTTPError("the HTTP client is closed")
        parts = _parse(url)
        key = parts.key
        target = parts.target
        hdrs: dict[str, str] = {"host": parts.host, "user-agent": "mcpkit"}
        if headers:
            hdrs.update({k.lower(): v for k, v in headers.items()})
        if self._auth_headers is not None and use_auth:
            extra = await self._auth_headers(method, url)
            hdrs.update({k.lower(): v for k, v in extra.items()})
        length = len(content) if content or method in ("POST", "PUT", "PATCH") else None
        hdrs.pop("content-length", None)  # ours, from the body
        connect_t, read_t = self._timeouts(timeout)
        # Refused here, before anything is sent.
        request = check(method, target, tuple(hdrs.items()))
        for attempt in (0, 1):
            conn, reused = await self._acquire(key, connect_t)
            try:
                ex = conn.ex
                await _exchange(conn, ex.wire(request, length, content), connect_t, read_t)
                assert ex.head is not None
                return Response(self, conn, ex.head, read_t)
            except BaseException as e:
                await conn.close()
                # A kept-alive connection the server had already closed: retry once, fresh.
                # Never after a timeout (TimeoutError is an OSError): the server may have the
                # request and be working on it, and a POST must not run twice.
                stale = not isinstance(e, TimeoutError) and isinstance(
                    e, (RemoteProtocolError, OSError, anyio.BrokenResourceError)
                )
                if reused and attempt == 0 and stale:
                    continue
                if isinstance(e, TimeoutError):
                    raise ReadTimeout(f"no answer from {parts.netloc} within {read_t} s") from e
                if isinstance(e, (OSError, anyio.BrokenResourceError)):
                    raise RemoteProtocolError(f"connection to {parts.netloc} failed: {e}") from e
                raise
        raise RemoteProtocolError("unreachable")  # pragma: no cover

    async def _acquire(
        self, key: tuple[str, str, int], connect_t: float | None
    ) -> tuple[_Conn, bool]:
        idle = self._idle.get(key)
        if idle:
            return idle.pop(), True
        scheme, host, port = key
        try:
            with anyio.fail_after(connect_t):
                # anyio races IPv6 and IPv4 for a host name (happy eyeballs).
                stream: ByteStream = await anyio.connect_tcp(host, port)
                if scheme == "https":
                    try:
                        stream = await TLSStream.wrap(
                            stream,
                            hostname=host,
                            ssl_context=self._ssl or ssl.create_default_context(),
                            # As httpcore: a server's close without TLS's close_notify ends
                            # the stream (a body read to the end is complete), and closing
                            # ours does not wait for the server's.
                            standard_compatible=False,
                        )
                    except BaseException:
                        await _close_quietly(stream)
                        raise
        except TimeoutError as e:
            raise ConnectError(f"could not connect to {host}:{port} within {connect_t} s") from e
        except (OSError, anyio.EndOfStream, anyio.BrokenResourceError) as e:
            why = str(e) or "the server closed the connection during the TLS handshake"
            raise ConnectError(f"could not connect to {host}:{port}: {why}") from e
        return _Conn(stream, key), False

    async def _release(self, conn: _Conn, *, reusable: bool) -> None:
        if reusable and not self._closed and conn.ex.reusable():
            idle = self._idle.setdefault(conn.key, [])
            if len(idle) < _MAX_IDLE_PER_ORIGIN:
                idle.append(conn)
                return
        await conn.close()


class HttpxAdapter:
    """Gives an ``httpx2.AsyncClient`` the :class:`HTTP1Client` API: errors mapped to ours, the
    auth hook and redirects under our rules (see :meth:`_send`)."""

    def __init__(self, client: Any, *, header_hook: Any = None, httpx_auth: Any = None) -> None:
        import httpx2

        self._httpx = httpx2
        self._client = client
        #: The ``auth=`` hook (see :class:`HTTP1Client`).
        self._hook = header_hook
        self._hook_headers = header_source(header_hook)
        #: An ``httpx2.Auth`` for a client the user gave (applied per request).
        self._httpx_auth = httpx_auth

    async def _headers(
        self, headers: Mapping[str, str] | None, method: str, url: str
    ) -> Mapping[str, str] | None:
        if self._hook_headers is None:
            return headers
        return {**(headers or {}), **await self._hook_headers(method, url)}

    def _t(self, timeout: Timeouts | float | None) -> Any:
        if timeout is None:
            return self._httpx.USE_CLIENT_DEFAULT
        if isinstance(timeout, tuple):
            return self._httpx.Timeout(timeout[0], read=timeout[1])
        return timeout

    def _map(self, e: Exception) -> HTTPError:
        h = self._httpx
        if isinstance(e, h.ConnectError | h.ConnectTimeout):
            return ConnectError(str(e) or type(e).__name__)
        if isinstance(e, h.TimeoutException):
            return ReadTimeout(str(e) or type(e).__name__)
        return RemoteProtocolError(f"{type(e).__name__}: {e}")

    @asynccontextmanager
    async def stream(
        self,
        method: str,
        url: str,
        *,
        content: bytes = b"",
        headers: Mapping[str, str] | None = None,
        timeout: Timeouts | float | None = None,
    ) -> AsyncIterator[Any]:
        resp = await self._send(method, url, content, headers, timeout, stream=True)
        try:
            yield resp
        finally:
            await resp.aclose()

    async def request(
        self,
        method: str,
        url: str,
        *,
        content: bytes = b"",
        headers: Mapping[str, str] | None = None,
        timeout: Timeouts | float | None = None,
    ) -> Any:
        resp = await self._send(method, url, content, headers, timeout, stream=False)
        await resp.aclose()
        return resp

    async def _send(
        self,
        method: str,
        url: str,
        content: bytes,
        headers: Mapping[str, str] | None,
        timeout: Timeouts | float | None,
        *,
        stream: bool,
    ) -> _AdaptedResponse:
        """As our own client, under the one auth and redirect policy (:func:`follow`);
        redirects are followed only when the httpx2 client follows them."""

        async def once(
            m: str, u: str, body: bytes, h: Mapping[str, str] | None, use_auth: bool
        ) -> _AdaptedResponse:
            r = await self._send_once(m, u, body, h, timeout, stream, use_auth=use_auth)
            return _AdaptedResponse(r, self)

        follows = getattr(self._client, "follow_redirects", False) is True
        return await follow(once, method, url, content, headers, auth=self._hook, redirects=follows)

    async def _send_once(
        self,
        method: str,
        url: str,
        content: bytes,
        headers: Mapping[str, str] | None,
        timeout: Timeouts | float | None,
        stream: bool,
        *,
        use_auth: bool,
    ) -> Any:
        """One request, no redirect followed; with the auth hook's headers and the
        ``httpx2.Auth`` (the user's, or the client's own) only if ``use_auth``."""
        h = self._httpx
        sent = await self._headers(headers, method, url) if use_auth else headers
        auth = (self._httpx_auth or h.USE_CLIENT_DEFAULT) if use_auth else None
        try:
            request = self._client.build_request(
                method, url, content=content, headers=sent, timeout=self._t(timeout)
            )
            return await self._client.send(
                request, stream=stream, auth=auth, follow_redirects=False
            )
        except h.HTTPError as e:
            raise self._map(e) from e

    async def post(
        self,
        url: str,
        *,
        content: bytes = b"",
        headers: Mapping[str, str] | None = None,
        timeout: Timeouts | float | None = None,
    ) -> Any:
        return await self.request("POST", url, content=content, headers=headers, timeout=timeout)

    async def delete(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: Timeouts | float | None = None,
    ) -> Any:
        return await self.request("DELETE", url, headers=headers, timeout=timeout)

    async def aclose(self) -> None:
        await self._client.aclose()


class _AdaptedResponse:
    def __init__(self, r: Any, adapter: HttpxAdapter) -> None:
        self._r = r
        self._a = adapter
        self.status_code: int = r.status_code
        self.reason_phrase: str = r.reason_phrase
        self.headers = r.headers

    async def aiter_bytes(self) -> AsyncGenerator[bytes, None]:
        try:
            async for chunk in self._r.aiter_bytes():
                yield chunk
        except self._a._httpx.HTTPError as e:
            raise self._a._map(e) from e

    async def aread(self) -> bytes:
        try:
            return bytes(await self._r.aread())
        except self._a._httpx.HTTPError as e:
            raise self._a._map(e) from e

    async def aclose(self) -> None:
        await self._r.aclose()
