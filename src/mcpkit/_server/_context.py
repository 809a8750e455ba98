"""The :class:`Context` a tool, resource or prompt function receives when it asks for one."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, Literal, cast

import anyio
from typing_extensions import TypeVar as TypeVar_  # PEP 696 defaults before 3.13

from .._auth._principal import Principal, principal_of
from .._exceptions import CapabilityError, MissingRequiredClientCapability
from .._session._base import Negotiated, RequestContext
from .._session._capabilities import elicitation_modes, has_capability
from ._asking import (
    check_form_answer,
    check_tool_results,
    elicitation_schema,
    missing_capability_reason,
    parse_elicit_result,
    sampling_messages,
)
from ._logging import LEVELS, LoggingLevel
from ._mrtr import InputRequired, RoundState
from ._session import state_of
from ._taskext import ExtTaskContext
from ._util import to_wire
from ._visibility import MountedNames, SessionVisibility

if TYPE_CHECKING:
    from pydantic import TypeAdapter

    from .._http._request_info import HTTPRequestInfo
    from .._session._server import ServerSession
    from ..types import CreateMessageResult, Root
    from ._face import ServerLike

#: What an elicitation returns: the schema type given, or a dict for a JSON schema.
T = TypeVar_("T", default=dict[str, Any])


@dataclasses.dataclass
class ElicitationResult(Generic[T]):
    """What the user did with an elicitation.

    ``action`` is ``"accept"``, ``"decline"`` or ``"cancel"``. For an accepted form,
    ``data`` is the answer, validated into the type you asked with (a pydantic model,
    dataclass or TypedDict), or the raw dict when you gave a JSON schema; ``content`` is
    always the raw dict the client sent.
    """

    action: Literal["accept", "decline", "cancel"]
    data: T | None = None
    content: dict[str, Any] | None = None

    @property
    def accepted(self) -> bool:
        """True when the user accepted (and, in form mode, submitted data)."""
        return self.action == "accept"


class _CallId:
    """The id of a call served once (a handshake revision), kept in its request's state."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = uuid.uuid4().hex


#: The type of what a server's lifespan yields (``Context[State]``); Any when not given.
StateT = TypeVar_("StateT", default=Any)

#: Default bound, in seconds, on a request to the client (sampling, elicitation, roots) made
#: without a ``timeout=``; ``Server.client_request_timeout`` sets it per server.
CLIENT_REQUEST_TIMEOUT = 600.0


class Context(SessionVisibility, Generic[StateT]):
    """Everything a function serving a request can do besides returning a value.

    Declare a parameter annotated ``Context`` and it is passed in (and left out of the
    input schema)::

        @server.tool()
        async def crunch(n: int, ctx: Context) -> str:
            await ctx.info(f"crunching {n}")
            for i in range(n):
                await ctx.report_progress(i, n)
            return "done"

    Sync functions run in a worker thread; they can still use the async methods through
    ``anyio.from_thread.run(ctx.info, "...")``.
    """

    __slots__ = ("_begin_task", "_mounted", "_request", "_server", "_session")

    def __init__(
        self, server: ServerLike, request: RequestContext | None, session: ServerSession | None
    ) -> None:
        self._server = server
        self._request = request
        self._session = session
        #: Set while a tool started through the tasks extension may still become a task.
        self._begin_task: Callable[[], Awaitable[None]] | None = None
        #: Set for a server mounted in process: its names on the server hosting the session.
        self._mounted: MountedNames | None = None

    @property
    def call_id(self) -> str:
        """An id of this call, the same in each of its rounds: an idempotency key for what
        the call does (a payment's, say).

        Under revision 2026-07-28 a call that asks is held and resumed, so code before its
        question runs once; but when the held call is gone (it waited too long, or its
        process stopped) the retry runs the function again from the top. This id is the
        same then (it travels in the sealed ``requestState``), so an effect keyed by it is
        done once whatever happens. Under a handshake revision a call runs once: the id is
        simply unique to it.

        Example::

            @server.tool()
            async def pay(order: str, ctx: Context) -> str:
                payments.charge(order, idempotency_key=ctx.call_id)
                tip = await ctx.elicit("Add a tip?", Tip)
                ...
        """
        rc = self._request
        state = rc.state if rc is not None else None
        if isinstance(state, RoundState):
            return state.call_id
        if rc is not None and state is None:
            rc.state = state = _CallId()
        return state.value if isinstance(state, _CallId) else f"ctx-{id(self):x}"

    def _rebind(self, request: RequestContext) -> None:
        """Serve ``request`` from now on: the next round of a held call (``_held``), whose
        progress and logs go to the request that resumed it."""
        self._request = request
        if request.session is not None:
            self._session = request.session

    async def begin_task(self) -> None:
        """Go on as a task: the request is answered with the task's handle now, and the rest
        of the tool runs in the background (its client polls ``tasks/get``).

        Only a tool registered with ``defer_task=True`` and called by a client of the tasks
        extension (2026-07-28) starts its task here; it may ask for input before (the
        client answers in the same request, by multi round-trip). Everywhere else this does
        nothing: a task-augmented 2025-11-25 call is a task from the start, and a plain call
        stays one.

        Example::

            @server.tool(task_support="required", defer_task=True)
            async def deploy(ctx: Context) -> str:
                ok = await ctx.elicit("Deploy to production?", Confirm)  # in the request
                await ctx.begin_task()                                    # a task from here
                return await long_deployment()
        """
        begin = self._begin_task
        if begin is not None:
            self._begin_task = None
            await begin()

    # ------------------------------------------------------------------ facts

    @property
    def server(self) -> ServerLike:
        """The :class:`Server` serving this request."""
        return self._server

    @property
    def session(self) -> ServerSession:
        """The client connection this request came on."""
        if self._session is None:
            raise RuntimeError("this Context is not tied to a client session")
        return self._session

    @property
    def request_context(self) -> RequestContext:
        """The low-level request context (request id, ``_meta``, negotiated revision)."""
        if self._request is None:
            raise RuntimeError("this Context is not tied to a request")
        return self._request

    @property
    def request_id(self) -> str | int | None:
        """The JSON-RPC id of the request being served."""
        return self._request.request_id if self._request is not None else None

    @property
    def meta(self) -> dict[str, Any] | None:
        """The request's ``_meta`` object, if it had one."""
        return self._request.meta if self._request is not None else None

    @property
    def http_request(self) -> HTTPRequestInfo | None:
        """The HTTP request that carried this request (headers without credentials, client
        address, path), or None over stdio and in memory."""
        rc = self._request
        http: HTTPRequestInfo | None = rc.transport.http if rc is not None else None
        return http

    @property
    def principal(self) -> Principal | None:
        """Who called, when the server checks access tokens (subject, client id, scopes,
        claims; never the token itself), or None (stdio, in memory, no authorization).

        Example::

            @server.tool()
            def whoami(ctx: Context) -> dict:
                '''Who is calling.'''
                p = ctx.principal
                return {"subject": p.subject, "scopes": sorted(p.scopes)} if p else {}
        """
        return principal_of(self._request)[1] if self._request is not None else None

    @property
    def progress_token(self) -> str | int | None:
        """The progress token the client sent, if it asked for progress."""
        return self._request.progress_token if self._request is not None else None

    @property
    def cancelled(self) -> bool:
        """True once the client cancelled this request (useful in sync tools polling for it)."""
        return self._request.cancelled if self._request is not None else False

    @property
    def protocol_version(self) -> str | None:
        """The protocol revision this request is served under."""
        n = self._negotiated()
        return n.protocol_version if n is not None else None

    @property
    def client_info(self) -> dict[str, Any]:
        """The client's ``clientInfo`` (``name``, ``version``, ...)."""
        n = self._negotiated()
        return n.peer_info if n is not None else {}

    @property
    def client_capabilities(self) -> dict[str, Any]:
        """The capabilities the client declared."""
        n = self._negotiated()
        return n.peer_capabilities if n is not None else {}

    def _negotiated(self) -> Negotiated | None:
        if self._request is not None and self._request.negotiated is not None:
            return self._request.negotiated
        return self._session.negotiated if self._session is not None else None

    @property
    def lifespan_state(self) -> StateT:
        """What the server's ``lifespan`` yielded (None without a lifespan).

        Typed when the parameter is: ``ctx: Context[AppState]`` makes this an ``AppState``
        for the type checker (the server is then a ``Server[AppState]``)."""
        return cast(StateT, self._server.lifespan_state)

    # ------------------------------------------------------------------ progress and logging

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` (does nothing when the client gave no progress token)."""
        if self._request is not None:
            await self._request.report_progress(progress, total, message)

    async def log(self, level: LoggingLevel, data: Any, *, logger: str | None = None) -> None:
        """Send ``notifications/message`` at ``level``, unless the client's log level filters it out.

        ``data`` is any JSON-serializable value (a string usually).
        """
        if self._session is None and self._request is None:
            return
        n = self._request.negotiated if self._request is not None else None
        if n is not None and n.stateless:
            # Stateless revisions: the request's _meta sets the level; without one, the
            # client did not ask for log messages and gets none (logging.mdx).
            if n.log_level is None or LEVELS.get(level, 0) < LEVELS.get(n.log_level, 0):
                return
        elif self._session is None or LEVELS.get(level, 0) < state_of(self._session).log_threshold:
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        if self._request is not None:
            await self._request.notify("notifications/message", params)
        else:
            await self.session.notify("notifications/message", params)

    async def debug(self, data: Any, *, logger: str | None = None) -> None:
        """Log at ``debug`` level."""
        await self.log("debug", data, logger=logger)

    async def info(self, data: Any, *, logger: str | None = None) -> None:
        """Log at ``info`` level."""
        await self.log("info", data, logger=logger)

    async def notice(self, data: Any, *, logger: str | None = None) -> None:
        """Log at ``notice`` level."""
        await self.log("notice", data, logger=logger)

    async def warning(self, data: Any, *, logger: str | None = None) -> None:
        """Log at ``warning`` level."""
        await self.log("warning", data, logger=logger)

    async def error(self, data: Any, *, logger: str | None = None) -> None:
        """Log at ``error`` level."""
        await self.log("error", data, logger=logger)

    async def critical(self, data: Any, *, logger: str | None = None) -> None:
        """Log at ``critical`` level."""
        await self.log("critical", data, logger=logger)

    # ------------------------------------------------------------------ requests to the client

    def _rounds(self) -> RoundState | None:
        """The request's input rounds when it is served statelessly (2026-07-28)."""
        rc = self._request
        if rc is None or rc.negotiated is None or not rc.negotiated.stateless:
            return None
        if isinstance(rc, ExtTaskContext):
            return None  # its questions wait in the task (see _send)
        rounds = rc.state
        if not isinstance(rounds, RoundState):
            raise CapabilityError(
                f"{rc.method!r} cannot ask the client for input under protocol revision "
                f"{rc.negotiated.protocol_version} (only tools/call, prompts/get and "
                "resources/read can)"
            )
        return rounds

    def _require(self, path: tuple[str, ...], why: str) -> None:
        """Raise unless the client declared the capability at ``path``: under a stateless
        revision the protocol's MissingRequiredClientCapability (-32021), else CapabilityError."""
        if has_capability(self.client_capabilities, path):
            return
        n = self._negotiated()
        if n is not None and n.stateless:
            needed: dict[str, Any] = {}
            node = needed
            for part in path:
                node[part] = {}
                node = node[part]
            raise MissingRequiredClientCapability(
                message=f"Missing required client capability: {why}",
                data={"requiredCapabilities": needed},
            )
        raise CapabilityError(missing_capability_reason(why, ".".join(path), n))

    async def _send(
        self,
        method: str,
        params: dict[str, Any],
        timeout: float | None,
        as_task: bool = False,
        key: str | None = None,
    ) -> Any:
        if isinstance(self._request, ExtTaskContext):
            # A task of the tasks extension: the question waits in the task for tasks/update.
            return await self._request.ask(method, params, key)
        rounds = self._rounds()
        if rounds is not None:
            # No server-to-client requests: the answer comes with the client's retry,
            # to this very call when it is held (``_held``), else to the function run again.
            key = key or rounds.next_key(method)
            if rounds.held is not None:
                return await rounds.held.ask(self, key, method, params)
            return rounds.take(key, method, params)
        if as_task:
            from ._tasks import CLIENT_TASK_CAPABILITY, request_as_task

            cap = ("tasks", "requests", *CLIENT_TASK_CAPABILITY[method])
            if has_capability(self.client_capabilities, cap):
                return await request_as_task(self, method, params, timeout)
        if timeout is None:
            # Never unbounded: a client that cannot or will not answer (no stream to reach it
            # on, a person who walked away) must not hold the tool and its slot forever.
            timeout = getattr(self.server, "client_request_timeout", CLIENT_REQUEST_TIMEOUT)
        kw: dict[str, Any] = {"timeout": timeout}
        if self._request is not None:
            return await self._request.send_request(method, params, **kw)
        return await self.session.send_request(method, params, **kw)

    async def elicit(
        self,
        message: str,
        schema: type[T] | Mapping[str, Any],
        *,
        timeout: float | None = None,
        as_task: bool = False,
        key: str | None = None,
    ) -> ElicitationResult[T]:
        """Ask the user for structured input through the client (form mode).

        ``schema`` is a pydantic model, dataclass or TypedDict of flat primitive fields
        (str, int, float, bool, enums, lists of enum values), or a JSON schema dict. Raises
        :class:`~mcpkit.CapabilityError` when the client does not support elicitation.
        ``as_task=True`` asks the client to run it as a task (when it declares
        ``tasks.requests.elicitation.create``; otherwise it is a plain request) and polls it.

        Example::

            class Booking(BaseModel):
                date: str
                guests: int = 2

            answer = await ctx.elicit("When do you want to come?", Booking)
            if answer.accepted:
                book(answer.data.date, answer.data.guests)

        Under revision 2026-07-28 (stateless) the question goes back to the client in an
        ``InputRequiredResult``; the call waits here, held by the server, and goes on when
        the client retries with the answer, so code before the question runs once.
        ``key`` names the question in ``inputRequests`` (default: its kind and call order).
        Only when the held call is gone (it waited longer than
        ``StatelessSettings.hold_seconds``, or the process holding it stopped) does the
        retry run the function again from the top, with the answers given so far, and a
        warning is logged: see docs/server.md for writing tools that stay safe then.
        """
        self._require(
            ("elicitation",),
            "the client did not declare the 'elicitation' capability: it cannot ask the user",
        )
        if "form" not in elicitation_modes(self.client_capabilities):
            raise CapabilityError(
                "the client does not support form-mode elicitation (it declared url mode only)"
            )
        adapter: TypeAdapter[Any] | None
        if isinstance(schema, Mapping):
            requested = dict(schema)
            adapter = None
        else:
            from pydantic import TypeAdapter

            adapter = TypeAdapter(schema)
            requested = elicitation_schema(adapter)
        raw = await self._send(
            "elicitation/create",
            {"mode": "form", "message": message, "requestedSchema": requested},
            timeout,
            as_task,
            key,
        )
        action, content = parse_elicit_result(raw)
        if action != "accept" or content is None:
            return ElicitationResult(action, None, content)
        if adapter is None:
            problems = check_form_answer(requested, content)
            if problems:
                from .._exceptions import ToolError

                raise ToolError("the user's answer does not match the form: " + "; ".join(problems))
            return ElicitationResult(action, content, content)  # type: ignore[arg-type]
        from pydantic import ValidationError

        try:
            data = adapter.validate_python(content)
        except ValidationError as e:
            from .._exceptions import ToolError

            raise ToolError(
                f"the user's answer does not match the form: {e.errors(include_url=False)}"
            ) from e
        return ElicitationResult(action, data, content)

    async def elicit_url(
        self,
        message: str,
        url: str,
        *,
        elicitation_id: str | None = None,
        timeout: float | None = None,
        key: str | None = None,
    ) -> ElicitationResult[None]:
        """Send the user to ``url`` (URL mode: credentials, payments, OAuth flows stay out of the client).

        The result says whether the user agreed to open it; call
        :meth:`complete_elicitation` with the same ``elicitation_id`` when the out-of-band
        interaction finished. Raises :class:`~mcpkit.CapabilityError` unless the client
        declared URL-mode elicitation.
        """
        if "url" not in elicitation_modes(self.client_capabilities):
            raise CapabilityError(
                "the client did not declare URL-mode elicitation ('elicitation.url')"
            )
        params: dict[str, Any] = {"mode": "url", "message": message, "url": url}
        if self._rounds() is None:
            # 2026-07-28 removed elicitationId: the client retries once the user is back.
            params["elicitationId"] = elicitation_id or uuid.uuid4().hex
        raw = await self._send("elicitation/create", params, timeout, key=key)
        action, content = parse_elicit_result(raw)
        return ElicitationResult(action, None, content)

    async def complete_elicitation(self, elicitation_id: str) -> None:
        """Tell the client a URL-mode elicitation completed (``notifications/elicitation/complete``).

        Does nothing under revision 2026-07-28, which removed the notification: there the
        client learns the outcome by retrying the request.
        """
        n = self._negotiated()
        if n is not None and n.stateless:
            return
        await self.session.notify(
            "notifications/elicitation/complete", {"elicitationId": elicitation_id}
        )

    async def sample(
        self,
        messages: str | Sequence[Any],
        *,
        max_tokens: int = 1000,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        model_preferences: Any = None,
        include_context: Literal["none", "thisServer", "allServers"] | None = None,
        metadata: Mapping[str, Any] | None = None,
        tools: Sequence[Any] | None = None,
        tool_choice: Literal["auto", "required", "none"] | Mapping[str, Any] | None = None,
        timeout: float | None = None,
        as_task: bool = False,
        key: str | None = None,
    ) -> CreateMessageResult:
        """Ask the client's LLM for a completion (``sampling/createMessage``).

        ``as_task=True`` asks the client to run it as a task (when it declares
        ``tasks.requests.sampling.createMessage``; otherwise it is a plain request) and
        polls it until it ends.

        ``messages`` is a string (one user message) or a list of strings, ``SamplingMessage``
        objects or dicts. ``tools`` (``Tool`` objects, dicts, or names of this server's
        tools) lets the model ask for tool calls: the result's content then holds
        ``ToolUseContent`` blocks, and you answer with ``ToolResultContent`` in the next
        message. Raises :class:`~mcpkit.CapabilityError` when the client cannot sample (or
        cannot sample with tools / context).

        Example::

            result = await ctx.sample("Summarize: " + text, max_tokens=200)
            summary = result.content.text
        """
        from ..types import CreateMessageResult

        caps = self.client_capabilities
        self._require(
            ("sampling",),
            "the client did not declare the 'sampling' capability: it cannot sample an LLM",
        )
        if (tools or tool_choice is not None) and not has_capability(caps, ("sampling", "tools")):
            raise CapabilityError(
                "the client did not declare 'sampling.tools': it cannot sample with tools"
            )
        if include_context not in (None, "none") and not has_capability(
            caps, ("sampling", "context")
        ):
            raise CapabilityError(
                "the client did not declare 'sampling.context': use include_context='none'"
            )
        wire_messages = sampling_messages(messages)
        check_tool_results(wire_messages)
        params: dict[str, Any] = {"messages": wire_messages, "maxTokens": max_tokens}
        if system_prompt is not None:
            params["systemPrompt"] = system_prompt
        if temperature is not None:
            params["temperature"] = temperature
        if stop_sequences is not None:
            params["stopSequences"] = list(stop_sequences)
        if model_preferences is not None:
            params["modelPreferences"] = to_wire(model_preferences)
        if include_context is not None:
            params["includeContext"] = include_context
        if metadata is not None:
            params["metadata"] = dict(metadata)
        if tools:
            params["tools"] = [self._tool_definition(t) for t in tools]
        if tool_choice is not None:
            params["toolChoice"] = (
                {"mode": tool_choice} if isinstance(tool_choice, str) else to_wire(tool_choice)
            )
        raw = await self._send("sampling/createMessage", params, timeout, as_task, key)
        return CreateMessageResult.model_validate(raw)

    async def sample_with_tools(
        self,
        messages: str | Sequence[Any],
        tools: Sequence[str],
        *,
        max_rounds: int = 8,
        max_tokens: int = 1000,
        tool_choice: Literal["auto", "required", "none"] | Mapping[str, Any] | None = None,
        **options: Any,
    ) -> CreateMessageResult:
        """Sample with this server's tools, running the ones the model asks for, until it answers.

        Each round sends the conversation so far; when the model asks for tool calls, the
        named tools of this server are run (arguments validated as for ``tools/call``) and
        their results sent back. Returns the first result without tool use. Raises
        :class:`~mcpkit.ToolError` after ``max_rounds`` rounds of tool use (a loop limit,
        as the spec recommends). Other keywords go to :meth:`sample`.

        Example::

            answer = await ctx.sample_with_tools("What is 2 + 3?", tools=["add"])
            print(answer.content.text)
        """
        from .._exceptions import ToolError
        from ..types import ToolUseContent

        known = {}
        for name in tools:
            tool = self._server.registry.tools.get(name)
            if tool is None:
                raise ValueError(f"no tool named {name!r} on this server")
            known[name] = tool
        conversation = sampling_messages(messages)
        for _ in range(max_rounds):
            result = await self.sample(
                conversation,
                tools=list(tools),
                tool_choice=tool_choice,
                max_tokens=max_tokens,
                **options,
            )
            blocks = result.content if isinstance(result.content, list) else [result.content]
            uses = [b for b in blocks if isinstance(b, ToolUseContent)]
            if not uses:
                return result
            conversation.append({"role": "assistant", "content": [to_wire(b) for b in blocks]})
            answers = []
            for use in uses:
                tool = known.get(use.name)
                if tool is None:
                    outcome: dict[str, Any] = {
                        "content": [{"type": "text", "text": f"Unknown tool: {use.name}"}],
                        "isError": True,
                    }
                else:
                    outcome = await tool.call(dict(use.input), self)
                answer = {
                    "type": "tool_result",
                    "toolUseId": use.id,
                    "content": outcome.get("content", []),
                }
                if "structuredContent" in outcome:
                    answer["structuredContent"] = outcome["structuredContent"]
                if outcome.get("isError"):
                    answer["isError"] = True
                answers.append(answer)
            conversation.append({"role": "user", "content": answers})
        raise ToolError(f"the model was still asking for tools after {max_rounds} rounds")

    def _tool_definition(self, tool: Any) -> dict[str, Any]:
        if isinstance(tool, str):
            found = self._server.registry.tools.get(tool)
            if found is None:
                raise ValueError(f"no tool named {tool!r} on this server")
            definition: dict[str, Any] = found.definition
            return definition
        wire = to_wire(tool)
        if not isinstance(wire, dict):
            raise TypeError(
                f"a sampling tool must be a Tool, a dict or a tool name, not {type(tool).__name__}"
            )
        return wire

    async def list_roots(
        self, *, timeout: float | None = None, key: str | None = None
    ) -> list[Root]:
        """The client's roots (``roots/list``); raises CapabilityError when it has none to offer."""
        from ..types import ListRootsResult

        self._require(("roots",), "the client did not declare the 'roots' capability")
        raw = await self._send("roots/list", {}, timeout, key=key)
        return ListRootsResult.model_validate(raw).roots

    async def gather(self, *calls: Awaitable[Any]) -> list[Any]:
        """Ask the client several things at once; their answers, in order.

        ``calls`` are un-awaited :meth:`elicit`, :meth:`sample` and :meth:`list_roots`
        calls. Under the handshake revisions they run concurrently; under 2026-07-28 they
        reach the client together in one ``InputRequiredResult`` (one round trip, not one
        per question).

        Example::

            answer, roots = await ctx.gather(
                ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}}),
                ctx.list_roots(),
            )
        """
        rounds = self._rounds()
        if rounds is not None and rounds.held is None:
            # Each call either answers from this round's inputs at once or raises the
            # question it asks: awaited in turn, every unanswered question is collected.
            results: list[Any] = []
            pending: dict[str, dict[str, Any]] = {}
            try:
                for call in calls:
                    try:
                        results.append(await call)
                    except InputRequired as e:  # noqa: PERF203 - each question is collected
                        pending.update(e.requests)
                        results.append(None)
            finally:
                # A call that failed otherwise (a capability the client lacks) ends the
                # request: the calls not reached are closed, not left never awaited.
                for call in calls[len(results) + 1 :]:
                    close = getattr(call, "close", None)
                    if close is not None:
                        close()
            if pending:
                raise InputRequired(pending)
            return results
        if rounds is not None and rounds.held is not None:
            # A held call (``_held``): the questions go to the client together.
            return await rounds.held.gather(calls)
        answers: list[Any] = [None] * len(calls)

        async def run(i: int, call: Awaitable[Any]) -> None:
            answers[i] = await call

        async with anyio.create_task_group() as tg:
            for i, call in enumerate(calls):
                tg.start_soon(run, i, call)
        return answers

    async def read_resource(self, uri: str) -> list[Any]:
        """Read one of this server's resources (as a client would), returning its contents."""
        from ..types import ReadResourceResult

        contents = await self._server.registry.read(uri, self, mask_errors=self._server.mask_errors)
        return list(ReadResourceResult.model_validate({"contents": contents}).contents)

    async def send_notification(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send any notification to the client, tied to this request."""
        if self._request is not None:
            await self._request.notify(method, params)
        else:
            await self.session.notify(method, params)
