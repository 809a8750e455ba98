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
    """A message from the server exceeds the size the client accepts (``max_message_size``)."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"the server sent a message larger than max_message_size ({_size(limit)}); "
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
    bounds the size of one event so a hostile server cannot exhaust memory.
    """

    def __init__(self, max_event: int = 16 * 1024 * 1024) -> None:
        self._buf = bytearray()
        self._scan = 0
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None
        self._retry: int | None = None
        self._size = 0
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
        line = raw.decode("utf-8", errors="replace")
        if self._first:
            self._first = False
            if line.startswith("\ufeff"):
                line = line[1:]
        if not line:
            if not self._data and not self._event and self._id is None and self._retry is None:
                return None
            ev = SSEEvent(self._event or "message", "\n".join(self._data), self._id, self._retry)
            self._data, self._event, self._id, self._retry, self._size = [], "", None, None, 0
            return ev
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._size += len(value)
            if self._size > self._max:
                raise MessageTooLarge(self._max)
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry" and value.isdigit():
            self._retry = int(value)
        return None
