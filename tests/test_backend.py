"""Contract of the one module that forks on the event loop (``mcpkit._backend``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from mcpkit._backend import asyncio_loop, start_detached

SRC = Path(__file__).resolve().parents[1] / "src" / "mcpkit"


async def _on(backend: str) -> tuple[object, object]:
    loop = asyncio_loop()
    running = asyncio.get_running_loop() if backend == "asyncio" else None
    return loop, running


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_asyncio_loop_is_the_running_loop_on_asyncio_and_none_elsewhere(backend: str) -> None:
    loop, running = anyio.run(_on, backend, backend=backend)
    assert loop is running
    assert (loop is None) == (backend == "trio")


def test_a_detached_task_outlives_its_starter_on_asyncio() -> None:
    async def main() -> list[str]:
        seen: list[str] = []
        done = anyio.Event()

        async def later() -> None:
            await anyio.lowlevel.checkpoint()
            seen.append("ran")
            done.set()

        async def starter() -> None:
            start_detached(later, why="unused")

        await starter()  # returns at once; the task goes on
        with anyio.fail_after(5):
            await done.wait()
        return seen

    assert anyio.run(main, backend="asyncio") == ["ran"]


def test_on_trio_a_detached_task_is_refused_with_the_reason() -> None:
    async def main() -> None:
        async def never() -> None:  # pragma: no cover
            pass

        start_detached(never, why="enter the app's lifespan first")

    with pytest.raises(RuntimeError, match="enter the app's lifespan first"):
        anyio.run(main, backend="trio")


def test_no_other_module_asks_which_loop_runs_it() -> None:
    """The fork lives here: elsewhere, no sniffio and no asyncio.get_running_loop()."""
    askers = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "_backend.py" or (path.parent.name == "_app" and path.name == "_serve.py"):
            continue  # _serve.py is uvicorn's own protocol class: uvicorn is asyncio only
        text = path.read_text()
        if "sniffio" in text or "get_running_loop(" in text:
            askers.append(str(path.relative_to(SRC)))
    assert askers == []
