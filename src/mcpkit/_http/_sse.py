"""Server-Sent Events: encoding (server side) and an incremental parser (client side)."""

from __future__ import annotations

from dataclasses import dataclass


def encode_event(
    data: bytes, *, event: str | None = "message", id: str | None = None, retry: int | None = None
) -> bytes:
    """One SSE event as bytes. ``data`` must not contain newlines (compact JSON never does)."""
    parts: list[bytes] = []
    if id is not None:
        parts.append(b"id: " + id.encode() + b"\n")
    if retry is not None:
        parts.append(b"retry: " + str(int(retry)).encode() + b"\n")
    if event is not None:
        parts.append(b"event: " + event.encode() + b"\n")
    parts.append(b"data: " + data + b"\n\n")
    return b"".join(parts)


class MessageTooLarge(ValueError):
    """A message from the server exceeds the size the client accepts (``max_message_size``).

    A compressed answer (``Content-Encoding``, decoded by httpx2) counts by its decoded
    size: ``encoding`` names the coding then.
    """

    def __init__(self, limit: int, encoding: str | None = None) -> None:
        decoded = f" once decompressed (Content-Encoding: {encoding})" if encoding else ""
        super().__init__(
            f"the server sent a message larger than max_message_size ({_size(limit)}){decoded}; "
            "pass a larger max_message_size to accept it"
        )
        self.limit = limit


def _size(n: int) -> str:
    return f"{n / 2**20:g} MiB" if n >= 2**20 else f"{n} bytes"


@dataclass
class SSEEvent:
    """A parsed event. ``id`` is None when the event carried no id field."""

    event: str
    data: str
    id: str | None
    retry: int | None


class SSEParser:
    """Incremental parser following the WHATWG event-stream rules we need.

    Feed it bytes with :meth:`feed`; it returns the events completed so far. ``max_event``
    bounds one event so a hostile server cannot exhaust memory: its data (the message, its
    lines joined: an empty ``data:`` line counts its newline), the rest of its lines
    (comments, ids, ..., each with its line end) and a line not yet ended, each at most
    ``max_event`` bytes.
    """

    def __init__(self, max_event: int = 16 * 1024 * 1024) -> None:
        self._buf = bytearray()
        self._scan = 0
        # The event's data as it will be handed over (its lines joined with "\n"), so what
        # it holds is what the limit counts: an empty ``data:`` line adds its newline.
        self._data = bytearray()
        self._data_lines = 0
        # The event's other lines (comments, event, id, retry, unknown fields), each with its
        # line end: kept nowhere, still bounded, so an event never grows without end.
        self._other = 0
        self._event = ""
        self._id: str | None = None
        self._retry: int | None = None
        self._max = max_event
        self._first = True

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """The events completed by ``chunk``. Linear in the input: every byte is scanned once."""
        buf = self._buf
        buf += chunk
        out: list[SSEEvent] = []
        pos = 0  # where the current line starts
        scan = self._scan  # bytes before this hold no line end (but a lone trailing \r)
        while True:
            # Lines end in \n, \r\n or \r; a lone \r at the end may be half of \r\n.
            i_n = buf.find(b"\n", scan)
            i_r = buf.find(b"\r", scan, len(buf) if i_n < 0 else i_n)
            if i_r >= 0:
                if i_r == len(buf) - 1:
                    scan = i_r
                    break
                end, nxt = i_r, i_r + (2 if buf[i_r + 1] == 0x0A else 1)
            elif i_n >= 0:
                end, nxt = i_n, i_n + 1
            else:
                scan = len(buf)
                break
            raw = bytes(buf[pos:end])
            pos = scan = nxt
            ev = self._line(raw)
            if ev is not None:
                out.append(ev)
        if pos:
            del buf[:pos]  # at most one chunk's tail moves: lines complete in this chunk
            scan -= pos
        self._scan = scan
        if len(buf) > self._max:
            raise MessageTooLarge(self._max)
        return out

    def _line(self, raw: bytes) -> SSEEvent | None:
        if self._first:
            self._first = False
            if raw.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte order mark
                raw = raw[3:]
        if not raw:
            return self._dispatch()
        name, colon, value = raw.partition(b":")
        if name == b"data":
            if value.startswith(b" "):
                value = value[1:]
            if self._data_lines:
                self._data += b"\n"
            self._data += value
            self._data_lines += 1
            if len(self._data) > self._max:
                raise MessageTooLarge(self._max)
            return None
        self._other += len(raw) + 1
        if self._other > self._max:
            raise MessageTooLarge(self._max)
        if not name and colon:  # a comment
            return None
        if value.startswith(b" "):
            value = value[1:]
        if name == b"event":
            self._event = value.decode("utf-8", errors="replace")
        elif name == b"id":
            if b"\0" not in value:
                self._id = value.decode("utf-8", errors="replace")
        elif name == b"retry" and value.isdigit():
            self._retry = int(value)
        return None

    def _dispatch(self) -> SSEEvent | None:
        """A blank line: the event so far, if it has anything (then the next one starts)."""
        self._other = 0
        if not self._data_lines and not self._event and self._id is None and self._retry is None:
            return None
        data = self._data.decode("utf-8", errors="replace")
        ev = SSEEvent(self._event or "message", data, self._id, self._retry)
        self._data, self._data_lines = bytearray(), 0
        self._event, self._id, self._retry = "", None, None
        return ev
