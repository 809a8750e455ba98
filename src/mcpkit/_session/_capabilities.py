"""Which capability each method needs, on each side.

A request for a method whose capability the receiver did not declare is answered -32601;
a request we would send for a capability the peer did not declare fails on our side
(:class:`~mcpkit.CapabilityError`) before anything reaches the wire.
"""

from __future__ import annotations

from typing import Any

from ..types._skillformat import TASKS_EXTENSION

# method -> path of keys in the *server's* capabilities that must be present.
SERVER_METHOD_CAPABILITY: dict[str, tuple[str, ...]] = {
    "tools/list": ("tools",),
    "tools/call": ("tools",),
    "resources/list": ("resources",),
    "resources/templates/list": ("resources",),
    "resources/read": ("resources",),
    "resources/subscribe": ("resources", "subscribe"),
    "resources/unsubscribe": ("resources", "subscribe"),
    "prompts/list": ("prompts",),
    "prompts/get": ("prompts",),
    "completion/complete": ("completions",),
    "logging/setLevel": ("logging",),
    "tasks/list": ("tasks", "list"),
    "tasks/cancel": ("tasks", "cancel"),
    "tasks/get": ("tasks",),
    "tasks/result": ("tasks",),
}

# The same under the stateless revision (2026-07-28): its core has no tasks, the tasks
# extension serves tasks/get, tasks/update and tasks/cancel (tasks/list and tasks/result
# keep needing a core `tasks` no such server declares).
STATELESS_SERVER_METHOD_CAPABILITY: dict[str, tuple[str, ...]] = {
    **SERVER_METHOD_CAPABILITY,
    **{m: ("extensions", TASKS_EXTENSION) for m in ("tasks/get", "tasks/update", "tasks/cancel")},
}

# method -> path of keys in the *client's* capabilities that must be present.
CLIENT_METHOD_CAPABILITY: dict[str, tuple[str, ...]] = {
    "sampling/createMessage": ("sampling",),
    "elicitation/create": ("elicitation",),
    "roots/list": ("roots",),
    "tasks/list": ("tasks", "list"),
    "tasks/cancel": ("tasks", "cancel"),
    "tasks/get": ("tasks",),
    "tasks/result": ("tasks",),
}


def has_capability(capabilities: dict[str, Any] | None, path: tuple[str, ...]) -> bool:
    """True when ``capabilities`` declares the (nested) capability at ``path``.

    A capability is declared by being present, even as ``{}``; ``false``/``null`` is absence.
    """
    node: Any = capabilities
    for key in path:
        if not isinstance(node, dict):
            return False
        node = node.get(key)
        if node is None or node is False:
            return False
    return True


def elicitation_modes(capabilities: dict[str, Any] | None) -> frozenset[str]:
    """The elicitation modes a client declared. An empty ``elicitation: {}`` means form only."""
    el = (capabilities or {}).get("elicitation")
    if not isinstance(el, dict):
        return frozenset()
    modes = {m for m in ("form", "url") if isinstance(el.get(m), dict)}
    return frozenset(modes or {"form"})
