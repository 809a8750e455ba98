"""Shared fixtures: the anyio backend, and bounded waits everywhere.

The suite runs once per event loop (``scripts/test``: asyncio, then trio). A test whose
outcome cannot depend on the loop is run in the first pass only: ``scripts/test`` sets
``MCPKIT_TEST_LOOP_DEPENDENT_ONLY=1`` for the later passes, and the collection hook below
deselects there (and counts) every test that

- is a plain ``def`` test using no ``anyio_backend`` (nothing of it runs on the suite's loop),
  or an async test whose ``anyio_backend`` is pinned by a parameter (it runs on that loop in
  every pass), and
- is not marked ``loop_dependent`` and is not found reading the suite's backend. A plain
  test that reads it itself (``BACKEND``, ``MCPKIT_TEST_BACKEND``: ``anyio.run(...,
  backend=BACKEND)``, a subprocess told the backend) must carry that marker: the check is
  static (``tests/_passes.py``: the test, its fixtures, the functions of tests/ they name
  and the strings they name), a test found without the marker runs in every pass anyway,
  and tests/test_loop_passes.py fails naming it. What the check cannot see (a program file
  of tests/ reading ``MCPKIT_TEST_BACKEND`` itself) needs the marker.

Long subprocess runs (the conformance suites) start in the background once collection is
done, so that they overlap the rest of the suite: ``tests/_early.py``. Under pytest-xdist
(``scripts/test`` runs 4 workers) the workers are the overlap and the tests keep their order:
the conformance runs first, or every ``slow`` test first, were both measured slower (7.8 and
8 min against 6.1: heavy tests at once on 2 cores slow each other down).
"""

from __future__ import annotations

import os
import types

import pytest

#: The event loop of every async test: ``MCPKIT_TEST_BACKEND=trio scripts/test`` runs the
#: whole suite on trio (CI runs it on both). Tests that must hold on a particular backend
#: parametrize ``anyio_backend`` themselves.
BACKEND = os.environ.get("MCPKIT_TEST_BACKEND", "asyncio")

#: Set by ``scripts/test`` on every pass after the first: run only what depends on the loop.
LOOP_DEPENDENT_ONLY = os.environ.get("MCPKIT_TEST_LOOP_DEPENDENT_ONLY") == "1"

# The suite starts node (the conformance harness, the official Inspector) a few hundred
# times: node's compile cache (node >= 22.1; older nodes ignore the variable) takes each
# start from 0.59 to 0.39 CPU seconds, measured. Node checks each entry against its source.
os.environ.setdefault(
    "NODE_COMPILE_CACHE",
    os.path.join(
        os.environ.get("MCPKIT_TEST_CACHE", os.path.expanduser("~/.cache/mcpkit-tests")),
        "node-compile-cache",
    ),
)


@pytest.fixture
def anyio_backend() -> str:
    return BACKEND


@pytest.fixture(autouse=True)
def _fresh_era_cache() -> None:
    """Each test starts with no HTTP server's era remembered: tests reuse one URL for
    servers of different eras (``mcpkit.Client.clear_era_cache``)."""
    from mcpkit import Client

    Client.clear_era_cache()


# ------------------------------------------------------------ loop-independent tests


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _deselect_loop_independent(config, items)


def _deselect_loop_independent(config: pytest.Config, items: list[pytest.Item]) -> None:
    from tests._passes import UNMARKED, reads_backend, same_in_every_pass

    seen: dict[types.CodeType, bool] = {}
    unmarked = []
    independent = []
    for item in items:
        if not same_in_every_pass(item):
            continue
        assert isinstance(item, pytest.Function)
        if item.get_closest_marker("loop_dependent") is not None:
            continue
        if reads_backend(item, seen):
            unmarked.append(item.nodeid)
        else:
            independent.append(item)
    config.stash[UNMARKED] = unmarked
    if not LOOP_DEPENDENT_ONLY or not independent:
        return
    drop = {id(item) for item in independent}
    items[:] = [item for item in items if id(item) not in drop]
    config.hook.pytest_deselected(items=independent)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(
            f"{BACKEND} pass: {len(independent)} loop-independent tests deselected "
            "(they ran in the first pass; see tests/conftest.py)"
        )


# ------------------------------------------------------------ long runs started early


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the long subprocess runs of the selected tests now, in the background: they
    overlap the rest of the suite (``tests/_early.py``). Under pytest-xdist the workers are
    the overlap: each test runs its job itself when it is reached (no worker knows which
    tests it will be handed, and two workers must not both start the same run)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    for item in session.items:
        start_early = getattr(getattr(item, "module", None), "start_early", None)
        if start_early is not None:
            start_early(item)


def pytest_sessionfinish(session: pytest.Session) -> None:
    from tests import _early

    _early.stop()
