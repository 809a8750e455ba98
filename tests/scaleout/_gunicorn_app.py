"""The app of docs/deploy.md's gunicorn line (``app = server.http_app(redis=...)``), run by
tests/scaleout/test_gunicorn_workers.py: a tool saying which worker process serves it and
its id among the workers, and one that changes the server at run time."""

from __future__ import annotations

import os

from mcpkit import Server

server = Server("gunicorn-workers")


@server.tool()
def whoami() -> dict[str, object]:
    """This worker's process id and its id among the workers sharing Redis."""
    return {"pid": os.getpid(), "worker": app.options.backend.worker_id}


@server.runtime_change
def grow(name: str) -> None:
    """Register tool ``name`` (made by every worker sharing this server's Redis)."""

    def grown() -> str:
        return f"I am {name}"

    server.add_tool(grown, name=name, description=f"Added at run time: {name}.")


@server.tool()
def add_tool(name: str) -> dict[str, object]:
    """Add tool ``name`` at run time; says which process did."""
    grow(name)
    return {"pid": os.getpid()}


app = server.http_app(redis=os.environ["MCPKIT_REDIS_URL"])
