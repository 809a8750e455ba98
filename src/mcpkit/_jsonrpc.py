"""The JSON-RPC 2.0 engine: one symmetric peer, used by clients and servers alike.

It matches responses to requests, runs incoming requests concurrently (bounded), carries
cancellation and progress both ways, and turns malformed input into JSON-RPC errors. It knows
no MCP method: the session layer gives it a request handler, a notification handler, and the
names of the two notifications it must understand itself (cancellation and progress).

The hot path is plain dicts decoded by orjson; no models, no copies.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Final, cast

import anyio
import orjson
from anyio.abc import TaskGroup

from ._backend import HandlerTasks, ResponseWaiter, Slots, handler_tasks, response_waiters
from ._exceptions import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    ConnectionClosed,
    InternalError,
    ProtocolError,
    RequestTimeout,
)
from ._incoming import IncomingRequest, error_response, failure_response, result_response
from ._logrepeats import install as _limit_repeats
from ._transports._base import (
    Incoming,
    InvalidIncoming,
    Message,
    PushTransport,
    RequestId,
    Transport,
    pushes,
)

logger = logging.getLogger("mcpkit.jsonrpc")
# What peers send decides what these loggers say: a flood of bad messages is counted, not
# printed line by line (every connection runs this engine, so this holds wherever we run).
_limit_repeats()

ProgressCallback = Callable[[float, "float | None", "str | None"], Awaitable[None]]
NotificationHandler = Callable[[str, "dict[str, Any] | None"], Awaitable[None]]
#: Called with each request: what serves it, to await (its result is the answer). What it
#: raises, called or awaited, is answered alike (an error response, or no answer when the
#: peer cancelled).
RequestHandler = Callable[["IncomingRequest"], Awaitable[Any]]
BatchPolicy = Callable[[], bool]

CANCELLED_METHOD: Final = "notifications/cancelled"
PROGRESS_METHOD: Final = "notifications/progress"
#: Bound on the shielded wait while telling the peer we gave up on a request.
_CANCEL_SEND_TIMEOUT: Final = 2.0
#: When the peer closes the connection, handlers still running get this long to finish (their
#: answers may still reach a peer that only half-closed); then they are cancelled, so a hung
#: handler can never keep a process alive (an MCP stdio client closes stdin, then waits ~2 s).
DRAIN_TIMEOUT: Final = 2.0


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _handler_cancelled(req: IncomingRequest) -> dict[str, Any]:
    logger.error("%s: handler for %r raised CancelledError on its own", req.engine.name, req.method)
    why = "the handler was cancelled (CancelledError) though the request was not"
    return error_response(req.id, INTERNAL_ERROR, f"Internal error: {why}")


class _Pending:
    """Our own request, waiting for its response."""

    __slots__ = ("error", "max_deadline", "on_progress", "result", "timeout", "waiter")

    def __init__(self, waiter: ResponseWaiter) -> None:
        self.waiter = waiter
        self.result: Any = None
        self.error: BaseException | None = None
        self.on_progress: ProgressCallback | None = None
        self.timeout: float | None = None
        self.max_deadline = math.inf


class _Batch:
    """Answers of one incoming batch, sent together once every request in it is done."""

    __slots__ = ("remaining", "responses", "sealed")

    def __init__(self) -> None:
        self.responses: list[dict[str, Any]] = []
        self.remaining = 0
        self.sealed = False


class JSONRPCEngine:
    """One end of a JSON-RPC connection over a :class:`Transport`.

    Run it with :meth:`run` inside a task group (or use ``async with engine:``) and call
    :meth:`request` / :meth:`notify` from any task.

    Args:
        transport: moves the messages.
        on_request: serves requests from the peer; returns the ``result`` value or raises
            :class:`ProtocolError`. Runs in its own task, concurrently with others.
        on_notification: receives notifications other than cancellation and progress,
            in the order they arrived (it runs on the reader: keep it quick).
        max_concurrency: requests from the peer served at once.
        max_queued: requests accepted but waiting for a slot; beyond that the peer gets an
            error at once, so memory stays bounded and the reader never stalls (it must keep
            reading, or handlers waiting on our own requests' responses would deadlock).
        allow_batch: called for each incoming batch; batches are rejected when it says no.
        uncancellable: methods the peer may not cancel (MCP: ``initialize``).
        prompt: methods served at once, without waiting for a handler slot, so they are
            answered even when every slot is busy (MCP: ``ping``). Keep their handlers quick.
        drain_timeout: how long handlers still running may finish once the peer has closed
            the connection, before they are cancelled.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        on_request: RequestHandler,
        on_notification: NotificationHandler | None = None,
        max_concurrency: int = 256,
        max_queued: int = 4096,
        allow_batch: BatchPolicy | None = None,
        uncancellable: frozenset[str] = frozenset(),
        prompt: frozenset[str] = frozenset(),
        drain_timeout: float = DRAIN_TIMEOUT,
        name: str = "peer",
    ) -> None:
        self.transport = transport
        self._on_request = on_request
        self._on_notification = on_notification
        self._allow_batch = allow_batch
        self._uncancellable = uncancellable
        self._prompt = prompt
        self._drain_timeout = drain_timeout
        self._slots = Slots(max_concurrency)
        self._max_in_flight = max_concurrency + max_queued
        self._next_id = 0
        #: Makes our requests' waiters; bound to the loop at the first request.
        self._new_waiter: Callable[[], ResponseWaiter] | None = None
        self._pending: dict[RequestId, _Pending] = {}
        self._progress: dict[str | int, _Pending] = {}
        self._in_flight: dict[RequestId, IncomingRequest] = {}
        #: The start of the last input that was not JSON (for error messages: a stdio
        #: server printing to stdout is the commonest cause of a silent handshake).
        self.unparsable: bytes | None = None
        self._tg: TaskGroup | None = None
        #: The tasks serving requests, in ``_tg`` (set with it): plain tasks on asyncio, the
        #: measured fast path of ``_backend``. Either way they end with the connection.
        self._tasks: HandlerTasks[Any]
        #: Requests being served, until their answer is sent (what the drain waits for).
        self._serving = 0
        self._drained: anyio.Event | None = None
        self._closed = False
        self._close_reason = "connection closed"
        #: Set when the engine closes (made by the first :meth:`wait_closed`).
        self._gone: anyio.Event | None = None
        self.name = name
        #: ``fn(method, params)``: whether that request's handler ends without waiting (the
        #: layer above knows); the reader then serves it in its own step, not in a task.
        self.serves_at_once: Callable[[str, dict[str, Any] | None], bool] | None = None

    # ------------------------------------------------------------------ running

    def _bind(self, tg: TaskGroup) -> None:
        self._tg = tg
        self._tasks = handler_tasks(tg, name=self.name)

    async def __aenter__(self) -> JSONRPCEngine:
        self._bind(tg := anyio.create_task_group())
        await tg.__aenter__()
        tg.start_soon(self._run_reader)
        return self

    async def __aexit__(self, *exc: object) -> bool | None:
        assert self._tg is not None
        self._tg.cancel_scope.cancel()
        self._tasks.cancel_all()
        try:
            return await self._tg.__aexit__(*exc)  # type: ignore[arg-type]
        finally:
            await self._tasks.join()
            self._shutdown("connection closed")
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await self.transport.aclose()

    async def run(self) -> None:
        """Serve until the peer closes the connection (or the caller cancels)."""
        async with anyio.create_task_group() as tg:
            self._bind(tg)
            try:
                await self._run_reader()
                await self._drain()
            finally:
                self._tasks.cancel_all()
                await self._tasks.join()
                tg.cancel_scope.cancel()  # background work ends too

    async def _drain(self) -> None:
        """Give handlers still running a bounded time to finish after the peer closed."""
        with anyio.move_on_after(self._drain_timeout):
            while self._serving:
                self._drained = anyio.Event()
                await self._drained.wait()

    def start_background(self, fn: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run ``fn`` in the engine's task group: it is cancelled when the connection ends."""
        if self._tg is None:
            raise RuntimeError("the engine is not running")
        self._tg.start_soon(fn)

    async def aclose(self, reason: str = "closed by us") -> None:
        """End the connection: pending requests fail with :class:`ConnectionClosed`."""
        self._shutdown(reason)
        if self._tg is not None:
            self._tg.cancel_scope.cancel()
            self._tasks.cancel_all()
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            await self.transport.aclose()

    @property
    def closed(self) -> bool:
        """True once the peer has gone away or the engine was shut down."""
        return self._closed

    async def wait_closed(self) -> None:
        """Return once the peer has gone away or the engine was shut down."""
        if self._closed:
            return
        if self._gone is None:
            self._gone = anyio.Event()
        await self._gone.wait()

    async def _run_reader(self) -> None:
        receive = self.transport.receive
        route = self._route_item
        if pushes(self.transport):
            cast("PushTransport", self.transport).push_to(self._handle)
        try:
            while True:
                try:
                    item = await receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    break
                # A request routed to its task leaves nothing to await here: no coroutine
                # is made for it in this loop (two per message before, on every request).
                left = route(item)
                if left is not None:
                    await left
        finally:
            self._shutdown(
                getattr(self.transport, "close_reason", "the peer closed the connection")
            )

    def _shutdown(self, reason: str) -> None:
        if self._closed:
            return
        self._closed = True
        self._close_reason = reason
        if self._gone is not None:
            self._gone.set()
        err = ConnectionClosed(reason)
        for p in self._pending.values():
            p.error = err
            p.waiter.set()
        self._pending.clear()
        self._progress.clear()

    # ------------------------------------------------------------------ receiving

    async def _handle(self, item: Incoming) -> None:
        """Route one incoming item (what a push transport hands over, in its own task)."""
        left = self._route_item(item)
        if left is not None:
            await left

    def _route_item(self, item: Incoming) -> Awaitable[None] | None:
        """Route one incoming item; what is left to await in the caller (an answer to
        send, a notification to handle, a request served in the caller's step), or None."""
        if isinstance(item, bytes):
            try:
                msg = orjson.loads(item)
            except orjson.JSONDecodeError as e:
                self.unparsable = item[:200]
                return self._unparsable(item, f"Parse error: {e}")
        elif isinstance(item, InvalidIncoming):
            return self._send_error(None, item.code, item.message)
        else:
            msg = item
        if type(msg) is dict:
            return self._route(msg, None)[1]
        if type(msg) is list:
            return self._handle_batch(msg)
        return self._send_error(
            None, INVALID_REQUEST, "Invalid Request: a message must be a JSON object"
        )

    async def _unparsable(self, item: bytes, text: str) -> None:
        """Answer what orjson refused, to the right id when the message is valid JSON anyway.

        Valid JSON can still be beyond what we represent (``1e400`` overflows a double, a lone
        surrogate is no Unicode): the request then gets its error under its own id, and a
        response fails the call it answers, instead of a caller waiting for its timeout.
        """
        try:
            msg = json.loads(item, parse_constant=_no_constant)
        except (ValueError, RecursionError):
            msg = None
        rid = msg.get("id") if type(msg) is dict else None
        if type(rid) is not str and type(rid) is not int:
            await self._send_error(None, PARSE_ERROR, text)
        elif "method" in msg:
            await self._send_error(rid, PARSE_ERROR, text)
        elif (p := self._pending.pop(rid, None)) is not None:
            p.error = ProtocolError(PARSE_ERROR, f"the response could not be read: {text}")
            p.waiter.set()

    @property
    def running(self) -> bool:
        """True while the engine serves (between the start of :meth:`run` and the end)."""
        return self._tg is not None and not self._closed

    async def serve_inline(self, msg: dict[str, Any]) -> None:
        """Route one incoming message as the reader would, serving a request in the calling task.

        For transports whose caller waits for the answer anyway (an HTTP POST answered with
        one JSON body): the message skips the hand-off to the reader and the task per
        request, three event-loop iterations on the path of every call. The answer goes out
        through the transport as usual. A ``notifications/cancelled`` for the request
        cancels the calling task's wait on the handler only.
        """
        if not self.running:
            raise ConnectionClosed(self._close_reason)
        await self._dispatch(msg, None, inline=True)

    async def _dispatch(
        self, msg: dict[str, Any], batch: _Batch | None = None, *, inline: bool = False
    ) -> bool:
        """Route one message and await what is left. Returns True when a request was
        started (batch bookkeeping)."""
        started, left = self._route(msg, batch, inline=inline)
        if left is not None:
            await left
        return started

    def _route(
        self, msg: dict[str, Any], batch: _Batch | None, *, inline: bool = False
    ) -> tuple[bool, Awaitable[Any] | None]:
        """Route one message: whether a request was started, and what is left for the
        caller to await (None when the request went to a task of its own)."""
        if msg.get("jsonrpc") != "2.0":
            return False, self._reject(
                msg, 'Invalid Request: "jsonrpc" must be exactly "2.0"', batch
            )
        method = msg.get("method")
        if method is None:
            if "result" in msg or "error" in msg:
                self._on_response(msg)
                return False, None
            return False, self._reject(
                msg, "Invalid Request: neither a request, a notification nor a response", batch
            )
        if type(method) is not str:
            return False, self._reject(msg, 'Invalid Request: "method" must be a string', batch)
        params = msg.get("params")
        if params is not None and type(params) is not dict:
            return False, self._reject(msg, 'Invalid Request: "params" must be an object', batch)
        if "id" not in msg:
            return False, self._on_notify(method, params)
        rid = msg["id"]
        if type(rid) is not str and type(rid) is not int:
            return False, self._reject(
                msg, 'Invalid Request: "id" must be a string or an integer', batch
            )
        if rid in self._in_flight:
            text = f"Invalid Request: id {rid!r} is already in use by a request in flight"
            return False, self._reply_error(rid, INVALID_REQUEST, text, batch)
        if len(self._in_flight) >= self._max_in_flight:
            text = "Too many requests in flight; retry later"
            return False, self._reply_error(rid, INTERNAL_ERROR, text, batch)
        req = IncomingRequest(self, rid, method, params)
        self._in_flight[rid] = req
        self._serving += 1
        if inline or (
            # Known to end without waiting: served in the reader's own step (no task, no
            # loop iteration of its own), while a slot is free and outside batches.
            batch is None
            and (at_once := self.serves_at_once) is not None
            and self._slots.free > 0
            and at_once(method, params)
        ):
            req._handle = self._tasks.adopt()
            return True, self._serve(req, batch)
        req._handle = self._tasks.start(self._serve, req, batch)
        return True, None

    async def _reject(self, msg: dict[str, Any], text: str, batch: _Batch | None) -> None:
        rid = msg.get("id")
        if type(rid) is not str and type(rid) is not int:
            rid = None
        # A malformed notification gets no answer: there is no id to answer to and the
        # spec forbids responding to notifications. Anything that looked like a request does.
        if "id" in msg or "method" not in msg:
            await self._reply_error(rid, INVALID_REQUEST, text, batch)
        else:
            logger.warning("%s: dropped malformed notification: %s", self.name, text)

    async def _serve(self, req: IncomingRequest, batch: _Batch | None) -> None:
        # `_serving` was counted up when the request was dispatched (before its task ran).
        # One coroutine from the task down to the session's handler: each layer is one more
        # object per request, kept while the request waits (what the cyclic GC goes through).
        if req._handle is None:
            # A task started eagerly (asyncio, Python 3.12+) runs its first step before
            # start() returns the handle: the task is the calling one, so it adopts itself.
            req._handle = self._tasks.adopt()
        response: dict[str, Any] | None = None
        slots: Slots | None = None if req.method in self._prompt else self._slots
        try:
            try:
                # Uncontended, the slot is taken without a checkpoint (a loop iteration).
                if slots is None:
                    pass
                elif slots.free > 0 and not slots.waiters:
                    slots.free -= 1
                else:
                    await slots.acquire()
                try:
                    # On trio, None when the peer's notifications/cancelled ended the
                    # handler (then req.cancelled: no answer below).
                    result = await self._tasks.guard(req._handle, self._on_request(req))
                    response = result_response(req, result)
                except Exception as exc:
                    response = failure_response(req, exc, self.name)
                except BaseException as exc:
                    # That cancellation ends the handler only; any other (shutdown) ends
                    # the task serving it too.
                    if not self._tasks.absorbs(
                        req._handle, exc, cancelled=req.cancelled, closing=self._closed
                    ):
                        raise
                    if not req.cancelled:
                        # A CancelledError though nobody cancelled it (it awaited a future
                        # someone else cancelled): the request still deserves an answer.
                        response = _handler_cancelled(req)
                finally:
                    if slots is not None:
                        slots.release()
            finally:
                req.done = True
                self._in_flight.pop(req.id, None)
            if req.cancelled:
                # The peer cancelled: the spec says the receiver SHOULD NOT respond.
                response = None
            if batch is not None:
                await self._batch_done(batch, response)
            elif response is not None:
                await self._send_quietly(response)
        finally:
            self._serving -= 1
            if not self._serving and self._drained is not None:
                self._drained.set()

    async def _on_notify(self, method: str, params: dict[str, Any] | None) -> None:
        if method == CANCELLED_METHOD:
            rid = params.get("requestId") if params else None
            # A malformed requestId (a list, an object) must not take the reader down.
            req = self._in_flight.get(rid) if type(rid) is str or type(rid) is int else None
            if req is not None and req.method not in self._uncancellable:
                logger.info(
                    "%s: peer cancelled request %r (%s): %s",
                    self.name,
                    rid,
                    req.method,
                    params.get("reason") if params else None,
                )
                req._cancel()
            # Unknown or finished ids are ignored, as the spec asks.
        elif method == PROGRESS_METHOD and params is not None:
            token = params.get("progressToken")
            p = self._progress.get(token) if isinstance(token, (str, int)) else None
            if p is None:
                return
            if p.timeout is not None:
                p.waiter.move_deadline(min(p.waiter.now() + p.timeout, p.max_deadline))
            if p.on_progress is not None:
                progress = params.get("progress")
                if isinstance(progress, (int, float)):
                    try:
                        await p.on_progress(progress, params.get("total"), params.get("message"))
                    except Exception:
                        logger.exception("%s: progress callback failed", self.name)
        if self._on_notification is not None:
            try:
                await self._on_notification(method, params)
            except Exception:
                logger.exception("%s: notification handler for %r failed", self.name, method)

    def _on_response(self, msg: dict[str, Any]) -> None:
        rid = msg.get("id")
        p = self._pending.pop(rid, None) if isinstance(rid, (str, int)) else None
        if p is None:
            # Late (after a timeout or cancellation) or unknown: ignored, per spec.
            logger.debug("%s: ignored response for unknown id %r", self.name, rid)
            return
        if "error" in msg:
            p.error = ProtocolError.from_error(msg["error"])
        else:
            p.result = msg.get("result")
        p.waiter.set()

    async def _handle_batch(self, items: list[Any]) -> None:
        if self._allow_batch is None or not self._allow_batch():
            await self._send_error(
                None,
                INVALID_REQUEST,
                "Invalid Request: JSON-RPC batches are not supported in this protocol revision",
            )
            return
        if not items:
            await self._send_error(None, INVALID_REQUEST, "Invalid Request: empty batch")
            return
        batch = _Batch()
        for m in items:
            if type(m) is dict:
                if await self._dispatch(m, batch):
                    batch.remaining += 1
            else:
                batch.responses.append(
                    error_response(
                        None, INVALID_REQUEST, "Invalid Request: a batch item must be an object"
                    )
                )
        batch.sealed = True
        if batch.remaining == 0:
            await self._flush_batch(batch)

    async def _batch_done(self, batch: _Batch, response: dict[str, Any] | None) -> None:
        if response is not None:
            batch.responses.append(response)
        batch.remaining -= 1
        if batch.sealed and batch.remaining == 0:
            await self._flush_batch(batch)

    async def _flush_batch(self, batch: _Batch) -> None:
        # All answers of a batch go back together, as JSON-RPC asks; none (only
        # notifications and responses) means nothing is sent.
        if batch.responses:
            try:
                await self._send(batch.responses, None)
            except ConnectionClosed:
                pass

    # ------------------------------------------------------------------ sending

    async def _send(
        self, message: Message, related: RequestId | None, *, quiet: bool = False
    ) -> None:
        """Send ``message``; a connection that is gone raises :class:`ConnectionClosed`
        (``quiet``: the message is dropped instead)."""
        if self._closed and not isinstance(message, list) and "method" in message:
            if quiet:
                return
            raise ConnectionClosed(self._close_reason)
        try:
            await self.transport.send(message, related_request_id=related)
        except (
            anyio.ClosedResourceError,
            anyio.BrokenResourceError,
            BrokenPipeError,
            ConnectionError,
        ) as e:
            reason = f"cannot send: {e or type(e).__name__}"
            self._shutdown(reason)  # later senders are told the same
            if quiet:
                return
            raise ConnectionClosed(reason) from e

    async def _reply_error(
        self, rid: RequestId | None, code: int, message: str, batch: _Batch | None
    ) -> None:
        err = error_response(rid, code, message)
        if batch is not None:
            batch.responses.append(err)
        else:
            await self._send_quietly(err)

    def _send_error(self, rid: RequestId | None, code: int, message: str) -> Awaitable[None]:
        return self._send_quietly(error_response(rid, code, message))

    def _send_quietly(self, msg: dict[str, Any]) -> Awaitable[None]:
        """Send ``msg``, dropped if the connection is gone (an answer nobody can read):
        :meth:`_send`'s own coroutine, none of its own (on every answer's path)."""
        return self._send(msg, None, quiet=True)

    async def notify(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        related_request_id: RequestId | None = None,
    ) -> None:
        """Send a notification."""
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        await self._send(msg, related_request_id)

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        reset_timeout_on_progress: bool = False,
        max_timeout: float | None = None,
        related_request_id: RequestId | None = None,
        cancellable: bool = True,
        on_id: Callable[[RequestId], None] | None = None,
    ) -> Any:
        """Send a request and wait for its result.

        Raises :class:`ProtocolError` (the peer's error), :class:`RequestTimeout` after
        ``timeout`` seconds (reset by each progress notification when
        ``reset_timeout_on_progress``, but never beyond ``max_timeout``), or
        :class:`ConnectionClosed`. On timeout or when the caller is cancelled, the peer is
        sent ``notifications/cancelled`` (unless ``cancellable`` is false). ``on_id`` is
        told the request's id before it is sent (what the peer's messages about it name).
        """
        if self._closed:
            raise ConnectionClosed(self._close_reason)
        self._next_id += 1
        rid = self._next_id
        if on_id is not None:
            on_id(rid)
        new_waiter = self._new_waiter
        if new_waiter is None:
            new_waiter = self._new_waiter = response_waiters()
        p = _Pending(new_waiter())
        if on_progress is not None or reset_timeout_on_progress:
            p.on_progress = on_progress
            params = dict(params) if params else {}
            meta = dict(params.get("_meta") or {})
            meta["progressToken"] = rid
            params["_meta"] = meta
            self._progress[rid] = p
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self._pending[rid] = p
        try:
            await self._send(msg, related_request_id)
            if timeout is None and max_timeout is None:
                await p.waiter.wait(math.inf)
            else:
                now = p.waiter.now()
                if max_timeout is not None:
                    p.max_deadline = now + max_timeout
                if reset_timeout_on_progress:
                    p.timeout = timeout
                deadline = min(now + timeout if timeout is not None else math.inf, p.max_deadline)
                if not await p.waiter.wait(deadline) and not p.waiter.is_set():
                    if cancellable:
                        await self._cancel_remote(rid, "timed out", related_request_id)
                    raise RequestTimeout(
                        f"{method}: no response within {timeout if timeout is not None else max_timeout} s"
                    )
        except BaseException as e:
            if (
                not p.waiter.is_set()
                and not isinstance(e, RequestTimeout)
                and cancellable
                and not self._closed
            ):
                # Our caller gave up (cancelled): tell the peer, then let the cancellation go on.
                with anyio.CancelScope(shield=True):
                    await self._cancel_remote(rid, "cancelled by the caller", related_request_id)
            raise
        finally:
            self._pending.pop(rid, None)
            if p.on_progress is not None or reset_timeout_on_progress:
                self._progress.pop(rid, None)
        if p.error is not None:
            raise p.error
        return p.result

    async def _cancel_remote(self, rid: RequestId, reason: str, related: RequestId | None) -> None:
        with anyio.move_on_after(_CANCEL_SEND_TIMEOUT):
            try:
                await self.notify(
                    CANCELLED_METHOD,
                    {"requestId": rid, "reason": reason},
                    related_request_id=related,
                )
            except ConnectionClosed:
                pass


__all__ = [
    "CANCELLED_METHOD",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "METHOD_NOT_FOUND",
    "PROGRESS_METHOD",
    "IncomingRequest",
    "InternalError",
    "JSONRPCEngine",
]
