"""The seam between the HTTP client transports and whatever speaks HTTP for them.

:class:`HTTPClient` is all the transports need: ``stream``, ``post``, ``delete``, ``aclose``.
Three implementations: our keep-alive HTTP/1.1 client (the default), an adapter over a user's
``httpx2.AsyncClient``, and :class:`~mcpkit.lowlevel.ASGIClient`, which calls an ASGI app in
this process (no socket): the real client code over an in-process transport, for tests.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Protocol, overload

#: (connect/write timeout, read timeout) in seconds; None = no limit.
Timeouts = tuple["float | None", "float | None"]


class HeadersLike(Protocol):
    """Response headers, looked up case-insensitively."""

    @overload
    def get(self, name: str, /) -> str | None: ...

    @overload
    def get(self, name: str, default: str, /) -> str: ...


class HTTPResponse(Protocol):
    """A response whose body is read as it arrives (``aiter_bytes``) or at once (``aread``)."""

    status_code: int
    reason_phrase: str

    @property
    def headers(self) -> HeadersLike: ...

    def aiter_bytes(self) -> AsyncGenerator[bytes, None]: ...

    async def aread(self) -> bytes: ...

    async def aclose(self) -> None: ...


class HTTPClient(Protocol):
    """What the HTTP transports talk through. Failures raise :class:`mcpkit.HTTPError`s."""

    def stream(
        self,
        method: str,
        url: str,
        *,
        content: bytes = b"",
        headers: Mapping[str, str] | None = None,
        timeout: Timeouts | float | None = None,
    ) -> AbstractAsyncContextManager[HTTPResponse]: ...

    async def post(
        self,
        url: str,
        *,
        content: bytes = b"",
        headers: Mapping[str, str] | None = None,
        timeout: Timeouts | float | None = None,
    ) -> HTTPResponse: ...

    async def delete(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: Timeouts | float | None = None,
    ) -> HTTPResponse: ...

    async def aclose(self) -> None: ...


def is_http_client(obj: object) -> bool:
    """True for an object with the :class:`HTTPClient` methods (and not an httpx client)."""
    kind = type(obj)
    if any(c.__module__.startswith("httpx") for c in kind.__mro__):
        return False
    return all(callable(getattr(obj, n, None)) for n in ("stream", "post", "delete", "aclose"))
