"""Tasks in Redis: any worker answers ``tasks/get``, ``tasks/result``, ``tasks/cancel``.

A task is one JSON value expiring with its TTL, plus an entry in its owner's index (a
sorted set by creation order). The record names the worker running it; a task found
``working`` whose worker stopped refreshing its liveness key is failed on the spot (the
worker was killed: its code is gone), atomically, by whoever reads it first. Updates are
compare-and-set in a script: a terminal status is never overwritten, so a cancellation on
one worker and a completion on another cannot both win.

Status changes are announced on the bus, so a worker waiting in ``tasks/result`` wakes at
once and the worker running a task cancelled elsewhere stops it.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import orjson

from .._stores._tasks import TaskRecord

if TYPE_CHECKING:
    from ._backend import BusMessage, RedisBackend

#: Status message of a task whose worker died while it ran.
WORKER_LOST = "The worker running the task stopped; its result is lost."

# Read a task; fail it when it is not terminal and its worker is gone. KEYS: task, then the
# liveness key prefix in ARGV[1]; ARGV[2]: the failure outcome JSON; ARGV[3]: now.
_GET = """
local raw = redis.call('GET', KEYS[1])
if not raw then return false end
local t = cjson.decode(raw)
if t.status == 'working' or t.status == 'input_required' then
  if redis.call('EXISTS', ARGV[1] .. t.worker) == 0 then
    t.status = 'failed'
    t.status_message = ARGV[4]
    t.outcome = cjson.decode(ARGV[2])
    t.last_updated_at = tonumber(ARGV[3])
    raw = cjson.encode(t)
    redis.call('SET', KEYS[1], raw, 'KEEPTTL')
  end
end
return raw
"""

# Save a task unless the stored one is terminal (a lost race); returns 1 when written.
_UPDATE = """
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local old = cjson.decode(raw)
if old.status == 'completed' or old.status == 'failed' or old.status == 'cancelled' then
  return 0
end
local new = cjson.decode(ARGV[1])
new.worker = old.worker
redis.call('SET', KEYS[1], cjson.encode(new), 'KEEPTTL')
return 1
"""

_FIELDS = tuple(f.name for f in dataclasses.fields(TaskRecord))


class RedisTaskStore:
    """The :class:`~mcpkit.TaskStore` of a :class:`~mcpkit.RedisBackend`.

    ``on_change(task_id, status)`` (set by the server's task manager) is called for every
    status change announced by any worker.
    """

    def __init__(self, backend: RedisBackend) -> None:
        self.backend = backend
        self.on_change: Callable[[str, str], Awaitable[None]] | None = None
        backend.on("task", self._announced)

    def _key(self, task_id: str) -> str:
        return self.backend.key("task", task_id)

    def _index(self, owner: str) -> str:
        return self.backend.key("tasks", owner)

    @staticmethod
    def _encode(record: TaskRecord, **extra: Any) -> bytes:
        return orjson.dumps({**dataclasses.asdict(record), **extra})

    @staticmethod
    def _decode(raw: bytes | str) -> TaskRecord:
        data = orjson.loads(raw)
        return TaskRecord(**{k: data[k] for k in _FIELDS if k in data})

    async def open(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def create(self, record: TaskRecord) -> TaskRecord:
        b = self.backend
        async with b.guard("create task"):
            seq = int(await b.client.incr(b.key("taskseq")))
            record = dataclasses.replace(record, seq=seq)
            ttl_ms = record.ttl if record.ttl is not None else 7 * 86400 * 1000
            pipe = b.client.pipeline(transaction=True)
            pipe.set(self._key(record.task_id), self._encode(record, worker=b.worker_id), px=ttl_ms)
            pipe.zadd(self._index(record.owner), {record.task_id: seq})
            pipe.pexpire(self._index(record.owner), ttl_ms, gt=True)
            pipe.pexpire(self._index(record.owner), ttl_ms, nx=True)
            await pipe.execute()
        return record

    async def get(self, task_id: str) -> TaskRecord | None:
        b = self.backend
        failed = orjson.dumps({"error": {"code": -32603, "message": WORKER_LOST}})
        async with b.guard("read task"):
            raw = await b.client.eval(
                _GET,
                1,
                self._key(task_id),
                b.key("worker", ""),
                failed,
                time.time(),
                WORKER_LOST,
            )
        return self._decode(raw) if raw else None

    async def update(self, record: TaskRecord) -> None:
        b = self.backend
        async with b.guard("update task"):
            written = await b.client.eval(
                _UPDATE, 1, self._key(record.task_id), self._encode(record)
            )
        if written:
            await b.broadcast({"t": "task", "id": record.task_id, "status": record.status})

    async def list_owned(self, owner: str, after_seq: int, limit: int) -> list[TaskRecord]:
        b = self.backend
        async with b.guard("list tasks"):
            ids = await b.client.zrangebyscore(
                self._index(owner), f"({after_seq}", "+inf", start=0, num=limit
            )
            out: list[TaskRecord] = []
            gone: list[Any] = []
            for tid in ids:
                record = await self.get(tid.decode() if isinstance(tid, bytes) else str(tid))
                if record is None:
                    gone.append(tid)  # expired: its index entry goes too
                elif record.owner == owner:
                    out.append(record)
            if gone:
                await b.client.zrem(self._index(owner), *gone)
        return out

    async def delete_expired(self, now: float) -> list[str]:
        # Redis expires the records itself (their TTL is the task's).
        return []

    async def _announced(self, message: BusMessage) -> None:
        tid, status = message.get("id"), message.get("status")
        if self.on_change is not None and isinstance(tid, str) and isinstance(status, str):
            await self.on_change(tid, status)


__all__ = ["WORKER_LOST", "RedisTaskStore"]
