"""HTTP/1.1 for our server: the connection protocol uvicorn runs for ``serve_http``.

uvicorn binds the sockets and runs the lifespan, signals, TLS and the graceful shutdown;
this replaces its per-connection protocol (its ``http=`` option takes a class), which spent
most of the server's CPU per MCP call (docs/performance.md). Here:

* httptools (llhttp, strict) parses: a bad line or header, a ``Content-Length`` beside
  ``Transfer-Encoding``, a bad chunk get 400 and the connection closes;
* a response that declares its length (a JSON answer) leaves in one write, head and body;
  one that does not (SSE) has its head written at once, chunked;
* an app may take a request whose body has fully arrived without the ASGI ``receive`` round
  (:data:`Direct`), or say no: the request then goes the ASGI way with the same body;
* one timer per connection, re-armed by itself: the first head within ``head_timeout``
  seconds (408), every later one within the keep-alive timeout.

Pipelined requests are served one at a time, in order. ``Expect: 100-continue`` is answered
when the app first reads the body. A head longer than :data:`MAX_HEAD` gets 431.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Final, cast
from urllib.parse import unquote

try:
    import httptools
except ModuleNotFoundError:  # the [http] extra installs it; protocol_class() says so
    httptools = None  # type: ignore[assignment]

from .._backend._eager import AtOnce, drive
from ._asgi import ASGIMessage, ClientGone, Receive, Scope, Send
from ._h1cycle import STATUS, Cycle, declared_length, plain, status_line

logger = logging.getLogger("mcpkit.http")

#: The longest request head (request line and headers) accepted: 431 beyond.
MAX_HEAD: Final = 64 * 1024
#: Seconds a connection closing after a refusal keeps reading (and dropping) what the client
#: still sends, so that the refusal is not lost to a reset (see ``_answer_and_close``).
LINGER: Final = 2.0
#: Request body bytes buffered for an app that is not reading them before the connection
#: stops reading from its socket (resumed once the app has read them).
HIGH_WATER: Final = 256 * 1024

#: An app's way in for a request whose body has fully arrived: given the scope, the body,
#: ``receive`` (which after the body reports the disconnect) and ``send``, it returns what
#: serves the request, or None to have the request served as ASGI (``app(scope, ...)``).
#: What serves it may be marked :class:`~mcpkit._backend._eager.AtOnce` (it never waits):
#: the request is then served in the step that read it, with no task.
Direct = Callable[[Scope, bytes, Receive, Send], "Awaitable[None] | AtOnce | None"]

_ASGI: Final = {"version": "3.0", "spec_version": "2.4"}
_BAD_NAME = re.compile(rb'[\x00-\x20\x7f()<>@,;:\\"/\[\]?={}]')
_BAD_VALUE = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
_NO_BODY_STATUS: Final = frozenset({204, 304})
#: The largest body joined to its head for one write (a larger one is written apart).
_JOIN_MAX: Final = 64 * 1024


class H1Protocol(asyncio.Protocol):
    """One HTTP/1.1 connection serving an ASGI app; built by uvicorn as its ``http`` class.

    The constructor takes what uvicorn gives every protocol it runs (its ``Config``, its
    server state, the lifespan's state). The class attributes :attr:`direct` and
    :attr:`head_timeout` are set on a subclass by :func:`protocol_class`.
    """

    #: The app's way in for complete requests (see :data:`Direct`), or None.
    direct: Direct | None = None
    #: Shared by the server's connections: whether one answered a request at once in this
    #: loop turn (see ``_start``).
    turn: _Turn
    #: Seconds a connection has to send its first request head (None: the keep-alive
    #: timeout, as for every later head).
    head_timeout: float | None = None

    def __init__(
        self,
        config: Any,
        server_state: Any,
        app_state: dict[str, Any] | None = None,
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        if not config.loaded:
            config.load()
        self.app: Callable[[Scope, Receive, Send], Awaitable[None]] = config.loaded_app
        self.loop = _loop or asyncio.get_running_loop()
        self.state = server_state
        self.app_state = app_state or {}
        self.root_path: str = config.root_path or ""
        self.keep_alive_timeout = float(config.timeout_keep_alive)
        self.limit: int | None = config.limit_concurrency
        self.access_log: bool = bool(config.access_log)
        # An X-Forwarded-* header must reach uvicorn's proxy middleware around the app, so
        # such a request never takes the app's direct way.
        self.proxy_headers: bool = bool(config.proxy_headers)
        self.parser = httptools.HttpRequestParser(self)
        self.transport: asyncio.Transport | None = None
        self.server: tuple[str, int] | None = None
        self.client: tuple[str, int] | None = None
        self.scheme = "http"
        self.cycle: Cycle | None = None  # being parsed
        self.current: Cycle | None = None  # being served (or next to be)
        self.running = False  # whether the app was started for ``current``
        self.serving_now = False  # _serve_next's loop is running
        self.queue: deque[Cycle] = deque()
        self.head_size = 0
        self.closing = False
        self.paused_reading = False
        self.writable: asyncio.Event | None = None
        # The idle timer: armed once, re-armed from its own callback while the connection
        # keeps working (no timer made per response).
        self.timer: asyncio.TimerHandle | None = None
        self.timer_at = 0.0
        self.idle_since: float | None = None
        self.deadline = 0.0
        #: A head is awaited or being read (from the start, and from each message's first
        #: byte to its blank line), and how many bytes of it were fed to the parser.
        self.in_head = True
        self.head_seen = 0
        #: The request whose head came last (what an upgrade refers to).
        self.last: Cycle | None = None
        #: Written after the last answer when bytes after it could not be parsed.
        self.refusal: bytes | None = None
        #: A refusal was written: what the client still sends is dropped.
        self.discarding = False
        #: Body bytes still to come of a request that asked to upgrade (see _no_upgrade).
        self.upgrade_left = 0

    # ------------------------------------------------------------------ connection

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, but have its methods.
        self.transport = transport = cast(asyncio.Transport, transport)
        self.state.connections.add(self)
        self.server = _address(transport.get_extra_info("sockname"))
        self.client = _address(transport.get_extra_info("peername"))
        if transport.get_extra_info("sslcontext") is not None:
            self.scheme = "https"
        first = self.head_timeout if self.head_timeout is not None else self.keep_alive_timeout
        self._idle(first)

    def connection_lost(self, exc: Exception | None) -> None:
        self.state.connections.discard(self)
        self.closing = True
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        for cycle in (self.current, *self.queue):
            if cycle is not None:
                cycle.disconnected = True
                cycle.wake()
        self.queue.clear()
        if self.writable is not None:
            self.writable.set()

    def eof_received(self) -> bool | None:
        # The client closed its side: the transport closes, and a request in flight sees
        # the disconnect (closing a response stream is how a client cancels its request,
        # so a half-close cannot be told from a cancel; uvicorn's protocols do the same).
        return None

    def shutdown(self) -> None:
        """uvicorn's shutdown: close now when idle, else after the response in flight."""
        if self.current is None and not self.queue:
            self._close()
        else:
            for cycle in (self.current, *self.queue):
                if cycle is not None:
                    cycle.keep_alive = False

    def pause_writing(self) -> None:
        self.writable = asyncio.Event()

    def resume_writing(self) -> None:
        if self.writable is not None:
            self.writable.set()
            self.writable = None

    def _close(self) -> None:
        self.closing = True
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    def _answer_and_close(self, wire: bytes) -> None:
        """Write a refusal and close, lingering: the client may still be sending (a head
        too large, a body refused), and closing on its unread bytes would make the kernel
        reset the connection, which can destroy the refusal before the client reads it.
        So our side is shut, what still comes is read and dropped, and the connection
        closes when the client closes or after :data:`LINGER` seconds."""
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        transport.write(wire)
        self.closing = True
        try:
            if not transport.can_write_eof():
                raise OSError("no half-close")
            transport.write_eof()
        except (OSError, RuntimeError, NotImplementedError):
            transport.close()
            return
        self.discarding = True
        if self.paused_reading:
            self.paused_reading = False
            transport.resume_reading()
        self.loop.call_later(LINGER, transport.close)

    # ------------------------------------------------------------------ idle timer

    def _idle(self, timeout: float) -> None:
        self.idle_since = self.loop.time()
        self.deadline = self.idle_since + timeout
        # A timer already armed for a later moment (the first head's longer timeout) is
        # brought forward; one armed earlier re-arms itself when it fires.
        if self.timer is None or self.timer_at > self.deadline:
            self._arm(self.deadline)

    def _arm(self, when: float) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.timer_at = when
        self.timer = self.loop.call_at(when, self._on_timer)

    def _on_timer(self) -> None:
        self.timer = None
        if self.idle_since is None or self.closing:
            return
        now = self.loop.time()
        if now < self.deadline:
            self._arm(self.deadline)
            return
        if self.in_head:
            # A head begun and not finished in time (a slow client, or slowloris), or a
            # new connection that sent no head at all: told why, then closed.
            self._answer_and_close(plain(408, b"Request Timeout"))
        else:
            self._close()  # an idle keep-alive connection: closed quietly

    # ------------------------------------------------------------------ parsing

    def data_received(self, data: bytes) -> None:
        if self.discarding:
            return  # after a refusal: dropped until the client closes (_answer_and_close)
        if self.upgrade_left:
            self._upgrade_body(data)
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade as e:
            self._no_upgrade(data[int(e.args[0]) :] if e.args else b"")
        except httptools.HttpParserError as e:
            # A callback's own exception comes wrapped (HttpParserCallbackError).
            if isinstance(e.__context__, _HeadTooLarge):
                self._bad(431, b"Request Header Fields Too Large")
            else:
                self._bad_request(e)
            return
        if self.in_head:
            # The parser holds a header until its line ends: what it was fed of an
            # unfinished head is counted here, so no line grows without bound. A head that
            # began in this read is not charged with it (the read may hold many pipelined
            # requests before it): the parser holds at most one read of it then.
            if self.head_seen < 0:
                self.head_seen = 0
            else:
                self.head_seen += len(data)
            if self.head_seen > MAX_HEAD:
                self._bad(431, b"Request Header Fields Too Large")
                return
        self._serve_next()

    def _no_upgrade(self, rest: bytes) -> None:
        """No upgrade is offered (the MCP apps speak plain HTTP): the request is served as
        it is and the connection closes after it, as what would follow an upgrade belongs
        to a protocol we do not speak. The parser stops at the head of such a request; a
        body it declares with Content-Length (``curl --http2`` on an http URL sends
        ``Upgrade: h2c`` with its POST) is read here; a chunked one is refused."""
        cycle = self.cycle or self.last
        self.cycle = None
        if cycle is None:
            return
        cycle.keep_alive = False
        length = declared_length(cycle.headers)
        if length is None:
            self._bad(400, b"Invalid HTTP request: a chunked body with Upgrade")
            return
        if length and not cycle.body:
            cycle.complete = False
            self.upgrade_left = length
            self._upgrade_body(rest)
            return
        cycle.complete = True
        cycle.wake()
        self.paused_reading = True
        if self.transport is not None:
            self.transport.pause_reading()

    def _upgrade_body(self, data: bytes) -> None:
        """The body of a request that asked to upgrade (see :meth:`_no_upgrade`)."""
        cycle = self.last
        assert cycle is not None
        part = data[: self.upgrade_left]
        self.upgrade_left -= len(part)
        if part:
            cycle.body.append(part)
            cycle.buffered += len(part)
        if not self.upgrade_left:
            cycle.complete = True
        cycle.wake()
        self._serve_next()

    def _bad_request(self, error: Exception) -> None:
        logger.debug("invalid HTTP request: %s", error)
        self._bad(400, b"Invalid HTTP request")

    def _bad(self, status: int, text: bytes) -> None:
        """Bytes that cannot be parsed: nothing after them can be trusted. The requests
        before them are answered, then the refusal is written and the connection closed."""
        broken, self.cycle = self.cycle, None
        self.in_head = False
        self.paused_reading = True
        if self.transport is not None:
            self.transport.pause_reading()
        if broken is not None and broken in self.queue:
            self.queue.remove(broken)  # its head was fine, its body is not
        if broken is not None and broken is self.current:
            # The request being served broke (a bad chunk): it is refused if nothing of
            # its answer went out, and its app sees the client leave.
            broken.keep_alive = False
            if broken.started:
                self._close()
            else:
                self._answer_and_close(plain(status, text))
            return
        last = self.queue[-1] if self.queue else self.current
        if last is None:
            self._answer_and_close(plain(status, text))
            return
        last.keep_alive = False
        self.refusal = plain(status, text)
        self._serve_next()  # the request before it may not have started yet

    def on_message_begin(self) -> None:
        self.cycle = Cycle(self)
        self.head_size = 0
        self.head_seen = -1  # began in the read being parsed (see data_received)
        self.in_head = True

    def on_url(self, url: bytes) -> None:
        self.head_size += len(url)
        if self.head_size > MAX_HEAD:
            raise _HeadTooLarge
        assert self.cycle is not None
        self.cycle.target += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self.head_size += len(name) + len(value) + 4
        if self.head_size > MAX_HEAD:
            raise _HeadTooLarge
        cycle = self.cycle
        assert cycle is not None
        name = name.lower()
        cycle.headers.append((name, value))
        if name.startswith(b"x-forwarded-") or name == b"forwarded":
            cycle.forwarded = True
        elif name == b"expect" and value.lower() == b"100-continue":
            cycle.expect_continue = True

    def on_headers_complete(self) -> None:
        cycle = self.cycle
        assert cycle is not None
        parser = self.parser
        method = parser.get_method().decode("ascii")
        target = cycle.target
        if target.startswith(b"/"):
            raw_path, _, query = target.partition(b"?")
        else:
            # absolute-form (``http://host/path``) or ``*``
            url = httptools.parse_url(target)
            raw_path, query = url.path or b"/", url.query or b""
        try:
            path = raw_path.decode("ascii")
        except UnicodeDecodeError:
            raise httptools.HttpParserInvalidURLError("non-ASCII request target") from None
        if "%" in path:
            path = unquote(path)
        if self.root_path:
            path = self.root_path + path
            raw_path = self.root_path.encode("ascii") + raw_path
        cycle.scope = {
            "type": "http",
            "asgi": _ASGI,
            "http_version": parser.get_http_version(),
            "server": self.server,
            "client": self.client,
            "scheme": self.scheme,
            "method": method,
            "root_path": self.root_path,
            "path": path,
            "raw_path": raw_path,
            "query_string": query,
            "headers": cycle.headers,
        }
        if self.app_state:
            cycle.scope["state"] = self.app_state.copy()
        cycle.keep_alive = parser.should_keep_alive()
        cycle.head_only = method == "HEAD"
        # The head is in: the connection is no longer idle (a later head is timed again
        # from the end of this request's response).
        self.idle_since = None
        self.in_head = False
        self.last = cycle
        self.state.total_requests += 1
        self._queue(cycle)

    def on_body(self, body: bytes) -> None:
        cycle = self.cycle
        assert cycle is not None
        cycle.body.append(body)
        cycle.buffered += len(body)
        if cycle.buffered > HIGH_WATER and cycle is self.current and not self.paused_reading:
            self.paused_reading = True
            assert self.transport is not None
            self.transport.pause_reading()
        cycle.wake()

    def on_message_complete(self) -> None:
        cycle = self.cycle
        assert cycle is not None
        cycle.complete = True
        self.cycle = None
        cycle.wake()

    def _queue(self, cycle: Cycle) -> None:
        if self.current is None and not self.queue:
            self.current = cycle
            self.running = False
        else:
            self.queue.append(cycle)
            if not self.paused_reading and self.transport is not None:
                # Pipelined: read on once the requests before it are answered.
                self.paused_reading = True
                self.transport.pause_reading()

    # ------------------------------------------------------------------ serving

    def _serve_next(self) -> None:
        """Start serving the current request, once its head is in (its body maybe not),
        and, while requests are answered at once, those after it (a loop, not recursion:
        a pipelined burst of them must not grow the stack)."""
        if self.serving_now:
            return  # called from _finished within the loop below: it goes on from there
        self.serving_now = True
        try:
            while self._start():
                pass
        finally:
            self.serving_now = False

    def _start(self) -> bool:
        """Start serving the current request; True if it was answered at once (the next
        one may start now), False if there is none to start or it is being served."""
        cycle = self.current
        if cycle is None or self.running or self.closing:
            return False
        self.running = True
        limit = self.limit
        if limit is not None and (
            len(self.state.connections) >= limit or len(self.state.tasks) >= limit
        ):
            logger.warning("over the concurrency limit (%d): 503", limit)
            cycle.keep_alive = False
            self._answer_and_close(plain(503, b"Service Unavailable"))
            return False
        receive, send = cycle.receive, cycle.send
        work: Awaitable[None] | AtOnce | None = None
        direct = self.direct
        # An X-Forwarded-* header is for uvicorn's proxy middleware around the app (when
        # enabled): such a request goes the ASGI way, through it.
        if direct is not None and cycle.complete and not (cycle.forwarded and self.proxy_headers):
            work = direct(cycle.scope, cycle.joined_body(), receive, send)
            if work is not None:
                cycle.take_body()  # the app's receive says the disconnect next
        if type(work) is AtOnce:
            # Known to end without waiting: no task. The first such request of a loop turn
            # is answered in this step (a task would answer it a turn later); those of other
            # connections in the same turn are answered together in the next one, as their
            # tasks would have been: their answers then leave in a burst, which at many
            # connections saves both sides wake-ups (measured, docs/performance.md).
            turn = self.turn
            if turn.busy:
                self.loop.call_soon(self._at_once, cycle, work)
                return False
            turn.busy = True
            self.loop.call_soon(turn.end)
            return self._at_once(cycle, work)
        if work is None:
            work = self.app(cycle.scope, receive, send)
        assert not isinstance(work, AtOnce)
        cycle.task = task = self.loop.create_task(self._run(cycle, work))
        self.state.tasks.add(task)
        return False

    def _at_once(self, cycle: Cycle, work: AtOnce) -> bool:
        """Serve ``work`` in this step; True once answered (False: it failed, or it waited
        after all and a task finishes it)."""
        try:
            rest = drive(work)
        except Exception as e:
            self._failed(cycle, e)
            return False
        if rest is None:
            return self._completed(cycle)
        cycle.task = task = self.loop.create_task(self._run(cycle, rest))
        self.state.tasks.add(task)
        return False

    async def _run(self, cycle: Cycle, work: Awaitable[None]) -> None:
        try:
            await work
        except asyncio.CancelledError:
            if not cycle.done:
                self._abort(cycle)
            raise
        except BaseException as e:
            self._failed(cycle, e)
            return
        finally:
            # Here, not in a done callback: that would cost the loop another turn per request.
            self.state.tasks.discard(cycle.task)
        self._completed(cycle)

    def _failed(self, cycle: Cycle, error: BaseException) -> None:
        if not isinstance(error, ClientGone):  # the apps' own signal that the client left
            logger.error("Exception in ASGI application", exc_info=error)
        self._abort(cycle)

    def _completed(self, cycle: Cycle) -> bool:
        """The app returned: its response is finished (True), or it never was (False)."""
        if not cycle.done:
            if not cycle.disconnected:
                logger.error("ASGI callable returned without completing the response")
            self._abort(cycle)
            return False
        self._finished(cycle)
        return True

    def _abort(self, cycle: Cycle) -> None:
        """The app failed: 500 if nothing went out yet, else the connection is cut (a
        response cut short must not look complete)."""
        cycle.done = True
        if cycle.disconnected or self.closing:
            return
        if not cycle.started:
            self._answer_and_close(plain(500, b"Internal Server Error"))
        else:
            self._close()

    def _finished(self, cycle: Cycle) -> None:
        if self.access_log:
            self._log(cycle)
        if self.closing:
            return
        if not cycle.keep_alive:
            if self.refusal is not None:
                self._answer_and_close(self.refusal)  # what came after could not be parsed
            else:
                self._close()
            return
        if not cycle.complete:
            # The app answered without reading the whole body: what follows on the
            # connection cannot be told apart from it (the client may still be sending it).
            self._answer_and_close(b"")
            return
        self.current = None
        if self.queue:
            self.current = self.queue.popleft()
            self.running = False
        if not self.queue and self.paused_reading and self.transport is not None:
            self.paused_reading = False
            self.transport.resume_reading()
        if self.current is not None:
            self._serve_next()
        else:
            self._idle(self.keep_alive_timeout)

    def _log(self, cycle: Cycle) -> None:
        scope = cycle.scope
        who = f"{self.client[0]}:{self.client[1]}" if self.client else "-"
        query = scope["query_string"]
        path = scope["path"] + ("?" + query.decode("latin-1") if query else "")
        logging.getLogger("uvicorn.access").info(
            '%s - "%s %s HTTP/%s" %d',
            who,
            scope["method"],
            path,
            scope["http_version"],
            cycle.status,
        )

    # ------------------------------------------------------------------ ASGI

    async def receive(self, cycle: Cycle) -> ASGIMessage:
        """A request's ASGI ``receive`` (see :meth:`Cycle.receive`), waiting."""
        while not cycle.delivered:
            if cycle.disconnected or cycle.done:
                return {"type": "http.disconnect"}
            if cycle.body or cycle.complete:
                body = cycle.take_body()
                if self.paused_reading and not self.queue and self.transport is not None:
                    self.paused_reading = False
                    self.transport.resume_reading()
                return {"type": "http.request", "body": body, "more_body": not cycle.complete}
            if cycle.expect_continue and not cycle.continue_sent and self.transport is not None:
                cycle.continue_sent = True
                self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            await self._wait(cycle)
        # All of the body was delivered: the next event is the client leaving.
        await self._wait_disconnect(cycle)
        return {"type": "http.disconnect"}

    async def _wait(self, cycle: Cycle) -> None:
        cycle.waiter = self.loop.create_future()
        try:
            await cycle.waiter
        finally:
            cycle.waiter = None

    async def _wait_disconnect(self, cycle: Cycle) -> None:
        while not (cycle.disconnected or cycle.done):
            await self._wait(cycle)

    def start(self, cycle: Cycle, message: ASGIMessage) -> None:
        """``http.response.start``: checked and held (see :meth:`body`)."""
        if cycle.started:
            raise RuntimeError("the response was already started")
        headers = message.get("headers", ())
        sized = False
        for name, value in headers:
            if not name or _BAD_NAME.search(name) or _BAD_VALUE.search(value):
                raise RuntimeError(f"invalid response header {name!r}: {value!r}")
            if name.lower() == b"content-length":
                sized = True
        cycle.started = True
        cycle.status = int(message["status"])
        if sized:
            # Its body is coming, whole or in parts: the head waits to go out with it.
            cycle.pending = headers
        else:
            # A stream (SSE): the client may wait for the head before anything is said.
            head = self._head(cycle, headers)
            if not cycle.disconnected and self.transport is not None:
                self.transport.write(head)

    def body(self, cycle: Cycle, message: ASGIMessage) -> None:
        """``http.response.body``: written with the held head when it is the first."""
        if message["type"] != "http.response.body":
            raise RuntimeError(f"unexpected ASGI message {message['type']!r}")
        if not cycle.started or cycle.done:
            raise RuntimeError("response body sent before its start, or after its end")
        body: bytes = message.get("body", b"")
        more: bool = message.get("more_body", False)
        pending = cycle.pending
        head = b""
        if pending is not None:
            cycle.pending = None
            head = self._head(cycle, pending)  # first: it sets the framing _frame follows
        out = self._frame(cycle, body, more)
        if head:
            if len(out) <= _JOIN_MAX:
                out = head + out
            elif not cycle.disconnected and self.transport is not None:
                self.transport.write(head)  # a large body is not copied to join it
        if not more:
            cycle.done = True
            cycle.wake()
        if out and not cycle.disconnected and self.transport is not None:
            self.transport.write(out)

    def _head(self, cycle: Cycle, headers: Any) -> bytes:
        """The response head; its framing decided here: the app's Content-Length, else
        chunked (HTTP/1.1) or the connection's end (HTTP/1.0)."""
        parts = [STATUS.get(cycle.status) or status_line(cycle.status)]
        length: int | None = None
        for name, value in self.state.default_headers:
            parts.append(b"%s: %s\r\n" % (name, value))
        for name, value in headers:
            low = name.lower()
            if low == b"content-length":
                length = int(value)
            elif low == b"connection":
                if value.lower() == b"close":
                    cycle.keep_alive = False
                continue  # written below, once, from what the connection will do
            elif low == b"transfer-encoding":
                continue  # the framing is ours to choose
            parts.append(b"%s: %s\r\n" % (name, value))
        no_body = cycle.status in _NO_BODY_STATUS or cycle.status < 200
        if no_body:
            cycle.length = 0
        elif length is not None:
            cycle.length = length
        elif cycle.scope["http_version"] == "1.1":
            cycle.chunked = True
            parts.append(b"transfer-encoding: chunked\r\n")
        else:
            cycle.keep_alive = False  # HTTP/1.0: the body ends with the connection
        if not cycle.keep_alive:
            parts.append(b"connection: close\r\n")
        parts.append(b"\r\n")
        return b"".join(parts)

    def _frame(self, cycle: Cycle, body: bytes, more: bool) -> bytes:
        if cycle.head_only or (cycle.length == 0 and not body):
            return b""
        if cycle.chunked:
            chunk = b"%x\r\n%s\r\n" % (len(body), body) if body else b""
            return chunk if more else chunk + b"0\r\n\r\n"
        if cycle.length is not None:
            if len(body) > cycle.length:
                raise RuntimeError("response body longer than its Content-Length")
            cycle.length -= len(body)
            if not more and cycle.length:
                raise RuntimeError("response body shorter than its Content-Length")
        return body


class _HeadTooLarge(Exception):
    pass


def _address(value: Any) -> tuple[str, int] | None:
    if isinstance(value, tuple) and len(value) >= 2:
        return str(value[0]), int(value[1])
    return None


class _Turn:
    """Whether a request was answered at once in the current loop turn: set by the first,
    cleared by a callback at the start of the next turn."""

    __slots__ = ("busy",)

    def __init__(self) -> None:
        self.busy = False

    def end(self) -> None:
        self.busy = False


def protocol_class(direct: Direct | None, head_timeout: float | None) -> type[H1Protocol]:
    """The protocol class uvicorn is given (``config.http_protocol_class``): connections
    whose complete requests may go to ``direct``, whose first head must arrive within
    ``head_timeout`` seconds. Needs httptools (the ``[http]`` extra)."""
    if httptools is None:
        raise ImportError(
            "mcpkit's HTTP/1.1 protocol parses with httptools, which is not installed: "
            "pip install 'mcpkit[http]' (or pass uvicorn_options={'http': 'h11'})"
        )
    return type(
        "MCPKitH1Protocol",
        (H1Protocol,),
        {
            "direct": staticmethod(direct) if direct is not None else None,
            "head_timeout": head_timeout,
            "turn": _Turn(),
        },
    )
