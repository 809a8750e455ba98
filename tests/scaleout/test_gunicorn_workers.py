"""gunicorn, as docs/deploy.md runs the workers: ``gunicorn -w 4 -k
uvicorn_worker.UvicornWorker 'app:app'`` with ``app = server.http_app(redis=...)``, on a real
redis-server, with ``--preload`` (the app imported once, then the workers forked from that
process). Each worker process must get its own identity among the workers: with one id
for all (what ``--preload`` once gave), every worker took the others' run-time changes for
its own and skipped them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.scaleout._cluster import RedisServer, free_port, stop_process, wait_port

import mcpkit

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(120)]

APP = Path(__file__).with_name("_gunicorn_app.py")


def _gunicorn() -> str:
    exe = Path(sys.executable).parent / "gunicorn"
    found = str(exe) if exe.exists() else shutil.which("gunicorn")
    assert found is not None, "gunicorn is one of the test extra's packages"
    return found


@pytest.fixture(scope="module")
def workers(redis: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """docs/deploy.md's gunicorn line with ``--preload``, on a port of its own: the URL."""
    here = tmp_path_factory.mktemp("gunicorn")
    shutil.copy(APP, here / "app.py")
    port = free_port()
    argv = [_gunicorn(), "-w", "4", "-k", "uvicorn_worker.UvicornWorker", "app:app"]
    argv += ["--preload", "--bind", f"127.0.0.1:{port}", "--chdir", str(here)]
    env = {**os.environ, "MCPKIT_REDIS_URL": redis.url}
    log = here / "gunicorn.log"
    with open(log, "ab") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        wait_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_process(proc)
        assert proc.returncode == 0, log.read_text()[-3000:]


async def _structured(client: mcpkit.Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result
    assert isinstance(result.structured_content, dict)
    out = result.structured_content.get("result", result.structured_content)
    assert isinstance(out, dict)
    return out


async def _processes(url: str, want: int = 2) -> dict[int, str]:
    """Worker ids by process id, asking ``whoami`` over fresh connections (8 at once, so
    that more than one worker accepts them) until ``want`` processes answered."""
    seen: dict[int, str] = {}

    async def ask() -> None:
        async with mcpkit.Client(url) as client:
            got = await _structured(client, "whoami")
            seen[int(got["pid"])] = str(got["worker"])

    with anyio.fail_after(60):
        while len(seen) < want:
            async with anyio.create_task_group() as tg:
                for _ in range(8):
                    tg.start_soon(ask)
    return seen


async def test_each_preloaded_worker_has_an_id_of_its_own(workers: str) -> None:
    seen = await _processes(workers)
    assert len(set(seen.values())) == len(seen), seen  # one id per process, none shared


async def test_a_run_time_change_on_one_preloaded_worker_is_made_by_the_others(
    workers: str,
) -> None:
    # Made by whichever worker serves the call; then every worker that answers lists it.
    async with mcpkit.Client(workers) as client:
        maker = int((await _structured(client, "add_tool", name="grown_here"))["pid"])
    listed: dict[int, bool] = {}

    async def look() -> None:
        async with mcpkit.Client(workers) as client:
            who = int((await _structured(client, "whoami"))["pid"])
            listed[who] = "grown_here" in {t.name for t in await client.list_tools()}

    with anyio.fail_after(60):
        # Until a worker other than the maker lists it (the change reaches the others over
        # the bus, a moment after the call was answered), and the maker was asked too.
        while maker not in listed or not any(ok for pid, ok in listed.items() if pid != maker):
            async with anyio.create_task_group() as tg:
                for _ in range(8):
                    tg.start_soon(look)
    # The maker made it before answering: each of its answers since lists it.
    assert all(ok for pid, ok in listed.items() if pid == maker), listed
