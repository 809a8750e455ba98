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
        self._buf = b""
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None
        self._retry: int | None = None
        self._size = 0
        self._max = max_event
        self._first = True

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        self._buf += chunk
        out: list[SSEEvent] = []
        while True:
            # Lines end in \n, \r\n or \r; a lone \r at the end may be half of \r\n.
            i_n = self._buf.find(b"\n")
            i_r = self._buf.find(b"\r")
            if i_n < 0 and i_r < 0:
                break
            if i_r >= 0 and (i_n < 0 or i_r < i_n):
                if i_r == len(self._buf) - 1:
                    break
                end, nxt = i_r, i_r + (2 if self._buf[i_r + 1 : i_r + 2] == b"\n" else 1)
            else:
                end, nxt = i_n, i_n + 1
            raw = self._buf[:end]
            self._buf = self._buf[nxt:]
            ev = self._line(raw)
            if ev is not None:
                out.append(ev)
        if len(self._buf) > self._max:
            raise ValueError("SSE event too large")
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
                raise ValueError("SSE event too large")
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry" and value.isdigit():
            self._retry = int(value)
        return None
