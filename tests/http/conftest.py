"""Fixtures: a demo MCP server served by a real uvicorn on 127.0.0.1; ``launcher`` for the
tests talking raw HTTP/1.1 to what ``serve_app`` serves (in the test's own loop)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from _http_helpers import DemoServer, ThreadServer, running
from _wire import Launcher

from mcpkit._app import create_http_app


@pytest.fixture
def demo() -> DemoServer:
    return DemoServer()


@pytest.fixture
def serve(demo: DemoServer) -> Iterator[Callable[..., ThreadServer]]:
    """``serve(**app_kwargs)`` or ``serve(app=...)``: start uvicorn, stopped after the test."""
    stack = ExitStack()

    def start(app: Any = None, **kw: Any) -> ThreadServer:
        return stack.enter_context(running(app if app is not None else create_http_app(demo, **kw)))

    with stack:
        yield start


@pytest.fixture
def launcher(monkeypatch: pytest.MonkeyPatch) -> Launcher:
    return Launcher(monkeypatch)
