"""A server's sessions in shared state: what a session is as a snapshot, and the Redis setting.

A session served by many workers (``Server.http_app(redis=...)``) is restored on each from
a JSON snapshot of what the handshake settled and what the client set since: revision,
capabilities, client info, whether it said ``initialized``, its log level, its
subscriptions, the owner of its tasks and its visibility rules.
"""

from __future__ import annotations

from typing import Any

from .. import _env
from .._session._base import Negotiated
from .._session._server import ServerSession
from ._rules import rules_from_json, rules_json
from ._session import state_of


def snapshot(session: ServerSession) -> dict[str, Any]:
    """What another worker needs to serve ``session`` (JSON-able)."""
    n = session.negotiated
    state = state_of(session)
    snap: dict[str, Any] = {
        "v": n.protocol_version if n is not None else None,
        "caps": n.peer_capabilities if n is not None else {},
        "info": n.peer_info if n is not None else {},
        "init": session.initialized,
        "lvl": state.log_threshold,
        "subs": sorted(state.subscriptions),
        "tasks": state.task_owner,
    }
    if state.visibility:
        snap["vis"] = rules_json(state.visibility)
    return snap


def apply(session: ServerSession, snap: dict[str, Any]) -> None:
    """Bring ``session`` (a live replica) to the state ``snap`` describes."""
    state = state_of(session)
    state.log_threshold = int(snap.get("lvl") or 0)
    state.subscriptions = set(snap.get("subs") or ())
    state.visibility = rules_from_json(snap.get("vis"))
    if isinstance(snap.get("tasks"), str):
        state.task_owner = snap["tasks"]
    if snap.get("init"):
        session.mark_initialized()


def restore(session: ServerSession, snap: dict[str, Any], instructions: str | None) -> None:
    """Put a new ``session`` in the state ``snap`` describes (its handshake done elsewhere)."""
    version = snap.get("v")
    if isinstance(version, str):
        session.negotiated = Negotiated(
            version, dict(snap.get("caps") or {}), dict(snap.get("info") or {}), instructions
        )
    apply(session, snap)


def shared_options(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` of an HTTP app with ``redis=`` (or ``$MCPKIT_REDIS_URL``) turned into a
    Redis backend (whose registry moves the server's tasks there when the app starts it,
    as for any backend: ``ServerHosting.share_with``). The deprecated ``stateless=`` becomes
    ``sessionless=`` here, warning at the caller of ``Server.run`` or ``Server.http_app``."""
    from .._app._options import sessionless_alias

    options = sessionless_alias(options, stacklevel=5)
    url = options.pop("redis", None) or _env.REDIS_URL.value()
    if url is None or options.get("sessionless") or options.get("backend") is not None:
        return options
    from .._redis import RedisBackend

    return {**options, "backend": RedisBackend(url)}
