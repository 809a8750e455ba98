"""The Client's middleware chain (see :mod:`mcpkit.middleware`): built per request, and only
when the client has middleware, so a client without any pays nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._middleware import MCPRequest, chain

if TYPE_CHECKING:
    from ._face import ClientLike


async def through_middleware(
    client: ClientLike,
    method: str,
    params: Any,
    timeout: Any,
    progress_handler: Any,
    idempotent: bool = False,
) -> Any:
    """Send ``method`` through ``client.middleware``; the innermost step sends it."""

    async def send(request: MCPRequest) -> Any:
        return await client._send(
            request.method,
            request.params,
            request.state.get("timeout", timeout),
            request.state.get("progress_handler", progress_handler),
            bool(request.state.get("idempotent", idempotent)),
        )

    # A middleware may change these (a retrying one may mark a request idempotent).
    state = {"timeout": timeout, "progress_handler": progress_handler, "idempotent": idempotent}
    return await chain(client.middleware, send)(MCPRequest(method, params, "client", None, state))
