"""The callbacks a :class:`~mcpkit.Client` calls, typed: what each receives and may return.

Every callback may be a plain function (run in a worker thread, so one that blocks on
``input()`` cannot stall the connection) or an ``async`` one.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol

import anyio.to_thread

from .._session._base import RequestContext
from ..types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitationCompleteNotificationParams,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    LoggingMessageNotificationParams,
    ProgressNotificationParams,
    ResourceUpdatedNotificationParams,
)

if TYPE_CHECKING:
    from ._face import ClientLike

ListKind = Literal["tools", "resources", "prompts"]
#: What a sampling callback may answer: a result, its dict, or the assistant's text.
SamplingAnswer = CreateMessageResult | Mapping[str, Any] | str
#: What an elicitation callback may answer: a result or its dict.
ElicitAnswer = ElicitResult | Mapping[str, Any]


class ServerRequestContext:
    """What a sampling, elicitation or roots callback knows about the request it answers.

    ``client`` is the :class:`Client` the request came in on (``client.server_info`` says
    which server asks, which the user must be shown); ``name`` is its name in a
    :class:`ClientGroup` (else the server's own name).
    """

    __slots__ = ("_ctx", "client", "name")

    def __init__(self, client: ClientLike, ctx: RequestContext | None) -> None:
        self.client = client
        self._ctx = ctx
        self.name = client.name

    @property
    def request_id(self) -> str | int | None:
        """The JSON-RPC id of the server's request (None for the elicitations of a -32042 error)."""
        return self._ctx.request_id if self._ctx is not None else None

    @property
    def cancelled(self) -> bool:
        """True once the server cancelled the request."""
        return self._ctx.cancelled if self._ctx is not None else False


class SamplingHandler(Protocol):
    """``sampling_handler``: answer the server's ``sampling/createMessage``.

    Example::

        async def sample(params: CreateMessageRequestParams, ctx: ServerRequestContext) -> str:
            return await my_llm(params.messages)
    """

    def __call__(
        self, params: CreateMessageRequestParams, ctx: ServerRequestContext, /
    ) -> SamplingAnswer | Awaitable[SamplingAnswer]: ...


class ElicitationHandler(Protocol):
    """``elicitation_handler``: ask the user for what a form-mode elicitation requests."""

    def __call__(
        self, params: ElicitRequestFormParams, ctx: ServerRequestContext, /
    ) -> ElicitAnswer | Awaitable[ElicitAnswer]: ...


class URLElicitationHandler(Protocol):
    """``url_elicitation_handler``: show the user the URL a URL-mode elicitation names."""

    def __call__(
        self, params: ElicitRequestURLParams, ctx: ServerRequestContext, /
    ) -> ElicitAnswer | Awaitable[ElicitAnswer]: ...


class ElicitationCompleteHandler(Protocol):
    """``elicitation_complete_handler``: a URL elicitation the user accepted is done."""

    def __call__(
        self, params: ElicitationCompleteNotificationParams, /
    ) -> Awaitable[None] | None: ...


class LoggingHandler(Protocol):
    """``logging_handler``: a log record the server sent (``notifications/message``)."""

    def __call__(self, params: LoggingMessageNotificationParams, /) -> Awaitable[None] | None: ...


class ProgressHandler(Protocol):
    """``progress_handler``: progress of a tool call, resource read or prompt get."""

    def __call__(self, params: ProgressNotificationParams, /) -> Awaitable[None] | None: ...


class ResourceUpdatedHandler(Protocol):
    """``resource_updated_handler``: a subscribed resource changed."""

    def __call__(self, params: ResourceUpdatedNotificationParams, /) -> Awaitable[None] | None: ...


class ListChangedHandler(Protocol):
    """``list_changed_handler``: the server's tools, resources or prompts changed."""

    def __call__(self, kind: ListKind, /) -> Awaitable[None] | None: ...


async def call_back(fn: Callable[..., Any], *args: Any) -> Any:
    """Run a user callback: coroutine functions are awaited, plain functions run in a thread
    (so one that blocks, e.g. on ``input()``, cannot stall the connection). An object whose
    ``__call__`` is ``async`` (a provider's sampling handler) is awaited too: in a thread
    it would only make a coroutine, which trio refuses to return from one."""
    if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__):
        return await fn(*args)
    result = await anyio.to_thread.run_sync(lambda: fn(*args))
    if inspect.isawaitable(result):
        result = await result
    return result
