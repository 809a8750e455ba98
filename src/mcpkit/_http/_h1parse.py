"""How :class:`~mcpkit._http._h1client.HTTP1Client` frames one exchange on a connection: its
request's bytes and its response's head, body and end, read from the bytes as they come.

One interface (:class:`Exchange`), two implementations picked once, at the first
connection: httptools' ``HttpResponseParser`` (llhttp, maintained, C; the ``[http]`` extra
installs it) reads the responses when it is installed, h11 (a core dependency, pure Python)
otherwise. Neither is
framing code of ours: the parser finds the head, the lengths and the chunks; what is ours is
the same few refusals on top of both (64 KiB bounds, a ``Transfer-Encoding`` other than
``chunked``, a 101, an HTTP version other than 1.0/1.1) and when a connection may carry
another request. Requests are checked by h11 (``h11.Request``: a header that could smuggle a
line is refused before a byte is sent) either way. The same wire tests run on both
(tests/http/test_h1client_wire.py).
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple, Protocol

import h11

from .. import _exceptions as _exc

#: The longest response head (status line and headers) accepted, and the longest trailers
#: or chunk-size line.
MAX_HEAD = 64 * 1024


class Head(NamedTuple):
    """A final response's status line and headers (names lowercased, Latin-1)."""

    status: int
    reason: str
    headers: list[tuple[str, str]]


def _invalid(why: object) -> _exc.HTTPProtocolError:
    return _exc.HTTPProtocolError(f"invalid HTTP from the server: {why}")


def _closed() -> _exc.HTTPProtocolError:
    # Not a byte of an answer: a kept-alive connection the server had closed.
    return _exc.HTTPProtocolError("the server closed the connection without answering")


class Checked(NamedTuple):
    """A request's head without its Content-Length, checked by h11, and its bytes."""

    request: h11.Request
    #: The request line and header lines as h11 writes them (without the blank line).
    head: bytes


@functools.lru_cache(maxsize=256)  # a client sends the same head again and again
def check(method: str, target: str, fields: tuple[tuple[str, str], ...]) -> Checked:
    """A request's head checked by h11 (``h11.Request``). Raises :class:`~mcpkit.HTTPError`
    for a method, target or header that is not valid HTTP (a value with CR or LF would start
    a header of its own) or not Latin-1, before anything is sent."""
    try:
        raw = [(n.encode("ascii"), v.strip(" \t").encode("latin-1")) for n, v in fields]
        request = h11.Request(method=method, target=target, headers=raw)
    except UnicodeEncodeError as e:
        raise _exc.HTTPError(f"an HTTP header is not Latin-1: {e}") from None
    except h11.LocalProtocolError as e:
        raise _exc.HTTPError(f"invalid HTTP request ({method} {target!r}): {e}") from None
    parts = [request.method, b" ", request.target, b" HTTP/1.1\r\n"]
    for name, value in request.headers.raw_items():
        parts += (name, b": ", value, b"\r\n")
    return Checked(request, b"".join(parts))


class Exchange(Protocol):
    """One connection's requests and responses, one at a time."""

    #: The final response's head once read (informational 1xx heads are skipped).
    head: Head | None
    #: Body bytes read and not yet taken.
    body: list[bytes]
    #: Whether the response ended by its own framing (or by the end of the connection).
    done: bool

    def wire(self, request: Checked, length: int | None, content: bytes) -> bytes:
        """The bytes of a request (checked by :func:`check`), its Content-Length if not None,
        and its body; a new response follows."""
        ...

    def feed(self, data: bytes) -> None:
        """Bytes from the server (``b""``: the end of the connection); raises
        :class:`~mcpkit.HTTPProtocolError` for what breaks HTTP/1.1 or a bound."""
        ...

    def reusable(self) -> bool:
        """Whether another request may go on the connection: the response ended by its own
        framing, the server keeps the connection alive and sent nothing more, and it did not
        say two framings at once."""
        ...


class H11Exchange:
    """h11's state machine (the fallback of a bare install)."""

    __slots__ = ("_h", "body", "done", "head")

    def __init__(self) -> None:
        self._h = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD)
        self.head: Head | None = None
        self.body: list[bytes] = []
        self.done = False

    def wire(self, request: Checked, length: int | None, content: bytes) -> bytes:
        h = self._h
        if h.our_state is h11.DONE:
            h.start_next_cycle()
        self.head, self.body, self.done = None, [], False
        req = request.request
        if length is not None:
            fields = [*req.headers.raw_items(), (b"content-length", b"%d" % length)]
            req = h11.Request(method=req.method, target=req.target, headers=fields)
        out = h.send(req) or b""
        if content:
            out += h.send(h11.Data(data=content)) or b""
        return out + (h.send(h11.EndOfMessage()) or b"")

    def feed(self, data: bytes) -> None:
        h = self._h
        if not data and h.their_state is h11.SEND_RESPONSE and not h.trailing_data[0]:
            raise _closed()
        h.receive_data(data)
        try:
            while True:
                ev = h.next_event()
                if isinstance(ev, h11.Data):
                    self.body.append(bytes(ev.data))
                elif isinstance(ev, h11.Response):
                    raw = [(n.decode("latin-1"), v.decode("latin-1")) for n, v in ev.headers]
                    self.head = Head(ev.status_code, ev.reason.decode("latin-1"), raw)
                elif isinstance(ev, h11.EndOfMessage):
                    self.done = True
                    return
                elif isinstance(ev, h11.InformationalResponse):
                    continue  # 100, 103: the head follows
                elif ev is h11.NEED_DATA:
                    return
                else:  # nothing else can come inside a response
                    raise _invalid(f"{ev!r}")
        except h11.ProtocolError as e:
            raise _invalid(e) from None

    def reusable(self) -> bool:
        h = self._h
        if h.our_state is not h11.DONE or h.their_state is not h11.DONE:
            return False
        pending, closed = h.trailing_data
        if pending or closed or self.head is None:
            return False
        names = {n for n, _ in self.head.headers}
        return not ("transfer-encoding" in names and "content-length" in names)


class _Stop(Exception):
    """Raised in a callback to stop llhttp at the end of a HEAD response's head."""


class LlhttpExchange:
    """httptools' ``HttpResponseParser`` (llhttp): the parser calls back with the status,
    each header, the body's pieces (chunked bodies decoded) and the message's end."""

    __slots__ = (
        "_fields",
        "_fsize",
        "_head_only",
        "_keep",
        "_messages",
        "_p",
        "_progress",
        "_reason",
        "_seen",
        "_since",
        "_trail",
        "_unframed",
        "body",
        "done",
        "head",
    )

    def __init__(self) -> None:
        self._start(False)

    def _start(self, head_only: bool) -> None:
        self._p = _load_httptools().HttpResponseParser(self)
        # Both framings at once: llhttp reads the chunks (as h11 does) and the connection is
        # not trusted again (reusable()), instead of refusing the response.
        self._p.set_dangerous_leniencies(lenient_chunked_length=True)
        self.head: Head | None = None
        self.body: list[bytes] = []
        self.done = False
        self._head_only = head_only
        self._fields: list[tuple[bytes, bytes]] = []
        self._fsize = 0
        self._reason = b""
        #: Bytes fed since the parser last got somewhere (a head, body bytes, the end).
        self._since = 0
        self._progress = False
        self._seen = 0  # bytes of this response fed at all
        self._keep = False
        self._messages = 0  # heads seen (1xx included)
        self._trail = b""  # a HEAD response's bytes (its end is found in them)
        self._unframed = False

    def wire(self, request: Checked, length: int | None, content: bytes) -> bytes:
        self._start(request.request.method == b"HEAD")
        # h11 checked every part of the head (check()); the bytes are the ones h11 writes.
        if length is None:
            return b"".join((request.head, b"\r\n", content))
        return b"".join((request.head, b"content-length: %d\r\n\r\n" % length, content))

    # ---- llhttp's callbacks

    def on_status(self, status: bytes) -> None:
        self._reason += status  # it may come in pieces

    def on_header(self, name: bytes, value: bytes) -> None:
        self._fields.append((name, value))
        self._fsize += len(name) + len(value) + 4

    def on_headers_complete(self) -> None:
        if self.done:
            return
        self._messages += 1
        fields, self._fields = self._fields, []
        fsize, self._fsize = self._fsize, 0
        reason, self._reason = self._reason, b""
        if fsize + len(reason) > MAX_HEAD:
            raise _invalid(f"a head longer than {MAX_HEAD} bytes")
        p = self._p
        status = p.get_status_code()
        if status < 200:
            if status == 101:
                raise _invalid("101 Switching Protocols")
            return  # 100, 103: the head follows
        version = p.get_http_version()
        if version not in ("1.1", "1.0"):
            raise _invalid(f"HTTP/{version}")
        headers = [
            (n.decode("latin-1").lower(), v.decode("latin-1").strip(" \t")) for n, v in fields
        ]
        te = [v.lower() for n, v in headers if n == "transfer-encoding"]
        has_length = any(n == "content-length" for n, _ in headers)
        if te and te != ["chunked"]:
            raise _invalid(f"Transfer-Encoding {', '.join(te)!r} (only chunked is read)")
        conn = ",".join(v for n, v in headers if n == "connection").lower()
        self._keep = (
            version == "1.1"
            and "close" not in {t.strip() for t in conn.split(",")}
            and not (te and has_length)  # both framings: never trusted again
        )
        self._unframed = not te and not has_length and status not in (204, 304)
        self.head = Head(status, reason.decode("latin-1"), headers)
        self._progress = True
        if self._head_only:
            self.done = True
            raise _Stop

    def on_body(self, body: bytes) -> None:
        if not self.done:
            self.body.append(body)
            self._progress = True

    def on_message_complete(self) -> None:
        if self.head is not None and not self.done:
            self.done = True
            self._progress = True
        elif self.done:
            self._keep = False  # a second response nobody asked for

    def on_message_begin(self) -> None:
        if self.done:
            self._keep = False  # bytes beyond the response

    # ---- feeding

    def feed(self, data: bytes) -> None:
        if not data:
            self._eof()
            return
        self._seen += len(data)
        if self._head_only:
            self._trail += data
        self._progress = False
        try:
            self._p.feed_data(data)
        except (_httptools.HttpParserError, _httptools.HttpParserUpgrade) as e:
            if not self.done:
                cause = e.__context__
                if isinstance(cause, _exc.HTTPProtocolError):
                    raise cause from None
                raise _invalid(e or type(e).__name__) from None
            if not self._head_only:
                self._keep = False  # bytes beyond the response that are not HTTP
        if self.done:
            return
        self._since = 0 if self._progress else self._since + len(data)
        if self._since > MAX_HEAD:
            raise _invalid(f"more than {MAX_HEAD} bytes without a head, a chunk or an end")

    def _eof(self) -> None:
        if self.done:
            return
        if self.head is None:
            if not self._seen:
                raise _closed()
            raise _invalid("the connection ended inside a head")
        if not self._unframed:
            raise _invalid("the connection ended inside a body")
        self.done = True  # its body ran to the end of the connection
        self._keep = False

    def reusable(self) -> bool:
        if not self.done:
            return False
        if self._head_only:
            # The HEAD response's head ends the bytes, and nothing came after it.
            t = self._trail
            return self._keep and t.endswith(b"\r\n\r\n") and t.count(b"\r\n\r\n") == self._messages
        return self._keep


#: httptools, once a connection needed it (imported lazily: a process that serves but never
#: calls a server over HTTP does not load it, so uvicorn's h11 stack stays h11 alone).
_httptools: Any = None
#: The implementation new connections use, picked at the first one.
_chosen: type[H11Exchange] | type[LlhttpExchange] | None = None


def _load_httptools() -> Any:
    global _httptools
    if _httptools is None:
        import httptools

        _httptools = httptools
    return _httptools


def new_exchange() -> H11Exchange | LlhttpExchange:
    """The response reader of a new connection: httptools' parser where installed, h11
    otherwise (picked once, at the first connection)."""
    global _chosen
    if _chosen is None:
        try:
            _load_httptools()
        except ImportError:  # a bare install: h11 reads the responses
            _chosen = H11Exchange
        else:
            _chosen = LlhttpExchange
    return _chosen()
