"""Shared fixtures: the anyio backend, and bounded waits everywhere."""

from __future__ import annotations

import os

import pytest

#: The event loop of every async test: ``MCPKIT_TEST_BACKEND=trio scripts/test`` runs the
#: whole suite on trio (CI runs it on both). Tests that must hold on a particular backend
#: parametrize ``anyio_backend`` themselves.
BACKEND = os.environ.get("MCPKIT_TEST_BACKEND", "asyncio")


@pytest.fixture
def anyio_backend() -> str:
    return BACKEND


@pytest.fixture(autouse=True)
def _fresh_era_cache() -> None:
    """Each test starts with no HTTP server's era remembered: tests reuse one URL for
    servers of different eras (``mcpkit.Client.clear_era_cache``)."""
    from mcpkit import Client

    Client.clear_era_cache()
