"""Code before a question runs once per call through three workers sharing Redis.

examples/checkout.py (a charge recorded, progress reported, then a tip asked for) served by
three real ``mcpkit run --redis`` workers behind the strict round-robin proxy, called by the
real :class:`mcpkit.Client`: under 2026-07-28 the retry carrying the answer reaches another
worker than the one holding the call, which serves it over the bus. The ledger (a file all
three workers append to) must show one charge per call, and the progress of the second
round must reach the client.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.scaleout._cluster import ROOT, Cluster, RedisServer, cluster

import mcpkit
from mcpkit import Client

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(120)]

#: Only HTTP to the workers: trio too.
BOTH_BACKENDS = True

CHECKOUT = ROOT / "examples" / "checkout.py"


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    return tmp_path / "ledger.txt"


@pytest.fixture
def shop(
    redis: RedisServer, tmp_path: Path, ledger: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Cluster]:
    monkeypatch.setenv("CHECKOUT_LEDGER", str(ledger))  # the workers inherit it
    with cluster(redis.url, tmp_path, target=CHECKOUT) as c:
        yield c


def _lines(ledger: Path) -> list[str]:
    return ledger.read_text().splitlines() if ledger.exists() else []


def _tip(params: Any, ctx: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"percent": 15}}


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_a_charge_before_a_question_is_recorded_once_through_three_workers(
    shop: Cluster, ledger: Path, version: str
) -> None:
    heard: list[float] = []

    async def progress(params: Any) -> None:
        heard.append(float(params.progress))

    orders = ["A1", "B2", "C3"]
    with anyio.fail_after(60):
        async with Client(
            shop.url,
            protocol_version=version,
            elicitation_handler=_tip,
            progress_handler=progress,
        ) as client:
            texts = [
                (await client.call_tool("pay", {"order": o, "amount": 9.5})).content[0].text
                for o in orders
            ]
    assert texts == [f"charged {o}: 9.50 + 15% tip" for o in orders]
    lines = _lines(ledger)
    assert [line.split(" pid=")[0] for line in lines] == [f"charge {o} 9.50" for o in orders]
    assert heard == [1.0, 2.0] * len(orders)
    # The strict round-robin spread the calls' first rounds over more than one worker.
    assert len({line.split(" pid=")[1] for line in lines}) > 1


async def test_a_call_whose_holder_was_killed_runs_again_from_the_top_logged(
    shop: Cluster, ledger: Path
) -> None:
    # The worker holding the call is killed -9 while the client answers its question: the
    # retry reaches another worker, no one holds the call any more, and the function runs
    # again from the top with the answer (the documented fallback), logged there.
    killed: list[int] = []

    async def tip_after_killing_the_holder(params: Any, ctx: Any) -> dict[str, Any]:
        holder = int(_lines(ledger)[-1].split(" pid=")[1])
        worker = next(w for w in shop.workers if w.pid == holder)
        worker.kill()
        await anyio.to_thread.run_sync(worker.wait, 10)
        killed.append(holder)
        return {"action": "accept", "content": {"percent": 5}}

    with anyio.fail_after(60):
        async with Client(
            shop.url,
            protocol_version="2026-07-28",
            elicitation_handler=tip_after_killing_the_holder,
        ) as client:
            result = await client.call_tool("pay", {"order": "K9", "amount": 1})
    assert result.content[0].text == "charged K9: 1.00 + 5% tip"
    lines = _lines(ledger)
    assert [line.split(" pid=")[0] for line in lines] == ["charge K9 1.00"] * 2
    assert int(lines[1].split(" pid=")[1]) != killed[0]
    logs = "".join(log.read_text(errors="replace") for log in shop.logs)
    assert "the call held for these answers is gone" in logs


@pytest.fixture
def slow_shop(
    redis: RedisServer, tmp_path: Path, ledger: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Cluster]:
    monkeypatch.setenv("CHECKOUT_LEDGER", str(ledger))
    with cluster(redis.url, tmp_path, target=Path(__file__).with_name("_slowpay.py")) as c:
        yield c


async def test_a_holder_killed_while_serving_the_retry_is_an_error_not_a_second_run(
    slow_shop: Cluster, ledger: Path
) -> None:
    # The retry reaches another worker, which routes it to the holder; the holder dies
    # while the call works after its answer. The client hears that the call may or may
    # not have taken effect, and nothing runs the function again.
    async def kill_the_holder_once_answered() -> None:
        while True:
            answered = [line for line in _lines(ledger) if line.startswith("answered")]
            if answered:
                break
            await anyio.sleep(0.05)
        holder = int(answered[0].split(" pid=")[1])
        next(w for w in slow_shop.workers if w.pid == holder).kill()

    with anyio.fail_after(60):
        async with (
            Client(slow_shop.url, protocol_version="2026-07-28", elicitation_handler=_tip) as c,
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(kill_the_holder_once_answered)
            with pytest.raises(mcpkit.MCPError) as caught:
                await c.call_tool("pay", {"order": "Z1"})
    assert "may or may not have taken effect" in str(caught.value)
    starts = [line for line in _lines(ledger) if line.startswith("start")]
    assert len(starts) == 1  # never run again
