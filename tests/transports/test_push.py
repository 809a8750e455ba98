"""Which transports push what they read to the engine (``PushTransport``), and the order.

Our HTTP client pushes each response stream's messages from the request's own task; a
wrapper that forwards attributes to it (a recorder, a logger) must not push, or its own
``receive`` would miss them. The order within one stream is tested end to end in
tests/http/test_sse_bodies.py, and a recorder wrapping the HTTP client in
tests/http/test_client.py (sampling on the request stream) sees every message.
"""

from __future__ import annotations

from typing import Any

from mcpkit._http._client import StreamableHTTPClientTransport
from mcpkit._transports._base import pushes
from mcpkit._transports._memory import MemoryTransport


class _Forwarding:
    """A wrapper passing unknown attributes to the transport it wraps."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_the_http_client_transport_pushes_and_nothing_else_does() -> None:
    assert pushes(StreamableHTTPClientTransport.__new__(StreamableHTTPClientTransport))
    assert not pushes(object())
    assert not pushes(MemoryTransport.__new__(MemoryTransport))


def test_a_wrapper_forwarding_attributes_does_not_push() -> None:
    inner = StreamableHTTPClientTransport.__new__(StreamableHTTPClientTransport)
    wrapper = _Forwarding(inner)
    assert hasattr(wrapper, "push_to")  # reachable through the wrapper ...
    assert not pushes(wrapper)  # ... but its own receive must see every message
