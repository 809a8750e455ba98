"""The later passes of scripts/test run only the tests that depend on the event loop
(tests/conftest.py): a plain test that reads the suite's backend must say so."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import anyio
import pytest
from tests._passes import UNMARKED, code_reads_backend
from tests.conftest import BACKEND

ROOT = Path(__file__).resolve().parents[1]


def test_every_plain_test_reading_the_backend_is_marked_loop_dependent(
    request: pytest.FixtureRequest,
) -> None:
    unmarked = request.config.stash.get(UNMARKED, [])
    assert unmarked == [], (
        "these plain tests read the suite's backend (tests/_passes.py found it): mark them "
        "@pytest.mark.loop_dependent so that every pass of scripts/test runs them "
        "knowingly:\n  " + "\n  ".join(unmarked)
    )


PROGRAM = "import os; print(os.environ['MCPKIT_TEST_BACKEND'])"


def _runs_on_the_backend() -> None:
    anyio.run(anyio.sleep, 0, backend=BACKEND)


def _through_a_helper() -> None:
    _runs_on_the_backend()


def _tells_a_program() -> None:
    subprocess.run([sys.executable, "-c", PROGRAM], check=True)


def _in_a_nested_function() -> None:
    def inner() -> str:
        return os.environ["MCPKIT_TEST_BACKEND"]

    inner()


def _plain() -> None:
    anyio.run(anyio.sleep, 0, backend="asyncio")


@pytest.mark.parametrize(
    ("func", "reads"),
    [
        (_runs_on_the_backend, True),
        (_through_a_helper, True),
        (_tells_a_program, True),
        (_in_a_nested_function, True),
        (_plain, False),
    ],
)
def test_the_static_check_follows_helpers_strings_and_nested_functions(
    func: types.FunctionType, reads: bool
) -> None:
    assert code_reads_backend(func.__code__, func.__globals__, {}) is reads


@pytest.mark.loop_dependent  # it names the backend's variable (for a child): cheap enough
def test_a_later_pass_collects_only_what_can_depend_on_the_loop() -> None:
    """A real collection, as scripts/test's trio pass does it, of two modules."""
    env = {**os.environ, "MCPKIT_TEST_BACKEND": "trio", "MCPKIT_TEST_LOOP_DEPENDENT_ONLY": "1"}
    files = ["tests/hostile/test_fuzz.py", "tests/engine/test_engine.py"]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", *files],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    kept = {line.split("[")[0] for line in proc.stdout.splitlines() if "::" in line}
    # the fuzz tests run their scenarios on BACKEND: kept; the SSE parser's is plain: left out
    assert "tests/hostile/test_fuzz.py::test_server_answers_every_request_exactly_once" in kept
    assert (
        "tests/hostile/test_fuzz.py::test_sse_parsing_is_independent_of_how_bytes_are_split"
        not in kept
    )
    # the engine's tests pin their loops (both, in every pass): the first pass ran them
    assert not [k for k in kept if k.startswith("tests/engine/")]
    assert "trio pass: " in proc.stdout and "loop-independent tests deselected" in proc.stdout
