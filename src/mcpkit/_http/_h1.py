"""HTTP/1.1 for our client, without I/O: a request's bytes out, its response's events in.

Why our own and not h11: the client needs one request at a time per connection, answered
with a length, chunks or the connection's end; h11's general state machine (both roles,
pipelining checks, an event object per step, a regex per header) was a fifth of our client's
CPU per MCP call (profiled, docs/performance.md). This module does what the client needs and
is strict about the rest: a response that breaks the framing rules of RFC 9112 (a head over
:data:`MAX_HEAD`, a bad status line or header, conflicting lengths, a bad chunk) raises
:class:`~mcpkit.HTTPProtocolError`; a request with a header that could smuggle a line
(CR, LF, NUL) is refused before a byte is sent.

Example::

    reader = ResponseReader()
    wire = encode_request("GET", "/mcp", {"host": "example.com"}, b"")
    reader.start("GET")
    reader.feed(b"HTTP/1.1 200 OK\\r\\ncontent-length: 2\\r\\n\\r\\nhi")
    head = reader.next_event()  # ResponseHead(status=200, ...)
    body = reader.next_event()  # b"hi"
    assert reader.next_event() is END and reader.reusable
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final, NamedTuple

from .. import _exceptions as _exc

#: The longest response head (status line and headers) accepted, and the longest trailers.
MAX_HEAD: Final = 64 * 1024
#: The longest chunk-size line (the size and any extensions).
_MAX_CHUNK_LINE: Final = 1024

_TOKEN = re.compile(r"[-!#$%&'*+.^_`|~0-9A-Za-z]+")
_TOKEN_B = re.compile(rb"[-!#$%&'*+.^_`|~0-9A-Za-z]+")
# Field values: any octet but the controls (HTAB allowed) and DEL; checked both ways.
_BAD_VALUE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_BAD_VALUE_B = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
_TARGET = re.compile(r"[\x21-\x7e]+")
# Header lines, each ending in CRLF, none folded, no control character in a value.
_PLAIN_FIELDS = re.compile(rb"(?:[-!#$%&'*+.^_`|~0-9A-Za-z]+:[^\x00-\x08\x0a-\x1f\x7f]*\r\n)*")
_STATUS = re.compile(rb"HTTP/1\.([01]) ([0-9]{3})(?: ([^\x00-\x08\x0a-\x1f\x7f]*))?")
_DIGITS = re.compile(rb"[0-9]{1,18}")
_HEX = re.compile(rb"[0-9A-Fa-f]{1,15}")


class _Marker:
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


#: :meth:`ResponseReader.next_event`: more bytes are needed.
NEED_DATA: Final = _Marker("NEED_DATA")
#: :meth:`ResponseReader.next_event`: the response's body is complete.
END: Final = _Marker("END")
#: :meth:`ResponseReader.next_event`: the server closed the connection before a response began.
CLOSED: Final = _Marker("CLOSED")


class ResponseHead(NamedTuple):
    """A final (non-1xx) response's status line and headers (names lowercased)."""

    status: int
    reason: str
    headers: list[tuple[str, str]]


def encode_request(method: str, target: str, headers: Mapping[str, str], body: bytes) -> bytes:
    """The bytes of one request. Raises :class:`~mcpkit.HTTPError` for a method, target or
    header that is not valid HTTP (a value with CR or LF would start a header of its own)."""
    if not _TOKEN.fullmatch(method):
        raise _exc.HTTPError(f"invalid HTTP method {method!r}")
    if not _TARGET.fullmatch(target):
        raise _exc.HTTPError(f"invalid request target {target!r}")
    lines = [f"{method} {target} HTTP/1.1"]
    for name, value in headers.items():
        value = value.strip(" \t")
        if not _TOKEN.fullmatch(name) or _BAD_VALUE.search(value):
            raise _exc.HTTPError(f"invalid HTTP header {name!r}: {value!r}")
        lines.append(f"{name}: {value}")
    lines.append("\r\n")
    try:
        return "\r\n".join(lines).encode("latin-1") + body
    except UnicodeEncodeError as e:
        raise _exc.HTTPError(f"an HTTP header is not Latin-1: {e}") from e


def _protocol_error(what: str) -> _exc.HTTPProtocolError:
    return _exc.HTTPProtocolError(f"invalid HTTP from the server: {what}")


def _parse_head(raw: bytes) -> tuple[bool, int, str, list[tuple[str, str]]]:
    """(HTTP/1.1?, status, reason, headers) of one head (without its final empty line)."""
    first = raw.find(b"\r\n")
    m = _STATUS.fullmatch(raw, 0, first if first >= 0 else len(raw))
    if m is None:
        status_line = raw[: first if first >= 0 else 80]
        raise _protocol_error(f"status line {status_line[:80]!r}")
    reason = (m.group(3) or b"").decode("latin-1")
    http11 = m.group(1) == b"1"
    if first < 0:
        return http11, int(m.group(2)), reason, []
    block = raw[first + 2 :] + b"\r\n"
    if _PLAIN_FIELDS.fullmatch(block):  # the usual head: one check for all its lines
        headers = []
        for line in block.split(b"\r\n")[:-1]:
            name, _, value = line.partition(b":")
            headers.append((name.decode("ascii").lower(), value.strip(b" \t").decode("latin-1")))
        return http11, int(m.group(2)), reason, headers
    return http11, int(m.group(2)), reason, _parse_fields(block.split(b"\r\n")[:-1])


def _parse_fields(lines: list[bytes]) -> list[tuple[str, str]]:
    """Header lines one by one: obsolete folding joined, the first bad line named."""
    headers: list[tuple[str, str]] = []
    for line in lines:
        if line[:1] in (b" ", b"\t"):  # obsolete line folding: one value, joined by a space
            if not headers or _BAD_VALUE_B.search(line):
                raise _protocol_error(f"header line {line[:80]!r}")
            prev_name, prev = headers[-1]
            more = line.strip(b" \t").decode("latin-1")
            headers[-1] = (prev_name, f"{prev} {more}" if more else prev)
            continue
        name, sep, value = line.partition(b":")
        value = value.strip(b" \t")
        if not sep or not _TOKEN_B.fullmatch(name) or _BAD_VALUE_B.search(value):
            raise _protocol_error(f"header line {line[:80]!r}")
        headers.append((name.decode("ascii").lower(), value.decode("latin-1")))
    return headers


def _content_length(values: list[str]) -> int:
    """The one length that (possibly repeated) Content-Length headers give."""
    found = {v.strip() for joined in values for v in joined.split(",")}
    if len(found) != 1:
        raise _protocol_error(f"content-length {', '.join(values)!r}")
    text = found.pop().encode("latin-1")
    if not _DIGITS.fullmatch(text):
        raise _protocol_error(f"content-length {text!r}")
    return int(text)


# Where the reader is in a response.
_IDLE, _HEAD, _LENGTH, _CHUNK_SIZE, _CHUNK_DATA, _CHUNK_END, _TRAILERS, _TO_EOF, _DONE = range(9)


class ResponseReader:
    """The responses of one client connection, one request at a time (no pipelining).

    Call :meth:`start` when a request is sent, :meth:`feed` with what the socket gives (``b""``
    when it is closed), and :meth:`next_event` until it answers :data:`NEED_DATA`. Events, in
    order: one :class:`ResponseHead` (informational 1xx heads are skipped), body ``bytes``
    (none for HEAD, 204 and 304), then :data:`END`. :data:`CLOSED` instead of a head when
    the server closed the connection without answering (a stale kept-alive connection).
    """

    __slots__ = ("_buf", "_eof", "_head_only", "_keep", "_left", "_state")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._eof = False
        self._state = _IDLE
        self._head_only = False
        self._keep = False
        self._left = 0

    def start(self, method: str) -> None:
        """A request went out: its response comes next."""
        if self._state != _IDLE:
            raise _exc.HTTPError("a request is already under way on this connection")
        self._state = _HEAD
        self._head_only = method == "HEAD"

    def feed(self, data: bytes) -> None:
        """Bytes from the server; ``b""`` when it closed the connection."""
        if data:
            self._buf += data
        else:
            self._eof = True

    @property
    def reusable(self) -> bool:
        """Whether another request can go on this connection: the response ended by its own
        framing, the server keeps the connection alive and sent nothing more."""
        return self._state == _DONE and self._keep and not self._buf and not self._eof

    def next_cycle(self) -> None:
        """Ready the reader for the connection's next request (only when :attr:`reusable`)."""
        if not self.reusable:
            raise _exc.HTTPError("the connection cannot take another request")
        self._state = _IDLE

    def next_event(self) -> ResponseHead | bytes | _Marker:
        """The next event of the response under way (see the class)."""
        state = self._state
        if state == _HEAD:
            return self._head()
        if state in (_LENGTH, _CHUNK_DATA):
            return self._counted()
        if state in (_CHUNK_SIZE, _CHUNK_END, _TRAILERS):
            return self._chunk_lines()
        if state == _TO_EOF:
            if self._buf:
                data = bytes(self._buf)
                self._buf.clear()
                return data
            if self._eof:
                self._state = _DONE
                return END
            return NEED_DATA
        if state == _DONE:
            return END
        raise _exc.HTTPError("no request is under way on this connection")

    def _head(self) -> ResponseHead | _Marker:
        buf = self._buf
        while True:
            end = buf.find(b"\r\n\r\n", 0, MAX_HEAD + 4)
            if end < 0:
                if len(buf) > MAX_HEAD:
                    raise _protocol_error(f"a response head over {MAX_HEAD} bytes")
                if self._eof:
                    if buf:
                        raise _protocol_error("the connection closed inside a response head")
                    return CLOSED
                return NEED_DATA
            http11, status, reason, headers = _parse_head(bytes(buf[:end]))
            del buf[: end + 4]
            if status >= 200:
                self._frame(http11, status, headers)
                return ResponseHead(status, reason, headers)
            if status == 101:
                raise _protocol_error("101 Switching Protocols, which was not asked for")
            # 1xx informational (100 Continue, 103 Early Hints): the final head follows.

    def _frame(self, http11: bool, status: int, headers: list[tuple[str, str]]) -> None:
        """How the body ends (RFC 9112 section 6.3) and whether the connection stays open."""
        te: str | None = None
        lengths: list[str] = []
        close = not http11
        for name, value in headers:
            if name == "transfer-encoding":
                te = value if te is None else f"{te}, {value}"
            elif name == "content-length":
                lengths.append(value)
            elif name == "connection" and any(
                t.strip().lower() == "close" for t in value.split(",")
            ):
                close = True
        self._keep = not close
        if self._head_only or status in (204, 304):
            self._state = _DONE
        elif te is not None:
            if te.rsplit(",", 1)[-1].strip().lower() == "chunked":
                self._state = _CHUNK_SIZE
                if lengths:  # both framings: a smuggling attempt or a broken proxy
                    self._keep = False
            else:
                self._state, self._keep = _TO_EOF, False
        elif lengths:
            self._left = _content_length(lengths)
            self._state = _LENGTH if self._left else _DONE
        else:
            self._state, self._keep = _TO_EOF, False

    def _counted(self) -> bytes | _Marker:
        buf = self._buf
        if not buf:
            if self._eof:
                body = "response body" if self._state == _LENGTH else "chunked body"
                raise _protocol_error(f"the connection closed inside a {body}")
            return NEED_DATA
        n = self._left
        if len(buf) <= n:
            data = bytes(buf)
            buf.clear()
        else:
            data = bytes(buf[:n])
            del buf[:n]
        self._left = n - len(data)
        if not self._left:
            self._state = _DONE if self._state == _LENGTH else _CHUNK_END
        return data

    def _chunk_lines(self) -> bytes | _Marker:
        buf = self._buf
        while True:
            state = self._state
            if state == _CHUNK_DATA:
                return self._counted()
            if state == _DONE:
                return END
            limit = MAX_HEAD if state == _TRAILERS else _MAX_CHUNK_LINE
            i = buf.find(b"\r\n", 0, limit + 2)
            if i < 0:
                if len(buf) > limit:
                    raise _protocol_error("a chunk-size or trailer line too long")
                if self._eof:
                    raise _protocol_error("the connection closed inside a chunked body")
                return NEED_DATA
            line = bytes(buf[:i])
            del buf[: i + 2]
            if state == _CHUNK_END:
                if line:
                    raise _protocol_error("chunk data longer than its size")
                self._state = _CHUNK_SIZE
            elif state == _CHUNK_SIZE:
                size = line.split(b";", 1)[0].strip(b" \t")
                if not _HEX.fullmatch(size):
                    raise _protocol_error(f"chunk size {line[:40]!r}")
                self._left = int(size, 16)  # 0: the last chunk; then counts trailer bytes
                self._state = _CHUNK_DATA if self._left else _TRAILERS
            elif not line:  # the empty line after the trailers (if any)
                self._state = _DONE
            else:  # a trailer: not used, but bounded as a head is
                self._left += len(line) + 2
                if self._left > MAX_HEAD:
                    raise _protocol_error(f"trailers over {MAX_HEAD} bytes")
