"""A task server with a SQLite store, for restart tests: ``python durable_server.py DB [http PORT]``.

Every client is the same principal, so a new connection (to a new process) finds the tasks.
"""

from __future__ import annotations

import sys

import anyio

from mcpkit import Server, SQLiteTaskStore


def make_server(db: str) -> Server:
    server = Server(
        "durable",
        task_store=SQLiteTaskStore(db),
        task_owner=lambda ctx: "me",
        task_poll_interval=20,
    )

    @server.tool(task_support="optional")
    def quick(n: int) -> str:
        """Answers at once."""
        return f"quick {n}"

    @server.tool(task_support="optional")
    async def slow() -> str:
        """Runs until the process goes away."""
        await anyio.sleep(3600)
        return "never"

    return server


if __name__ == "__main__":
    server = make_server(sys.argv[1])
    if len(sys.argv) > 2 and sys.argv[2] == "http":
        from mcpkit._app import serve_http

        serve_http(server, port=int(sys.argv[3]))
    else:
        server.run()
