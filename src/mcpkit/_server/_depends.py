"""Dependencies declared in a function's signature: resolved per call, torn down after it.

``Annotated[T, Depends(fn)]`` (or ``x: T = Depends(fn)``) on a parameter of a tool, prompt,
resource or resource template makes it the server's to fill in, not the client's: the
parameter is left out of the input schema (and of a prompt's arguments), and each call
resolves it by calling ``fn``. ``fn`` may itself take the :class:`~mcpkit.Context` and other
dependencies; each one is resolved once per call (unless ``use_cache=False``), and a
generator dependency's code after its ``yield`` runs once the call ended, newest first,
whether the call returned, raised or was cancelled.

Planned at registration (a cycle or a parameter nothing can fill is refused there), so a
call only walks the plan. ``server.dependency_overrides`` replaces a dependency by another
function at call time: for tests, without touching the tools.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import typing
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import anyio

from ._schemagen import strip_annotated
from ._threads import contained, is_async_callable, run_sync

logger = logging.getLogger("mcpkit.server")

#: How long the teardowns of one call may take together, in seconds: they run shielded
#: from the call's cancellation, so a teardown that hangs must not hold the call forever.
TEARDOWN_SECONDS = 30.0

#: The name under which a function with dependencies but no Context parameter of its own
#: receives the Context (not an identifier: it cannot clash with a parameter). Its
#: dependencies may take the Context, and the server's overrides are found through it.
CONTEXT_KEY = "mcpkit:dependencies-context"

Caller = Callable[[dict[str, Any]], Awaitable[Any]]


class Depends:
    """Marks a parameter the server fills in by calling ``dependency`` for each call.

    ``dependency`` is a function (sync or async, or a generator of one value: its code after
    ``yield`` runs once the call ended) whose parameters are themselves a
    :class:`~mcpkit.Context` or other dependencies. Within one call each dependency runs
    once and its value is shared (``use_cache=False``: a fresh value for this parameter).
    A sync dependency runs in a worker thread, like a sync tool (``inline=True``: on the
    event loop, for one that takes microseconds). The parameter never appears in the input
    schema, and a client cannot supply it.

    Example::

        async def get_db(ctx: Context) -> AsyncIterator[DB]:
            db = await DB.connect()
            try:
                yield db
            finally:
                await db.close()      # after the call, even when it raised


        @server.tool()
        async def count(table: str, db: Annotated[DB, Depends(get_db)]) -> int:
            return await db.count(table)

    Tests replace it: ``server.dependency_overrides[get_db] = lambda: FakeDB()``.
    """

    __slots__ = ("dependency", "inline", "use_cache")

    dependency: Callable[..., Any]
    use_cache: bool
    inline: bool

    # Typed as returning Any, as FastAPI's Depends, so ``db: DB = Depends(get_db)`` type-checks.
    def __new__(
        cls, dependency: Callable[..., Any], *, use_cache: bool = True, inline: bool = False
    ) -> Any:
        if not callable(dependency):
            raise TypeError(f"Depends(dependency): a function to call, not {dependency!r}")
        self = object.__new__(cls)
        self.dependency = dependency
        self.use_cache = use_cache
        self.inline = inline
        return self

    def __repr__(self) -> str:
        return f"Depends({_name(self.dependency)})"


class DependencyOverrides(dict[Callable[..., Any], Callable[..., Any]]):
    """``server.dependency_overrides``: dependency -> the function called in its place.

    Looked up at each call, so a test sets it before calling the tool (and the original
    runs again once the entry is gone). The replacement is planned like any dependency: it
    may take the Context and other dependencies, or nothing at all.
    """

    @contextlib.contextmanager
    def use(
        self, dependency: Callable[..., Any], replacement: Callable[..., Any]
    ) -> Iterator[None]:
        """Replace ``dependency`` by ``replacement`` inside the ``with`` block only (what was
        there before comes back after it)."""
        missing = object()
        before: Any = self.get(dependency, missing)
        self[dependency] = replacement
        try:
            yield
        finally:
            if before is missing:
                self.pop(dependency, None)
            else:
                self[dependency] = before


def depends_of(annotation: Any, default: Any) -> Depends | None:
    """The :class:`Depends` a parameter declares (in ``Annotated`` or as default), or None."""
    _, metadata = strip_annotated(annotation)
    marker = next((m for m in metadata if isinstance(m, Depends)), None)
    if marker is None and isinstance(default, Depends):
        return default
    return marker


@dataclass(frozen=True)
class _Plan:
    """How to call one dependency function: its kind and what it takes."""

    fn: Callable[..., Any]
    #: "async", "sync", "agen" (async generator) or "gen" (generator).
    kind: str
    #: The name of its Context parameter (None: it takes none).
    context: str | None
    #: Its parameters filled by other dependencies.
    needs: tuple[tuple[str, Depends], ...]


IsContext = Callable[[Any], bool]


class Dependencies:
    """The dependencies of one function, planned: resolved and torn down by :meth:`around`."""

    __slots__ = ("_is_context", "_plans", "context", "needs")

    def __init__(
        self, needs: tuple[tuple[str, Depends], ...], context: str, is_context: IsContext
    ) -> None:
        #: ``(parameter, Depends)`` of the function itself.
        self.needs = needs
        #: Where the function's kwargs hold the Context (its own parameter, or CONTEXT_KEY).
        self.context = context
        self._is_context = is_context
        self._plans: dict[Any, _Plan] = {}
        for _, dep in needs:
            self._plan(dep.dependency, ())

    def _plan(self, fn: Callable[..., Any], chain: tuple[Callable[..., Any], ...]) -> _Plan:
        """``fn``'s plan, and those of its dependencies; a cycle raises ``TypeError``."""
        if fn in chain:
            names = " -> ".join(_name(f) for f in (*chain[chain.index(fn) :], fn))
            raise TypeError(f"dependency cycle: {names}")
        plan = self._plans.get(fn)
        if plan is None:
            plan = _plan_of(fn, self._is_context)
            for _, dep in plan.needs:
                self._plan(dep.dependency, (*chain, fn))
            self._plans[fn] = plan
        return plan

    def around(self, call: Caller) -> Caller:
        """``call`` with the dependencies resolved into its kwargs first, torn down after."""
        context, needs = self.context, self.needs

        async def with_dependencies(kwargs: dict[str, Any]) -> Any:
            ctx = kwargs.pop(context, None) if context == CONTEXT_KEY else kwargs.get(context)
            server = getattr(ctx, "server", None)
            run = _Run(self, ctx, getattr(server, "dependency_overrides", None))
            try:
                for name, dep in needs:
                    kwargs[name] = await run.value(dep)
                value = await call(kwargs)
            except BaseException as e:
                await run.close(e)
                raise
            await run.close(None)
            return value

        return with_dependencies


def with_dependencies(call: Caller, dependencies: Dependencies | None) -> Caller:
    """``call`` resolving ``dependencies`` first (itself when there are none)."""
    return call if dependencies is None else dependencies.around(call)


class _Run:
    """The dependencies of one call: their values so far, and what to tear down."""

    __slots__ = ("ctx", "deps", "exits", "overrides", "resolving", "values")

    def __init__(self, deps: Dependencies, ctx: Any, overrides: Any) -> None:
        self.deps = deps
        self.ctx = ctx
        self.overrides: dict[Any, Callable[..., Any]] | None = overrides or None
        self.values: dict[Any, Any] = {}
        #: The dependencies being resolved now, outermost first (an override's cycle).
        self.resolving: list[Any] = []
        #: ``(kind, generator, inline)`` of each generator entered, oldest first.
        self.exits: list[tuple[str, Any, bool]] = []

    async def value(self, dep: Depends) -> Any:
        fn = dep.dependency
        if dep.use_cache and fn in self.values:
            return self.values[fn]
        target = self.overrides.get(fn, fn) if self.overrides else fn
        if target is fn:
            plan = self.deps._plan(fn, ())
        else:
            # Planned per call, not kept: tests put a new replacement in at will.
            if fn in self.resolving:  # an override depending on what it replaces
                names = " -> ".join(_name(f) for f in (*self.resolving, fn))
                raise TypeError(f"dependency cycle through an override: {names}")
            plan = _plan_of(target, self.deps._is_context)
        kwargs: dict[str, Any] = {}
        if plan.context is not None:
            kwargs[plan.context] = self.ctx
        self.resolving.append(fn)
        try:
            for name, sub in plan.needs:
                kwargs[name] = await self.value(sub)
        finally:
            self.resolving.pop()
        value = await self._call(plan, kwargs, dep.inline)
        if dep.use_cache:
            self.values[fn] = value
        return value

    async def _call(self, plan: _Plan, kwargs: dict[str, Any], inline: bool) -> Any:
        fn, kind = plan.fn, plan.kind
        try:
            if kind == "async":
                return await fn(**kwargs)
            # A generator is torn down once it gave its value: one that failed before (or
            # whose first step was cancelled) has ended already.
            if kind == "agen":
                agen = fn(**kwargs)
                first = await agen.__anext__()
                self.exits.append((kind, agen, inline))
                return first
            if kind == "gen":
                gen = fn(**kwargs)  # creating it runs none of its code
                step = functools.partial(_first, gen)
                first = step() if inline else await run_sync(step, {})
                self.exits.append((kind, gen, inline))
                return first
            value = fn(**kwargs) if inline else await run_sync(fn, kwargs)
            if inspect.isawaitable(value):  # a sync function returning a coroutine (a lambda)
                value = await value
            return value
        except StopAsyncIteration:
            raise RuntimeError(f"dependency {_name(fn)} ended without yielding a value") from None
        except BaseException as e:
            raise_as = contained(e)
            if raise_as is e:
                raise
            raise raise_as from e

    async def close(self, error: BaseException | None) -> None:
        """Tear the generators down, newest first: the call's exception raised at their
        ``yield`` (closed instead on a cancellation or the server's own unwinding); bounded
        by :data:`TEARDOWN_SECONDS`, shielded from the call's cancellation. A teardown that
        fails after a successful call fails the call; after a failed one, it is logged (the
        call's own failure is the one reported)."""
        if not self.exits:
            return
        failure: BaseException | None = None
        with anyio.CancelScope(shield=True) as scope:
            scope.deadline = anyio.current_time() + TEARDOWN_SECONDS
            while self.exits:
                kind, gen, inline = self.exits.pop()
                try:
                    await _finish(kind, gen, inline, error if failure is None else failure)
                except anyio.get_cancelled_exc_class():
                    raise  # the bound reached (nothing else reaches into a shielded scope)
                except BaseException as e:
                    if error is None and failure is None and isinstance(e, Exception):
                        failure = e
                    else:
                        logger.error("teardown of a dependency failed", exc_info=e)
        if scope.cancelled_caught:
            logger.error(
                "dependency teardowns took over %s s: %d left unfinished",
                TEARDOWN_SECONDS,
                len(self.exits) + 1,
            )
        if failure is not None:
            raise failure


async def _finish(kind: str, gen: Any, inline: bool, error: BaseException | None) -> None:
    """Run one generator's code after its ``yield``: resumed, or the call's ``error``
    thrown in (an ``Exception``; any other is a cancellation or an unwinding: closed).
    A generator that swallows the error simply ends (the call still fails with it)."""
    if kind == "gen":
        step = functools.partial(_finish_sync, gen, error)
        step() if inline else await run_sync(step, {})
        return
    try:
        if error is None:
            await gen.__anext__()
        elif isinstance(error, Exception):
            await gen.athrow(error)
        else:
            await gen.aclose()
            return
    except StopAsyncIteration:
        return
    except BaseException as e:
        if e is error:
            return
        raise
    await gen.aclose()
    raise RuntimeError(f"dependency {_name(gen)} yielded more than once")


def _finish_sync(gen: Any, error: BaseException | None) -> None:
    """The sync generator's side of :func:`_finish` (in a worker thread unless inline)."""
    try:
        if error is None:
            next(gen)
        elif isinstance(error, Exception):
            gen.throw(error)
        else:
            gen.close()
            return
    except StopIteration:
        return
    except BaseException as e:
        if e is error:
            return
        raise
    gen.close()
    raise RuntimeError(f"dependency {_name(gen)} yielded more than once")


def _first(gen: Any) -> Any:
    """A sync generator's first value (StopIteration cannot cross an asyncio future)."""
    try:
        return next(gen)
    except StopIteration:
        raise RuntimeError(f"dependency {_name(gen)} ended without yielding a value") from None


def _plan_of(fn: Callable[..., Any], is_context: IsContext) -> _Plan:
    """Read one dependency function's signature: each parameter must be its Context,
    another dependency, or have a default (left to it)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as e:
        raise TypeError(f"cannot inspect the dependency {_name(fn)}: {e}") from e
    hints = _hints(fn)
    context: str | None = None
    needs: list[tuple[str, Depends]] = []
    for name, p in signature.parameters.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        annotation = hints.get(name, p.annotation)
        dep = depends_of(annotation, p.default)
        if dep is not None:
            needs.append((name, dep))
        elif annotation is not p.empty and is_context(annotation):
            context = name
        elif p.default is p.empty:
            raise TypeError(
                f"dependency {_name(fn)}: parameter {name!r} is neither a Context nor a "
                "Depends(...) and has no default: nothing could fill it in"
            )
    return _Plan(fn, _kind(fn), context, tuple(needs))


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    target: Any = fn
    if inspect.isclass(fn):
        target = fn.__init__
    elif not (inspect.isfunction(fn) or inspect.ismethod(fn)):
        target = getattr(fn, "func", None) or type(fn).__call__
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception as e:
        raise TypeError(f"cannot resolve the type hints of the dependency {_name(fn)}: {e}") from e


def _kind(fn: Callable[..., Any]) -> str:
    target: Any = getattr(fn, "func", fn)  # functools.partial
    if not (inspect.isfunction(target) or inspect.ismethod(target) or inspect.isclass(target)):
        target = getattr(target, "__call__", target)  # noqa: B004
    if inspect.isasyncgenfunction(target):
        return "agen"
    if inspect.isgeneratorfunction(target):
        return "gen"
    return "async" if is_async_callable(fn) else "sync"


def _name(fn: Any) -> str:
    return str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn))


__all__ = [
    "CONTEXT_KEY",
    "Dependencies",
    "DependencyOverrides",
    "Depends",
    "depends_of",
    "with_dependencies",
]
