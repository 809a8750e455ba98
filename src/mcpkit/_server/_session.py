"""One client connection of a :class:`~mcpkit.Server`: its state, and the outbox.

The outbox carries what the server sends on its own initiative (list changes, log records
from Python's logging): it may be posted from synchronous code and from worker threads,
and it is delivered only after the client said ``initialized``.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread
import anyio.lowlevel
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .._exceptions import MCPError
from .._session._server import ServerSession
from .._transports._base import RequestId
from ._logging import LEVELS

if TYPE_CHECKING:
    from ._face import ContextLike, ServerLike
    from ._rules import Rule

logger = logging.getLogger("mcpkit.server")

#: Messages waiting in a session's outbox before new ones are dropped (with a warning).
OUTBOX_SIZE = 1024

_OutItem = tuple[str, "dict[str, Any] | None", "RequestId | None"]


class ClientState:
    """What a :class:`~mcpkit.Server` keeps per client connection, handed to its
    :class:`ServerSession` (as ``session.state``) rather than added by subclassing.

    The log level the client asked for, the resources it subscribed to, the owner of its
    tasks, and an outbox for notifications the server sends on its own.
    """

    def __init__(self, server: ServerLike) -> None:
        self.server = server
        #: The session this state belongs to (set when the session is made).
        self.session: ServerSession | None = None
        #: Minimum severity sent as ``notifications/message`` (set by ``logging/setLevel``).
        self.log_threshold = 0
        #: URIs this client subscribed to.
        self.subscriptions: set[str] = set()
        #: Who owns the tasks this session creates, unless the server's ``task_owner``
        #: names a principal: random, so no other session can guess it.
        self.task_owner = uuid.uuid4().hex
        #: This session's visibility rules (``ctx.enable``/``ctx.disable``), in order.
        self.visibility: tuple[Rule, ...] = ()
        self._pending_changes: set[str] = set()
        self._outbox: MemoryObjectSendStream[_OutItem] | None = None
        self._loop_thread: int | None = None
        self._token: Any = None
        self._tg: TaskGroup | None = None

    def spawn(self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        """Run ``fn(*args)`` in the background for as long as the session runs."""
        if self._tg is None:
            raise RuntimeError("the session is not running")
        self._tg.start_soon(fn, *args)

    @contextlib.asynccontextmanager
    async def serving(self, session: ServerSession) -> AsyncIterator[None]:
        """What the session runs inside: the server's lifespan and the outbox's sender.

        When it ends, the server forgets the session.
        """
        self._loop_thread = threading.get_ident()
        self._token = anyio.lowlevel.current_token()
        send, receive = anyio.create_memory_object_stream[_OutItem](OUTBOX_SIZE)
        self._outbox = send
        try:
            # Normally the transport entered the lifespan already (serve_stdio, serve, an
            # HTTP app's lifespan); this keeps it entered for transports that did not.
            async with self.server.running(), anyio.create_task_group() as tg:
                self._tg = tg
                tg.start_soon(self._drain, session, receive)
                try:
                    yield
                finally:
                    tg.cancel_scope.cancel()
        finally:
            self._tg = None
            self._outbox = None
            self.server._unregister(session)
            send.close()
            receive.close()

    async def _drain(
        self, session: ServerSession, receive: MemoryObjectReceiveStream[_OutItem]
    ) -> None:
        await session.wait_initialized()
        async for method, params, related in receive:
            self._pending_changes.discard(method)
            try:
                await session.notify(method, params, related_request_id=related)
            except (MCPError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                return
            except Exception:  # pragma: no cover - a bug, but never kill the session for it
                logger.exception("could not send %s", method)

    def post(
        self, method: str, params: dict[str, Any] | None = None, related: RequestId | None = None
    ) -> None:
        """Queue a notification; callable from sync code, the loop, or a worker thread."""
        item: _OutItem = (method, params, related)
        if self._loop_thread is None or threading.get_ident() == self._loop_thread:
            self._post_now(item)
            return
        try:
            anyio.from_thread.run_sync(self._post_now, item, token=self._token)
        except RuntimeError:
            logger.debug("dropped %s: the session's event loop is gone", method)

    def _post_now(self, item: _OutItem) -> None:
        outbox = self._outbox
        if outbox is None:
            return  # not running: nobody to tell
        try:
            outbox.send_nowait(item)
        except anyio.WouldBlock:
            logger.warning("outbox of a session is full; dropped %s", item[0])
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    def post_list_changed(self, method: str) -> None:
        """Queue a ``notifications/*/list_changed`` (several changes in a row send one)."""
        if method in self._pending_changes:
            return
        self._pending_changes.add(method)
        self.post(method, None)

    def post_log(self, ctx: ContextLike, level: str, data: Any, logger_name: str | None) -> None:
        """Queue a ``notifications/message`` for the request ``ctx`` serves, if the level passes."""
        params: dict[str, Any] = {"level": level, "data": data}
        if logger_name:
            params["logger"] = logger_name
        rc = ctx._request
        n = rc.negotiated if rc is not None else None
        if rc is not None and n is not None and n.stateless:
            # A stateless request sets its own level, and without one gets no log messages
            # (logging.mdx). Not through the outbox, which drains only once a client said
            # `initialized`: straight to the request's stream (best effort: a record sent
            # after the request ended is dropped).
            if n.log_level is None or LEVELS.get(level, 0) < LEVELS.get(n.log_level, 0):
                return
            self._call_soon(self._notify_request, rc, params)
            return
        if LEVELS.get(level, 0) < self.log_threshold:
            return
        self.post("notifications/message", params, ctx.request_id)

    def _call_soon(self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        """Run ``fn(*args)`` in the session's task group; callable from a worker thread."""
        tg = self._tg
        if tg is None:
            return
        if self._loop_thread is None or threading.get_ident() == self._loop_thread:
            tg.start_soon(fn, *args)
            return
        try:
            anyio.from_thread.run_sync(tg.start_soon, fn, *args, token=self._token)
        except RuntimeError:
            logger.debug("dropped a log record: the session's event loop is gone")

    async def _notify_request(self, rc: Any, params: dict[str, Any]) -> None:
        try:
            await rc.notify("notifications/message", params)
        except (MCPError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # the request or the connection ended meanwhile
        except Exception:  # pragma: no cover - a bug, but never kill the session for it
            logger.exception("could not send a log record")


def state_of(session: ServerSession) -> ClientState:
    """The :class:`ClientState` of a session made by :meth:`mcpkit.Server.create_session`."""
    state = session.state
    if not isinstance(state, ClientState):
        raise TypeError("this session was not made by an mcpkit.Server")
    return state
