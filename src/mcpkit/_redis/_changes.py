"""The registration log in Redis: run-time changes made on every worker, in one order.

A change one worker's server makes at run time (a tool added by a tool call, a prompt
removed: see ``mcpkit._stores._changes``) is logged here by one script, atomically: it
takes the next number of the deployment's sequence (``rc:seq``), is kept under its key
(``rc:log``, a hash; ``rc:order``, the keys by number), and is published on the bus, so
every worker receives the changes in the order of their numbers. Each worker makes the
others' changes in that order, then tells its own clients (the change's list-changed
notifications), so no client is told before its worker lists the new set. The worker that
made a change tells its clients once the change is published: what it sends a session
through the worker holding the session's GET stream arrives there after the change.

The log keeps one change per key (adding tool ``x``, then removing it, keeps the removal),
at most :data:`MAX_CHANGES` (the oldest dropped first, with a warning): a worker starting
later makes them all before it serves (``RedisBackend.check``). A worker that missed a
message (a gap in the numbers, its bus reconnected) reads what it missed from the log.

Two workers changing one key at the same moment end as the log has it: each change names
its key, a worker makes another's change only when it is newer than the last change of
that key made here, and makes its own again when an older one came in while its own was
being logged.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import orjson
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .._exceptions import BackendUnavailable
from .._stores._changes import Change, ChangeApplier

if TYPE_CHECKING:
    from ._bus import Bus, BusMessage
    from ._notify import SharedNotifications

logger = logging.getLogger("mcpkit.redis")

#: The bus message of a logged change (``c``: the change, with its number ``n``).
CHANGE = "rc"
#: Changes the log keeps (one per key): beyond, the oldest are dropped.
MAX_CHANGES = 1000
#: Seconds between two looks at the bus: resubscribed, it may have missed a change.
WATCH_EVERY = 0.5

# KEYS: sequence, log (hash), order (zset), bus channel. ARGV: key, change (a JSON object
# without its number), the most changes kept. Returns the number and how many were dropped.
_LOG = """
local n = redis.call('INCR', KEYS[1])
local entry = '{"n":' .. n .. ',' .. string.sub(ARGV[2], 2)
redis.call('HSET', KEYS[2], ARGV[1], entry)
redis.call('ZADD', KEYS[3], n, ARGV[1])
local over = redis.call('ZCARD', KEYS[3]) - tonumber(ARGV[3])
if over > 0 then
  local gone = redis.call('ZPOPMIN', KEYS[3], over)
  for i = 1, #gone, 2 do redis.call('HDEL', KEYS[2], gone[i]) end
else
  over = 0
end
redis.call('PUBLISH', KEYS[4], '{"t":"rc","c":' .. entry .. '}')
return {n, over}
"""

# KEYS: order (zset), log (hash). ARGV: the last number made here. The changes after it.
_READ = """
local keys = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf')
if #keys == 0 then return {} end
return redis.call('HMGET', KEYS[2], unpack(keys))
"""


def _keys(change: Change) -> set[str]:
    """What ``change`` decides: its key and those its change function touched."""
    found = {str(change.get("key"))}
    touched = change.get("keys")
    if isinstance(touched, list):
        found.update(str(k) for k in touched)
    return found


class RedisRegistrationLog:
    """The :class:`~mcpkit._stores._changes.RegistrationLog` of a :class:`RedisBackend`
    (module docs); one per backend (``backend.registration_log()``).

    ``notifications`` (set by the session registry) tells this worker's clients; ``limit``:
    the most changes kept in Redis.
    """

    def __init__(self, backend: Bus, limit: int = MAX_CHANGES) -> None:
        self.backend = backend
        self.limit = limit
        self.notifications: SharedNotifications | None = None
        #: The number of the last change made here (every one before it made too).
        self.applied = 0
        self._apply: ChangeApplier | None = None
        self._lock = anyio.Lock()
        self._last: dict[str, int] = {}  # key -> number of the last change of it made here
        self._pending: dict[str, int] = {}  # key -> own changes of it being logged
        self._overtaken: dict[str, int] = {}  # key -> another's change made while pending
        self._send: MemoryObjectSendStream[Change] | None = None
        self._loop_thread: int | None = None
        self._token: Any = None
        self._epoch = 0
        backend.on(CHANGE, self._on_change)

    def _k(self, part: str) -> str:
        return self.backend.key("rc", part)

    # ------------------------------------------------------------------ the protocol

    @property
    def shared(self) -> bool:
        """Whether this worker serves (:meth:`serve` runs): changes from now on are logged."""
        return self._send is not None

    def follow(self, apply: ChangeApplier) -> None:
        """Make the other workers' changes here with ``apply``."""
        self._apply = apply

    def record(self, change: Change, announce: Sequence[str]) -> None:
        """Log ``change`` (made here) for the others, after every change recorded here
        before it, then tell this worker's clients. Callable from a worker thread."""
        told = self.notifications.sessions_here() if self.notifications is not None else []
        entry = {**change, "from": self.backend.worker_id, "lc": list(announce), "told": told}
        self._on_loop(self._enqueue, entry)

    # ------------------------------------------------------------------ logging ours

    def _on_loop(self, fn: Callable[[Change], None], entry: Change) -> None:
        if threading.get_ident() == self._loop_thread:
            fn(entry)
            return
        try:
            anyio.from_thread.run_sync(fn, entry, token=self._token)
        except RuntimeError:
            logger.warning("run-time change %s not logged: the worker stopped", entry.get("key"))

    def _enqueue(self, entry: Change) -> None:
        send = self._send
        if send is None:
            logger.warning("run-time change %s not logged: the worker stopped", entry.get("key"))
            return
        for key in _keys(entry):
            self._pending[key] = self._pending.get(key, 0) + 1
        send.send_nowait(entry)

    async def _write(self, receive: MemoryObjectReceiveStream[Change]) -> None:
        async with receive:
            async for entry in receive:  # one at a time: numbered in the order made here
                await self._log(entry)

    async def _log(self, entry: Change) -> None:
        keys = _keys(entry)
        b = self.backend
        number: int | None = None
        try:
            async with b.guard("log a run-time change"):
                number, dropped = await b.client.eval(
                    _LOG,
                    4,
                    self._k("seq"),
                    self._k("log"),
                    self._k("order"),
                    b.key("all"),
                    str(entry["key"]),
                    orjson.dumps(entry),
                    self.limit,
                )
            if dropped:
                logger.warning(
                    "the registration log holds %d changes: the %d oldest were dropped "
                    "(workers starting from now on do not make them)",
                    self.limit,
                    dropped,
                )
        except Exception as e:  # Redis down: the change stays on this worker
            logger.warning(
                "run-time change %s made on this worker only: not logged (%s)", entry["key"], e
            )
        finally:
            for key in keys:
                self._pending[key] -= 1
                if not self._pending[key]:
                    del self._pending[key]
            # Told once it is published, not before: a session's message goes to the worker
            # holding its GET stream, which must hear of the change first (the bus keeps
            # the order), so that its client, told, lists the new set there too.
            if self.notifications is not None:
                for method in entry["lc"]:
                    self.notifications.tell_here(method, entry["told"])
        if number is None:
            return
        number = int(number)
        redo = False
        for key in keys:
            self._last[key] = max(self._last.get(key, 0), number)
            overtaken = self._overtaken.pop(key, 0) if key not in self._pending else 0
            redo = redo or 0 < overtaken < number
        if redo and self._apply is not None:
            # An older change of the same key came in while ours was being logged and was
            # made over ours: ours is the later one, as on every other worker.
            await self._apply(entry)

    # ------------------------------------------------------------------ making theirs

    async def _on_change(self, message: BusMessage) -> None:
        entry = message.get("c")
        if not isinstance(entry, dict) or not isinstance(entry.get("n"), int):
            return
        async with self._lock:
            number = entry["n"]
            if number <= self.applied:
                return
            if number > self.applied + 1:  # missed one (bus down meanwhile): read the log
                await self._catch_up()
                return
            self.applied = number
            await self._make(entry)

    async def _make(self, entry: Change) -> None:
        """Make another worker's ``entry`` here unless a later change of its key was, then
        tell this worker's clients what it changed."""
        if entry.get("from") == self.backend.worker_id:
            return  # made here already
        number, key = int(entry["n"]), str(entry.get("key"))
        if number <= self._last.get(key, 0):
            return  # a later change of the same key was made here
        for k in _keys(entry):
            self._last[k] = max(self._last.get(k, 0), number)
            if k in self._pending:
                self._overtaken[k] = max(self._overtaken.get(k, 0), number)
        if self._apply is not None:
            await self._apply(entry)
        if self.notifications is not None:
            told = entry.get("told")
            for method in entry.get("lc") or ():
                self.notifications.tell_others(str(method), told if isinstance(told, list) else ())

    async def catch_up(self) -> None:
        """Make every change logged after :attr:`applied` (all of them at first), in order."""
        async with self._lock:
            await self._catch_up()

    async def _catch_up(self) -> None:
        b = self.backend
        async with b.guard("read the run-time changes"):
            raw = await b.client.eval(_READ, 2, self._k("order"), self._k("log"), self.applied)
        entries = sorted((orjson.loads(r) for r in raw if r), key=lambda e: int(e["n"]))
        for entry in entries:
            self.applied = max(self.applied, int(entry["n"]))
            await self._make(entry)

    async def replay(self) -> None:
        """Before serving: make the changes logged so far (a worker starting after them
        serves what the others serve). Redis not answering is logged: the changes are made
        once the bus is up (:meth:`serve`)."""
        if self._apply is None:
            return
        try:
            await self.catch_up()
        except BackendUnavailable as e:
            logger.warning("run-time changes of the other workers not made yet: %s", e)

    async def serve(self) -> None:
        """Log this worker's changes (in order) while it serves, and read what the bus may
        have missed whenever it subscribed again; until cancelled."""
        send, receive = anyio.create_memory_object_stream[Change](math.inf)
        self._loop_thread = threading.get_ident()
        self._token = anyio.lowlevel.current_token()
        try:
            async with anyio.create_task_group() as tg, send:
                self._send = send
                tg.start_soon(self._write, receive)
                while True:
                    epoch = self.backend.bus_epoch
                    if epoch != self._epoch and self.backend.bus_up and self._apply is not None:
                        try:
                            await self.catch_up()
                            self._epoch = epoch
                        except BackendUnavailable as e:
                            logger.warning("could not read the run-time changes: %s", e)
                    await anyio.sleep(WATCH_EVERY)
        finally:
            self._send = None
            self._loop_thread = self._token = None
