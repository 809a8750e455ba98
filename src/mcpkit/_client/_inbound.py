"""What a :class:`~mcpkit.Client` serves: the server's requests (sampling, elicitation, roots)
and notifications (logs, progress, changes), each handed to the user's callback."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from .._exceptions import InternalError, InvalidParams, URLElicitationRequired
from .._session._base import RequestContext
from ..types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitationCompleteNotificationParams,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    ListRootsResult,
    LoggingMessageNotificationParams,
    ProgressNotificationParams,
    ResourceUpdatedNotificationParams,
)
from ..types._levels import LOG_LEVELS as MCP_LOG_LEVELS
from ._callbacks import (
    ElicitationCompleteHandler,
    ElicitationHandler,
    ListChangedHandler,
    ListKind,
    LoggingHandler,
    ProgressHandler,
    ResourceUpdatedHandler,
    SamplingHandler,
    ServerRequestContext,
    URLElicitationHandler,
    call_back,
)
from ._elicitation import apply_defaults, check_answer, url_problem
from ._util import short_errors as _short

if TYPE_CHECKING:
    from ._face import ClientLike
    from ._tasks import TaskReceiver

M = TypeVar("M", bound=BaseModel)
#: A handler of a request from the server.
Handler = Callable[[RequestContext, "dict[str, Any] | None"], Awaitable[Any]]
#: ``roots_handler(ctx)``: answers ``roots/list`` (a dict or a ListRootsResult).
RootsHandler = Callable[[ServerRequestContext], Awaitable[Any]]

logger = logging.getLogger("mcpkit.client")
#: Log records from servers, when no ``logging_handler`` is given.
server_log = logging.getLogger("mcpkit.client.server_log")
#: Each MCP log level (``types._levels.LOG_LEVELS``, least severe first) as the Python
#: logging level its messages are logged at.
LOG_LEVELS = dict(
    zip(
        MCP_LOG_LEVELS,
        (
            logging.DEBUG,
            logging.INFO,
            logging.INFO,
            logging.WARNING,
            logging.ERROR,
            logging.CRITICAL,
            logging.CRITICAL,
            logging.CRITICAL,
        ),
        strict=True,
    )
)


class Inbound:
    """The user's callbacks, and the handlers that validate what the server sends them.

    Which callbacks are set decides the capabilities the client declares (:meth:`capabilities`).
    """

    def __init__(
        self,
        client: ClientLike,
        *,
        task_receiver: TaskReceiver | None,
        sampling_handler: SamplingHandler | None,
        sampling_tools: bool,
        elicitation_handler: ElicitationHandler | None,
        url_elicitation_handler: URLElicitationHandler | None,
        elicitation_complete_handler: ElicitationCompleteHandler | None,
        elicitation_defaults: bool,
        logging_handler: LoggingHandler | None,
        progress_handler: ProgressHandler | None,
        resource_updated_handler: ResourceUpdatedHandler | None,
        list_changed_handler: ListChangedHandler | None,
    ) -> None:
        self.client = client
        #: Serves task-augmented requests when the client accepts tasks.
        self.task_receiver = task_receiver
        self.sampling_handler = sampling_handler
        self.sampling_tools = sampling_tools
        self.elicitation_handler = elicitation_handler
        self.url_elicitation_handler = url_elicitation_handler
        self.elicitation_complete_handler = elicitation_complete_handler
        self.elicitation_defaults = elicitation_defaults
        self.logging_handler = logging_handler
        self.progress_handler = progress_handler
        self.resource_updated_handler = resource_updated_handler
        self.list_changed_handler = list_changed_handler
        #: URL elicitations the user accepted and the server has not reported complete.
        self.url_elicitations: set[str] = set()
        #: Answers ``roots/list`` for a client given no ``roots`` (a hub asks its own client).
        self.roots_handler: RootsHandler | None = None

    def _serves_roots(self) -> bool:
        return self.client._has_roots or self.roots_handler is not None

    def capabilities(self) -> dict[str, Any]:
        """The client capabilities declared at ``initialize``: exactly what has a callback."""
        caps: dict[str, Any] = {}
        if self.sampling_handler is not None:
            caps["sampling"] = {"tools": {}} if self.sampling_tools else {}
        modes: dict[str, Any] = {}
        if self.elicitation_handler is not None:
            modes["form"] = {}
        if self.url_elicitation_handler is not None:
            modes["url"] = {}
        if modes:
            caps["elicitation"] = modes
        if self.client._has_roots:
            caps["roots"] = {"listChanged": True}
        elif self.roots_handler is not None:
            caps["roots"] = {}
        if self.task_receiver is not None:
            requests: dict[str, Any] = {}
            if "sampling" in caps:
                requests["sampling"] = {"createMessage": {}}
            if "elicitation" in caps:
                requests["elicitation"] = {"create": {}}
            if requests:
                caps["tasks"] = {"list": {}, "cancel": {}, "requests": requests}
        return caps

    def request_handlers(self) -> dict[str, Handler]:
        handlers: dict[str, Handler] = {}
        if self.sampling_handler is not None:
            handlers["sampling/createMessage"] = _contained(self._on_sampling)
        if self.elicitation_handler is not None or self.url_elicitation_handler is not None:
            handlers["elicitation/create"] = _contained(self._on_elicitation)
        if self._serves_roots():
            handlers["roots/list"] = _contained(self._on_roots)
        rx = self.task_receiver
        if rx is not None and handlers:
            for method in ("sampling/createMessage", "elicitation/create"):
                if method in handlers:
                    handlers[method] = rx.wrap(handlers[method])
            handlers["tasks/get"] = rx.h_get
            handlers["tasks/result"] = rx.h_result
            handlers["tasks/list"] = rx.h_list
            handlers["tasks/cancel"] = rx.h_cancel
        return handlers

    async def _on_sampling(self, ctx: RequestContext, params: dict[str, Any] | None) -> Any:
        try:
            p = CreateMessageRequestParams.model_validate(params or {})
        except PydanticValidationError as e:
            raise InvalidParams(
                message=f"invalid sampling/createMessage params: {_short(e)}"
            ) from None
        if (p.tools or p.tool_choice is not None) and not self.sampling_tools:
            raise InvalidParams(
                message="tool use in sampling was requested but the client did not declare sampling.tools"
            )
        for m in p.messages:
            blocks = m.content if isinstance(m.content, list) else [m.content]
            kinds = {getattr(b, "type", None) for b in blocks}
            if "tool_result" in kinds and len(kinds) > 1:
                raise InvalidParams(
                    message="a message with tool results must contain only tool results"
                )
        assert self.sampling_handler is not None
        result = await call_back(self.sampling_handler, p, ServerRequestContext(self.client, ctx))
        if isinstance(result, str):
            result = {
                "role": "assistant",
                "content": {"type": "text", "text": result},
                "model": "unknown",
            }
        if isinstance(result, Mapping):
            try:
                result = CreateMessageResult.model_validate(dict(result))
            except PydanticValidationError as e:
                raise InternalError(
                    message=f"the sampling callback returned an invalid result: {_short(e)}"
                ) from None
        if not isinstance(result, CreateMessageResult):
            raise InternalError(
                message=f"the sampling callback returned {type(result).__name__}, not a CreateMessageResult"
            )
        return result.to_wire()

    async def _on_elicitation(self, ctx: RequestContext, params: dict[str, Any] | None) -> Any:
        params = params or {}
        mode = params.get("mode", "form")
        sctx = ServerRequestContext(self.client, ctx)
        if mode == "url":
            if self.url_elicitation_handler is None:
                raise InvalidParams(message="URL-mode elicitation is not supported by this client")
            try:
                up = ElicitRequestURLParams.model_validate(params)
            except PydanticValidationError as e:
                raise InvalidParams(
                    message=f"invalid elicitation/create params: {_short(e)}"
                ) from None
            problem = url_problem(up.url)
            if problem:  # never shown to the user: refused before the callback
                raise InvalidParams(message=f"URL-mode elicitation refused: {problem}")
            result = await call_back(self.url_elicitation_handler, up, sctx)
            answer = self._elicit_result(result)
            if answer.action == "accept":
                self.url_elicitations.add(up.elicitation_id)
            out = answer.to_wire()
            out.pop("content", None)  # URL mode carries no content
            return out
        if mode != "form":
            raise InvalidParams(message=f"unknown elicitation mode {mode!r}")
        if self.elicitation_handler is None:
            raise InvalidParams(message="form-mode elicitation is not supported by this client")
        try:
            fp = ElicitRequestFormParams.model_validate(params)
        except PydanticValidationError as e:
            raise InvalidParams(message=f"invalid elicitation/create params: {_short(e)}") from None
        result = await call_back(self.elicitation_handler, fp, sctx)
        answer = self._elicit_result(result)
        wire = answer.to_wire()
        if answer.action == "accept":
            schema = params.get("requestedSchema")
            content = dict(wire.get("content") or {})
            if self.elicitation_defaults:
                content = apply_defaults(content, schema)
            errors = check_answer(content, schema)
            if errors:
                raise InternalError(
                    message="the elicitation answer does not match the requested schema: "
                    + "; ".join(errors)
                )
            wire["content"] = content
        else:
            wire.pop("content", None)
        return wire

    @staticmethod
    def _elicit_result(result: Any) -> ElicitResult:
        if isinstance(result, ElicitResult):
            return result
        if isinstance(result, Mapping):
            try:
                return ElicitResult.model_validate(dict(result))
            except PydanticValidationError as e:
                raise InternalError(
                    message=f"the elicitation callback returned an invalid result: {_short(e)}"
                ) from None
        raise InternalError(
            message=f"the elicitation callback returned {type(result).__name__}, not an ElicitResult"
        )

    async def url_elicitations_required(self, error: URLElicitationRequired) -> None:
        # The server refused until the user completes these URL elicitations: show them
        # through the URL callback (if any) so the user can act, then let the error go on
        # (the caller retries once done; notifications/elicitation/complete tells when).
        handler = self.url_elicitation_handler
        if handler is None:
            return
        for item in error.elicitations:
            try:
                params = ElicitRequestURLParams.model_validate(item)
            except PydanticValidationError as e:
                logger.warning("ignored a malformed elicitation in a -32042 error: %s", _short(e))
                continue
            problem = url_problem(params.url)
            if problem:
                logger.warning("ignored an elicitation in a -32042 error: %s", problem)
                continue
            answer = self._elicit_result(
                await call_back(handler, params, ServerRequestContext(self.client, None))
            )
            if answer.action == "accept":
                self.url_elicitations.add(params.elicitation_id)

    async def _on_roots(self, ctx: RequestContext, params: dict[str, Any] | None) -> Any:
        if self.roots_handler is not None and not self.client._has_roots:
            result = await self.roots_handler(ServerRequestContext(self.client, ctx))
            try:
                return ListRootsResult.model_validate(
                    dict(result) if isinstance(result, Mapping) else result
                ).to_wire()
            except PydanticValidationError as e:
                raise InternalError(message=f"invalid roots/list answer: {_short(e)}") from None
        roots = await self.client._current_roots()
        return {"roots": [r.to_wire() for r in roots]}

    def notification_handlers(
        self,
    ) -> dict[str, Callable[[dict[str, Any] | None], Awaitable[None]]]:
        return {
            "notifications/message": self._on_log,
            "notifications/progress": self._on_progress,
            "notifications/resources/updated": self._on_resource_updated,
            "notifications/tools/list_changed": self._on_tools_changed,
            "notifications/resources/list_changed": self._on_resources_changed,
            "notifications/prompts/list_changed": self._on_prompts_changed,
            "notifications/elicitation/complete": self._on_elicitation_complete,
            "notifications/tasks/status": self.client._on_task_status,
        }

    @staticmethod
    def _notification_params(
        model: type[M], params: dict[str, Any] | None, method: str
    ) -> M | None:
        try:
            return model.model_validate(params or {})
        except PydanticValidationError as e:
            logger.warning("dropped malformed %s from the server: %s", method, _short(e))
            return None

    async def _on_log(self, params: dict[str, Any] | None) -> None:
        p = self._notification_params(
            LoggingMessageNotificationParams, params, "notifications/message"
        )
        if p is None:
            return
        if self.logging_handler is not None:
            await call_back(self.logging_handler, p)
        else:
            server_log.log(
                LOG_LEVELS.get(p.level, logging.INFO),
                "[%s] %s: %s",
                self.client.name,
                p.logger or "-",
                p.data,
            )

    async def _on_progress(self, params: dict[str, Any] | None) -> None:
        if self.progress_handler is None:
            return
        p = self._notification_params(ProgressNotificationParams, params, "notifications/progress")
        if p is not None:
            await call_back(self.progress_handler, p)

    async def _on_resource_updated(self, params: dict[str, Any] | None) -> None:
        p = self._notification_params(
            ResourceUpdatedNotificationParams, params, "notifications/resources/updated"
        )
        if p is not None and self.resource_updated_handler is not None:
            await call_back(self.resource_updated_handler, p)

    async def _list_changed(self, kind: ListKind) -> None:
        self.client._invalidate(kind)
        if self.list_changed_handler is not None:
            await call_back(self.list_changed_handler, kind)

    async def _on_tools_changed(self, params: dict[str, Any] | None) -> None:
        await self._list_changed("tools")

    async def _on_resources_changed(self, params: dict[str, Any] | None) -> None:
        await self._list_changed("resources")

    async def _on_prompts_changed(self, params: dict[str, Any] | None) -> None:
        await self._list_changed("prompts")

    async def _on_elicitation_complete(self, params: dict[str, Any] | None) -> None:
        p = self._notification_params(
            ElicitationCompleteNotificationParams, params, "notifications/elicitation/complete"
        )
        if p is None or p.elicitation_id not in self.url_elicitations:
            return  # unknown or already completed: ignored, as the spec requires
        self.url_elicitations.discard(p.elicitation_id)
        if self.elicitation_complete_handler is not None:
            await call_back(self.elicitation_complete_handler, p)


def _fatal(exc: BaseException) -> bool:
    """True for what must go on through any handler: cancellation, interpreter exit."""
    if isinstance(
        exc, (KeyboardInterrupt, SystemExit, GeneratorExit, anyio.get_cancelled_exc_class())
    ):
        return True
    subs = getattr(exc, "exceptions", None)  # an exception group, told by shape
    return isinstance(subs, tuple) and any(_fatal(e) for e in subs if isinstance(e, BaseException))


def _contained(handler: Handler) -> Handler:
    """``handler``, its callback's failures answered to the server as errors.

    An ordinary exception is already (the engine answers -32603); anything else a callback
    raises (a ``BaseException`` that is not a cancellation: a hub's ``InputRequired``)
    would escape the engine's handler task and end the connection, and the program running
    it: it becomes an internal error too. Under a stateless revision the callbacks answer
    input requests inside the caller's own request, in its task: what they raise there is
    the caller's, and goes on.
    """

    async def contained(ctx: RequestContext, params: dict[str, Any] | None) -> Any:
        try:
            return await handler(ctx, params)
        except Exception:
            raise
        except BaseException as e:
            if _fatal(e) or (ctx.negotiated is not None and ctx.negotiated.stateless):
                raise
            logger.error(
                "the client's %s callback raised %s: answered as an internal error",
                ctx.method,
                type(e).__name__,
                exc_info=e,
            )
            raise InternalError(
                message=f"Internal error: the client's {ctx.method} callback failed "
                f"({type(e).__name__})"
            ) from None

    return contained
