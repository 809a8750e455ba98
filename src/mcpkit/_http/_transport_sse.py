"""The server end of the legacy HTTP+SSE transport (protocol revision 2024-11-05).

POSTed messages go in through :meth:`SSEServerTransport.feed`; what the session sends comes
out of ``out_recv`` as encoded SSE events for the session's one stream.
"""

from __future__ import annotations

from typing import Any

import anyio
import orjson

from .._auth._principal import Principal
from .._transports._base import Incoming, Message, RequestId, TransportInfo
from ._sse import encode_event


class SSEServerTransport:
    """One legacy session's transport: POSTed messages in, the SSE stream out."""

    def __init__(self) -> None:
        self._in_send, self._in_recv = anyio.create_memory_object_stream[Incoming](1024)
        self._out_send, self.out_recv = anyio.create_memory_object_stream[bytes](4096)
        self.close_reason = "the SSE stream was closed"
        #: Who the session belongs to, when the app verifies access tokens (the latest
        #: request's principal: the owner is fixed, its scopes may grow by step-up).
        self.principal: Principal | None = None

    def info_for(self, request_id: RequestId) -> TransportInfo:
        """What the transport knows of a request: the session's latest principal."""
        return TransportInfo("sse", "tcp", principal=self.principal)

    async def receive(self) -> Incoming:
        return await self._in_recv.receive()

    async def send(
        self, message: Message, /, *, related_request_id: RequestId | None = None
    ) -> None:
        await self._out_send.send(encode_event(orjson.dumps(message)))

    async def feed(self, message: Any) -> None:
        await self._in_send.send(message)

    def close(self) -> None:
        self._in_send.close()
        self._in_recv.close()
        self._out_send.close()
        self.out_recv.close()

    async def aclose(self) -> None:
        self.close()
