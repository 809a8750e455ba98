"""Shared fixtures: the anyio backend, and bounded waits everywhere."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    # asyncio is what almost every user runs; tests that must also hold on trio
    # parametrize `anyio_backend` themselves.
    return "asyncio"
