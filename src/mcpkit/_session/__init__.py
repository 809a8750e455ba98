"""MCP session roles (client and server) on top of the JSON-RPC engine."""

from ._base import Negotiated, RequestContext
from ._client import ClientSession
from ._kernel import Kernel, ServerSpec
from ._server import ServerSession

__all__ = ["ClientSession", "Kernel", "Negotiated", "RequestContext", "ServerSession", "ServerSpec"]
