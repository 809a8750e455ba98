"""Where a server's run-time registration changes go, so that every worker makes them.

A server registers its tools, resources and prompts when its code runs: every worker runs
the same code, so every worker serves the same things. What changes later (a tool a tool
call adds, a prompt removed) happens in one worker. A :class:`RegistrationLog` carries such
a change to the other workers, and to those that start later, as a JSON-able dict:

``{"op": "add", "kind": "tool", "key": "tool:NAME", "fn": "module:qualname", "opts": {...}}``
    a function found again in every worker (module-level, same code);
``{"op": "remove", "kind": "tool", "key": "tool:NAME", "name": "NAME"}``
    a removal by name;
``{"op": "call", "key": "call:NAME:ARGS", "name": "NAME", "args": [...], "kwargs": {...}}``
    a named change function (``@server.runtime_change``) run with the same arguments.

``key`` names what a change decides: of two changes with one key, the later logged wins
(so a log keeps one change per key), and ``keys`` lists what else a change function
touched. The log keeps the order in which changes were logged and applies them in it.

The in-process default (:class:`LocalRegistrationLog`) shares nothing: one process has no
one to tell. ``mcpkit._redis`` implements the log over Redis.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

#: One change, JSON-able (module docs).
Change = dict[str, Any]
#: ``apply(change)``: make a change logged by another worker here, telling no client.
ChangeApplier = Callable[[Change], Awaitable[None]]


class RegistrationLog(Protocol):
    """What a server asks of the log sharing its run-time changes (module docs)."""

    @property
    def shared(self) -> bool:
        """Whether a change recorded now reaches other workers (a shared backend attached
        and serving). Registrations made before (the server's code, its lifespan) are
        every worker's own and are not recorded."""
        ...

    def follow(self, apply: ChangeApplier) -> None:
        """Make the changes of the other workers here with ``apply``, in the log's order:
        those logged before this worker started first, then each as it comes."""
        ...

    def record(self, change: Change, announce: Sequence[str]) -> None:
        """Log ``change``, made here already, for every other worker. ``announce``: the
        list-changed notifications it causes (``notifications/tools/list_changed``), told
        to this worker's clients at once and to every other worker's once it made the
        change. Callable from a worker thread (a sync tool may register another)."""
        ...


class LocalRegistrationLog:
    """The log of a server sharing nothing: records nothing, follows nothing."""

    @property
    def shared(self) -> bool:
        """Never: no other worker."""
        return False

    def follow(self, apply: ChangeApplier) -> None:
        """Nothing to follow."""

    def record(self, change: Change, announce: Sequence[str]) -> None:
        """Nothing to record (the server tells its own clients)."""
