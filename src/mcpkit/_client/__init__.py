"""The client SDK: :class:`Client`, :class:`ClientGroup` and the blocking :class:`SyncClient`."""

from ._client import Client, ServerRequestContext
from ._group import ClientGroup
from ._sync import SyncClient
from ._tasks import TaskHandle

__all__ = ["Client", "ClientGroup", "ServerRequestContext", "SyncClient", "TaskHandle"]
