"""What an HTTP app asks of the :class:`~mcpkit.Server` it hosts, as one declared protocol.

The app (and a shared registry such as Redis) needs more of a server than sessions: its
request kernel (2026-07-28 requests have no session), which tool arguments are mirrored
into headers, the scopes a request's target needs, and, when sessions are shared by many
workers, sessions as snapshots. These are the server's hosting interface, not its public
API: ``server.hosting()`` returns them as one object, and nothing else reaches into the
server for them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

from .._session._kernel import Kernel
from .._session._server import ServerSession
from .._stores._changes import RegistrationLog
from .._transports._base import Transport
from . import _shared
from ._mrtr import StateKeySource
from ._runtime import share_registrations
from ._session import state_of
from ._tasks import SharedTaskStore

if TYPE_CHECKING:
    from ._face import ServerLike


class ServerHosting:
    """The hosting interface of one :class:`~mcpkit.Server` (``server.hosting()``).

    Example::

        hosting = server.hosting()
        hosting.tool_header_params("route")   # (("Region", ("region",)),)
    """

    __slots__ = ("_server",)

    def __init__(self, server: ServerLike) -> None:
        self._server = server

    @property
    def kernel(self) -> Kernel:
        """The kernel serving the server's requests (its spec replaced on changes)."""
        return self._server.kernel

    def running(self) -> AbstractAsyncContextManager[Any]:
        """The server's lifespan, entered once for the app's whole life."""
        return self._server.running()

    def end_streams(self) -> None:
        """End what the server serves outside sessions, gracefully: every open
        ``subscriptions/listen`` stream is answered with its completion result (the app
        shutting down, a worker draining)."""
        self._server.listeners.close_all()

    def tool_header_params(self, tool: str) -> Sequence[tuple[str, tuple[str, ...]]]:
        """``(header name, property path)`` of each argument of ``tool`` marked
        ``x-mcp-header`` in its input schema (empty when none, or no such tool): the
        ``Mcp-Param-{Name}`` headers a stateless ``tools/call`` is checked against. A tool
        the server hides has none: its call is answered as an unknown tool's."""
        found = self._server.registry.tools.get(tool)
        # Most tools mark nothing: their answer is () whatever the visibility rules say,
        # so they are not asked (the call itself asks them again, for the caller).
        if found is None or not found.header_params:
            return ()
        if self._server.visibility.hides(None, "tool", tool, found.definition):
            return ()
        return found.header_params

    def required_scopes(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        session: ServerSession | None = None,
    ) -> Sequence[str]:
        """The OAuth scopes request ``method`` with ``params`` needs for its target (the
        tool, resource or prompt it names), beyond the server-wide ones of ``auth``; none
        for a target hidden from ``session`` (None: the server's rules alone): it is
        answered as an unknown one, so no 403 reveals it exists."""
        server = self._server
        needed = server.registry.scopes_for(method, params)
        if needed and server.visibility.hides_target(session, method, params):
            return ()
        return needed

    def session_snapshot(self, session: ServerSession) -> dict[str, Any]:
        """What another worker needs to serve ``session``: a JSON-able snapshot."""
        return _shared.snapshot(session)

    def restore_session(self, transport: Transport, snapshot: dict[str, Any]) -> ServerSession:
        """A session for ``transport`` in the state ``snapshot`` describes (its handshake
        happened on another worker)."""
        session = self._server.create_session(transport)
        _shared.restore(session, snapshot, self._server.instructions)
        return session

    def apply_snapshot(self, session: ServerSession, snapshot: dict[str, Any]) -> None:
        """Bring a live session to the state ``snapshot`` describes."""
        _shared.apply(session, snapshot)

    def share_with(
        self,
        shared: Any,
        task_store: SharedTaskStore | None = None,
        state_keys: StateKeySource | None = None,
        registrations: RegistrationLog | None = None,
    ) -> None:
        """Serve from shared state from now on: resource updates reach every worker's
        subscribers through ``shared`` (a shared session registry), the server's tasks
        move to ``task_store`` unless the server was given a store of its own, and its
        2026-07-28 ``requestState`` is sealed with ``state_keys`` (shared by every worker)
        unless it was given a key (``MCPKIT_STATE_KEY``, ``StatelessSettings.state_key``),
        and the tools, resources and prompts it adds or removes at run time are logged in
        ``registrations`` for every worker, which makes those of the others here.
        The one place a shared backend reaches the server, however it was configured
        (``http_app(redis=...)``, ``create_http_app(backend=...)``, ``mcpkit run --redis``).
        Calling it again with the same backend changes nothing."""
        server = self._server
        server._shared = shared
        if task_store is not None:
            server.tasks_manager.share(task_store)
        if state_keys is not None:
            server.stateless.share_keys(state_keys)
        if registrations is not None:
            share_registrations(server, registrations)

    def notify_listeners(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Queue ``method`` on every open ``subscriptions/listen`` stream of this process
        that opted in to it: how a change announced by another worker reaches them."""
        self._server.listeners.post(method, params)

    def post_list_changed(self, session: ServerSession, method: str) -> None:
        """Queue list-changed ``method`` (``notifications/tools/list_changed`` ...) on
        ``session`` when it is initialized and declared that list."""
        kind = method.split("/")[1]
        if session.initialized and kind in session.capabilities:
            state_of(session).post_list_changed(method)
