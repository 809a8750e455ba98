"""Calls held across the rounds of a 2026-07-28 request: code before a question runs once.

Under revision 2026-07-28 a tool cannot send the client a request: ``await ctx.elicit(...)``
ends the request with an ``InputRequiredResult`` and the client sends the same request
again with the answers. Run again from the top, the tool would repeat everything it did
before the question (a charge recorded, a message sent, progress reported). So a call that
may ask (its function takes a :class:`~mcpkit.Context`) runs in a task of the server's
instead of the request's: when it asks, the request is answered with the question and the
call stays suspended where it asked, held here under a random id that the sealed
``requestState`` carries. The retry finds it by that id (only for the same request of the
same caller: the state is sealed to both), hands the answers over, and waits again for the
call's end or its next questions. The tool's code runs once, whatever the number of rounds.

Bounded, and said so in docs/server.md:

- in time: a call waits for its client's next round at most
  :attr:`StatelessSettings.hold_seconds` (and never past its ``requestState``'s validity),
  then it is cancelled where it waits and forgotten;
- in count: at most :attr:`StatelessSettings.max_held` calls of one server wait at once;
  beyond, a new call is not held and runs again from the top on its retry (logged);
- in size: what is kept besides the suspended function (its questions and the answers so
  far) is what the ``requestState`` carries anyway, under its 4 MB bound.

Only when the call is gone (its hold expired, the process that held it stopped or was
restarted) does a retry run the function again from the top, with the answers it carries;
that is logged as a warning, and docs/server.md says how to write such a tool safely.
A retry that comes again after the call ended (its outcome went to an earlier retry) is
refused rather than run again.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import math
import secrets
from collections.abc import Awaitable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from .._exceptions import ConnectionClosed, InvalidParams
from ._mrtr import InputRequired, RoundState

if TYPE_CHECKING:
    from .._session._base import RequestContext
    from ._face import ContextLike, ServerLike

logger = logging.getLogger("mcpkit.server")

#: Set in each call :meth:`Context.gather` runs concurrently under a held call: the list
#: holds one flag, True once that call asked its first question or ended (see ``pending``).
gathering: contextvars.ContextVar[list[bool] | None] = contextvars.ContextVar(
    "mcpkit_gathering", default=None
)


class Question:
    """One question of a held call, waiting for its client's answer."""

    __slots__ = ("answer", "asked", "done", "error", "key", "method", "params")

    def __init__(self, key: str, method: str, params: dict[str, Any]) -> None:
        self.key = key
        self.method = method
        self.params = params
        #: True once it went to the client in an InputRequiredResult.
        self.asked = False
        self.answer: Any = None
        self.error: BaseException | None = None
        self.done = anyio.Event()

    def settle(self, answer: Any = None, error: BaseException | None = None) -> None:
        """Wake the call that asked, with ``answer`` or ``error``."""
        self.answer, self.error = answer, error
        self.done.set()

    def request(self) -> dict[str, Any]:
        """The question as an entry of ``inputRequests``."""
        return {"method": self.method, "params": self.params}


def hand_over(questions: list[Question], rounds: RoundState) -> dict[str, dict[str, Any]]:
    """Give the asked ``questions`` this round's answers (all checked first: a malformed
    one fails the round before any is handed over), removing them from the list; the
    requests of those still unanswered. Held calls and a mount's relayed calls share it."""
    missing: dict[str, dict[str, Any]] = {}
    answered: list[tuple[Question, Any]] = []
    for question in questions:
        if not question.asked:
            continue
        try:
            answer = rounds.take(question.key, question.method, question.params)
        except InputRequired as e:
            missing.update(e.requests)
            continue
        answered.append((question, answer))
    for question, answer in answered:
        questions.remove(question)
        question.settle(answer)
    return missing


def asking(new: list[Question]) -> dict[str, dict[str, Any]]:
    """``new`` questions as the ``inputRequests`` of the round that asks them (now asked)."""
    for question in new:
        question.asked = True
    return {q.key: q.request() for q in new}


class HeldCall:
    """One call of a handler that may ask, run in the server's task group across rounds."""

    def __init__(self, holds: Holds, rounds: RoundState) -> None:
        self.holds = holds
        #: Drawn when the call first asks (most calls never do: they cost no id, no entry).
        self.id = ""
        self.rounds = rounds
        #: The first round's: the request and caller the call belongs to (a retry must be
        #: theirs), its digest computed only when a retry is matched against it.
        self._first = rounds
        self.principal = rounds.principal
        #: The request of the round in progress (None between rounds).
        self.rc: RequestContext | None = None
        #: The contexts that asked: each round's request is theirs to report on.
        self.contexts: list[ContextLike] = []
        self.questions: list[Question] = []
        #: Concurrent questions still being gathered (see :func:`gathering`).
        self.pending = 0
        #: Around the call: its deadline is the wait for the next round.
        self.scope = anyio.CancelScope()
        self.outcome: Any = None
        self.error: BaseException | None = None
        self.finished = False
        #: Set when the call asked or ended, for the round waiting on it (made by the round).
        self.changed: anyio.Event | None = None

    def _wake(self) -> None:
        if self.changed is not None:
            self.changed.set()

    @property
    def fingerprint(self) -> str:
        """The digest of the request the call belongs to."""
        return self._first.fingerprint

    # -------------------------------------------------- the call's side

    async def run(self, coro: Coroutine[Any, Any, Any]) -> None:
        """The handler's coroutine, to its end (in the server's task group)."""
        got = False
        try:
            with self.scope:
                try:
                    self.outcome = await coro
                    got = True
                except anyio.get_cancelled_exc_class():
                    raise
                except BaseException as e:  # the request's to raise (InputRequired too)
                    self.error = e
        finally:
            if not got and self.error is None:
                self.error = (
                    InvalidParams(
                        message="Invalid params: the call waited too long for its answers"
                    )
                    if self.scope.cancelled_caught
                    else ConnectionClosed("the server stopped while the call was running")
                )
            self.finished = True
            for question in self.questions:
                question.settle(error=ConnectionClosed("the call this question belongs to ended"))
            self.questions.clear()
            self._wake()
            if self.rc is None:  # ended between rounds (it expired): nobody waits for it
                self.holds.forget(self, expired=True)

    async def ask(self, ctx: ContextLike, key: str, method: str, params: dict[str, Any]) -> Any:
        """The client's answer to question ``key``: at once when this round (or, on a call
        run again from the top, an earlier one) answered it, else after the next round."""
        if ctx not in self.contexts:
            self.contexts.append(ctx)
        with contextlib.suppress(InputRequired):
            return self.rounds.take(key, method, params)
        if not self.id:
            self.holds.register(self)
        question = Question(key, method, params)
        self.questions.append(question)
        flag = gathering.get()
        if flag is not None:
            self._asked_or_ended(flag)
        self._wake()
        try:
            await question.done.wait()
        finally:  # answered, or withdrawn (the call was cancelled)
            with contextlib.suppress(ValueError):
                self.questions.remove(question)
        if question.error is not None:
            raise question.error
        return question.answer

    async def gather(self, calls: Sequence[Awaitable[Any]]) -> list[Any]:
        """``Context.gather`` in a held call: the calls run at once, and the round waits
        until each asked its first question or ended, so that their questions reach the
        client together. The first call to fail (in the order given) fails the gather, at
        once: the others are cancelled, as when they were awaited in turn."""
        answers: list[Any] = [None] * len(calls)
        errors: dict[int, Exception] = {}
        flags = [[False] for _ in calls]
        self.pending += len(calls)

        async def run(i: int, call: Awaitable[Any], tg: TaskGroup) -> None:
            gathering.set(flags[i])
            try:
                answers[i] = await call
            except Exception as e:
                # The round keeps waiting (``pending``) until the failure has ended the
                # gather: the other questions must not reach the client without it.
                errors[i] = e
                tg.cancel_scope.cancel()
                return
            self._asked_or_ended(flags[i])

        try:
            async with anyio.create_task_group() as tg:
                for i, call in enumerate(calls):
                    tg.start_soon(run, i, call, tg)
        finally:
            for flag in flags:
                self._asked_or_ended(flag)
        if errors:
            raise errors[min(errors)]
        return answers

    def _asked_or_ended(self, flag: list[bool]) -> None:
        """A gathered call asked its first question or ended: the round may go on."""
        if not flag[0]:
            flag[0] = True
            self.pending -= 1
            self._wake()

    # -------------------------------------------------- the request's side

    async def round(self, rc: RequestContext, rounds: RoundState) -> Any:
        """One round of the request: its answers handed over, then the call's outcome, or
        the ``InputRequiredResult`` asking its next questions."""
        if self.rc is not None:
            raise InvalidParams(
                message="Invalid params: these input responses are being answered already"
            )
        if rounds is not self.rounds:
            rounds.adopt(self.rounds)
            self.rounds = rounds
        missing = hand_over(self.questions, rounds)
        self._bind(rc)
        self.scope.deadline = math.inf
        try:
            asked = await self._next(missing)
        except BaseException:
            # The request ended otherwise (cancelled, its client went away): so does the call.
            self.rc = None
            self.scope.cancel()
            self.holds.forget(self, expired=False)
            raise
        self.rc = None
        if asked is None:
            self.holds.forget(self, expired=False)
            # Questions raised the other way (a mount relaying another server's) go to
            # the client in a state that names no held call: their call lives elsewhere.
            rounds.hold(None, None)
            if self.error is not None:
                raise self.error
            return self.outcome
        self.scope.deadline = anyio.current_time() + self.holds.wait_seconds()
        return rounds.input_required(asked)

    def _bind(self, rc: RequestContext) -> None:
        """Make ``rc`` the request the call reports on (progress, logs) and asks through."""
        self.rc = rc
        rc.state = self.rounds
        for ctx in self.contexts:
            ctx._rebind(rc)

    async def _next(self, missing: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]] | None:
        """Wait for the call's end (None) or for questions to ask the client (once the
        questions a ``gather`` asks together are all in)."""
        while not self.finished:
            new = [q for q in self.questions if not q.asked]
            if (new or missing) and self.pending <= 0:
                return {**missing, **asking(new)}
            self.changed = anyio.Event()
            await self.changed.wait()
        return None


class Holds:
    """The calls of one server held for their clients' next rounds, by id."""

    def __init__(self, server: ServerLike) -> None:
        self.server = server
        self.calls: dict[str, HeldCall] = {}
        #: Ids of calls that ended lately -> (until when remembered, whether they expired).
        self.ended: dict[str, tuple[float, bool]] = {}
        self._full_logged = False

    def wait_seconds(self) -> float:
        """How long a call waits for its next round."""
        settings = self.server.stateless
        return float(min(settings.hold_seconds, settings.state_ttl))

    def worker(self) -> str | None:
        """The id of this process among the workers sharing state (None: no such sharing)."""
        shared = self.server._shared
        backend = getattr(shared, "backend", None)
        worker = getattr(backend, "worker_id", None)
        return worker if isinstance(worker, str) else None

    def start(
        self, rc: RequestContext, rounds: RoundState, coro: Coroutine[Any, Any, Any]
    ) -> HeldCall | None:
        """``coro`` started as a held call, or None when it cannot be held here (not
        hosted by a running server, or too many calls held: then it runs in the request)."""
        settings = self.server.stateless
        if not settings.hold_calls:
            return None
        tg = self.server.tasks_manager._tg
        if tg is None:
            return None
        if len(self.calls) >= settings.max_held:  # (only calls that asked count)
            if not self._full_logged:
                self._full_logged = True
                logger.warning(
                    "%d calls already wait for their clients' answers "
                    "(StatelessSettings.max_held): new calls are not held, and code before "
                    "their questions runs again on each round",
                    len(self.calls),
                )
            return None
        call = HeldCall(self, rounds)
        rounds.held = call  # named in the states sealed once it asks (``register``)
        tg.start_soon(call.run, coro)
        return call

    def register(self, call: HeldCall) -> None:
        """``call`` asks for the first time: it is held from now on, under a new id."""
        call.id = secrets.token_urlsafe(16)
        call.rounds.hold(call, self.worker())
        self.calls[call.id] = call

    def find(self, rounds: RoundState) -> HeldCall | None:
        """The call the request's ``requestState`` names, when it is held here; None when
        it is gone (expired, or held by a process that no longer has it: the handler then
        runs again from the top). A call that ended already is refused."""
        held = rounds.held_id
        if held is None:
            return None
        self._expire()
        call = self.calls.get(held)
        if call is not None:
            if call.fingerprint != rounds.fingerprint or call.principal != rounds.principal:
                raise InvalidParams(
                    message="Invalid params: these input responses belong to another request"
                )
            return call
        ended = self.ended.get(held)
        if ended is not None and not ended[1]:
            raise InvalidParams(
                message="Invalid params: the call this requestState belongs to has ended "
                "(its outcome went to an earlier retry); call again without inputResponses "
                "and requestState"
            )
        return None

    def forget(self, call: HeldCall, *, expired: bool) -> None:
        """``call`` no longer waits; its id is remembered as long as its state is valid."""
        if self.calls.pop(call.id, None) is None:
            return
        self._full_logged = False
        until = anyio.current_time() + float(self.server.stateless.state_ttl)
        self.ended[call.id] = (until, expired)
        if len(self.ended) > 4 * self.server.stateless.max_held:
            self.ended.pop(next(iter(self.ended)))  # the oldest: bounded whatever the rate

    def _expire(self) -> None:
        now = anyio.current_time()
        while self.ended:
            first = next(iter(self.ended))
            if self.ended[first][0] > now:
                break
            del self.ended[first]
