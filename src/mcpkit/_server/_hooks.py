"""The server's hooks (a mixin of :class:`~mcpkit.Server`): the completion function, what
runs when a client's roots change, and Python ``logging`` forwarded to clients."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from ._context import Context
from ._func import context_param_of
from ._logging import ClientLogHandler
from ._registry import Registry

F = TypeVar("F", bound=Callable[..., Any])


class ServerHooks:
    """``Server.completion``, ``Server.on_roots_changed`` and ``Server.bridge_logging``."""

    # Set by Server.__init__.
    registry: Registry
    roots_hooks: list[Callable[..., Any]]
    bridges_logging: bool

    def completion(self) -> Callable[[F], F]:
        """Decorator: the function completing prompt arguments and template variables.

        It is called as ``fn(ref, argument, context)`` with ``ref`` a ``PromptReference`` or
        ``ResourceTemplateReference``, ``argument`` a ``CompletionArgument`` (``name``,
        ``value``) and ``context`` a ``CompletionContext`` or None (``context.arguments``
        holds arguments already filled in); a parameter annotated :class:`Context` gets
        the context. It returns a list of strings (at most 100 are sent; ``total`` and
        ``hasMore`` are filled in), a ``Completion``, or None.

        Example::

            @server.completion()
            def complete(ref, argument, context):
                if argument.name == "language":
                    return [l for l in LANGUAGES if l.startswith(argument.value)]
                return []
        """

        def decorator(fn: F) -> F:
            self.registry.completion = fn
            self.registry.completion_ctx = context_param_of(fn, Context)
            return fn

        return decorator

    def on_roots_changed(self) -> Callable[[F], F]:
        """Decorator: ``async fn(ctx)`` called when a client says its roots changed."""

        def decorator(fn: F) -> F:
            self.roots_hooks.append(fn)
            return fn

        return decorator

    def bridge_logging(
        self, logger_name: str | None = None, level: int = logging.INFO
    ) -> logging.Handler:
        """Forward Python ``logging`` records emitted while serving a request to its client.

        Records are sent as ``notifications/message`` (subject to the client's
        ``logging/setLevel``). Returns the installed handler (remove it to stop).

        Example::

            server.bridge_logging("myapp")   # logging.getLogger("myapp").info(...) reaches the client
        """
        handler = ClientLogHandler(level)
        logging.getLogger(logger_name).addHandler(handler)
        self.bridges_logging = True
        return handler
