"""mcpkit."""

from ._client import Client, ClientGroup, ServerRequestContext, SyncClient

__all__ = ["Client", "ClientGroup", "ServerRequestContext", "SyncClient"]
