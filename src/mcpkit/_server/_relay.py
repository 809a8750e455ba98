"""A mounted server's requests to the client, relayed through the hub in either era.

A server mounted through a :class:`~mcpkit.Client` asks the hub's client for things
(``elicitation/create``, ``sampling/createMessage``, ``roots/list``) while a call of the
hub's is forwarded to it. The hub passes each question to the request it serves: a
:class:`Flight` is one such forwarded request.

When the mounted server speaks a handshake revision (2025-11-25 and before) and the hub's
client speaks 2026-07-28, the question arrives as a request in the middle of the mounted
server's ``tools/call``, but the hub cannot send its client a request: it must end its own
request with an ``InputRequiredResult`` and wait for the client to retry with the answers.
So the mounted server's call has to outlive the hub's request. A :class:`RelayedCall` runs
it in a task of the mount's connection and is kept by the mount's :class:`Relay` under a
random id, which the keys of its input requests carry (``mount:<id>:<n>``): the retry finds
the call by them (only for the same request of the same caller), hands the answers over, and
waits again for the call's end or its next questions.

Bounded: a call waits for its client's next round as long as the ``requestState`` given with
the questions stays valid (``StatelessSettings.state_ttl``), then it is cancelled (the mounted
server is told) and forgotten. A call that ends while its client is away (the mounted server
gave up waiting for its answers) is kept as long, for the retry to get its outcome; at most
:data:`MAX_WAITING` calls of one mount wait at once, those included
(beyond, the mounted server's question is refused with an error and the call goes on). A
question the client cannot take (a capability it did not declare) is refused at once with a
clear error. Whatever happens, the mounted server gets an answer or an error, never the
hub's end.
"""

from __future__ import annotations

import contextlib
import math
import secrets
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from .._exceptions import (
    CapabilityError,
    ConnectionClosed,
    InternalError,
    InvalidParams,
    MethodNotFound,
    RequestTimeout,
)
from .._session._capabilities import elicitation_modes, has_capability
from ._held import Question, asking, hand_over
from ._mrtr import InputRequired, RoundState, collect_input_required

if TYPE_CHECKING:
    from ._context import Context

#: The keys of a relayed call's input requests start with this, then ``<id>:<n>``.
KEY_PREFIX = "mount:"
#: Relayed calls of one mount waiting at once for their clients' next rounds, at most.
MAX_WAITING = 256

#: ``send(client, progress)``: the mounted server's call (see ``RemoteMount.forward``).
Send = Callable[[Any, Any], Awaitable[Any]]


def check_capability(ctx: Context[Any], method: str, params: dict[str, Any]) -> None:
    """Refuse (``MethodNotFound``, as a client without it answers) a question for a
    capability the parent's client did not declare."""
    caps = ctx.client_capabilities
    missing: str | None = None
    if method == "elicitation/create":
        mode = params.get("mode", "form")
        if mode not in elicitation_modes(caps):
            missing = f"'elicitation' ({mode} mode)"
    elif method == "sampling/createMessage":
        if not has_capability(caps, ("sampling",)):
            missing = "'sampling'"
        elif (params.get("tools") or params.get("toolChoice") is not None) and not (
            has_capability(caps, ("sampling", "tools"))
        ):
            missing = "'sampling.tools'"
        elif params.get("includeContext") not in (None, "none") and not has_capability(
            caps, ("sampling", "context")
        ):
            missing = "'sampling.context'"
    elif method == "roots/list" and not has_capability(caps, ("roots",)):
        missing = "'roots'"
    if missing is not None:
        raise MethodNotFound(
            message=f"Method not found: {method}: the client of {ctx.server.name!r} (which "
            f"mounts this server) did not declare the {missing} capability"
        )


def rounds_of(ctx: Context[Any] | None) -> RoundState | None:
    """The input rounds of the parent's request ``ctx`` serves (2026-07-28), or None."""
    if ctx is None:
        return None
    try:
        return ctx._rounds()
    except CapabilityError:  # a method that cannot ask: its questions are refused
        return None


class Flight:
    """A request of the parent's being forwarded to the mounted server; the mounted
    server's questions meanwhile are asked through it."""

    def __init__(self, ctx: Context[Any] | None) -> None:
        #: The parent's request (None while a relayed call waits for its client's retry).
        self.ctx = ctx

    async def ask(self, method: str, params: dict[str, Any]) -> Any:
        """The parent's client's answer to the mounted server's ``method`` request."""
        ctx = self.ctx
        if ctx is None:
            raise InternalError(
                message=f"{method}: no request of the parent's client to ask through"
            )
        check_capability(ctx, method, params)
        try:
            return await ctx._send(method, params, None)
        except BaseException as e:
            if collect_input_required(e) is None:
                raise
            # A stateless request asks only from its own task (not here, outside it).
            raise InternalError(
                message=f"{method}: the parent's client can be asked only within its request"
            ) from None


class RelayedCall(Flight):
    """A call of a handshake-era mounted server, kept across a 2026-07-28 request's rounds."""

    def __init__(self, relay: Relay, ctx: Context[Any], rounds: RoundState) -> None:
        super().__init__(None)
        self.relay = relay
        self.id = secrets.token_urlsafe(16)
        #: The request and caller the call belongs to: a retry must be theirs.
        self.fingerprint = rounds.fingerprint
        self.principal = rounds.principal
        #: The latest of its requests (whose client capabilities questions are checked on).
        self.last = ctx
        self.questions: list[Question] = []
        self.count = 0
        #: Around the mounted server's call: its deadline is the wait for the next round.
        self.scope = anyio.CancelScope()
        self.outcome: Any = None
        self.error: Exception | None = None
        self.finished = False
        #: Until when an outcome that came between rounds waits for the client's retry.
        self.kept_until = math.inf
        self.changed = anyio.Event()

    # -------------------------------------------------- the mounted server's side

    async def ask(self, method: str, params: dict[str, Any]) -> Any:
        if self.finished:
            raise InternalError(message=f"{method}: the call it belongs to has ended")
        check_capability(self.last, method, params)
        self.count += 1
        question = Question(f"{KEY_PREFIX}{self.id}:{self.count}", method, params)
        self.questions.append(question)
        self.changed.set()
        try:
            await question.done.wait()
        finally:  # answered, or withdrawn (the mounted server cancelled it)
            with contextlib.suppress(ValueError):
                self.questions.remove(question)
        if question.error is not None:
            raise question.error
        return question.answer

    async def progress(self, value: float, total: float | None, message: str | None) -> None:
        ctx = self.ctx  # the round in progress (none between rounds: dropped)
        if ctx is not None:
            await ctx.report_progress(value, total, message)

    async def run(self, client: Any, send: Send, progress: bool) -> None:
        """The mounted server's call (in a task of the mount's connection)."""
        got = False
        try:
            with self.scope:
                try:
                    self.outcome = await send(client, self.progress if progress else None)
                    got = True
                except Exception as e:
                    self.error = e
        finally:
            if not got and self.error is None:
                self.error = (
                    RequestTimeout("the client did not come back with the answers in time")
                    if self.scope.cancelled_caught
                    else ConnectionClosed("the mounted server's connection ended")
                )
            self._finish()

    def _finish(self) -> None:
        self.finished = True
        for question in self.questions:
            question.settle(error=InternalError(message="the call this request belongs to ended"))
        self.questions.clear()
        self.changed.set()
        if self.ctx is None:
            # Ended between rounds (an upstream that gave up waiting for its answers, or
            # answered without them): the client is still coming back with them, within
            # the wait for its next round, and gets the outcome then. Past that wait (the
            # call was cancelled for it), nobody will come.
            self.kept_until = min(
                self.scope.deadline, anyio.current_time() + self.relay.wait_seconds()
            )
            self.relay.mount.in_flight.discard(self)  # asks nothing any more
            if self.expired():
                self.relay.forget(self)

    def expired(self) -> bool:
        """Ended between rounds, and its client did not come back for it in time."""
        return self.finished and self.ctx is None and anyio.current_time() >= self.kept_until

    # -------------------------------------------------- the parent's side

    async def round(self, ctx: Context[Any], rounds: RoundState) -> Any:
        """One round of the parent's request: this round's answers handed over, then the
        call's outcome, or :class:`InputRequired` with its next questions."""
        if self.ctx is not None:
            raise InvalidParams(
                message="Invalid params: these input responses are being answered already"
            )
        missing = hand_over(self.questions, rounds)
        self.ctx = self.last = ctx
        self.scope.deadline = math.inf
        try:
            asked = await self._next(missing)
        except BaseException:
            # The parent's request ended otherwise (cancelled, its client went away).
            self.ctx = None
            self.scope.cancel()
            self.relay.forget(self)
            raise
        self.ctx = None
        if asked is None:
            self.relay.forget(self)
            if self.error is not None:
                raise self.error
            return self.outcome
        self.scope.deadline = anyio.current_time() + self.relay.wait_seconds()
        raise InputRequired(asked)

    async def _next(self, missing: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]] | None:
        """Wait for the call's end (None) or questions to ask the client."""
        while not self.finished:
            new = [q for q in self.questions if not q.asked]
            if new and self.relay.waiting() >= MAX_WAITING:
                for question in new:  # the call goes on without the answer
                    self.questions.remove(question)
                    question.settle(
                        error=InternalError(
                            message=f"{question.method}: too many calls wait for their "
                            "clients' answers; try again later"
                        )
                    )
                new = []
            if new or missing:
                return {**missing, **asking(new)}
            self.changed = anyio.Event()
            await self.changed.wait()
        return None


class Relay:
    """The relayed calls of one mount, by id."""

    def __init__(self, mount: Any) -> None:
        #: The ``RemoteMount`` (its client, its parent, its flights in progress).
        self.mount = mount
        self.calls: dict[str, RelayedCall] = {}

    def wait_seconds(self) -> float:
        """How long a call waits for the next round: as long as its requestState is valid."""
        return float(self.mount.parent.stateless.state_ttl)

    def waiting(self) -> int:
        """The calls waiting now for their clients' next rounds (ended ones included, kept
        for their clients: they count against :data:`MAX_WAITING` too)."""
        for call in [c for c in self.calls.values() if c.expired()]:
            self.forget(call)
        return sum(1 for c in self.calls.values() if c.ctx is None)

    def forget(self, call: RelayedCall) -> None:
        self.calls.pop(call.id, None)
        self.mount.in_flight.discard(call)

    async def serve(self, ctx: Context[Any], rounds: RoundState, send: Send, tg: TaskGroup) -> Any:
        """The parent's request ``ctx`` serves, one round of it: a new call of the mounted
        server, or the answers to the questions of the one its input responses name."""
        call = self._find(rounds)
        if call is None:
            self.waiting()  # forgets the ended calls nobody came back for
            call = RelayedCall(self, ctx, rounds)
            self.calls[call.id] = call
            self.mount.in_flight.add(call)
            rc = ctx._request
            progress = rc is not None and rc.request.progress_token is not None
            try:
                tg.start_soon(call.run, self.mount.client, send, progress)
            except RuntimeError:  # the connection's task group has just ended
                self.forget(call)
                raise ConnectionClosed("the mounted server's connection ended") from None
        return await call.round(ctx, rounds)

    def _find(self, rounds: RoundState) -> RelayedCall | None:
        """The call this round's input responses (or its earlier rounds') answer."""
        ids = [_call_id(key) for key in (*rounds.given, *rounds.answers)]
        found = next((i for i in ids if i is not None), None)
        if found is None:
            return None
        call = self.calls.get(found)
        if call is not None and call.expired():
            self.forget(call)
            call = None
        if call is None or (call.finished and call.ctx is not None):
            raise InvalidParams(
                message="Invalid params: the mounted server's call these input responses "
                "answer is no longer waiting (its client took too long, or another process "
                "served its first round); call again without inputResponses and requestState"
            )
        if call.fingerprint != rounds.fingerprint or call.principal != rounds.principal:
            raise InvalidParams(
                message="Invalid params: these input responses belong to another request"
            )
        return call


def _call_id(key: str) -> str | None:
    if not key.startswith(KEY_PREFIX):
        return None
    parts = key[len(KEY_PREFIX) :].split(":")
    return parts[0] if len(parts) == 2 and parts[0] else None
