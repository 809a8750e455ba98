"""What the HTTP client transports share: the HTTP client they talk through, the errors they
hand the engine, bounded body reads, and the receive side both feed."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Awaitable, Mapping
from contextlib import aclosing, asynccontextmanager
from typing import Any

import anyio
import orjson

from .._transports._base import ANSWER_LOST, LOST, Incoming, Message, RequestId
from .._transports._memory import receive_now, send_now
from ._h1client import HTTP1Client, HTTPError, HttpxAdapter
from ._interface import HTTPClient, is_http_client
from ._sse import MessageTooLarge

#: JSON-RPC error code of the synthetic errors the transports hand the engine when the
#: HTTP exchange of a request failed (server error, broken stream, expired session).
HTTP_TRANSPORT_ERROR = -32000

#: An ``httpx2.Auth``, a callable returning headers (sync or async), an object with
#: ``headers_for(method, url)`` (and ``on_challenge``: the OAuth flows of mcpkit.auth), or None.
AuthLike = Any


def _is_httpx_auth(auth: Any) -> bool:
    return any(
        c.__name__ == "Auth" and c.__module__.startswith("httpx") for c in type(auth).__mro__
    )


def _error(rid: RequestId, message: str, status: int | None = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": HTTP_TRANSPORT_ERROR, "message": message}
    if status is not None:
        err["data"] = {"httpStatus": status}
    return {"jsonrpc": "2.0", "id": rid, "error": err}


def broken_stream_error(rid: RequestId) -> dict[str, Any]:
    """The error a stateless request gets when its response stream ended before its answer
    (revision 2026-07-28 has no resumption: the request is lost, and is to be sent again
    when that is safe: ``ClientSession.send_request``)."""
    msg = _error(rid, "the server closed the response stream before answering")
    msg["error"]["data"] = {ANSWER_LOST: LOST}
    return msg


#: The statuses a gateway answers when it lost the server behind it mid-exchange (502 Bad
#: Gateway, 504 Gateway Timeout, RFC 9110 15.6): the request may or may not have reached a
#: server and taken effect -- to a 2026-07-28 caller, a lost answer like a broken stream.
_GATEWAY_LOST = frozenset({502, 504})


class _TransportMark(str):
    """A mark's value in an error the HTTP transport makes itself: a ``str`` (it serializes
    as one), of a type no JSON parser makes, so a server cannot forge it to pass its own
    error off as a transport failure."""

    __slots__ = ()


def _marked_error(rid: RequestId, message: str, key: str, mark: _TransportMark) -> dict[str, Any]:
    msg = _error(rid, message)
    msg["error"]["data"] = {key: mark}
    return msg


def _has_mark(error: Exception, key: str) -> bool:
    data = getattr(error, "data", None)
    return isinstance(data, dict) and isinstance(data.get(key), _TransportMark)


#: The key under which the HTTP transport marks, in the ``data`` of the error it gives a
#: 2025 request whose response stream broke and could not be resumed, that the server was
#: lost before answering: a transport failure, unlike any error the server itself sends.
CONNECTION_LOST = "connectionLost"
_GONE = _TransportMark("the server was lost before the answer")

#: The key under which the HTTP transport marks, in the ``data`` of the error it gives a
#: request whose HTTP exchange failed (no connection, refused, cut before an answer), that
#: the request never got through: unlike any error the server itself sends.
NOT_DELIVERED = "notDelivered"
_NOT_SENT = _TransportMark("the request did not get through to the server")


def lost_server_error(rid: RequestId, message: str) -> dict[str, Any]:
    """The error of a 2025 request whose answer never came: its stream broke and could not
    be resumed. Unlike :func:`broken_stream_error`, the request is not to be sent again (a
    2025 server may have acted on it)."""
    return _marked_error(rid, message, CONNECTION_LOST, _GONE)


def server_lost(error: Exception) -> bool:
    """True for the error of :func:`lost_server_error` (the mark, never the text)."""
    return _has_mark(error, CONNECTION_LOST)


def undelivered_error(rid: RequestId, message: str) -> dict[str, Any]:
    """The error of a request whose HTTP exchange failed: the server was not reached."""
    return _marked_error(rid, message, NOT_DELIVERED, _NOT_SENT)


def not_delivered(error: Exception) -> bool:
    """True for the error of :func:`undelivered_error` (the mark, never the text)."""
    return _has_mark(error, NOT_DELIVERED)


#: The most bytes of an error answer's body the client reads (for its text, or its JSON-RPC
#: error), and of the body of an answer that matters only by its status (a notification's,
#: DELETE's). The rest is never read: closing the response drops its connection instead.
MAX_ERROR_BODY = 64 * 1024


def content_encoding(resp: Any) -> str | None:
    """The ``Content-Encoding`` of an answer other than ``identity``, else None. httpx2
    decodes it (our own client asks for none and decodes none): the body then counts by its
    decoded size, which no ``Content-Length`` tells."""
    coding = str(resp.headers.get("content-encoding", "")).strip().lower()
    return coding if coding not in ("", "identity") else None


async def read_limited(resp: Any, limit: int) -> bytes:
    """The whole body, refused as soon as it exceeds ``limit`` (never buffered past it); a
    compressed one counts its decoded bytes (httpx2 decodes it in pieces of at most 1 MiB)."""
    encoding = content_encoding(resp)
    declared = resp.headers.get("content-length", "")
    if declared.isdigit() and encoding is None:
        if int(declared) > limit:
            raise MessageTooLarge(limit)
        return bytes(await resp.aread())  # the usual case: one read, size already known
    chunks: list[bytes] = []
    size = 0
    async with aclosing(resp.aiter_bytes()) as body:
        async for chunk in body:
            size += len(chunk)
            if size > limit:
                raise MessageTooLarge(limit, encoding)
            chunks.append(chunk)
    return b"".join(chunks)


async def read_at_most(resp: Any, cap: int) -> tuple[bytes, bool]:
    """At most ``cap`` bytes of the body (decoded), and whether that was all of it. Reading
    stops there: the rest is never read (closing the response then drops its connection)."""
    chunks: list[bytes] = []
    size = 0
    async with aclosing(resp.aiter_bytes()) as body:
        async for chunk in body:
            if size + len(chunk) > cap:
                chunks.append(chunk[: cap - size])
                return b"".join(chunks), False
            chunks.append(chunk)
            size += len(chunk)
    return b"".join(chunks), True


async def send_for_status(
    client: HTTPClient,
    method: str,
    url: str,
    *,
    headers: Mapping[str, str],
    timeout: float,
    content: bytes = b"",
) -> tuple[int, str]:
    """Send a request whose answer matters only by its status (a notification, a response,
    DELETE): the status, and the error text of a status of 400 or more ("" below). At most
    :data:`MAX_ERROR_BODY` bytes of the body are read (a 202 has none: its connection is
    kept), so an endless body costs the client nothing."""
    async with client.stream(
        method, url, content=content, headers=headers, timeout=timeout
    ) as resp:
        if resp.status_code >= 400:
            return resp.status_code, await _error_text(resp)
        await read_at_most(resp, MAX_ERROR_BODY)
        return resp.status_code, ""


class _Seen:
    """What a response stream showed so far: our answer, the last event id, a retry hint."""

    __slots__ = ("got", "last_id", "retry")

    def __init__(self) -> None:
        self.got = False
        self.last_id: str | None = None
        self.retry: int | None = None


def _redirect_text(resp: Any) -> str:
    where = resp.headers.get("location")
    to = f" to {where}" if where else ""
    return (
        f"HTTP {resp.status_code}: the server redirects{to}; redirects are not followed, "
        "so connect to the URL it names"
    )


async def _error_text(resp: Any) -> str:
    """The text of an error answer, from at most :data:`MAX_ERROR_BODY` bytes of its body:
    the message of a JSON-RPC error, else its first 200 characters, else the reason."""
    try:
        body, _ = await read_at_most(resp, MAX_ERROR_BODY)
    except HTTPError:
        return str(resp.reason_phrase)
    try:
        msg = orjson.loads(body)
        if isinstance(msg, dict) and isinstance(msg.get("error"), dict):
            return str(msg["error"].get("message", resp.reason_phrase))
    except orjson.JSONDecodeError:
        pass
    text = body[:200].decode("utf-8", "replace").strip()
    return text or str(resp.reason_phrase)


async def refusal_of(
    resp: Any, rid: RequestId, status: int, *, stateless: bool = False
) -> tuple[bool, dict[str, Any]]:
    """What a 4xx/5xx answer to request ``rid`` tells: (True, its JSON-RPC error) when its
    body is one for this request (a stateless server refuses that way), else (False, an
    error naming the HTTP status; for a ``stateless`` (2026-07-28) request, a gateway's
    502/504 is marked as a lost answer, :data:`_GATEWAY_LOST`). At most
    :data:`MAX_ERROR_BODY` bytes of it are read."""
    if "application/json" in resp.headers.get("content-type", ""):
        body, _ = await read_at_most(resp, MAX_ERROR_BODY)
        try:
            msg = orjson.loads(body)
        except orjson.JSONDecodeError:
            msg = None
        if isinstance(msg, dict) and isinstance(msg.get("error"), dict) and msg.get("id") == rid:
            return True, msg
        text = ""
        if isinstance(msg, dict) and isinstance(msg.get("error"), dict):
            text = str(msg["error"].get("message", ""))
        elif isinstance(msg, dict) and isinstance(msg.get("error"), str):
            # An OAuth error body (RFC 6750): a 401/403 from a protected server.
            text = f"{msg['error']}: {msg.get('error_description', '')}".rstrip(": ")
        refusal = _error(rid, f"HTTP {status}: {text or resp.reason_phrase}", status)
    else:
        refusal = _error(rid, f"HTTP {status}: {await _error_text(resp)}", status)
    challenge = resp.headers.get("www-authenticate")
    if challenge is not None:
        refusal["error"]["data"]["wwwAuthenticate"] = challenge
    if stateless and status in _GATEWAY_LOST:
        refusal["error"]["data"][ANSWER_LOST] = LOST
    return False, refusal


class _Sink:
    """The receive side shared by the transports (the fallback swaps senders, not readers).

    What the Streamable HTTP transport reads from its streams goes to the engine directly
    (``push_to``); this carries the errors it makes up and the legacy transport's messages.
    """

    def __init__(self) -> None:
        self.send, self.recv = anyio.create_memory_object_stream[Incoming](4096)

    def end(self) -> None:
        """No more messages: the reader gets what is left, then the end of the stream."""
        self.send.close()

    def close(self) -> None:
        self.send.close()
        self.recv.close()

    async def put(self, item: Incoming) -> None:
        try:
            await send_now(self.send, item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    def get(self) -> Awaitable[Incoming]:
        """The next message (end of stream once closed)."""
        return receive_now(self.recv)


def _is_cancel(message: Message) -> bool:
    # Cancellation is best effort: failing to deliver it must not mask the caller's error.
    return isinstance(message, dict) and message.get("method") == "notifications/cancelled"


def _client(
    auth: AuthLike,
    timeout: float,
    http_client: Any,
    ssl_context: ssl.SSLContext | None = None,
    url: str | None = None,
) -> HTTPClient:
    if http_client is not None:
        if is_http_client(http_client):
            if auth is not None:
                # Ours (e.g. ASGIClient) has no auth hook: a silently dropped auth= would
                # send every request without credentials.
                raise TypeError("auth= cannot be used with an mcpkit HTTP client as http_client")
            client: HTTPClient = http_client  # used as it is
            return client
        if auth is not None and _is_httpx_auth(auth):
            return HttpxAdapter(http_client, httpx_auth=auth)
        return HttpxAdapter(http_client, header_hook=auth)
    proxy = proxy_for(url) if url is not None else None
    if (auth is not None and _is_httpx_auth(auth)) or proxy is not None:
        # httpx2 does what our HTTP/1.1 client does not: proxies (from the environment).
        httpx2 = _httpx2(why=f"the proxy {proxy} (from the environment)" if proxy else "")
        kw: dict[str, Any] = {"timeout": timeout, "follow_redirects": True, "trust_env": True}
        if ssl_context is not None:
            kw["verify"] = ssl_context
        if auth is not None and _is_httpx_auth(auth):
            kw["auth"] = auth
        elif auth is not None:
            return HttpxAdapter(httpx2.AsyncClient(**kw), header_hook=auth)
        return HttpxAdapter(httpx2.AsyncClient(**kw))
    if auth is not None and not (callable(auth) or hasattr(auth, "headers_for")):
        raise TypeError(
            "auth must be an OAuth flow of mcpkit.auth, an httpx2.Auth, or a callable "
            "returning headers"
        )
    return HTTP1Client(auth=auth, timeout=timeout, ssl_context=ssl_context)


def proxy_for(url: str) -> str | None:
    """The proxy the environment names for ``url`` (``HTTPS_PROXY``/``HTTP_PROXY``/
    ``ALL_PROXY``, upper or lower case), unless ``NO_PROXY`` exempts its host; else None."""
    import urllib.request
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(parts.scheme.lower()) or proxies.get("all")
    if not proxy or not parts.hostname:
        return None
    if urllib.request.proxy_bypass(parts.hostname):
        return None
    return proxy


def _httpx2(*, why: str) -> Any:
    try:
        import httpx2
    except ModuleNotFoundError:
        raise HTTPError(
            f"{why} needs httpx2, which the [all] extra brings: pip install 'mcpkit[all]'"
        ) from None
    return httpx2


@asynccontextmanager
async def _maybe_close(client: HTTPClient, close: bool) -> AsyncIterator[HTTPClient]:
    try:
        yield client
    finally:
        if close:
            await client.aclose()
