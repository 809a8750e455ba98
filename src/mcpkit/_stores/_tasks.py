"""Where a server keeps its tasks: a small interface, in memory (default) or in SQLite.

A store holds :class:`TaskRecord` objects and knows nothing of running them; the task
manager (``_tasks.py``) drives the state machine and keeps the in-process wake-ups.
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
import time
from typing import TYPE_CHECKING, Any, Protocol

import anyio.to_thread

if TYPE_CHECKING:
    import sqlite3

#: The statuses a task never leaves.
TERMINAL = frozenset({"completed", "failed", "cancelled"})

#: Status message of a task that was running when its server stopped.
INTERRUPTED_MESSAGE = "The server stopped while the task was running; its result is lost."


@dataclasses.dataclass
class TaskRecord:
    """One task as stored.

    ``outcome`` is set once the task is terminal: ``{"result": {...}}`` or
    ``{"error": {"code": ..., "message": ...}}`` (exactly what ``tasks/result`` answers).
    Times are seconds since the epoch; ``ttl`` and ``poll_interval`` are milliseconds.
    """

    task_id: str
    owner: str
    status: str
    created_at: float
    last_updated_at: float
    ttl: int | None
    poll_interval: int | None = None
    status_message: str | None = None
    method: str = "tools/call"
    outcome: dict[str, Any] | None = None
    seq: int = 0
    #: What a task of the tasks extension asks its client, and the answers so far:
    #: ``{"requests": {key: {"method", "params"}}, "responses": {key: answer}}``.
    input: dict[str, Any] | None = None

    @property
    def terminal(self) -> bool:
        """True once the task is completed, failed or cancelled."""
        return self.status in TERMINAL

    def expired(self, now: float) -> bool:
        """True once the task outlived its ``ttl``."""
        return self.ttl is not None and now >= self.created_at + self.ttl / 1000.0


class TaskStore(Protocol):
    """What a task store provides; implement it to keep tasks elsewhere (Redis, Postgres).

    Methods are async; ``list_owned`` answers the tasks of one owner in creation order, from
    after ``after_seq``, at most ``limit`` of them.
    """

    async def open(self) -> None:
        """Called once before use: recover what a previous run left."""

    async def create(self, record: TaskRecord) -> TaskRecord:
        """Add a new task; returns it with ``seq`` (its creation order) set."""

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task, or None."""

    async def update(self, record: TaskRecord) -> None:
        """Save a changed task."""

    async def list_owned(self, owner: str, after_seq: int, limit: int) -> list[TaskRecord]:
        """Tasks of ``owner`` created after ``after_seq``, oldest first, at most ``limit``."""

    async def delete_expired(self, now: float) -> list[str]:
        """Delete tasks whose ttl elapsed; returns their ids."""

    async def close(self) -> None:
        """Release resources."""


class MemoryTaskStore:
    """Tasks in a dict: fast, gone when the process ends (the default)."""

    def __init__(self) -> None:
        self._tasks: dict[str, TaskRecord] = {}
        self._seq = 0

    async def open(self) -> None:
        return None

    async def create(self, record: TaskRecord) -> TaskRecord:
        self._seq += 1
        record = dataclasses.replace(record, seq=self._seq)
        self._tasks[record.task_id] = record
        return dataclasses.replace(record)

    async def get(self, task_id: str) -> TaskRecord | None:
        r = self._tasks.get(task_id)
        return dataclasses.replace(r) if r is not None else None

    async def update(self, record: TaskRecord) -> None:
        if record.task_id in self._tasks:
            self._tasks[record.task_id] = dataclasses.replace(record)

    async def list_owned(self, owner: str, after_seq: int, limit: int) -> list[TaskRecord]:
        out: list[TaskRecord] = []
        for r in self._tasks.values():  # insertion order is creation order
            if r.seq > after_seq and r.owner == owner:
                out.append(dataclasses.replace(r))
                if len(out) >= limit:
                    break
        return out

    async def delete_expired(self, now: float) -> list[str]:
        gone = [tid for tid, r in self._tasks.items() if r.expired(now)]
        for tid in gone:
            del self._tasks[tid]
        return gone

    async def close(self) -> None:
        return None


_SCHEMA = """
CREATE TABLE IF NOT EXISTS mcp_tasks (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id TEXT NOT NULL UNIQUE,
    owner TEXT NOT NULL,
    status TEXT NOT NULL,
    status_message TEXT,
    method TEXT NOT NULL,
    created_at REAL NOT NULL,
    last_updated_at REAL NOT NULL,
    ttl INTEGER,
    poll_interval INTEGER,
    expires_at REAL,
    outcome TEXT,
    input TEXT
);
CREATE INDEX IF NOT EXISTS mcp_tasks_owner ON mcp_tasks (owner, seq);
"""

_COLUMNS = (
    "seq, task_id, owner, status, status_message, method, created_at, last_updated_at, "
    "ttl, poll_interval, outcome, input"
)


class SQLiteTaskStore:
    """Tasks in an SQLite file: finished tasks survive a restart of the server.

    Opening the store marks tasks left ``working``/``input_required`` by a previous run as
    ``failed`` (their code is gone), so ``tasks/result`` answers them with an error instead
    of waiting forever. Blocking calls run in a worker thread.

    Example::

        server = Server("jobs", task_store=SQLiteTaskStore("tasks.db"))
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    async def _run(self, fn: Any, *args: Any) -> Any:
        def locked() -> Any:
            with self._lock:
                conn = self._conn
                if conn is None:
                    raise RuntimeError("the task store is not open")
                with conn:  # one transaction per operation
                    return fn(conn, *args)

        return await anyio.to_thread.run_sync(locked)

    async def open(self) -> None:
        if self._conn is not None:
            return

        def connect() -> sqlite3.Connection:
            import sqlite3  # here: a program without this store does not import it

            conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            # In WAL mode NORMAL survives a crash of the process (not of the machine) and
            # spares an fsync per status change.
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.executescript(_SCHEMA)
            columns = {row[1] for row in conn.execute("PRAGMA table_info(mcp_tasks)")}
            if "input" not in columns:  # a file written by mcpkit before the tasks extension
                conn.execute("ALTER TABLE mcp_tasks ADD COLUMN input TEXT")
            conn.isolation_level = "DEFERRED"  # `with conn` wraps each operation in one
            return conn

        self._conn = await anyio.to_thread.run_sync(connect)
        outcome = json.dumps({"error": {"code": -32603, "message": INTERRUPTED_MESSAGE}})
        await self._run(
            lambda c: c.execute(
                "UPDATE mcp_tasks SET status='failed', status_message=?, outcome=?, "
                "last_updated_at=? WHERE status IN ('working', 'input_required')",
                (INTERRUPTED_MESSAGE, outcome, time.time()),
            )
        )

    @staticmethod
    def _row(row: Any) -> TaskRecord:
        seq, tid, owner, status, msg, method, created, updated, ttl, poll, outcome, inp = row
        return TaskRecord(
            task_id=tid,
            owner=owner,
            status=status,
            status_message=msg,
            method=method,
            created_at=created,
            last_updated_at=updated,
            ttl=ttl,
            poll_interval=poll,
            outcome=json.loads(outcome) if outcome else None,
            seq=seq,
            input=json.loads(inp) if inp else None,
        )

    @staticmethod
    def _expires(r: TaskRecord) -> float | None:
        return None if r.ttl is None else r.created_at + r.ttl / 1000.0

    async def create(self, record: TaskRecord) -> TaskRecord:
        def go(c: sqlite3.Connection) -> int:
            cur = c.execute(
                "INSERT INTO mcp_tasks (task_id, owner, status, status_message, method, "
                "created_at, last_updated_at, ttl, poll_interval, expires_at, outcome, input) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    record.task_id,
                    record.owner,
                    record.status,
                    record.status_message,
                    record.method,
                    record.created_at,
                    record.last_updated_at,
                    record.ttl,
                    record.poll_interval,
                    self._expires(record),
                    json.dumps(record.outcome) if record.outcome is not None else None,
                    json.dumps(record.input) if record.input is not None else None,
                ),
            )
            return int(cur.lastrowid or 0)

        seq = await self._run(go)
        return dataclasses.replace(record, seq=seq)

    async def get(self, task_id: str) -> TaskRecord | None:
        row = await self._run(
            lambda c: c.execute(
                f"SELECT {_COLUMNS} FROM mcp_tasks WHERE task_id=?", (task_id,)
            ).fetchone()
        )
        return self._row(row) if row is not None else None

    async def update(self, record: TaskRecord) -> None:
        await self._run(
            lambda c: c.execute(
                "UPDATE mcp_tasks SET status=?, status_message=?, last_updated_at=?, outcome=?, "
                "input=? WHERE task_id=?",
                (
                    record.status,
                    record.status_message,
                    record.last_updated_at,
                    json.dumps(record.outcome) if record.outcome is not None else None,
                    json.dumps(record.input) if record.input is not None else None,
                    record.task_id,
                ),
            )
        )

    async def list_owned(self, owner: str, after_seq: int, limit: int) -> list[TaskRecord]:
        rows = await self._run(
            lambda c: c.execute(
                f"SELECT {_COLUMNS} FROM mcp_tasks WHERE owner=? AND seq>? ORDER BY seq LIMIT ?",
                (owner, after_seq, limit),
            ).fetchall()
        )
        return [self._row(r) for r in rows]

    async def delete_expired(self, now: float) -> list[str]:
        def go(c: sqlite3.Connection) -> list[str]:
            ids = [
                r[0]
                for r in c.execute(
                    "SELECT task_id FROM mcp_tasks WHERE expires_at IS NOT NULL AND expires_at<=?",
                    (now,),
                )
            ]
            if ids:
                c.execute(
                    "DELETE FROM mcp_tasks WHERE expires_at IS NOT NULL AND expires_at<=?", (now,)
                )
            return ids

        result: list[str] = await self._run(go)
        return result

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with self._lock:
                conn.close()
