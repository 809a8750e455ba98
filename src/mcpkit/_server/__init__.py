"""The high-level server SDK: :class:`Server`, :class:`Context`, :class:`ToolError`."""

from .._exceptions import ResourceNotFound, ToolError
from .._stores._tasks import MemoryTaskStore, SQLiteTaskStore, TaskRecord, TaskStore
from ._ask import Ask
from ._context import Context, ElicitationResult
from ._depends import Depends
from ._extensions import Extension
from ._mrtr import StatelessSettings
from ._server import Server
from ._tasks import TaskSettings

__all__ = [
    "Ask",
    "Context",
    "Depends",
    "ElicitationResult",
    "Extension",
    "MemoryTaskStore",
    "ResourceNotFound",
    "SQLiteTaskStore",
    "Server",
    "StatelessSettings",
    "TaskRecord",
    "TaskSettings",
    "TaskStore",
    "ToolError",
]
