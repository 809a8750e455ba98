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
    return ledger.read_text().splitlines()


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
