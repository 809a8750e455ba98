"""Connecting a :class:`~mcpkit.Client`: the transport opened, the session started, the
handshake (or server discovery) run, and what lives as long as the connection (the task
receiver, the listen stream) given its task group — all undone in order on close."""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import TYPE_CHECKING

import anyio

from .._session._client import ClientSession
from ..types._revisions import LATEST_HANDSHAKE_VERSION
from ._modern import handshake
from ._targets import open_target
from ._trace import session_ended

if TYPE_CHECKING:
    from ._client import Client


async def connect_client(client: Client) -> None:
    """Connect ``client`` (not connected yet); on failure nothing is left open."""
    stack = AsyncExitStack()
    await stack.__aenter__()
    try:
        session = await _open(client, stack)
    except BaseException:
        # Not shielded: the stack holds task groups, which must exit in the scope they
        # were entered in (their own cleanups shield what must finish). Not given the
        # error either, or a task group would wrap it in an ExceptionGroup.
        await stack.__aexit__(None, None, None)
        raise
    client._stack = stack
    client._session = session
    client._lists.schema_fetch = anyio.Lock()
    if session.stateless and client._wants_list_changes():
        # Whoever handles list changes gets them, as a 2025 server pushes them unasked.
        try:
            await client._listener.refresh(client.init_timeout)
        except BaseException:
            await client.close()
            raise
    if client.name is None:
        client.name = client.initialize_result.server_info.name


async def _open(client: Client, stack: AsyncExitStack) -> ClientSession:
    if client._task_receiver is not None:
        # Tasks the server gave us run here: they end with the connection.
        tg = await stack.enter_async_context(anyio.create_task_group())
        stack.callback(tg.cancel_scope.cancel)
        client._task_receiver.tg = tg
    transport = await open_target(stack, client._target)
    inbound = client._inbound
    session = ClientSession(
        transport,
        client_info=client.client_info,
        capabilities=client.capabilities(),
        handlers=inbound.request_handlers(),
        # A listen stream's notifications correlated by their subscription id.
        notification_handlers=client._listener.route(inbound.notification_handlers()),
    )
    client._transport = transport
    session.result_types = frozenset(
        t for ext in client.extensions.values() for t in ext.result_types
    )
    await stack.enter_async_context(session)
    version = client._protocol_version
    if version is None and client._task_receiver is not None:
        # Serving tasks is a 2025-11-25 feature: 2026-07-28 has none in its core.
        version = LATEST_HANDSHAKE_VERSION
    client._init = await handshake(session, version, client.init_timeout, client._target)
    stack.callback(session_ended(session))  # mcp.client.session.duration
    if session.stateless:
        if inbound.logging_handler is not None:
            # Whoever handles log messages wants them; a stateless server sends none
            # unless each request names a level (as 2025 servers sent all).
            session.log_level = "debug"
        # The listen stream (change notifications) runs here, with the connection.
        tg = await stack.enter_async_context(anyio.create_task_group())
        stack.callback(tg.cancel_scope.cancel)
        client._listener.tg = tg
    return session
