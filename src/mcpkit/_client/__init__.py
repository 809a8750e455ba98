"""The client SDK: :class:`Client`, :class:`ClientGroup` and the blocking :class:`SyncClient`."""

from ._apps import LoadedApp
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
from ._extensions import ClientExtension, ExtensionTaskHandle
from ._group import ClientGroup
from ._listen import Subscription
from ._skills import LoadedSkill
from ._sync import SyncClient
from ._targets import HTTPTarget, StdioTarget, http, stdio
from ._tasks import TaskHandle

__all__ = [
    "Client",
    "ClientExtension",
    "ClientGroup",
    "ElicitationCompleteHandler",
    "ElicitationHandler",
    "ExtensionTaskHandle",
    "HTTPTarget",
    "ListChangedHandler",
    "LoadedApp",
    "LoadedSkill",
    "LoggingHandler",
    "ProgressHandler",
    "ResourceUpdatedHandler",
    "SamplingHandler",
    "ServerRequestContext",
    "StdioTarget",
    "Subscription",
    "SyncClient",
    "TaskHandle",
    "URLElicitationHandler",
    "http",
    "stdio",
]
