"""The client SDK: :class:`Client`, :class:`ClientGroup` and the blocking :class:`SyncClient`."""

from ._callbacks import (
    ElicitationCompleteHandler,
    ElicitationHandler,
    ListChangedHandler,
    LoggingHandler,
    ProgressHandler,
    ResourceUpdatedHandler,
    SamplingHandler,
    ServerRequestContext,
    URLElicitationHandler,
)
from ._client import Client
from ._group import ClientGroup
from ._sync import SyncClient
from ._targets import HTTPTarget, StdioTarget, http, stdio
from ._tasks import TaskHandle

__all__ = [
    "Client",
    "ClientGroup",
    "ElicitationCompleteHandler",
    "ElicitationHandler",
    "HTTPTarget",
    "ListChangedHandler",
    "LoggingHandler",
    "ProgressHandler",
    "ResourceUpdatedHandler",
    "SamplingHandler",
    "ServerRequestContext",
    "StdioTarget",
    "SyncClient",
    "TaskHandle",
    "URLElicitationHandler",
    "http",
    "stdio",
]
