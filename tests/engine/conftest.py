"""Fixtures of the engine's tests."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit._transports import MemoryTransport, memory_pair


@pytest.fixture
def make_pair() -> Any:
    """memory_pair(), with every end closed after the test (unclosed streams warn)."""
    made: list[MemoryTransport] = []

    def make() -> tuple[MemoryTransport, MemoryTransport]:
        a, b = memory_pair()
        made.extend((a, b))
        return a, b

    yield make
    for t in made:
        t.close()
