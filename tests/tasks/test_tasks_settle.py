"""A task's end recorded while the task store is down (``TaskManager.settle``): retried,
recorded once the store answers, and given up (logged, never raised) past its window.
The end-to-end case, a real Redis stopped under a worker, is in
tests/scaleout/test_redis_faults.py; here the store is one that refuses on demand."""

from __future__ import annotations

import logging

import pytest

from mcpkit import Server
from mcpkit._exceptions import BackendUnavailable
from mcpkit._stores._tasks import MemoryTaskStore, TaskRecord

pytestmark = pytest.mark.anyio


class FlakyStore(MemoryTaskStore):
    """Refuses reads while ``down`` is above zero, one refusal fewer each time."""

    def __init__(self) -> None:
        super().__init__()
        self.down = 0

    async def get(self, task_id: str) -> TaskRecord | None:
        if self.down:
            self.down -= 1
            raise BackendUnavailable("Redis unavailable (read task): connection refused")
        return await super().get(task_id)


async def _working(store: FlakyStore) -> tuple[Server, str]:
    server = Server("settle", task_store=store)
    record = TaskRecord(
        task_id="t1", owner="", status="working", created_at=0.0, last_updated_at=0.0, ttl=None
    )
    await store.create(record)
    return server, record.task_id


async def test_an_end_is_recorded_once_the_store_answers(caplog: pytest.LogCaptureFixture) -> None:
    store = FlakyStore()
    server, tid = await _working(store)
    store.down = 2
    with caplog.at_level(logging.WARNING, "mcpkit.server"):
        await server.tasks_manager.settle(tid, "completed", "done", {"result": {}}, within=5)
    record = await store.get(tid)
    assert record is not None and record.status == "completed" and store.down == 0
    # Said once, not at every retry.
    assert sum("recording it again" in r.message for r in caplog.records) == 1


async def test_an_end_the_store_never_takes_is_logged_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = FlakyStore()
    server, tid = await _working(store)
    store.down = 10**6
    with caplog.at_level(logging.WARNING, "mcpkit.server"):
        await server.tasks_manager.settle(tid, "completed", "done", {"result": {}}, within=0.1)
    store.down = 0
    record = await store.get(tid)
    assert record is not None and record.status == "working"  # left as it was
    assert any("not recorded" in r.message for r in caplog.records)
