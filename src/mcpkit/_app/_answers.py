"""How a 2026-07-28 request served in its POST's task is answered with SSE
(streamable-http.mdx: the server picks per request; JSON answers are the caller's).

One way, :func:`answer_sse`: the request is served in the POST's own task. What it says
before :data:`WATCH_AFTER` seconds waits; answered by then (most are), it is one SSE body
with what it said first. Still running then, a task takes the response stream over: it
sends what was said, streams the rest as it comes, and watches for the client closing the
stream, which cancels the request. A listen stream is taken over at once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import orjson
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .._backend import beside
from .._exceptions import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNAVAILABLE,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from .._http._asgi import (
    JSON,
    SSE_HEADERS,
    Answer,
    Receive,
    Send,
    cancel_on_disconnect,
    respond,
)
from .._http._sse import encode_event
from .._http._transport import CONNECTION_BUFFER
from .._incoming import IncomingRequest, failure_response, result_response
from .._session._base import RequestContext
from .._session._kernel import Kernel

logger = logging.getLogger("mcpkit.http")

#: Errors a server of the stateless era answers with 400 (the client corrects the request
#: or its version instead of falling back to the handshake era), and 404 for an unknown
#: method.
_STATUS_BY_CODE = {
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}


def status_of(message: Any) -> int:
    """The HTTP status of an answer of the stateless era: 200, or what its error calls for
    (503 when the shared state could not serve it: the client may retry)."""
    error = message.get("error") if isinstance(message, dict) else None
    if not isinstance(error, dict):
        return 200
    if error.get("message") == UNAVAILABLE and error.get("code") == INTERNAL_ERROR:
        return 503
    return _STATUS_BY_CODE.get(error.get("code"), 200)  # type: ignore[arg-type]


def _error_body(response: dict[str, Any]) -> Answer:
    """An error answer as one JSON body, with its status (and Retry-After with 503)."""
    status = status_of(response)
    retry = [(b"retry-after", b"1")] if status == 503 else None
    return Answer(status, orjson.dumps(response), content_type=JSON, headers=retry)


#: The head of every JSON answer of the era (a list never changed: Answer copies it).
_JSON_HEAD = [(b"content-type", JSON)]


#: What the SSE answer's queue carries: an encoded event, or the final response message.
_Item = tuple[bytes, "dict[str, Any] | None"]


#: How long a request runs before its response stream is taken over (and its client's
#: disconnect watched for): most are answered well before, in one body, with no task.
WATCH_AFTER = 0.05


async def _stream_out(queue: MemoryObjectReceiveStream[_Item], send: Send) -> bool:
    """Send what ``queue`` carries; True once the final response went out."""
    chunk, final = await queue.receive()
    if final is not None:
        # Answered before it said anything: one body.
        if status_of(final) != 200:
            await _error_body(final).write(send)
        else:
            await respond(send, 200, encode_event(orjson.dumps(final)), headers=SSE_HEADERS)
        return True
    await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
    while final is None:
        await send({"type": "http.response.body", "body": chunk, "more_body": True})
        chunk, final = await queue.receive()
    await send(
        {
            "type": "http.response.body",
            "body": encode_event(orjson.dumps(final)),
            "more_body": False,
        }
    )
    return True


class Sink:
    """Where a request's notifications go: encoded and handed to ``deliver`` (its response's
    queue, or the list of what goes before its answer) at once, from the event loop or any
    worker thread; what ``deliver`` cannot take (``WouldBlock``: a stalled client) is
    dropped (a handler never waits on a slow client)."""

    __slots__ = ("_deliver", "_req", "_thread", "_token")

    def __init__(self, req: IncomingRequest, deliver: Callable[[bytes], None]) -> None:
        self._req = req
        self._deliver = deliver
        self._thread = threading.get_ident()
        self._token = anyio.lowlevel.current_token()

    def __call__(self, method: str, params: dict[str, Any] | None) -> None:
        if threading.get_ident() == self._thread:
            self._put(method, params)
            return
        try:
            anyio.from_thread.run_sync(self._put, method, params, token=self._token)
        except RuntimeError:
            logger.debug("dropped %s: the request's event loop is gone", method)

    def _put(self, method: str, params: dict[str, Any] | None) -> None:
        if self._req.done:
            return  # after the answer: nothing more belongs to this request
        note = {"jsonrpc": "2.0", "method": method, "params": params}
        try:
            self._deliver(encode_event(orjson.dumps(note)))
        except anyio.WouldBlock:
            logger.warning("SSE answer of request %r stalled; dropped %s", self._req.id, method)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass


async def answer_sse(
    kernel: Kernel,
    rc: RequestContext,
    receive: Receive,
    send: Send,
    *,
    stream_after: float = WATCH_AFTER,
) -> None:
    """Serve ``rc`` in this task and answer it with SSE (see the module's docstring):
    one body if it is answered within ``stream_after`` seconds, else a stream taken over
    then (``stream_after=0``: at once, a listen stream).

    Why not a task group per request (a task for the request, one for the client's
    disconnect, a queue between them), as before: it cost ~120 µs per request in process,
    three times the rest of the request (measured, docs/performance-notes.md).
    """
    req = rc.request
    live = _Live(receive, send)
    rc.sink = Sink(req, live.deliver)
    try:
        with anyio.CancelScope() as gone:
            live.gone = gone
            async with beside(live.stream, after=stream_after):
                try:  # the kernel's coroutine awaited here: no layer of its own
                    response = result_response(req, await kernel.serve(rc))
                except Exception as e:
                    response = failure_response(req, e, "server")
                req.done = True
                if live.queue is not None and live.sent is not None:
                    # The stream is taken over: the answer goes out on it, last.
                    live.queue.send_nowait((b"", response))
                    await live.sent.wait()
                    return
                live.answered = True  # one body: a stream task starting late stays out
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        return  # the stream ended before the answer (its client is gone)
    finally:
        req.done = True
        if live.queue is not None:
            live.queue.close()
    if gone.cancelled_caught:
        req.cancelled = True  # the client closed the stream: that cancelled it
        return
    await _one_body(live.early, response).write(send)


class _Live:
    """The state of :func:`answer_sse`'s response stream."""

    __slots__ = ("answered", "early", "gone", "queue", "receive", "send", "sent")

    def __init__(self, receive: Receive, send: Send) -> None:
        self.receive = receive
        self.send = send
        #: What the request said before the stream was taken over.
        self.early: list[bytes] = []
        #: Where it goes once the stream is: None until then.
        self.queue: MemoryObjectSendStream[_Item] | None = None
        self.gone: anyio.CancelScope | None = None
        #: Set once the stream ended (made when it is taken over).
        self.sent: anyio.Event | None = None
        #: True once the answer is to go out as one body (the stream is not taken over).
        self.answered = False

    def deliver(self, chunk: bytes) -> None:
        if self.queue is not None:
            self.queue.send_nowait((chunk, None))
        elif len(self.early) >= CONNECTION_BUFFER:
            raise anyio.WouldBlock
        else:
            self.early.append(chunk)

    async def stream(self) -> None:
        """The response stream, taken over ``stream_after`` seconds into the request."""
        if self.answered:
            return  # started as the request ended (trio starts a cancelled task's first step)
        sent = self.sent = anyio.Event()
        queue, out = anyio.create_memory_object_stream[_Item](CONNECTION_BUFFER)
        for chunk in self.early:
            queue.send_nowait((chunk, None))
        self.early.clear()
        self.queue = queue  # from now on, what the request says is streamed
        gone = self.gone
        assert gone is not None
        try:
            async with anyio.create_task_group() as tg, out:
                tg.start_soon(cancel_on_disconnect, self.receive, gone)
                await _stream_out(out, self.send)
                tg.cancel_scope.cancel()
        except Exception as e:  # the server could not send: the request cannot be answered
            logger.debug("SSE answer stream ended: %r", e)
            gone.cancel()
        finally:
            sent.set()


async def answer_now(kernel: Kernel, rc: RequestContext, *, json_response: bool) -> Answer:
    """Serve ``rc``, which says nothing before its answer, and return that answer as one
    body: JSON with ``json_response``, else one SSE event (an error status answers JSON
    either way), as :func:`answer_sse` would for a request answered at once. Waits on
    nothing but what the request itself waits on (no task watching for the client leaving:
    how a request the kernel knows ends at once is answered)."""
    req = rc.request
    try:  # the kernel's coroutine awaited here: no layer of its own
        response = result_response(req, await kernel.serve(rc))
    except Exception as e:
        response = failure_response(req, e, "server")
    req.done = True
    if not json_response:
        return _one_body([], response)
    if "result" not in response:
        return _error_body(response)
    return Answer(200, orjson.dumps(response), headers=_JSON_HEAD)


def _one_body(early: list[bytes], response: dict[str, Any]) -> Answer:
    if status_of(response) != 200:
        return _error_body(response)
    body = encode_event(orjson.dumps(response))
    return Answer(200, b"".join([*early, body]) if early else body, headers=SSE_HEADERS)
