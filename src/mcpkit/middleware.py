"""Middleware for :class:`mcpkit.Server` and :class:`mcpkit.Client`: an ordered chain around
every request, able to read and change it, answer it, fail it, time it and log it.

A middleware is ``async def mw(request, call_next)`` or a :class:`Middleware` subclass with
per-method hooks; give a list as ``Server(middleware=[...])`` / ``Client(middleware=[...])``
(the first outermost) or add one with ``server.add_middleware(mw)``::

    from mcpkit import Server
    from mcpkit.middleware import LoggingMiddleware, Middleware, RateLimitMiddleware

    class Audit(Middleware):
        async def on_call_tool(self, request, call_next):
            print("calling", request.target)
            return await call_next(request)

    server = Server("demo", middleware=[LoggingMiddleware(), RateLimitMiddleware(10), Audit()])

``CallNext`` is the type of ``call_next`` (``async (MCPRequest) -> result``); ``RATE_LIMITED``
the error code of a request :class:`RateLimitMiddleware` refuses (-31429).

On a server, the chain runs around the requests its handlers serve (tools, resources,
prompts, completion, logging level, tasks, subscriptions); ``initialize``, ``ping`` and
``server/discover`` belong to the session and do not go through it.
"""

from __future__ import annotations

from ._middleware import (
    RATE_LIMITED,
    CallNext,
    ErrorMappingMiddleware,
    ListCacheMiddleware,
    LoggingMiddleware,
    MCPRequest,
    Middleware,
    MiddlewareFn,
    RateLimitMiddleware,
    TimingMiddleware,
)

__all__ = [
    "RATE_LIMITED",
    "CallNext",
    "ErrorMappingMiddleware",
    "ListCacheMiddleware",
    "LoggingMiddleware",
    "MCPRequest",
    "Middleware",
    "MiddlewareFn",
    "RateLimitMiddleware",
    "TimingMiddleware",
]
