"""What the inspector page sees and drives: one :class:`~mcpkit.Client` to the server, the
live events (logs, progress, notifications, the server's questions) and the message history.

The page polls :meth:`Inspector.events_after` (a bounded long poll) and calls the other
methods through the inspector's HTTP API. Questions the server asks the client (sampling,
elicitation, roots come from the page's list) wait for the person in the page to answer.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextvars import ContextVar
from typing import Any

import anyio

from .._client._cli import login_hint
from .._client._client import Client
from .._exceptions import MCPError, ProtocolError

logger = logging.getLogger("mcpkit.inspect")

#: Events kept for pages that poll late (older ones are dropped).
MAX_EVENTS = 2000
#: Tasks started from the page that the Tasks panel follows (the oldest are forgotten).
MAX_TASKS = 200
#: How long one poll of the events waits for something new.
POLL_SECONDS = 20.0
#: How long a question of the server waits for the person before it is declined.
ANSWER_SECONDS = 600.0


#: The page's id of the call being sent, in the task sending it (see ``_tap_ids``).
_CALLING: ContextVar[str | None] = ContextVar("mcpkit_inspect_calling", default=None)


def _wire(value: Any) -> Any:
    to_wire = getattr(value, "to_wire", None)
    return to_wire() if to_wire is not None else value


class _Question:
    def __init__(self, qid: int, kind: str, params: dict[str, Any]) -> None:
        self.id = qid
        self.kind = kind
        self.params = params
        self.answer: dict[str, Any] | None = None
        self.done = anyio.Event()


class Inspector:
    """The server under inspection, as the page sees it.

    Args:
        make_client: builds a :class:`~mcpkit.Client` from the callbacks the inspector
            passes (keywords of ``Client``); called again on :meth:`reconnect`.
    """

    def __init__(self, make_client: Callable[..., Client], describe: str) -> None:
        self._make_client = make_client
        self.describe = describe
        self.client: Client | None = None
        self.error: str | None = None
        self._events: deque[dict[str, Any]] = deque(maxlen=MAX_EVENTS)
        self._seq = itertools.count(1)
        self._last = 0
        self._new = anyio.Event()
        self._questions: dict[int, _Question] = {}
        self._qids = itertools.count(1)
        self._calls: dict[str, anyio.CancelScope] = {}
        #: The JSON-RPC id of each page call's ``tools/call`` (the last sent for it).
        self._rpc_ids: dict[str, Any] = {}
        #: Tasks started from the page, newest last (the tasks extension has no tasks/list).
        self._tasks: dict[str, Any] = {}
        self.roots: list[dict[str, Any]] = []
        self._reconnect = anyio.Event()
        self._closing = False
        #: The server's URL when it is one: a 401 then says to run ``mcpkit auth login``.
        self.login_url: str | None = None
        #: Writes one line on the terminal: what to run when the first connection is refused
        #: for want of a login (the page says it too, but the user may not look there).
        self.tell: Callable[[str], None] | None = None

    # ------------------------------------------------------------------ events

    def post(self, kind: str, **data: Any) -> None:
        """Record an event for the page (and wake its poll)."""
        seq = next(self._seq)
        self._events.append({"seq": seq, "kind": kind, "time": time.time(), **data})
        self._last = seq
        self._new.set()
        self._new = anyio.Event()

    async def events_after(self, seq: int, wait: float = POLL_SECONDS) -> dict[str, Any]:
        """The events after ``seq``; waits (bounded) when there are none yet."""
        if self._last <= seq and not self._closing:
            with anyio.move_on_after(wait):
                await self._new.wait()
        events = [e for e in self._events if e["seq"] > seq]
        return {"events": events, "last": self._last}

    def end_polls(self) -> None:
        """The page is no longer served: pending and later polls answer at once."""
        self._closing = True
        self._new.set()

    # ------------------------------------------------------------------ the connection

    @contextlib.asynccontextmanager
    async def connected(self) -> AsyncIterator[None]:
        """Keep a client connected while the page is served; :meth:`reconnect` restarts it."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._keep_connected)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()

    async def _keep_connected(self) -> None:
        first = True
        while True:
            self._reconnect = anyio.Event()
            try:
                client = self._make_client(
                    sampling_handler=self._asker("sampling"),
                    elicitation_handler=self._asker("elicitation"),
                    url_elicitation_handler=self._asker("elicitation-url"),
                    roots=lambda: list(self.roots),
                    logging_handler=self._on_log,
                    list_changed_handler=self._on_list_changed,
                    resource_updated_handler=self._on_updated,
                    middleware=[self._record],
                )
                async with client:
                    _tap_ids(client, self._rpc_ids)
                    self.client, self.error = client, None
                    self.post("status", state="connected", info=self.info())
                    await self._reconnect.wait()
            except Exception as e:  # shown in the page; a reconnect tries again
                hint = login_hint(e, self.login_url)
                self.error = f"{type(e).__name__}: {e}{hint}"
                self.post("status", state="error", error=self.error)
                if first and hint and self.tell is not None:
                    self.tell(hint.strip().removeprefix("(").removesuffix(")"))
                await self._reconnect.wait()
            finally:
                first = False
                self.client = None
                for q in self._questions.values():
                    q.done.set()  # nobody can answer them any more

    def reconnect(self) -> None:
        """Close the connection and open a new one (a restarted server, a new file)."""
        self.post("status", state="reconnecting")
        self._reconnect.set()

    def need(self) -> Client:
        if self.client is None:
            raise ProtocolError(-32603, self.error or "not connected to the server (yet)")
        return self.client

    def info(self) -> dict[str, Any]:
        """Who the server is and what it declared."""
        c = self.client
        if c is None:
            return {"connected": False, "target": self.describe, "error": self.error}
        return {
            "connected": True,
            "target": self.describe,
            "protocolVersion": c.protocol_version,
            "serverInfo": _wire(c.server_info),
            "capabilities": _wire(c.server_capabilities),
            "instructions": c.instructions,
        }

    # ------------------------------------------------------------------ what the server sends

    async def _record(self, request: Any, call_next: Any) -> Any:
        """Client middleware: each request with its answer and how long it took."""
        started = time.perf_counter()
        entry: dict[str, Any] = {"method": request.method, "params": request.params}
        try:
            result = await call_next(request)
        except MCPError as e:
            entry["error"] = {"code": getattr(e, "code", None), "message": str(e)}
            raise
        else:
            entry["result"] = _wire(result)
            return result
        finally:
            entry["ms"] = round((time.perf_counter() - started) * 1000, 2)
            self.post("message", direction="out", **entry)

    async def _on_log(self, params: Any) -> None:
        self.post("log", params=_wire(params))

    async def _on_list_changed(self, kind: str) -> None:
        self.post("notification", method=f"notifications/{kind}/list_changed")

    async def _on_updated(self, params: Any) -> None:
        self.post("notification", method="notifications/resources/updated", params=_wire(params))

    def _asker(self, kind: str) -> Callable[..., Any]:
        async def ask(params: Any, ctx: Any) -> Any:
            q = _Question(next(self._qids), kind, _wire(params))
            self._questions[q.id] = q
            self.post("question", id=q.id, question=kind, params=q.params)
            started = time.perf_counter()
            try:
                with anyio.move_on_after(ANSWER_SECONDS):
                    await q.done.wait()
            finally:
                self._questions.pop(q.id, None)
            answer = q.answer
            self.post("answered", id=q.id, answer=answer)
            self.post(
                "message",
                direction="in",
                method="sampling/createMessage" if kind == "sampling" else "elicitation/create",
                params=q.params,
                result=answer,
                ms=round((time.perf_counter() - started) * 1000, 2),
            )
            if not answer:  # no answer in time, or refused in the page
                if kind == "sampling":
                    raise ProtocolError(-1, "the person in the inspector refused to answer")
                return {"action": "cancel"}
            return answer

        return ask

    def answer(self, qid: int, answer: dict[str, Any]) -> None:
        """The person's answer to question ``qid``."""
        q = self._questions.get(qid)
        if q is None:
            raise ProtocolError(-32602, f"no question {qid} is waiting (answered or expired)")
        q.answer = answer
        q.done.set()

    def questions(self) -> list[dict[str, Any]]:
        return [
            {"id": q.id, "question": q.kind, "params": q.params} for q in self._questions.values()
        ]

    # ------------------------------------------------------------------ what the page asks

    async def listing(self, kind: str) -> list[Any]:
        c = self.need()
        caps = c.server_capabilities
        if kind == "tools":
            items: list[Any] = await c.list_tools(use_cache=False) if caps.tools else []
        elif kind == "resources":
            items = await c.list_resources() if caps.resources else []
        elif kind == "templates":
            items = await c.list_resource_templates() if caps.resources else []
        elif kind == "prompts":
            items = await c.list_prompts() if caps.prompts else []
        elif kind == "tasks":
            if caps.tasks and caps.tasks.list_ is not None:
                items = await c.list_tasks()
            else:  # the ones started here, as they are now
                items = [h.task if h.done else await h.status() for h in self._tasks.values()]
        else:
            raise ProtocolError(-32602, f"unknown list {kind!r}")
        return [_wire(i) for i in items]

    async def call(self, call_id: str, name: str, arguments: dict[str, Any], task: bool) -> Any:
        c = self.need()

        async def progress(value: float, total: float | None, message: str | None) -> None:
            self.post("progress", call=call_id, progress=value, total=total, message=message)

        with anyio.CancelScope() as scope:
            self._calls[call_id] = scope
            _CALLING.set(call_id)  # this task's copy of the context: the tap reads it
            try:
                if task:
                    handle = await c.call_tool_as_task(name, arguments)
                    if handle.task_id:  # empty: the server answered at once, no task
                        self._tasks[handle.task_id] = handle
                        while len(self._tasks) > MAX_TASKS:
                            self._tasks.pop(next(iter(self._tasks)))
                    self.post("task", call=call_id, taskId=handle.task_id)
                    return _wire(await handle.result())
                return _wire(await c.call_tool(name, arguments, progress_handler=progress))
            finally:
                self._calls.pop(call_id, None)
        raise ProtocolError(-32800, "cancelled in the inspector")

    def request_id(self, call_id: str) -> Any:
        """The JSON-RPC id the page's call ``call_id`` was sent with (once it is done):
        what a view's ``hostContext.toolInfo.id`` names."""
        return self._rpc_ids.pop(call_id, None)

    def cancel(self, call_id: str) -> bool:
        scope = self._calls.get(call_id)
        if scope is not None:
            scope.cancel()
        return scope is not None

    async def cancel_task(self, task_id: str) -> Any:
        """Cancel a task (``tasks/cancel``); its state afterwards."""
        handle = self._tasks.get(task_id) or self.need().task(task_id)
        return _wire(await handle.cancel())

    async def read(self, uri: str) -> Any:
        return _wire(await self.need().read_resource(uri))

    async def subscribe(self, uri: str, on: bool) -> None:
        c = self.need()
        await (c.subscribe(uri) if on else c.unsubscribe(uri))

    async def prompt(self, name: str, arguments: dict[str, str]) -> Any:
        return _wire(await self.need().get_prompt(name, arguments))

    async def complete(self, ref: dict[str, Any], argument: str, value: str, context: Any) -> Any:
        c = self.need()
        if c.server_capabilities.completions is None:
            return {"completion": {"values": []}}
        return _wire(await c.complete(ref, argument, value, context=context or None))

    async def set_roots(self, roots: list[dict[str, Any]]) -> None:
        self.roots = [r for r in roots if isinstance(r, dict) and isinstance(r.get("uri"), str)]
        if self.client is not None:
            await self.client.notify_roots_changed()

    async def set_level(self, level: str) -> None:
        await self.need().set_logging_level(level)


def _tap_ids(client: Client, ids: dict[str, Any]) -> None:
    """Note the JSON-RPC id of each ``tools/call`` the page's calls send (``_CALLING``):
    the request id is drawn below the client's API, where the message is sent."""
    engine: Any = getattr(getattr(client, "session", None), "engine", None)
    send = getattr(engine, "_send", None)
    if engine is None or send is None:
        return

    async def tapped(message: Any, *args: Any, **kw: Any) -> Any:
        call_id = _CALLING.get()
        if (
            call_id is not None
            and isinstance(message, dict)
            and message.get("method") == "tools/call"
            and "id" in message
        ):
            ids[call_id] = message["id"]
            while len(ids) > MAX_TASKS:  # calls whose id nobody asked for
                ids.pop(next(iter(ids)))
        return await send(message, *args, **kw)

    engine._send = tapped
