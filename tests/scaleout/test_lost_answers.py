"""No silent replays (issue 41): a worker killed with SIGKILL while it runs tool calls under
2026-07-28, whose response streams then break before their answers.

Three real workers on a real redis-server behind the strict round-robin proxy, and the real
:class:`mcpkit.Client` over HTTP. Slow calls are spread over the workers (the proxy's
turns); once each has started its body and reported progress, worker 0 is killed, then the
calls are released. A call of a tool that declares nothing about its effects is never sent
again: its body started once, and its caller is told it may or may not have taken effect
(as the 2025-11-25 path says, tests/scaleout/test_failover.py). A call of a tool annotated
read-only or idempotent is sent again, to a live worker, and succeeds.
"""

from __future__ import annotations

import os
import signal
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.scaleout._cluster import Cluster, RedisServer, cluster

from mcpkit import Client, TransportError

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(60)]

#: Only HTTP to the workers and files: trio too.
BOTH_BACKENDS = True

EFFECTS = Path(__file__).with_name("_effects.py")
REV = "2026-07-28"
#: Calls in flight when the worker dies: two per worker (the proxy's strict turns).
CALLS = 6
#: Bound on each test's waits.
TIMEOUT = 20.0


@pytest.fixture
def doomed(redis: RedisServer, tmp_path: Path) -> Iterator[Cluster]:
    with cluster(redis.url, tmp_path, target=EFFECTS) as c:
        yield c


def _starts(where: Path) -> list[tuple[str, int]]:
    """Each start of a tool body so far: (call, pid of the worker that ran it)."""
    path = where / "starts"
    if not path.exists():
        return []
    return [(c, int(p)) for c, p in (line.split() for line in path.read_text().splitlines())]


async def _kill_mid_calls(doomed: Cluster, where: Path, tools: list[str]) -> dict[str, Any]:
    """Call ``tools[i % len(tools)]`` ``CALLS`` times at once through the proxy; once every
    body started and reported progress, SIGKILL worker 0, then release the calls. Each
    call's outcome: its text, or the exception it raised."""
    outcomes: dict[str, Any] = {}
    progressed = {f"c{i}": anyio.Event() for i in range(CALLS)}
    async with Client(doomed.url, protocol_version=REV) as client:
        assert client.protocol_version == REV

        async def one(i: int) -> None:
            call = f"c{i}"

            async def on_progress(progress: float, total: float | None, msg: str | None) -> None:
                progressed[call].set()

            args = {"where": str(where), "call": call}
            try:
                result = await client.call_tool(
                    tools[i % len(tools)], args, progress_handler=on_progress
                )
                outcomes[call] = result.content[0].text  # type: ignore[union-attr]
            except TransportError as e:
                outcomes[call] = e

        async with anyio.create_task_group() as tg:
            for i in range(CALLS):
                tg.start_soon(one, i)
            for event in progressed.values():  # every body started; every stream open
                await event.wait()
            assert len(_starts(where)) == CALLS
            victim = doomed.workers[0]
            assert victim.pid in {pid for _, pid in _starts(where)}  # it runs some calls
            os.kill(victim.pid, signal.SIGKILL)
            await anyio.to_thread.run_sync(victim.wait)
            (where / "release").touch()
    return outcomes


async def test_a_call_of_a_tool_without_hints_is_not_run_twice(
    doomed: Cluster, tmp_path: Path
) -> None:
    where = tmp_path / "calls"
    where.mkdir()
    with anyio.fail_after(TIMEOUT):
        outcomes = await _kill_mid_calls(doomed, where, ["record"])
    starts = _starts(where)
    # No body started twice: every call ran once, on the worker the proxy gave it.
    assert sorted(Counter(c for c, _ in starts).values()) == [1] * CALLS, starts
    killed = {c for c, pid in starts if pid == doomed.workers[0].pid}
    assert killed and len(killed) < CALLS
    for call, outcome in outcomes.items():
        if call in killed:
            # Told, not hidden: the call may or may not have taken effect, was not sent
            # again, and how to let the client send such a call again.
            assert isinstance(outcome, TransportError), outcome
            said = str(outcome)
            assert "may or may not have taken effect" in said and "not sent again" in said
            assert "tools/call" in said and "idempotent=True" in said
        else:
            assert outcome == f"done {call}"


async def test_a_call_of_a_read_only_or_idempotent_tool_is_sent_again(
    doomed: Cluster, tmp_path: Path
) -> None:
    where = tmp_path / "calls"
    where.mkdir()
    with anyio.fail_after(TIMEOUT):
        outcomes = await _kill_mid_calls(doomed, where, ["peek", "put"])
    assert outcomes == {f"c{i}": f"done c{i}" for i in range(CALLS)}  # every one answered
    dead = doomed.workers[0].pid
    starts = _starts(where)
    killed = {c for c, pid in starts if pid == dead}
    assert killed and len(killed) < CALLS
    runs = Counter(c for c, _ in starts)
    for i in range(CALLS):
        call = f"c{i}"
        # A call the dead worker was running started again on a live worker, once.
        assert runs[call] == (2 if call in killed else 1), starts
        assert [pid for c, pid in starts if c == call][-1] != dead
