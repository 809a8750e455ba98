"""Tasks in Redis: any worker answers ``tasks/get``, ``tasks/result``, ``tasks/cancel``.

A task is one value expiring with its TTL (its status, the worker running it, the record
as JSON), plus an entry in its owner's index (a sorted set by creation order). A task found
``working`` whose worker stopped refreshing its liveness key is failed by whoever reads it
first (the worker was killed: its code is gone), but only by a reader whose own view of
Redis was unbroken long enough to tell (``RedisBackend.judges_liveness``): a key that
expired while Redis was down or frozen is no evidence, and a task finishing meanwhile is
recorded ``completed`` once Redis answers again (the worker retries its end), never lost. Updates are compare-and-set in a script: a
terminal status is never overwritten, so a cancellation on one worker and a completion on
another cannot both win.

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
    from ._bus import Bus, BusMessage

#: Status message of a task whose worker died while it ran.
WORKER_LOST = "The worker running the task stopped; its result is lost."

# A task is stored as "<status> <worker> <record JSON>": the scripts read the status and the
# worker from the prefix and never decode the JSON (Redis's cjson turns empty arrays into
# objects, so a decoded and re-encoded record would not be the one written).

# Read a task; also say whether it is unfinished and its worker's liveness key missing.
# KEYS: the task; ARGV[1]: the liveness key prefix.
_GET = """
local raw = redis.call('GET', KEYS[1])
if not raw then return false end
local status, worker = string.match(raw, '^(%S+) (%S+) ')
if (status == 'working' or status == 'input_required')
    and redis.call('EXISTS', ARGV[1] .. worker) == 0 then
  return {raw, 1}
end
return {raw, 0}
"""

# Fail a task whose worker is gone: only if it is still what was read (ARGV[2]) and its
# worker's liveness key is still missing (it may have come back since the read). ARGV[1]:
# the liveness key prefix; ARGV[3]: the failed record's JSON. Returns 1 written, else 0.
_LOST = """
local raw = redis.call('GET', KEYS[1])
if raw ~= ARGV[2] then return 0 end
local status, worker = string.match(raw, '^(%S+) (%S+) ')
if redis.call('EXISTS', ARGV[1] .. worker) == 1 then return 0 end
redis.call('SET', KEYS[1], 'failed ' .. worker .. ' ' .. ARGV[3], 'KEEPTTL')
return 1
"""

# Save a task unless the stored one is terminal (a lost race); its worker is kept. ARGV[1]:
# the new status; ARGV[2]: the record JSON; ARGV[3], when given: the JSON read before the
# change, saved over only if still stored (compare-and-set: an edit made on two workers at
# once must not lose one). Returns 1 written, 0 terminal or gone, -1 changed meanwhile.
_UPDATE = """
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local status, worker = string.match(raw, '^(%S+) (%S+) ')
if status == 'completed' or status == 'failed' or status == 'cancelled' then
  return 0
end
if ARGV[3] and string.sub(raw, #status + #worker + 3) ~= ARGV[3] then return -1 end
redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. worker .. ' ' .. ARGV[2], 'KEEPTTL')
return 1
"""

_FIELDS = tuple(f.name for f in dataclasses.fields(TaskRecord))


def _json(record: TaskRecord) -> bytes:
    return orjson.dumps(dataclasses.asdict(record))


def _worker_of(raw: bytes) -> str:
    return raw.split(b" ", 2)[1].decode()


def _decode(raw: bytes | str) -> TaskRecord:
    data = orjson.loads((raw if isinstance(raw, bytes) else raw.encode()).split(b" ", 2)[2])
    return TaskRecord(**{k: data[k] for k in _FIELDS if k in data})


class RedisTaskStore:
    """The :class:`~mcpkit.TaskStore` of a :class:`~mcpkit.RedisBackend`.

    ``on_change(task_id, status)`` (set by the server's task manager) is called for every
    status change announced by any worker.
    """

    def __init__(self, backend: Bus) -> None:
        self.backend = backend
        self.on_change: Callable[[str, str], Awaitable[None]] | None = None
        backend.on("task", self._announced)

    def _key(self, task_id: str) -> str:
        return self.backend.key("task", task_id)

    def _index(self, owner: str) -> str:
        return self.backend.key("tasks", owner)

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
            value = b"%s %s %s" % (record.status.encode(), b.worker_id.encode(), _json(record))
            pipe.set(self._key(record.task_id), value, px=ttl_ms)
            pipe.zadd(self._index(record.owner), {record.task_id: seq})
            pipe.pexpire(self._index(record.owner), ttl_ms, gt=True)
            pipe.pexpire(self._index(record.owner), ttl_ms, nx=True)
            await pipe.execute()
        return record

    async def get(self, task_id: str) -> TaskRecord | None:
        b = self.backend
        async with b.guard("read task"):
            found = await b.client.eval(_GET, 1, self._key(task_id), b.key("worker", ""))
        if not found:
            return None
        raw = found[0] if isinstance(found[0], bytes) else str(found[0]).encode()
        record = _decode(raw)
        # Judged after the answer came: a read that waited on a frozen Redis finds this
        # worker's own view broken meanwhile, and judges nothing.
        if int(found[1]) and _worker_of(raw) != b.worker_id and b.judges_liveness():
            # Its worker was killed while it ran: its code is gone. Failed once, by whoever
            # reads it first (never over a newer state, nor once its worker is back).
            record.status = "failed"
            record.status_message = WORKER_LOST
            record.outcome = {"error": {"code": -32603, "message": WORKER_LOST}}
            record.last_updated_at = time.time()
            async with b.guard("update task"):
                args = (b.key("worker", ""), raw, _json(record))
                written = await b.client.eval(_LOST, 1, self._key(task_id), *args)
            if not written:
                return await self.get(task_id)
            await b.broadcast({"t": "task", "id": task_id, "status": record.status})
        return record

    async def update(self, record: TaskRecord) -> None:
        await self._write(record)

    async def _write(self, record: TaskRecord) -> bool:
        b = self.backend
        async with b.guard("update task"):
            written = await b.client.eval(
                _UPDATE, 1, self._key(record.task_id), record.status, _json(record)
            )
        if written:
            await b.broadcast({"t": "task", "id": record.task_id, "status": record.status})
        return bool(written)

    async def replace(self, previous: TaskRecord, record: TaskRecord) -> bool | None:
        """Save ``record`` if the stored task is still ``previous`` (as read): True saved,
        False changed meanwhile (read it again), None terminal or gone."""
        b = self.backend
        async with b.guard("update task"):
            written = int(
                await b.client.eval(
                    _UPDATE,
                    1,
                    self._key(record.task_id),
                    record.status,
                    _json(record),
                    _json(previous),
                )
            )
        if written == 1:
            await b.broadcast({"t": "task", "id": record.task_id, "status": record.status})
            return True
        return False if written == -1 else None

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
