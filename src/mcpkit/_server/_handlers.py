"""The protocol handlers of a :class:`~mcpkit.Server`: one method per MCP request it serves.

Each reads the request's params, finds what it names in the server's
:class:`~mcpkit._server._registry.Registry` and runs it with a :class:`Context`. The
handler table goes to every session the server creates.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any

from .._exceptions import (
    InvalidParams,
    MCPError,
    MethodNotFound,
    ProtocolError,
    URLElicitationRequired,
)
from .._session._base import RequestContext, RequestHandlerFn
from .._session._server import ServerSession
from ._asking import url_input_requests
from ._auth import authorize
from ._context import Context
from ._listen import serve_listen
from ._logging import LEVELS, current_context
from ._mrtr import RoundState, collect_input_required
from ._resources import not_found
from ._session import state_of
from ._util import make_caller, to_wire

if TYPE_CHECKING:
    from ._face import ServerLike

logger = logging.getLogger("mcpkit.server")

#: Most values a completion answer may carry (the spec's limit).
MAX_COMPLETIONS = 100


def uri_param(params: dict[str, Any] | None) -> str:
    """The request's ``uri``; -32602 unless it is a non-empty string."""
    uri = params.get("uri") if params else None
    if not isinstance(uri, str) or not uri:
        raise InvalidParams(message="Invalid params: 'uri' must be a non-empty string")
    return uri


def _can_be_asked(rc: RequestContext) -> bool:
    """Whether the request's client declared something a handler could ask it for: one
    that declared none can be asked nothing, so its calls need not be held (and skip what
    holding costs: a task, a cancel scope, an event per call)."""
    n = rc.negotiated
    if n is None:
        return True  # not known: hold, to be safe
    caps = n.peer_capabilities or {}
    return any(k in caps for k in ("elicitation", "sampling", "roots"))


class Handlers:
    """The request handlers of one server (``table()`` maps methods to them)."""

    def __init__(self, server: ServerLike) -> None:
        self.server = server
        self.registry = server.registry

    def table(self) -> dict[str, RequestHandlerFn]:
        """Method -> handler, for every request this server serves."""
        tasks = self.server.tasks_manager
        return {
            "tools/list": self.tools_list,
            "tools/call": self.tools_call,
            "resources/list": self.resources_list,
            "resources/templates/list": self.templates_list,
            "resources/read": self.resources_read,
            "resources/subscribe": self.subscribe,
            "resources/unsubscribe": self.unsubscribe,
            "prompts/list": self.prompts_list,
            "prompts/get": self.prompts_get,
            "completion/complete": self.complete,
            "logging/setLevel": self.set_level,
            "tasks/get": tasks.h_get,
            "tasks/result": tasks.h_result,
            "tasks/list": tasks.h_list,
            "tasks/cancel": tasks.h_cancel,
            "subscriptions/listen": self.listen,
        }

    async def listen(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        upstream = self._listen_upstream if self.server._mounts else None
        return await serve_listen(
            self.server.listeners,
            rc,
            self.server.capabilities,
            subscribe=upstream,
            follow=self.server.task_extension.follow,
        )

    async def _listen_upstream(self, uri: str) -> None:
        try:
            await self._subscribe_upstream(uri)
        except MCPError as e:  # the stream still serves the rest
            logger.warning("could not subscribe to %s upstream: %s", uri, e)

    async def _rounds(
        self,
        rc: RequestContext,
        params: dict[str, Any] | None,
        run: Coroutine[Any, Any, Any],
        *,
        hold: bool = False,
    ) -> Any:
        """Run ``run``, a handler's coroutine that may ask the client for input, under a
        stateless revision: its questions end the request with an ``InputRequiredResult``
        (see ``_mrtr``), and so does a ``URLElicitationRequired`` it raises (-32042 is not
        a code of 2026-07-28: its URL-mode elicitations become the result's questions).

        With ``hold`` (its function takes a Context, so it may ask), the coroutine runs as
        a held call (``_held``): suspended where it asks, resumed by the retry."""
        # The state is sealed to the verified caller: another caller cannot replay it.
        principal = rc.transport.principal
        caller = principal.key if principal is not None else None
        try:
            rc.state = rounds = RoundState(self.server.stateless, rc.request.method, params, caller)
            call = self.server.holds.find(rounds)
        except BaseException:
            run.close()  # a forged or stale requestState: the handler never starts
            raise
        try:
            if call is not None:
                run.close()  # the call goes on where it asked
                return await call.round(rc, rounds)
            if rounds.held_id is not None:
                routed, result = await self._route(rc, rounds)
                if routed:
                    run.close()  # served by the worker holding the call
                    return result
                self._gone(rc, rounds)
            if hold and _can_be_asked(rc):
                call = self.server.holds.start(rc, rounds, run)
                if call is not None:
                    return await call.round(rc, rounds)
            return await run
        except BaseException as e:
            return self._asked(rc, rounds, e)

    def _first_round_ended(
        self, rc: RequestContext, params: dict[str, Any], e: BaseException
    ) -> Any:
        """What answers ``e``, raised by a call that cannot ask (a function without a
        Context, no logging bridge) and carries no answers (no ``requestState`` nor
        ``inputResponses``): what :meth:`_rounds` does for it, without its round state
        until one is needed (only an ``URLElicitationRequired`` raised needs it: the
        ``InputRequiredResult`` that answers it seals one). Every 2026-07-28 call of such a
        tool is served so: the round state and the held calls' table cost it ~2 µs of
        server CPU per call for nothing, and a coroutine around the call one more object
        per call."""
        principal = rc.transport.principal
        caller = principal.key if principal is not None else None
        rounds = RoundState(self.server.stateless, rc.request.method, params, caller)
        return self._asked(rc, rounds, e)

    @staticmethod
    def _asked(rc: RequestContext, rounds: RoundState, e: BaseException) -> Any:
        """The ``InputRequiredResult`` of a call that ended with questions (its own, or a
        ``URLElicitationRequired``'s); else ``e`` raised again."""
        asked = collect_input_required(e)
        if asked is None and isinstance(e, URLElicitationRequired):
            n = rc.negotiated
            asked = url_input_requests(e.elicitations, n.peer_capabilities if n else {})
        if asked is None:
            raise e
        return rounds.input_required(asked)

    async def _route(self, rc: RequestContext, rounds: RoundState) -> tuple[bool, Any]:
        """Serve a retry on the worker holding its call, when another worker sharing this
        one's state holds it (``mcpkit._redis._rounds``): ``(True, its result)``; else
        ``(False, None)``."""
        router = getattr(self.server._shared, "rounds", None)
        worker = rounds.held_worker
        if router is None or worker is None or worker == router.worker_id:
            return False, None
        routed: tuple[bool, Any] = await router.forward(worker, rc)
        return routed

    def _gone(self, rc: RequestContext, rounds: RoundState) -> None:
        """A retry naming a held call this process does not have: the function runs again
        from the top with the answers so far, which its author should hear about."""
        target = rc.request.params.get("name") if rc.request.params else None
        logger.warning(
            "%s %s: the call held for these answers is gone (it waited longer than "
            "StatelessSettings.hold_seconds, or the process holding it%s stopped); running "
            "it again from the top with the answers given so far: code before its questions "
            "runs again (docs/server.md, 'Asking the user')",
            rc.request.method,
            repr(target) if isinstance(target, str) else "",
            f" ({rounds.held_worker})" if rounds.held_worker else "",
        )

    async def tools_list(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        return self.server.visibility.page(rc, "tools", params)

    def at_once(self, method: str, params: dict[str, Any] | None) -> bool:
        """Whether serving this request ends without waiting on anything: a ``tools/call``
        of a sync tool run on the loop (its author's inline=True), given no Context, not a task."""
        if method != "tools/call" or params is None or self.server.bridges_logging:
            return False
        name = params.get("name")
        tool = self.registry.tools.get(name) if type(name) is str else None
        return tool is not None and tool.at_once

    async def tools_call(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        if params is None:
            raise InvalidParams(message="Invalid params: tools/call needs 'name'")
        name = params.get("name")
        tool = self.registry.tools.get(name) if type(name) is str else None
        vis = self.server.visibility
        if tool is not None and vis.hides(rc, "tool", str(name), tool.definition):
            tool = None  # hidden: as if it did not exist
        if tool is None:
            if type(name) is not str:
                raise InvalidParams(message="Invalid params: 'name' must be a string")
            raise InvalidParams(message=f"Unknown tool: {name}", data={"name": name})
        if self.registry.scopes:
            authorize(rc, self.registry.scopes_for("tools/call", params))
        args = params.get("arguments")
        if args is None:
            args = {}
        elif type(args) is not dict:
            raise InvalidParams(message="Invalid params: 'arguments' must be an object")
        n = rc.negotiated
        support = tool.task_support
        if n is not None and n.stateless:
            # Core 2026-07-28 has no tasks (a `task` param is ignored): the tasks extension
            # runs task-capable tools as tasks for the clients declaring it.
            if support is not None and support != "forbidden":
                return await self.server.task_extension.call_tool(self, rc, tool, args)
            if (
                not self._needs_context(tool)
                and "requestState" not in params
                and "inputResponses" not in params
            ):
                try:
                    return await self._call(tool, args, rc)
                except BaseException as e:
                    return self._first_round_ended(rc, params, e)
            held = tool.context_param is not None or bool(tool.asked)
            return await self._rounds(rc, params, self._call(tool, args, rc), hold=held)
        if support is not None and support != "forbidden":
            task = params.get("task")
            if task is not None:
                return await self.server.tasks_manager.create_tool_task(rc, tool, args, task)
            if support == "required":
                raise MethodNotFound(
                    message=f"Method not found: tool {name!r} must be called as a task",
                    data={"name": name, "taskSupport": "required"},
                )
        elif "task" in params and "tasks" in rc.session.capabilities:
            raise MethodNotFound(
                message=f"Method not found: tool {name!r} does not support task execution",
                data={"name": name, "taskSupport": "forbidden"},
            )
        return await self._call(tool, args, rc)

    def _needs_context(self, tool: Any) -> bool:
        """Whether a call of ``tool`` runs with a Context: it takes one or asks, or the
        server bridges Python logging to the client (``bridge_logging``: the records the
        call emits reach its client through the Context)."""
        return tool.context_param is not None or bool(tool.asked) or self.server.bridges_logging

    def _call(
        self, tool: Any, args: dict[str, Any], rc: RequestContext
    ) -> Coroutine[Any, Any, Any]:
        """The call of ``tool``, to await: the tool's own coroutine when no Context is
        made (no layer of ours around it on every call), else one that sets it first."""
        if not self._needs_context(tool):
            run: Coroutine[Any, Any, Any] = tool.call(args, None)
            return run
        return self._call_in_context(tool, args, rc)

    async def _call_in_context(self, tool: Any, args: dict[str, Any], rc: RequestContext) -> Any:
        ctx = Context(self.server, rc, rc.session)
        token = current_context.set(ctx)
        try:
            return await tool.call(args, ctx)
        finally:
            current_context.reset(token)

    async def resources_list(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        return self.server.visibility.page(rc, "resources", params)

    async def templates_list(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        result = self.server.visibility.page(rc, "templates", params)
        result["resourceTemplates"] = result.pop("templates")
        return result

    async def resources_read(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        uri = uri_param(params)
        if self.server.visibility.hides_uri(rc, uri):
            raise not_found(uri)
        if self.registry.scopes:
            authorize(rc, self.registry.scopes_for("resources/read", params))
        n = rc.negotiated
        if n is not None and n.stateless:
            entry = self.registry.entry_for(uri)
            held = getattr(entry, "context_param", None) is not None
            result = await self._rounds(rc, params, self._read(uri, rc), hold=held)
            hints = self.registry.hints_for(uri)
            if hints and result.get("resultType") != "input_required":
                # The resource's own hints; the server's defaults fill in what it left out.
                result = {**result, **hints}
            return result
        return await self._read(uri, rc)

    async def _read(self, uri: str, rc: RequestContext) -> Any:
        ctx = Context(self.server, rc, rc.session)
        token = current_context.set(ctx)
        try:
            return {
                "contents": await self.registry.read(uri, ctx, mask_errors=self.server.mask_errors)
            }
        finally:
            current_context.reset(token)

    async def subscribe(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        uri = uri_param(params)
        if not self.registry.resolves(uri) or self.server.visibility.hides_uri(rc, uri):
            raise not_found(uri)
        if self.registry.scopes:
            authorize(rc, self.registry.scopes_for("resources/subscribe", params))
        subscriptions = state_of(rc.session).subscriptions
        most = self.server.max_subscriptions
        if most is not None and uri not in subscriptions and len(subscriptions) >= most:
            # Each is kept for the session's life (in Redis too, with many workers).
            raise InvalidParams(
                message=f"Too many subscriptions: this session holds {len(subscriptions)}, "
                f"the server's bound (max_subscriptions={most}); unsubscribe from one first",
                data={"uri": uri, "maxSubscriptions": most},
            )
        await self._subscribe_upstream(uri)
        subscriptions.add(uri)
        await rc.session.state_changed()
        return {}

    async def _subscribe_upstream(self, uri: str) -> None:
        """A mounted remote server's resource is subscribed to on that server too."""
        if not self.server._mounts:
            return
        upstream = getattr(self.registry.entry_for(uri), "subscribe", None)
        if upstream is not None:
            await upstream(uri)

    async def unsubscribe(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        uri = uri_param(params)
        state_of(rc.session).subscriptions.discard(uri)
        await rc.session.state_changed()
        return {}

    async def prompts_list(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        return self.server.visibility.page(rc, "prompts", params)

    async def prompts_get(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        name = params.get("name") if params else None
        if not isinstance(name, str):
            raise InvalidParams(message="Invalid params: 'name' must be a string")
        prompt = self.registry.prompts.get(name)
        if prompt is None or self.server.visibility.hides(rc, "prompt", name, prompt.definition):
            raise InvalidParams(message=f"Unknown prompt: {name}", data={"name": name})
        if self.registry.scopes:
            authorize(rc, self.registry.scopes_for("prompts/get", params))
        args = params.get("arguments") if params else None
        if args is None:
            args = {}
        elif not isinstance(args, dict) or not all(isinstance(v, str) for v in args.values()):
            raise InvalidParams(message="Invalid params: 'arguments' must be an object of strings")
        n = rc.negotiated
        if n is not None and n.stateless:
            held = prompt.context_param is not None
            run = self._get_prompt(prompt, name, args, rc)
            return await self._rounds(rc, params, run, hold=held)
        return await self._get_prompt(prompt, name, args, rc)

    async def _get_prompt(
        self, prompt: Any, name: str, args: dict[str, Any], rc: RequestContext
    ) -> Any:
        ctx = Context(self.server, rc, rc.session)
        token = current_context.set(ctx)
        try:
            return await prompt.get(args, ctx)
        except ProtocolError:
            raise
        except Exception as e:  # its SystemExit too: a RaisedBaseException by then
            logger.exception("prompt %r failed", name)
            detail = "" if self.server.mask_errors else f": {type(e).__name__}: {e}"
            raise ProtocolError(message=f"Error rendering prompt {name}{detail}") from e
        finally:
            current_context.reset(token)

    async def complete(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        from ..types import CompleteRequestParams

        if params is None:
            raise InvalidParams(
                message="Invalid params: completion/complete needs 'ref' and 'argument'"
            )
        try:
            req = CompleteRequestParams.model_validate(params)
        except Exception as e:
            raise InvalidParams(message=f"Invalid params: {short(e)}") from e
        ref = req.ref
        arg_name = req.argument.name
        if ref.type == "ref/prompt":
            prompt = self.registry.prompts.get(ref.name)
            vis = self.server.visibility
            if prompt is None or vis.hides(rc, "prompt", ref.name, prompt.definition):
                raise InvalidParams(message=f"Unknown prompt: {ref.name}", data={"name": ref.name})
            if arg_name not in prompt.info.params:
                raise InvalidParams(message=f"Prompt {ref.name!r} has no argument {arg_name!r}")
        else:
            template = self.registry.templates.get(ref.uri)
            vis = self.server.visibility
            if template is not None and vis.hides(rc, "resource", ref.uri, template.definition):
                template = None  # hidden: as if it did not exist
            if template is None:
                if ref.uri in self.registry.resources and not vis.hides_uri(rc, ref.uri):
                    return {"completion": {"values": []}}
                raise InvalidParams(
                    message=f"Unknown resource template: {ref.uri}", data={"uri": ref.uri}
                )
            if arg_name not in template.matcher.variables:
                raise InvalidParams(message=f"Template {ref.uri!r} has no variable {arg_name!r}")
        target: Any = prompt if ref.type == "ref/prompt" else template
        mount = getattr(target, "mount", None)
        if mount is not None:  # a mounted server's prompt or template: its own completion
            return await mount.complete(target.inner_ref(), params, rc)
        fn = self.registry.completion
        if fn is None:
            return {"completion": {"values": []}}
        kwargs: dict[str, Any] = {}
        if self.registry.completion_ctx is not None:
            kwargs[self.registry.completion_ctx] = Context(self.server, rc, rc.session)
        call = make_caller(functools.partial(fn, ref, req.argument, req.context))
        try:
            value = await call(kwargs)
        except ProtocolError:
            raise
        except Exception as e:  # its SystemExit too: a RaisedBaseException by then
            logger.exception("completion function failed")
            detail = "" if self.server.mask_errors else f": {type(e).__name__}: {e}"
            raise ProtocolError(message=f"Error completing {arg_name!r}{detail}") from e
        return {"completion": completion_of(value)}

    async def set_level(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        level = params.get("level") if params else None
        if not isinstance(level, str) or level not in LEVELS:
            raise InvalidParams(
                message=f"Invalid params: unknown log level {level!r} (one of {', '.join(LEVELS)})",
            )
        state_of(rc.session).log_threshold = LEVELS[level]
        await rc.session.state_changed()
        return {}

    async def roots_list_changed(
        self, session: ServerSession, params: dict[str, Any] | None
    ) -> None:
        # Notification handlers run on the reader; the hooks may call the client (list_roots),
        # whose answer that reader must be free to receive.
        if self.server.roots_hooks:
            state_of(session).spawn(self._run_roots_hooks, session)

    async def _run_roots_hooks(self, session: ServerSession) -> None:
        for fn in self.server.roots_hooks:
            await self._run_hook(fn, session)

    async def _run_hook(self, fn: Callable[..., Any], session: ServerSession) -> None:
        try:
            result = fn(Context(self.server, None, session))
            if inspect.isawaitable(result):
                await result
        except Exception:
            logger.exception("roots-changed hook %r failed", fn)


def completion_of(value: Any) -> dict[str, Any]:
    if value is None:
        return {"values": []}
    wire = to_wire(value)
    if isinstance(wire, dict):
        if "completion" in wire:
            wire = wire["completion"]
        values = list(wire.get("values") or [])
        out = dict(wire)
        if len(values) > MAX_COMPLETIONS:
            out["values"] = values[:MAX_COMPLETIONS]
            out.setdefault("total", len(values))
            out["hasMore"] = True
        return out
    if isinstance(wire, Iterable) and not isinstance(wire, (str, bytes)):
        values = [str(v) for v in wire]
        out = {"values": values[:MAX_COMPLETIONS], "total": len(values)}
        out["hasMore"] = len(values) > MAX_COMPLETIONS
        return out
    raise TypeError(
        f"a completion function returns a list of strings or a Completion, not {type(value).__name__}"
    )


def short(e: Exception) -> str:
    text = str(e)
    return text.splitlines()[0] if text else type(e).__name__
