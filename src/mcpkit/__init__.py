"""mcpkit."""

from ._client import Client, ClientGroup, ServerRequestContext, SyncClient
from ._server import Context, ElicitationResult, ResourceNotFound, Server, ToolError

__all__ = [
    "Client",
    "ClientGroup",
    "Context",
    "ElicitationResult",
    "ResourceNotFound",
    "Server",
    "ServerRequestContext",
    "SyncClient",
    "ToolError",
]
