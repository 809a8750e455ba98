"""Run-time changes every worker makes: tools, resources and prompts added or removed while
serving, carried to the other workers sharing the server's backend (and to those starting
later) through its :class:`~mcpkit._stores._changes.RegistrationLog`.

A removal is logged by name. An addition is logged when every worker can make it again: its
function is found again by module and qualified name (``sys.modules[fn.__module__]``, then
``__qualname__``: a module-level function of the same code; a resource's content may be the
text or bytes themselves) and its options are JSON-able. Anything else (a closure, a
lambda, a method) exists in this process only: with a shared backend the change stays
here, and a warning names the shared way, a change function (``@server.runtime_change``):
calling it runs it here and, with the same JSON-able arguments, on every other worker.

What the server's own code registers (at import, in its lifespan) is never logged: every
worker runs that code itself. Only changes made once the worker serves with a shared
backend are (:attr:`RegistrationLog.shared`). A change made here tells this worker's
clients at once; the other workers' clients are told by their worker once it made it.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import functools
import inspect
import json
import logging
import sys
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar, cast, overload

from .._stores._changes import Change, LocalRegistrationLog, RegistrationLog
from ._hosted import announce, deferring
from ._util import is_base_model, name_of, to_wire

if TYPE_CHECKING:
    from ._face import ServerLike

logger = logging.getLogger("mcpkit.server")

F = TypeVar("F", bound=Callable[..., Any])

#: The argument naming what a registration method adds or removes, by kind.
_NAMED_BY = {"tool": "name", "prompt": "name", "resource": "uri"}
#: The argument holding what is added (a function; a resource's content too).
_SOURCE = {"tool": "fn", "prompt": "fn", "resource": "source"}


@dataclasses.dataclass
class _Within:
    """A change being made that registrations are part of: a change function running here
    (``"call"``: the call is logged, not each registration) or a change logged by another
    worker (``"apply"``: logged already). ``keys``: what its registrations changed."""

    mode: str
    keys: list[str] = dataclasses.field(default_factory=list)


_within: ContextVar[_Within | None] = ContextVar("mcpkit_runtime_change", default=None)


def function_ref(fn: Any) -> str | None:
    """``module:qualname`` of ``fn`` when every worker running the same code finds the
    very same function there again (:func:`find_function`); None otherwise."""
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str):
        return None
    ref = f"{module}:{qualname}"
    return ref if find_function(ref) is fn else None


def find_function(ref: str) -> Any:
    """The object ``module:qualname`` names among the modules loaded here (None if none):
    no import, so no code runs that the worker did not run itself."""
    module_name, _, qualname = ref.partition(":")
    found: Any = sys.modules.get(module_name)
    for part in qualname.split("."):
        if found is None or part.startswith("<"):  # <locals>, <lambda>: not reachable
            return None
        found = getattr(found, part, None)
    return found


def _plain(value: Any) -> Any:
    """``value`` as JSON data (protocol models as on the wire); TypeError if it is none."""
    if is_base_model(value):
        value = to_wire(value)
    elif isinstance(value, Mapping):
        value = {k: _plain(v) for k, v in value.items()}
    elif isinstance(value, (list, tuple)):
        value = [_plain(v) for v in value]
    json.dumps(value)  # only what JSON itself has: no dataclass, no date
    return value


def _described(kind: str, op: str, args: dict[str, Any]) -> tuple[Change | None, str]:
    """The logged form of registration ``op`` of ``kind`` called with ``args``, or None and
    why it cannot be."""
    named_by = _NAMED_BY[kind]
    name = args[named_by] if args.get(named_by) is not None else name_of(args[_SOURCE[kind]])
    change: Change = {"op": op, "kind": kind, "key": f"{kind}:{name}", named_by: name}
    if op == "remove":
        return change, ""
    source = args[_SOURCE[kind]]
    if isinstance(source, str) and kind == "resource":
        change["text"] = source
    elif isinstance(source, bytes) and kind == "resource":
        change["blob"] = base64.b64encode(source).decode()
    else:
        ref = function_ref(source)
        if ref is None:
            return None, "its function is not found again by module and name in other workers"
        change["fn"] = ref
    options = {k: v for k, v in args.items() if k not in (named_by, _SOURCE[kind], "self")}
    try:
        change["opts"] = {k: _plain(v) for k, v in options.items()}
    except (TypeError, ValueError):
        return None, "its options are not JSON-able"
    return change, ""


def shared_registration(kind: str, op: str) -> Callable[[F], F]:
    """Decorator of the server's ``add_<kind>``/``remove_<kind>`` (``op``: ``"add"`` or
    ``"remove"``): made at run time with a shared backend, the change is logged for every
    worker, and its list-changed notification told where and when it is made."""

    def decorate(method: F) -> F:
        signature = inspect.signature(method)

        @functools.wraps(method)
        def registering(self: ServerLike, *args: Any, **kwargs: Any) -> Any:
            with deferring(self) as told:
                result = method(self, *args, **kwargs)
            arguments = signature.bind(self, *args, **kwargs).arguments
            _made(self, kind, op, arguments, told)
            return result

        return cast("F", registering)

    return decorate


def _made(server: ServerLike, kind: str, op: str, args: dict[str, Any], told: list[str]) -> None:
    within = _within.get()
    log = registration_log(server)
    if within is not None or not log.shared:
        if within is not None:
            named_by = _NAMED_BY[kind]
            name = args.get(named_by) or name_of(args[_SOURCE[kind]])
            within.keys.append(f"{kind}:{name}")
        announce(server, told)  # part of the change being made, or nobody else to tell
        return
    change, why = _described(kind, op, args)
    if change is not None:
        log.record(change, told)
        return
    logger.warning(
        "%s %r was added on this worker only (%s): the other workers sharing its backend "
        "do not serve it. Make the change in a @server.runtime_change function to make it "
        "on every worker (docs/deploy.md, 'Changes at run time').",
        kind,
        args.get(_NAMED_BY[kind]) or name_of(args[_SOURCE[kind]]),
        why,
    )
    announce(server, told)


def registration_log(server: ServerLike) -> RegistrationLog:
    """Where ``server``'s run-time changes are logged (nothing shared by default)."""
    log: RegistrationLog | None = vars(server).get("_registration_log")
    return log if log is not None else _LOCAL


_LOCAL = LocalRegistrationLog()


def share_registrations(server: ServerLike, log: RegistrationLog) -> None:
    """Log ``server``'s run-time changes in ``log``, and make there those of the others."""
    vars(server)["_registration_log"] = log
    log.follow(functools.partial(apply_change, server))


def _change_functions(server: ServerLike) -> dict[str, Callable[..., Any]]:
    found: dict[str, Callable[..., Any]] = vars(server).setdefault("_change_functions", {})
    return found


async def apply_change(server: ServerLike, change: Change) -> None:
    """Make ``change``, logged by another worker, here: quietly (that worker's log tells
    the clients once it is made). A change this worker cannot make is logged, not raised."""
    token = _within.set(_Within("apply"))
    try:
        with deferring(server):
            await _make(server, change)
    except Exception:
        logger.warning("could not make the change %r of another worker", change, exc_info=True)
    finally:
        _within.reset(token)


async def _make(server: ServerLike, change: Change) -> None:
    op, kind = change.get("op"), change.get("kind")
    if op == "call":
        fn = _change_functions(server).get(str(change.get("name")))
        if fn is None:
            raise LookupError(f"no @server.runtime_change function {change.get('name')!r} here")
        result = fn(*change.get("args", ()), **change.get("kwargs", {}))
        if inspect.isawaitable(result):
            await result
        return
    if kind not in _NAMED_BY or op not in ("add", "remove"):
        raise ValueError(f"not a change this version makes: {op!r} {kind!r}")
    name = change[_NAMED_BY[kind]]
    remove = getattr(server, f"remove_{kind}")
    with contextlib.suppress(KeyError):  # made already (or never here): the same outcome
        remove(name)
    if op == "remove":
        return
    if "fn" in change:
        source = find_function(change["fn"])
        if source is None:
            raise LookupError(f"{change['fn']} is not found here (run the same code everywhere)")
    else:
        source = change["text"] if "text" in change else base64.b64decode(change["blob"])
    options = {**change.get("opts", {}), _NAMED_BY[kind]: name}
    if kind == "resource":
        server.add_resource(options.pop("uri"), source, **options)
    else:
        getattr(server, f"add_{kind}")(source, **options)


@contextlib.contextmanager
def _calling(server: ServerLike, change: Change) -> Iterator[None]:
    """The body of a change function's call: its registrations are part of it; once it
    returns, the call is logged (with what it told) for every other worker."""
    if _within.get() is not None:  # within another change: that one is logged (or was)
        yield
        return
    within = _Within("call")
    token = _within.set(within)
    told: list[str] = []
    try:
        with deferring(server) as told:
            yield
    except BaseException:
        announce(server, told)  # what it made before it failed stays here: not logged
        raise
    finally:
        _within.reset(token)
    log = registration_log(server)
    if log.shared:
        log.record({**change, "keys": within.keys}, told)
    else:
        announce(server, told)


def _call_change(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Change:
    try:
        plain = json.loads(json.dumps([list(args), kwargs], sort_keys=True))
    except (TypeError, ValueError):
        raise TypeError(
            f"the arguments of runtime change {name!r} must be JSON-able: every worker "
            "makes the change again with them"
        ) from None
    key = f"call:{name}:{json.dumps(plain, sort_keys=True, separators=(',', ':'))}"
    return {"op": "call", "key": key, "name": name, "args": plain[0], "kwargs": plain[1]}


class RuntimeChanges:
    """``Server.runtime_change`` and the removals, kept with the rest of run-time changes."""

    @overload
    def runtime_change(self, fn: F, /) -> F: ...

    @overload
    def runtime_change(self, /, *, name: str | None = None) -> Callable[[F], F]: ...

    def runtime_change(self, fn: Any = None, /, *, name: str | None = None) -> Any:
        """Decorator: a function making run-time changes (adding, removing tools, resources,
        prompts) that every worker makes. Calling it runs it here and, with the same
        arguments (JSON-able: a ``TypeError`` otherwise), on every other worker sharing
        this server's backend, and on those starting later; it returns what it returns
        here. In one process it is a plain call. Give it arguments that say what to make
        (add this tool), so that making the change twice makes it once.

        Example::

            @server.runtime_change
            def add_greeter(who: str) -> None:
                def greet() -> str:
                    return f"hello from {who}"

                server.add_tool(greet, name=f"greet_{who}")

            @server.tool()
            def hire(who: str) -> str:
                add_greeter(who)   # a closure: served by every worker all the same
                return "hired"
        """
        server = cast("ServerLike", self)

        def decorate(fn: F) -> F:
            key = name or name_of(fn)
            table = _change_functions(server)
            if key in table:
                raise ValueError(f"a runtime change named {key!r} is already registered")
            table[key] = fn
            if inspect.iscoroutinefunction(fn):

                @functools.wraps(fn)
                async def changing_async(*args: Any, **kwargs: Any) -> Any:
                    with _calling(server, _call_change(key, args, kwargs)):
                        return await fn(*args, **kwargs)

                return cast("F", changing_async)

            @functools.wraps(fn)
            def changing(*args: Any, **kwargs: Any) -> Any:
                with _calling(server, _call_change(key, args, kwargs)):
                    return fn(*args, **kwargs)

            return cast("F", changing)

        return decorate(fn) if fn is not None else decorate

    @shared_registration("tool", "remove")
    def remove_tool(self, name: str) -> None:
        """Stop offering a tool; raises ``KeyError`` if there is none by that name. With a
        shared backend every worker stops offering it."""
        server = cast("ServerLike", self)
        del server.registry.tools[name]
        server.registry.scopes.pop(("tool", name), None)
        server._changed("tools")

    @shared_registration("resource", "remove")
    def remove_resource(self, uri: str) -> None:
        """Stop offering a resource (or template, given its template string); raises
        ``KeyError`` if there is none. With a shared backend every worker stops."""
        registry = cast("ServerLike", self).registry
        if uri in registry.resources:
            del registry.resources[uri]
        elif uri in registry.templates:
            del registry.templates[uri]
        else:
            raise KeyError(uri)
        registry.read_hints.pop(uri, None)
        registry.scopes.pop(("resource", uri), None)
        cast("ServerLike", self)._changed("resources")

    @shared_registration("prompt", "remove")
    def remove_prompt(self, name: str) -> None:
        """Stop offering a prompt; raises ``KeyError`` if there is none by that name. With
        a shared backend every worker stops offering it."""
        server = cast("ServerLike", self)
        del server.registry.prompts[name]
        server.registry.scopes.pop(("prompt", name), None)
        server._changed("prompts")
